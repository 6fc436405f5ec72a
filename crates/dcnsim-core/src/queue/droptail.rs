//! First-in first-out with tail drop: an arriving packet that would exceed the
//! capacity (in packets or bytes) is discarded.

use super::Queued;
use crate::units::Capacity;
use std::collections::VecDeque;

#[derive(Clone, Debug)]
pub struct DropTail {
    fifo: VecDeque<Queued>,
    bytes: u64,
    capacity: Capacity,
}

impl DropTail {
    pub fn new(capacity: Capacity) -> DropTail {
        DropTail {
            fifo: VecDeque::new(),
            bytes: 0,
            capacity,
        }
    }

    pub fn enqueue(&mut self, q: Queued) -> bool {
        let fits = match self.capacity {
            Capacity::Packets(n) => (self.fifo.len() as u64) < n,
            Capacity::Bytes(b) => self.bytes + u64::from(q.size) <= b,
        };
        if fits {
            self.bytes += u64::from(q.size);
            self.fifo.push_back(q);
        }
        fits
    }

    pub fn dequeue(&mut self) -> Option<Queued> {
        let q = self.fifo.pop_front()?;
        self.bytes -= u64::from(q.size);
        Some(q)
    }

    pub fn packets(&self) -> u64 {
        self.fifo.len() as u64
    }

    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(pkt: u32, size: u32) -> Queued {
        Queued { pkt, size }
    }

    #[test]
    fn packet_capacity_drops_the_overflow_in_order() {
        let mut d = DropTail::new(Capacity::Packets(2));
        assert!(d.enqueue(q(1, 1500)));
        assert!(d.enqueue(q(2, 1500)));
        assert!(!d.enqueue(q(3, 64)));
        assert_eq!(d.dequeue(), Some(q(1, 1500)));
        assert!(d.enqueue(q(4, 64)));
        assert_eq!((d.packets(), d.bytes()), (2, 1564));
    }

    #[test]
    fn byte_capacity_counts_bytes() {
        let mut d = DropTail::new(Capacity::Bytes(3000));
        assert!(d.enqueue(q(1, 1500)));
        assert!(d.enqueue(q(2, 1500)));
        assert!(!d.enqueue(q(3, 1)));
        d.dequeue();
        assert!(!d.enqueue(q(4, 1501)));
        assert!(d.enqueue(q(5, 1500)));
    }
}
