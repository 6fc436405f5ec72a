//! The event queue: a calendar queue keyed by (time, scheduled at, sequence).
//!
//! Ordering contract: events run in increasing time; events at the same time
//! run in the order they were scheduled: by when they were scheduled (or are
//! deemed scheduled, [`EventQueue::schedule_from`]), then in the order of the
//! calls.
//! With randomness drawn only from the scenario seed, a scenario therefore runs
//! bit-identically on every machine. Scheduling in the past is a bug and panics
//! in debug builds.

mod calendar;

use crate::units::Time;
use calendar::{sort_stably, Far, Ring, Slot, Width, RING};
use dary_heap::QuaternaryHeap;

/// What happens at an event. Payloads are arena or table indices.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// A packet's last bit reaches the node at the far end of its link.
    Arrive(u32),
    /// A port finished serializing; send the next queued packet.
    PortFree(u32),
    /// A host finished processing a received packet. With a host delay, the
    /// packet's arrival at the host is folded into this event, a host delay
    /// after it (`sim/dataplane.rs`).
    Deliver(u32),
    /// A stream's next packet leaves the application.
    StreamSend(u32),
    /// A probe packet leaves the application.
    ProbeSend(u32),
    /// A TCP packet finished host processing and joins its NIC queue.
    HostSend(u32),
    /// A TCP flow opens.
    FlowStart(u32),
    /// A connection's earliest timer (retransmission, delayed ACK, pacing,
    /// RACK, its controller's: `tcp::Conn::next_deadline`) may have come.
    ConnTimer(u32),
    /// A timer an application set (its index among the pending ones).
    AppTimer(u32),
    /// Switch agents emitted packets; send them (at the time they emitted).
    AgentSend,
    /// A switch agent's timer (its index among the agents' timers).
    AgentTimer(u32),
    /// The end of an interval of `trace.links`: every port's counters are
    /// read (`sim/links.rs`).
    LinkSample,
}

/// Buckets start 2^16 ps (65.5 ns) wide: a few tens of events on a loaded
/// 10 Gbps fabric, so sorting one as it becomes current is cheap. On a
/// sparser one (1 Gbps links, light load) most buckets would hold one event
/// and each would cost a turn of [`EventQueue::advance`], so the queue widens
/// its buckets, up to 2^24 ps (16.8 us), while they hold few events, and
/// narrows them again, never below 2^16 ps, when they fill up. Measured in
/// docs/performance.md: narrower buckets than 2^16 ps were slower on every
/// benchmark, even at k = 24 with hundreds of events per bucket.
const MIN_SHIFT: u32 = 16;
const MAX_SHIFT: u32 = 24;
/// The queue looks at how full its buckets are every [`LOOK_EVERY`] buckets
/// made current, or sooner once they held [`DENSE`] times as many events.
const LOOK_EVERY: u32 = 1024;
/// Below [`SPARSE`] events per bucket on average the buckets widen, above
/// [`DENSE`] they narrow, by the power of two that brings them nearest
/// [`TARGET`]; the bounds are a factor of 8 apart, so that the new width
/// does not swing back.
const SPARSE: u64 = 8;
const TARGET: u64 = 16;
const DENSE: u64 = 64;

/// A calendar queue (Brown, "Calendar queues", CACM 31(10), 1988) for integer
/// picosecond time: events fall into fixed-width time buckets on a ring; the
/// current bucket is sorted when the clock reaches it, and events beyond the
/// ring's horizon wait in a heap until it comes near. Pushes are appends and
/// pops are O(1) amortized, where a heap of the same events costs a
/// logarithmic number of cache-missing moves per operation.
pub struct EventQueue {
    /// The current bucket's events in run order; `head` is the next to run.
    current: Vec<Slot>,
    head: usize,
    /// The bucket number (`time >> shift`) of `current`.
    bucket: u64,
    /// The first time of the current bucket.
    start: Time,
    width: Width,
    /// Buckets made current since the last look at how full they are, and
    /// the events they held (with those scheduled into them once current).
    made_current: u32,
    held: u64,
    /// Buckets `bucket + 1 .. bucket + RING`, at slot `number % RING`, each
    /// in the order its events were put there.
    ring: Ring,
    /// Events at `bucket + RING` or later.
    far: QuaternaryHeap<Far>,
    /// A buffer for sorting the current bucket.
    scratch: Vec<Slot>,
    seq: u64,
    now: Time,
}

