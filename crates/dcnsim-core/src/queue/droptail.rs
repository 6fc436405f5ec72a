//! First-in first-out with tail drop: an arriving packet that would exceed the
//! capacity (in packets or bytes) is discarded.
//!
//! A FIFO port that nothing can pause, hold or reorder (no PAUSE, no switch
//! agent, no queue trace or capture, no host stack waiting for the packet to
//! leave) knows on arrival when a packet will start serializing: when
//! everything ahead of it has been sent. Such a port is *scheduled*: it commits
//! the packet to the wire at once (its arrival at the far end is scheduled
//! directly, so the port needs no wake-up event per packet) and the queue keeps
//! only each waiting packet's start time and size ([`DropTail::commit`]), so
//! its occupancy at any later arrival is exact ([`DropTail::retire`]).

use super::{fits, Discipline, Next, NoKeys, PortContext, Queue, Queued};
use crate::units::{Capacity, Time};
use std::collections::VecDeque;

/// Laid out by hand: a scheduled port's arrival reads the first three
/// fields, which share the port's second cache line (`network/port.rs`).
#[derive(Clone, Debug)]
#[repr(C)]
pub struct DropTail {
    /// Packets committed to the wire of a scheduled port, not yet started.
    departures: VecDeque<Departure>,
    bytes: u64,
    capacity: Capacity,
    fifo: VecDeque<Entry>,
}

/// The most entries [`DropTail::waiting_after`] walks past.
const WALK_AT_MOST: usize = 64;

/// What a FIFO keeps of a queued packet: 12 bytes instead of [`Queued`]'s 32,
/// since first-come first-served never looks at `prio` or the flow.
#[derive(Clone, Copy, Debug)]
struct Entry {
    pkt: u32,
    size: u32,
    class: u8,
}

/// A packet of a scheduled port waiting for its start time.
#[derive(Clone, Copy, Debug)]
struct Departure {
    start: Time,
    size: u32,
}

impl DropTail {
    /// Forget the packets of a scheduled port that started serializing by
    /// `now` (at `now` included: the port serves its head before an arrival
    /// at the same instant).
    ///
    /// `idle`: the port's wire is free by `now`, so every committed packet
    /// has started; then they are all forgotten at once, without looking at
    /// them, and the branch agrees with the port's idle test that follows
    /// (`sim/dataplane.rs`), which the CPU then predicts.
    #[inline]
    pub fn retire(&mut self, now: Time, idle: bool) {
        if idle {
            debug_assert!(self.fifo.is_empty() && self.departures.iter().all(|d| d.start <= now));
            self.departures.clear();
            self.bytes = 0;
            return;
        }
        while let Some(d) = self.departures.front() {
            if d.start > now {
                break;
            }
            self.bytes -= u64::from(d.size);
            self.departures.pop_front();
        }
    }

    /// Start loading the oldest committed packet's entry, which the next
    /// arrival's [`DropTail::retire`] reads (see `crate::cache`).
    #[inline(always)]
    pub fn prefetch_head(&self) {
        if let Some(d) = self.departures.front() {
            crate::cache::prefetch(d);
        }
    }

    /// Start loading the entry of the packet waiting at the head (an
    /// event-driven port's next to send).
    #[inline(always)]
    pub fn prefetch_waiting(&self) {
        if let Some(e) = self.fifo.front() {
            crate::cache::prefetch(e);
        }
    }

    /// The packet waiting at the head, if any.
    #[inline(always)]
    pub fn first_waiting(&self) -> Option<u32> {
        self.fifo.front().map(|e| e.pkt)
    }

    /// Whether a packet of `size` bytes fits behind what is queued.
    #[inline]
    pub fn admits(&self, size: u32) -> bool {
        fits(self.capacity, self.packets(), self.bytes, size)
    }

