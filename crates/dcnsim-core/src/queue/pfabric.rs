//! pFabric's switch port (Alizadeh et al., "pFabric: Minimal Near-Optimal
//! Datacenter Transport", SIGCOMM 2013, §4.1), as its authors' ns-2 queue has
//! it (the `PriorityQueue`/pFabric drop-queue of their ns-2.34 patch):
//!
//! - **Arrival:** the packet is enqueued; then, while the buffer is over its
//!   capacity (packets or bytes), the queued packet with the *largest* `prio`
//!   is dropped — ties go to the most recently enqueued, which may be the
//!   arrival itself.
//! - **Departure:** find the packet with the *smallest* `prio` (ties: the
//!   earliest enqueued), then send the earliest-enqueued packet of that
//!   packet's flow, so a flow's packets leave in order and an old packet of a
//!   flow whose priority has since improved is not starved (§4.1,
//!   "starvation prevention").
//!
//! Buffers are tiny (the reference is 24 packets ≈ 36 KB per 10 Gbps port),
//! so both operations scan the queue: O(queue length).

use super::{Discipline, Next, NoKeys, PortContext, Queued};
use crate::units::{Capacity, Time};

#[derive(Clone, Debug)]
pub struct Pfabric {
    /// Waiting packets in arrival order.
    queue: Vec<Queued>,
    bytes: u64,
    capacity: Capacity,
}

impl Pfabric {
    fn over(&self) -> bool {
        match self.capacity {
            Capacity::Packets(n) => self.queue.len() as u64 > n,
            Capacity::Bytes(b) => self.bytes > b,
        }
    }
}

impl Discipline for Pfabric {
    type Spec = NoKeys;

    fn new(_spec: &NoKeys, port: &PortContext) -> Pfabric {
        Pfabric {
            queue: Vec::new(),
            bytes: 0,
            capacity: port.buffer,
        }
    }

    fn enqueue(&mut self, q: Queued, dropped: &mut Vec<u32>) {
        self.bytes += u64::from(q.size);
        self.queue.push(q);
        while self.over() {
            // Largest prio; among equals the latest enqueued (the last).
            let mut worst = 0;
            for (i, p) in self.queue.iter().enumerate() {
                if p.prio >= self.queue[worst].prio {
                    worst = i;
                }
            }
            let victim = self.queue.remove(worst);
            self.bytes -= u64::from(victim.size);
            dropped.push(victim.pkt);
        }
    }

    fn dequeue(&mut self, _now: Time, paused: u8) -> Next {
        let eligible = |q: &Queued| paused & (1 << q.class) == 0;
        // Smallest prio; among equals the earliest enqueued (the first).
        let mut best: Option<usize> = None;
        for (i, p) in self.queue.iter().enumerate() {
            if eligible(p) && best.is_none_or(|b| p.prio < self.queue[b].prio) {
                best = Some(i);
            }
        }
        let Some(best) = best else {
            return Next::Empty;
        };
        let flow = self.queue[best].flow;
        let first = self
            .queue
            .iter()
            .position(|p| p.flow == flow && eligible(p))
            .expect("the best packet's flow has a packet");
        let q = self.queue.remove(first);
        self.bytes -= u64::from(q.size);
        Next::Packet(q.pkt)
    }

    fn packets(&self) -> u64 {
        self.queue.len() as u64
    }

    fn bytes(&self) -> u64 {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(pkt: u32, prio: u64, flow: u64) -> Queued {
        Queued {
            pkt,
            size: 1500,
            class: 0,
            prio,
            flow,
        }
    }

    fn pfabric(capacity: Capacity) -> Pfabric {
        Pfabric::new(&NoKeys {}, &PortContext::of_buffer(capacity))
    }

    fn next(p: &mut Pfabric) -> Option<u32> {
        match p.dequeue(Time::ZERO, 0) {
            Next::Packet(pkt) => Some(pkt),
            _ => None,
        }
    }

    #[test]
    fn serves_the_smallest_prio_first_and_fifo_among_equals() {
        let mut p = pfabric(Capacity::Packets(10));
        let mut dropped = Vec::new();
        for (pkt, prio, flow) in [(1, 50, 1), (2, 10, 2), (3, 10, 3), (4, 30, 4)] {
            p.enqueue(q(pkt, prio, flow), &mut dropped);
        }
        let order: Vec<u32> = std::iter::from_fn(|| next(&mut p)).collect();
        assert_eq!(order, [2, 3, 4, 1]);
        assert!(dropped.is_empty());
    }

    #[test]
    fn the_largest_prio_is_dropped_latest_first_possibly_the_arrival() {
        let mut p = pfabric(Capacity::Packets(2));
        let mut dropped = Vec::new();
        p.enqueue(q(1, 100, 1), &mut dropped);
        p.enqueue(q(2, 100, 2), &mut dropped);
        // A better arrival evicts the most recent of the two worst.
        p.enqueue(q(3, 5, 3), &mut dropped);
        assert_eq!(dropped, [2]);
        // A worse arrival is itself the victim.
        p.enqueue(q(4, 500, 4), &mut dropped);
        assert_eq!(dropped, [2, 4]);
        // An equal arrival is the most recent among equals: dropped.
        p.enqueue(q(5, 100, 5), &mut dropped);
        assert_eq!(dropped, [2, 4, 5]);
        assert_eq!((p.packets(), p.bytes()), (2, 3000));
    }

    #[test]
    fn byte_capacity_may_evict_several() {
        let mut p = pfabric(Capacity::Bytes(3000));
        let mut dropped = Vec::new();
        p.enqueue(q(1, 100, 1), &mut dropped);
        p.enqueue(q(2, 90, 2), &mut dropped);
        let big = Queued {
            size: 3000,
            ..q(3, 1, 3)
        };
        p.enqueue(big, &mut dropped);
        assert_eq!(dropped, [1, 2]);
        assert_eq!(p.bytes(), 3000);
    }

    #[test]
    fn a_flow_leaves_in_order_even_when_its_later_packet_has_the_best_prio() {
        let mut p = pfabric(Capacity::Packets(10));
        let mut dropped = Vec::new();
        // Flow 7's first packet carried 40 KB remaining, its second 20 KB.
        p.enqueue(q(1, 40_000, 7), &mut dropped);
        p.enqueue(q(2, 30_000, 8), &mut dropped);
        p.enqueue(q(3, 20_000, 7), &mut dropped);
        let order: Vec<u32> = std::iter::from_fn(|| next(&mut p)).collect();
        assert_eq!(order, [1, 3, 2]);
    }
}