impl Default for EventQueue {
    fn default() -> EventQueue {
        EventQueue {
            current: Vec::new(),
            head: 0,
            bucket: 0,
            start: Time::ZERO,
            width: Width::new(MIN_SHIFT),
            made_current: 0,
            held: 0,
            ring: Ring::default(),
            far: QuaternaryHeap::new(),
            scratch: Vec::new(),
            seq: 0,
            now: Time::ZERO,
        }
    }
}

impl EventQueue {
    #[inline]
    pub fn now(&self) -> Time {
        self.now
    }

    #[inline]
    pub fn schedule(&mut self, time: Time, event: Event) {
        self.schedule_from(time, self.now, event);
    }

    /// Schedule `event` at `time` as if it were scheduled at `from` (now or
    /// later): it runs after every event at `time` scheduled before `from`.
    #[inline(always)]
    pub fn schedule_from(&mut self, time: Time, from: Time, event: Event) {
        debug_assert!(
            time >= from && from >= self.now,
            "event scheduled in the past"
        );
        let b = self.width.bucket(time);
        // Most events land in the ring: an append, inline.
        if b > self.bucket && b < self.bucket + RING as u64 {
            self.put_in_ring(b, self.width.slot(time, from, event));
        } else {
            self.schedule_now_or_far(b, time, from, event);
        }
    }

    /// Schedule an event in the current bucket or beyond the ring.
    #[inline(never)]
    fn schedule_now_or_far(&mut self, b: u64, time: Time, from: Time, event: Event) {
        if b == self.bucket {
            // After every pending entry of a lower or equal key: this one was
            // scheduled last.
            let slot = self.width.slot(time, from, event);
            let at = self.head + self.current[self.head..].partition_point(|x| x.key <= slot.key);
            self.current.insert(at, slot);
            self.held += 1;
        } else {
            self.push_far(time, from, event);
        }
    }

    /// Put an event in the overflow heap, after every one already scheduled.
    fn push_far(&mut self, time: Time, from: Time, event: Event) {
        self.seq += 1;
        let seq = self.seq;
        self.far.push(Far {
            time,
            from,
            seq,
            event,
        });
    }

    #[inline(always)]
    fn put_in_ring(&mut self, bucket: u64, slot: Slot) {
        self.ring.push((bucket % RING as u64) as usize, slot);
    }

    /// Whether no event is pending.
    pub fn is_empty(&self) -> bool {
        self.head == self.current.len() && self.ring.is_empty() && self.far.is_empty()
    }

    /// Remove the next event and advance the clock to it.
    #[inline]
    pub fn pop(&mut self) -> Option<(Time, Event)> {
        if self.head == self.current.len() && !self.advance() {
            return None;
        }
        let slot = self.current[self.head];
        self.head += 1;
        self.now = Time(self.start.0 | slot.key >> self.width.rank_bits);
        Some((self.now, slot.event))
    }

    /// The event `ahead` places after the next one, if it is already in the
    /// current bucket.
    #[inline]
    pub fn peek_ahead(&self, ahead: usize) -> Option<Event> {
        self.current.get(self.head + ahead).map(|s| s.event)
    }

    /// The width of a bucket (it adapts to how many events the buckets hold).
    pub fn bucket_width(&self) -> Time {
        Time(1 << self.width.shift)
    }

    /// Make the next non-empty bucket current; false when no event is left.
    ///
    /// A ring bucket holds its events in sequence order: events scheduled
    /// straight into it come after those the overflow heap handed over (it
    /// hands them over, in its (time, from, seq) order, as soon as the
    /// horizon reaches their bucket, and everything scheduled there later
    /// has a later sequence number).
    #[inline(never)]
    fn advance(&mut self) -> bool {
        self.current.clear();
        self.head = 0;
        if self.made_current == LOOK_EVERY || self.held >= DENSE * u64::from(LOOK_EVERY) {
            self.look();
        }
        let cur = (self.bucket % RING as u64) as usize;
        if !self.current.is_empty() {
            // After a rescale, the events of the bucket holding now.
            sort_stably(&mut self.current, &mut self.scratch);
        } else if let Some(d) = self.ring.next_occupied(cur) {
            self.bucket += d;
            self.start = self.width.start(self.bucket);
            let i = (self.bucket % RING as u64) as usize;
            self.ring.take_sorted(i, &mut self.current);
            // The heap holds no event of this bucket: the horizon passed
            // it before.
            self.hand_over_far();
        } else if let Some(e) = self.far.peek() {
            // The ring is empty: the next events are the heap's.
            self.bucket = self.width.bucket(e.time);
            self.start = self.width.start(self.bucket);
            self.hand_over_far();
            sort_stably(&mut self.current, &mut self.scratch);
        } else {
            return false;
        }
        self.made_current += 1;
        self.held += self.current.len() as u64;
        true
    }