    /// Packets and bytes a scheduled port has committed and not yet
    /// started: all it holds, since nothing waits in its FIFO. Read without
    /// the FIFO, whose header lies beyond the port's first two lines
    /// (`network/port.rs`).
    #[inline(always)]
    pub fn committed(&self) -> (u64, u64) {
        debug_assert!(self.fifo.is_empty(), "a scheduled port's FIFO is empty");
        (self.departures.len() as u64, self.bytes)
    }

    /// [`DropTail::admits`] on a scheduled port (see [`DropTail::committed`]).
    #[inline]
    pub fn admits_committed(&self, size: u32) -> bool {
        let (packets, bytes) = self.committed();
        fits(self.capacity, packets, bytes, size)
    }

    /// Queue a packet of a scheduled port that starts serializing at `start`
    /// (after every packet already committed).
    #[inline]
    pub fn commit(&mut self, start: Time, size: u32) {
        debug_assert!(self.departures.back().is_none_or(|d| d.start < start));
        self.bytes += u64::from(size);
        // Its growth past a large table is refusable, as the FIFO's is: a
        // deep NIC queue holds millions of departures.
        crate::cache::push_back_checked(&mut self.departures, Departure { start, size });
    }

    /// The packets and bytes still waiting at `at` in the queue of an
    /// event-driven port that sends them back to back from `first` on
    /// (serializing `b` bytes in `serialization(b)`), when the last starts
    /// after `at` and none starts exactly at `at`; otherwise `None`. The
    /// starts only grow, so the walk stops at the first entry starting after
    /// `at`: it and all behind it wait, the bytes of the queue but those of
    /// the entries ahead. It gives up (`None`) when more than
    /// [`WALK_AT_MOST`] start by `at`, not to walk a long queue per packet
    /// (a host delay of many serializations). Inline in the host's send
    /// (`Simulation::nic_at`): out of line, its call cost each of the
    /// flow-heavy case's TCP segments some 25 instructions.
    #[inline(always)]
    pub fn waiting_after(
        &self,
        first: Time,
        at: Time,
        serialization: impl Fn(u32) -> Time,
    ) -> Option<(u64, u64)> {
        debug_assert!(self.departures.is_empty(), "an event-driven port");
        let (mut start, mut ahead) = (first, 0);
        for (i, e) in self.fifo.iter().take(WALK_AT_MOST + 1).enumerate() {
            if start == at {
                return None;
            }
            if start > at {
                return Some(((self.fifo.len() - i) as u64, self.bytes - ahead));
            }
            ahead += u64::from(e.size);
            start = start + serialization(e.size);
        }
        None
    }

    /// The end of the fields a scheduled port's arrival reads, in bytes
    /// from the start of the struct (the port's layout test checks they
    /// share its second cache line).
    #[cfg(test)]
    pub const HOT_END: usize =
        std::mem::offset_of!(DropTail, capacity) + std::mem::size_of::<Capacity>();

    /// Packets and bytes committed to start after `t`: they were counted as
    /// sent when committed, and a run that stops at `t` has not sent them.
    pub fn unstarted_after(&self, t: Time) -> (u64, u64) {
        self.departures
            .iter()
            .filter(|d| d.start > t)
            .fold((0, 0), |(n, b), d| (n + 1, b + u64::from(d.size)))
    }

    /// When the first packet committed to start after `t` starts (the
    /// starts grow along the table).
    pub fn start_after(&self, t: Time) -> Option<Time> {
        self.departures.iter().map(|d| d.start).find(|&s| s > t)
    }
}

/// The fast paths of a port whose queue is a FIFO, as the port asks for
/// them without naming the discipline (`network/port.rs`): a scheduled
/// port's ([`DropTail::commit`]; `scheduled`: the port is one), the
/// prefetches of the event loop, and a host's look-ahead at its NIC
/// ([`DropTail::waiting_after`]). Other disciplines have none of them.
impl Queue {
    /// Whether the port may be scheduled (only a FIFO port may).
    pub fn schedulable(&self) -> bool {
        matches!(self, Queue::Droptail(_))
    }

