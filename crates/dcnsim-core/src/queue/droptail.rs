//! First-in first-out with tail drop: an arriving packet that would exceed the
//! capacity (in packets or bytes) is discarded.

use super::{fits, Discipline, Next, QueueSpec, Queued};
use crate::units::{Capacity, Time};
use std::collections::VecDeque;

#[derive(Clone, Debug)]
pub struct DropTail {
    fifo: VecDeque<Entry>,
    bytes: u64,
    capacity: Capacity,
}

/// What a FIFO keeps of a queued packet: 12 bytes instead of [`Queued`]'s 32,
/// since first-come first-served never looks at `prio` or the flow.
#[derive(Clone, Copy, Debug)]
struct Entry {
    pkt: u32,
    size: u32,
    class: u8,
}

impl Discipline for DropTail {
    fn new(spec: &QueueSpec) -> DropTail {
        DropTail {
            fifo: VecDeque::new(),
            bytes: 0,
            capacity: spec.capacity,
        }
    }

    #[inline]
    fn enqueue(&mut self, q: Queued, dropped: &mut Vec<u32>) {
        if fits(self.capacity, self.packets(), self.bytes, q.size) {
            self.bytes += u64::from(q.size);
            self.fifo.push_back(Entry {
                pkt: q.pkt,
                size: q.size,
                class: q.class,
            });
        } else {
            dropped.push(q.pkt);
        }
    }

    #[inline]
    fn dequeue(&mut self, _now: Time, paused: u8) -> Next {
        match self.fifo.front() {
            Some(&e) if paused & (1 << e.class) == 0 => {
                self.bytes -= u64::from(e.size);
                self.fifo.pop_front();
                Next::Packet(e.pkt)
            }
            _ => Next::Empty,
        }
    }

    fn packets(&self) -> u64 {
        self.fifo.len() as u64
    }

    fn bytes(&self) -> u64 {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::QueueKind;

    fn q(pkt: u32, size: u32) -> Queued {
        Queued {
            pkt,
            size,
            class: 0,
            prio: 0,
            flow: 0,
        }
    }

    fn droptail(capacity: Capacity) -> DropTail {
        DropTail::new(&QueueSpec::new(QueueKind::Droptail, capacity))
    }

    #[test]
    fn packet_capacity_drops_the_overflow_in_order() {
        let mut d = droptail(Capacity::Packets(2));
        let mut dropped = Vec::new();
        d.enqueue(q(1, 1500), &mut dropped);
        d.enqueue(q(2, 1500), &mut dropped);
        d.enqueue(q(3, 64), &mut dropped);
        assert_eq!(dropped, [3]);
        assert_eq!(d.dequeue(Time::ZERO, 0), Next::Packet(1));
        d.enqueue(q(4, 64), &mut dropped);
        assert_eq!(dropped, [3]);
        assert_eq!((d.packets(), d.bytes()), (2, 1564));
    }

    #[test]
    fn byte_capacity_counts_bytes() {
        let mut d = droptail(Capacity::Bytes(3000));
        let mut dropped = Vec::new();
        for (i, size) in [(1, 1500), (2, 1500), (3, 1)] {
            d.enqueue(q(i, size), &mut dropped);
        }
        assert_eq!(dropped, [3]);
        d.dequeue(Time::ZERO, 0);
        d.enqueue(q(4, 1501), &mut dropped);
        d.enqueue(q(5, 1500), &mut dropped);
        assert_eq!(dropped, [3, 4]);
    }

    #[test]
    fn a_paused_head_blocks_the_fifo() {
        let mut d = droptail(Capacity::Packets(10));
        let mut dropped = Vec::new();
        d.enqueue(q(1, 100), &mut dropped);
        assert_eq!(d.dequeue(Time::ZERO, 1), Next::Empty);
        assert_eq!(d.dequeue(Time::ZERO, 2), Next::Packet(1));
    }
}