    /// The horizon moved: bring what it now covers from the overflow heap
    /// into the ring (or the current bucket, after a rescale).
    fn hand_over_far(&mut self) {
        let horizon = self.bucket + RING as u64;
        while let Some(e) = self.far.peek() {
            let b = self.width.bucket(e.time);
            if b >= horizon {
                break;
            }
            let e = self.far.pop().expect("peeked");
            self.place(b, e.time, e.from, e.event);
        }
    }

    /// Put an event in bucket `b`: the current one or one on the ring.
    fn place(&mut self, b: u64, time: Time, from: Time, event: Event) {
        let slot = self.width.slot(time, from, event);
        if b == self.bucket {
            self.current.push(slot);
        } else {
            self.put_in_ring(b, slot);
        }
    }

    /// Widen the buckets if those made current since the last look held
    /// fewer than [`SPARSE`] events on average, narrow them if more than
    /// [`DENSE`]. Called with the current bucket used up.
    fn look(&mut self) {
        let per_bucket = (self.held / u64::from(self.made_current.max(1))).max(1);
        self.made_current = 0;
        self.held = 0;
        let was = self.width.shift;
        let shift = if per_bucket < SPARSE {
            was + (TARGET / per_bucket).ilog2()
        } else if per_bucket > DENSE {
            was.saturating_sub((per_bucket / TARGET).ilog2())
        } else {
            return;
        };
        let shift = shift.clamp(MIN_SHIFT, MAX_SHIFT);
        if shift != was {
            self.rescale(shift);
        }
    }

    /// Re-bucket every pending event at buckets 2^`shift` ps wide; the bucket
    /// holding now becomes current (it may hold events). The current bucket
    /// is used up, so every pending event is on the ring or beyond it.
    ///
    /// The order is kept. The ring is emptied bucket by bucket in time
    /// order, each bucket in the order it holds, and refilled in that order,
    /// so events of one time (all in one old bucket) stay in their relative
    /// order. Narrower buckets bring the horizon closer: events on the ring
    /// beyond it go back to the heap, in that same order, with new sequence
    /// numbers; the heap held only events beyond the old horizon, so none of
    /// its events has the time of one of them. Wider buckets move the horizon
    /// out: the heap's events then join the ring after those already there,
    /// all of which are earlier.
    fn rescale(&mut self, shift: u32) {
        let mut pending = Vec::new();
        let mut bucket = Vec::new();
        for d in 1..RING as u64 {
            let i = ((self.bucket + d) % RING as u64) as usize;
            self.ring.take(i, &mut bucket);
            for slot in bucket.drain(..) {
                pending.push((self.width.times(self.bucket + d, &slot), slot.event));
            }
        }
        self.width = Width::new(shift);
        self.bucket = self.width.bucket(self.now);
        self.start = self.width.start(self.bucket);
        let horizon = self.bucket + RING as u64;
        for ((time, from), event) in pending {
            let b = self.width.bucket(time);
            if b < horizon {
                self.place(b, time, from, event);
            } else {
                self.push_far(time, from, event);
            }
        }
        self.hand_over_far();
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

    /// The ring's chunks go back to its pool when their bucket becomes
    /// current and are drawn again: over a million events, with at most 64
    /// pending at once, the ring never holds more chunks than events
    /// pending, however long the run.
    #[test]
    fn ring_memory_follows_the_pending_events_not_the_run() {
        let mut q = EventQueue::default();
        for i in 0..64 {
            q.schedule(Time(70_000 + 9_000 * i), Event::Arrive(i as u32));
        }
        for i in 0..1_000_000u64 {
            let (t, e) = q.pop().expect("64 events pending");
            q.schedule(t + Time(200_000 + 1_000 * (i % 97)), e);
        }
        assert!(
            q.ring.chunks.len() <= 64,
            "{} chunks for 64 pending events",
            q.ring.chunks.len()
        );
    }

    /// A reference queue: a heap of (time, from, seq), against which the
    /// calendar is checked pop by pop.
    struct Check {
        q: EventQueue,
        model: std::collections::BinaryHeap<std::cmp::Reverse<(u64, u64, u64)>>,
        seq: u64,
        now: u64,
        rng: rand_xoshiro::Xoshiro256PlusPlus,
    }

    impl Check {
        fn new(seed: u64) -> Check {
            use rand::SeedableRng;
            Check {
                q: EventQueue::default(),
                model: Default::default(),
                seq: 0,
                now: 0,
                rng: rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed),
            }
        }

        /// Schedule an event `ahead` ps from now, with a coarse time and
        /// `from` (now, the event's time or between), so that keys tie often.
        fn push(&mut self, ahead: u64) {
            use rand::Rng;
            let now = self.now;
            let time = ((now + ahead) & !0xff).max(now);
            let from = match self.rng.random_range(0..3) {
                0 => now,
                1 => time,
                _ => self.rng.random_range(now..=time) & !0xfff,
            }
            .max(now);
            self.seq += 1;
            let event = Event::Arrive(self.seq as u32);
            self.q.schedule_from(Time(time), Time(from), event);
            self.model.push(std::cmp::Reverse((time, from, self.seq)));
        }

        fn pop(&mut self) {
            match (self.q.pop(), self.model.pop()) {
                (Some((t, e)), Some(std::cmp::Reverse((mt, _, ms)))) => {
                    assert_eq!((t.0, e), (mt, Event::Arrive(ms as u32)));
                    self.now = t.0;
                }
                (None, None) => {}
                (got, want) => panic!("{got:?} against {want:?}"),
            }
        }

        fn drain(&mut self) {
            while !self.model.is_empty() {
                self.pop();
            }
            assert_eq!(self.q.pop(), None);
        }
    }