    /// [`DropTail::retire`] on a scheduled port.
    #[inline(always)]
    pub fn retire(&mut self, now: Time, idle: bool) {
        if let Queue::Droptail(fifo) = self {
            fifo.retire(now, idle);
        }
    }

    /// Commit a packet of `size` bytes to start at `start` on a scheduled
    /// port, if its buffer admits it ([`DropTail::commit`]).
    #[inline(always)]
    pub fn commit(&mut self, start: Time, size: u32) -> bool {
        let Queue::Droptail(fifo) = self else {
            unreachable!("only FIFO ports are scheduled")
        };
        let admitted = fifo.admits_committed(size);
        if admitted {
            fifo.commit(start, size);
        }
        admitted
    }

    /// The AQM domain of `class` and the packets and bytes it holds; a
    /// scheduled FIFO's from its committed packets alone
    /// ([`DropTail::committed`]).
    #[inline(always)]
    pub fn occupancy(&self, class: u8, scheduled: bool) -> (usize, u64, u64) {
        match self {
            Queue::Droptail(fifo) if scheduled => {
                let (packets, bytes) = fifo.committed();
                (0, packets, bytes)
            }
            queue => queue.aqm_domain(class),
        }
    }

    /// The packets and bytes the whole queue holds (see
    /// [`Queue::occupancy`]).
    #[inline(always)]
    pub fn held(&self, scheduled: bool) -> (u64, u64) {
        match self {
            Queue::Droptail(fifo) if scheduled => fifo.committed(),
            queue => (queue.packets(), queue.bytes()),
        }
    }

    /// Whether the queue is empty (see [`Queue::occupancy`]).
    #[inline(always)]
    pub fn empty(&self, scheduled: bool) -> bool {
        match self {
            Queue::Droptail(fifo) if scheduled => fifo.committed().0 == 0,
            queue => queue.is_empty(),
        }
    }

    /// The packets and bytes not yet started at `now` (a scheduled FIFO's
    /// committed packets that started since the last arrival are still
    /// held, [`DropTail::retire`]).
    pub fn unstarted_at(&self, now: Time, scheduled: bool) -> (u64, u64) {
        match self {
            Queue::Droptail(fifo) if scheduled => fifo.unstarted_after(now),
            queue => queue.held(scheduled),
        }
    }

    /// Start loading a scheduled FIFO's oldest committed packet's entry.
    #[inline(always)]
    pub fn prefetch_head(&self) {
        if let Queue::Droptail(fifo) = self {
            fifo.prefetch_head();
        }
    }

    /// Start loading an event-driven FIFO's head entry.
    #[inline(always)]
    pub fn prefetch_waiting(&self) {
        if let Queue::Droptail(fifo) = self {
            fifo.prefetch_waiting();
        }
    }

    /// The packet an event-driven FIFO sends next.
    #[inline(always)]
    pub fn first_waiting(&self) -> Option<u32> {
        match self {
            Queue::Droptail(fifo) => fifo.first_waiting(),
            _ => None,
        }
    }

    /// [`DropTail::waiting_after`], for a packet of `size` bytes that a FIFO
    /// admits now; `None` on other disciplines.
    #[inline(always)]
    pub fn waiting_after(
        &self,
        size: u32,
        first: Time,
        at: Time,
        serialization: impl Fn(u32) -> Time,
    ) -> Option<(u64, u64)> {
        match self {
            Queue::Droptail(fifo) if fifo.admits(size) => {
                fifo.waiting_after(first, at, serialization)
            }
            _ => None,
        }
    }

    /// [`DropTail::unstarted_after`] on a scheduled port.
    pub fn unstarted_after(&self, t: Time) -> (u64, u64) {
        match self {
            Queue::Droptail(fifo) => fifo.unstarted_after(t),
            _ => (0, 0),
        }
    }

    /// [`DropTail::start_after`] on a scheduled port.
    pub fn start_after(&self, t: Time) -> Option<Time> {
        match self {
            Queue::Droptail(fifo) => fifo.start_after(t),
            _ => None,
        }
    }
}

impl Discipline for DropTail {
    type Spec = NoKeys;

