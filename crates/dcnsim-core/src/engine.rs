//! The event queue: a min-heap keyed by (time, sequence number).
//!
//! Ordering contract: events run in increasing time; events at the same time
//! run in the order they were scheduled (each gets the next sequence number).
//! With randomness drawn only from the scenario seed, a scenario therefore runs
//! bit-identically on every machine. Scheduling in the past is a bug and panics
//! in debug builds.

use crate::units::Time;
use dary_heap::QuaternaryHeap;
use std::cmp::Ordering;

/// What happens at an event. Payloads are arena or table indices.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// A packet's last bit reaches the node at the far end of its link.
    Arrive(u32),
    /// A port finished serializing; send the next queued packet.
    PortFree(u32),
    /// A host finished processing a received packet.
    Deliver(u32),
    /// A stream's next packet leaves the application.
    StreamSend(u32),
    /// A probe packet leaves the application.
    ProbeSend(u32),
    /// A TCP packet finished host processing and joins its NIC queue.
    HostSend(u32),
    /// A TCP flow opens.
    FlowStart(u32),
    /// A flow's retransmission timer may have expired.
    Rto(u32),
    /// A flow's delayed-ACK timer may have expired.
    DelAck(u32),
    /// A paced flow may send its next segment.
    Pace(u32),
    /// A flow's RACK reordering timer may have expired (RFC 8985 §6.3).
    Reo(u32),
    /// A flow's tail loss probe timer may have expired (RFC 8985 §7).
    Tlp(u32),
    /// The next flow of a workload source arrives.
    FlowArrival(u32),
    /// An incast application starts its first round.
    RoundStart(u32),
    /// Switch agents emitted packets; send them (at the time they emitted).
    AgentSend,
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    time: Time,
    seq: u64,
    event: Event,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        (self.time, self.seq) == (other.time, other.seq)
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    fn cmp(&self, other: &Self) -> Ordering {
        // Reversed: the heap pops the earliest (time, seq) first. One 128-bit
        // comparison compiles without data-dependent branches.
        let key = |e: &Entry| (u128::from(e.time.0) << 64) | u128::from(e.seq);
        key(other).cmp(&key(self))
    }
}

#[derive(Default)]
pub struct EventQueue {
    heap: QuaternaryHeap<Entry>,
    seq: u64,
    now: Time,
}

impl EventQueue {
    #[inline]
    pub fn now(&self) -> Time {
        self.now
    }

    #[inline]
    pub fn schedule(&mut self, time: Time, event: Event) {
        debug_assert!(time >= self.now, "event scheduled in the past");
        self.seq += 1;
        self.heap.push(Entry {
            time,
            seq: self.seq,
            event,
        });
    }

    /// Remove the next event and advance the clock to it.
    #[inline]
    pub fn pop(&mut self) -> Option<(Time, Event)> {
        let e = self.heap.pop()?;
        self.now = e.time;
        Some((e.time, e.event))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ties_run_in_scheduling_order() {
        let mut q = EventQueue::default();
        q.schedule(Time(5), Event::Arrive(1));
        q.schedule(Time(3), Event::Arrive(2));
        q.schedule(Time(5), Event::Arrive(3));
        q.schedule(Time(5), Event::PortFree(4));
        let order: Vec<Event> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(
            order,
            vec![
                Event::Arrive(2),
                Event::Arrive(1),
                Event::Arrive(3),
                Event::PortFree(4)
            ]
        );
        assert_eq!(q.now(), Time(5));
    }
}