    /// The calendar pops exactly what a sorted list of (time, from, seq)
    /// gives, for times in the current bucket, across the ring, beyond the
    /// horizon and after long empty stretches, with `from` now or between now
    /// and the event (many ties), and pushes interleaved with pops.
    #[test]
    fn pops_in_time_then_scheduling_order() {
        use rand::Rng;
        let mut c = Check::new(7);
        let bucket = 1u64 << MIN_SHIFT;
        for round in 0..20_000 {
            for _ in 0..c.rng.random_range(0..4) {
                let ahead = match c.rng.random_range(0..6) {
                    0 => 0,
                    1 => c.rng.random_range(0..bucket),
                    2 => c.rng.random_range(0..bucket * 8),
                    3 => c.rng.random_range(0..bucket * RING as u64),
                    4 => c.rng.random_range(0..bucket * RING as u64 * 5),
                    _ => 1_000_000 * c.rng.random_range(0..3),
                };
                c.push(ahead);
            }
            if round % 3 != 0 {
                c.pop();
            }
        }
        c.drain();
    }

    /// The order holds while the buckets widen (sparse events, some beyond
    /// the horizon) and narrow again (hundreds of events per narrowest
    /// bucket), back and forth, with events pending across every rescale.
    #[test]
    fn pops_in_order_while_buckets_widen_and_narrow() {
        use rand::Rng;
        let mut c = Check::new(11);
        let narrowest = 1u64 << MIN_SHIFT;
        for _ in 0..2 {
            // Sparse: a few hundred events spread over 30 ms (and a few 1 s
            // out), one pushed per pop.
            for _ in 0..300 {
                let ahead = c.rng.random_range(0..30_000_000_000);
                c.push(ahead);
            }
            for _ in 0..60_000 {
                let ahead = match c.rng.random_range(0..50) {
                    0 => 1_000_000_000_000,
                    1 => 0,
                    _ => c.rng.random_range(0..30_000_000_000),
                };
                c.push(ahead);
                c.pop();
            }
            assert!(c.q.bucket_width().0 > narrowest, "the buckets widened");
            // Dense: about 200 events per narrowest bucket.
            for _ in 0..6_000 {
                for _ in 0..c.rng.random_range(0..400) {
                    let ahead = c.rng.random_range(0..narrowest * 2);
                    c.push(ahead);
                }
                for _ in 0..200 {
                    c.pop();
                }
            }
            assert_eq!(c.q.bucket_width().0, narrowest, "the buckets narrowed");
        }
        c.drain();
    }
}