    fn new(_spec: &NoKeys, port: &PortContext) -> DropTail {
        DropTail {
            fifo: VecDeque::new(),
            departures: VecDeque::new(),
            bytes: 0,
            capacity: port.buffer,
        }
    }

    #[inline]
    fn enqueue(&mut self, q: Queued, dropped: &mut Vec<u32>) {
        if self.admits(q.size) {
            self.bytes += u64::from(q.size);
            crate::cache::push_back_checked(
                &mut self.fifo,
                Entry {
                    pkt: q.pkt,
                    size: q.size,
                    class: q.class,
                },
            );
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
        (self.fifo.len() + self.departures.len()) as u64
    }

    fn bytes(&self) -> u64 {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        DropTail::new(&NoKeys {}, &PortContext::of_buffer(capacity))
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

    /// Back to back from 100 ps at 1 ps per byte, packets of 1000, 1500 and
    /// 500 bytes start at 100, 1100 and 2600 ps.
    #[test]
    fn what_waits_at_a_later_time_is_what_starts_after_it() {
        let mut d = droptail(Capacity::Packets(1000));
        let ser = |b: u32| Time(u64::from(b));
        let first = Time(100);
        assert_eq!(d.waiting_after(first, Time(50), ser), None, "empty");
        let mut dropped = Vec::new();
        for (i, size) in [(1, 1000), (2, 1500), (3, 500)] {
            d.enqueue(q(i, size), &mut dropped);
        }
        let at = |t| d.waiting_after(first, Time(t), ser);
        assert_eq!(at(50), Some((3, 3000)));
        assert_eq!(at(101), Some((2, 2000)));
        assert_eq!(at(2599), Some((1, 500)));
        // One starts exactly then, or none after.
        for t in [100, 1100, 2600, 2601, 9000] {
            assert_eq!(at(t), None, "at {t}");
        }
        // A long queue is walked only up to the first entry starting after
        // `at`: what waits behind it is counted, not walked.
        for i in 4..=1000 {
            d.enqueue(q(i, 1), &mut dropped);
        }
        let at = |t| d.waiting_after(first, Time(t), ser);
        assert_eq!(at(2599), Some((998, 3997 - 2500)));
        assert_eq!(at(50), Some((1000, 3997)));
        // Entries starting before `at` are walked past, at most WALK_AT_MOST:
        // from 0 at 2 ps each, `k + 1` of them start before 2k + 1 ps.
        let most = WALK_AT_MOST as u64;
        let past = |k: u64| d.waiting_after(Time::ZERO, Time(2 * k + 1), |_| Time(2));
        assert_eq!(
            past(most - 1),
            Some((1000 - most, 3997 - 3000 - (most - 3)))
        );
        assert_eq!(past(most), None, "more than {most} to walk past");
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
    fn committed_packets_leave_at_their_start_times() {
        let mut d = droptail(Capacity::Packets(2));
        assert!(d.admits(1500));
        d.commit(Time(10), 1500);
        d.commit(Time(20), 100);
        assert!(!d.admits(64));
        assert_eq!(d.unstarted_after(Time(10)), (1, 100));
        assert_eq!(d.start_after(Time(10)), Some(Time(20)));
        assert_eq!(d.start_after(Time(9)), Some(Time(10)));
        assert_eq!(d.start_after(Time(20)), None);
        d.retire(Time(9), false);
        assert_eq!((d.packets(), d.bytes()), (2, 1600));
        // A packet starting exactly now has left the queue.
        d.retire(Time(10), false);
        assert_eq!((d.packets(), d.bytes()), (1, 100));
        assert!(d.admits(64));
        d.retire(Time(25), false);
        assert_eq!((d.packets(), d.bytes()), (0, 0));
        // Once the wire is free, all committed packets have started.
        d.commit(Time(30), 1500);
        d.commit(Time(40), 1500);
        d.retire(Time(45), true);
        assert_eq!((d.packets(), d.bytes()), (0, 0));
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
