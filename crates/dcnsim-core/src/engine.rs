//! The event queue: a calendar queue keyed by (time, scheduled at, sequence).
//!
//! Ordering contract: events run in increasing time; events at the same time
//! run in the order they were scheduled: by when they were scheduled (or are
//! deemed scheduled, [`EventQueue::schedule_from`]), then in the order of the
//! calls.
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

/// An event beyond the ring's horizon, with its full ordering key.
#[derive(Clone, Copy, Debug)]
struct Far {
    time: Time,
    /// When the event was scheduled, or is deemed scheduled (see
    /// [`EventQueue::schedule_from`]).
    from: Time,
    seq: u64,
    event: Event,
}

impl Far {
    /// The ordering key: time, then scheduling order.
    #[inline]
    fn key(&self) -> (u64, u64, u64) {
        (self.time.0, self.from.0, self.seq)
    }
}

impl PartialEq for Far {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}
impl Eq for Far {}
impl PartialOrd for Far {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Far {
    fn cmp(&self, other: &Self) -> Ordering {
        // Reversed: the overflow heap pops the earliest (time, from, seq) first.
        other.key().cmp(&self.key())
    }
}

/// An event in a bucket of the ring (or the current one): 16 bytes, ordered
/// within its bucket by one `u64`. Its high [`BUCKET_SHIFT`] bits are the
/// time within the bucket; the low [`RANK_BITS`] rank the event among those
/// at the same time by when it was scheduled: `RANK_MAX - (time - from)`, so
/// an earlier `from` ranks lower. Events of equal key keep the order they
/// were put in the bucket, which is their sequence order (see
/// [`EventQueue::advance`]), so a stable sort by key gives (time, from, seq).
#[derive(Clone, Copy, Debug)]
struct Slot {
    key: u64,
    event: Event,
}

/// Bits of a slot key that rank events at one time.
const RANK_BITS: u32 = 64 - BUCKET_SHIFT;
const RANK_MAX: u64 = (1 << RANK_BITS) - 1;

impl Slot {
    /// `time - from` saturates at `RANK_MAX` (281 s). Only events that came
    /// through the overflow heap can be scheduled that far ahead; the heap
    /// hands them over in (time, from, seq) order and the stable sort keeps
    /// it, so the ranks that saturate never decide an order.
    #[inline]
    fn new(time: Time, from: Time, event: Event) -> Slot {
        let within = time.0 & ((1 << BUCKET_SHIFT) - 1);
        let rank = RANK_MAX - (time.0 - from.0).min(RANK_MAX);
        Slot {
            key: within << RANK_BITS | rank,
            event,
        }
    }
}

/// A bucket spans 2^16 ps (65.5 ns): a few tens of events on a loaded 10 Gbps
/// fabric, so sorting one as it becomes current is cheap.
const BUCKET_SHIFT: u32 = 16;
/// Buckets in the ring: 2048 cover 134 us ahead of the current one, past every
/// packet's next hop; timers further out wait in the overflow heap. Measured
/// on the fixed benchmarks against 2^14 ps x 16384 and 2^15 ps x 4096 buckets
/// (docs/performance.md): a smaller ring stays in cache.
const RING: usize = 2048;
const WORDS: usize = RING / 64;

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
    /// The bucket number (`time >> BUCKET_SHIFT`) of `current`.
    bucket: u64,
    /// Buckets `bucket + 1 .. bucket + RING`, at slot `number % RING`, each
    /// in the order its events were put there.
    ring: Box<[Vec<Slot>]>,
    /// Which ring slots hold events.
    occupied: [u64; WORDS],
    in_ring: usize,
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
            ring: (0..RING).map(|_| Vec::new()).collect(),
            occupied: [0; WORDS],
            in_ring: 0,
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
        let b = time.0 >> BUCKET_SHIFT;
        // Most events land in the ring: an append, inline.
        if b > self.bucket && b < self.bucket + RING as u64 {
            self.put_in_ring(b, Slot::new(time, from, event));
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
            let slot = Slot::new(time, from, event);
            let at = self.head + self.current[self.head..].partition_point(|x| x.key <= slot.key);
            self.current.insert(at, slot);
        } else {
            self.seq += 1;
            let seq = self.seq;
            self.far.push(Far {
                time,
                from,
                seq,
                event,
            });
        }
    }

    #[inline(always)]
    fn put_in_ring(&mut self, bucket: u64, slot: Slot) {
        let i = (bucket % RING as u64) as usize;
        self.ring[i].push(slot);
        self.occupied[i / 64] |= 1 << (i % 64);
        self.in_ring += 1;
    }

    /// Remove the next event and advance the clock to it.
    #[inline]
    pub fn pop(&mut self) -> Option<(Time, Event)> {
        if self.head == self.current.len() && !self.advance() {
            return None;
        }
        let slot = self.current[self.head];
        self.head += 1;
        self.now = Time(self.bucket << BUCKET_SHIFT | slot.key >> RANK_BITS);
        Some((self.now, slot.event))
    }

    /// The event `ahead` places after the next one, if it is already in the
    /// current bucket.
    #[inline]
    pub fn peek_ahead(&self, ahead: usize) -> Option<Event> {
        self.current.get(self.head + ahead).map(|s| s.event)
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
        let next = if self.in_ring > 0 {
            self.bucket + self.next_occupied()
        } else if let Some(e) = self.far.peek() {
            e.time.0 >> BUCKET_SHIFT
        } else {
            return false;
        };
        self.bucket = next;
        // The horizon moved: bring what it now covers into the ring.
        let horizon = next + RING as u64;
        while let Some(e) = self.far.peek() {
            let b = e.time.0 >> BUCKET_SHIFT;
            if b >= horizon {
                break;
            }
            let e = self.far.pop().expect("peeked");
            self.put_in_ring(b, Slot::new(e.time, e.from, e.event));
        }
        let i = (next % RING as u64) as usize;
        self.current.clear();
        self.head = 0;
        std::mem::swap(&mut self.current, &mut self.ring[i]);
        self.occupied[i / 64] &= !(1 << (i % 64));
        self.in_ring -= self.current.len();
        sort_stably(&mut self.current, &mut self.scratch);
        true
    }

    /// Distance (1..RING) from the current bucket to the next occupied ring
    /// slot. The current bucket's own slot is always empty (its events are in
    /// `current`), so a full turn ends there.
    fn next_occupied(&self) -> u64 {
        let cur = (self.bucket % RING as u64) as usize;
        let start = (cur + 1) % RING;
        let (w0, b0) = (start / 64, start % 64);
        let mut slot = None;
        let first = self.occupied[w0] & (u64::MAX << b0);
        if first != 0 {
            slot = Some(w0 * 64 + first.trailing_zeros() as usize);
        } else {
            for i in 1..=WORDS {
                let w = (w0 + i) % WORDS;
                if self.occupied[w] != 0 {
                    slot = Some(w * 64 + self.occupied[w].trailing_zeros() as usize);
                    break;
                }
            }
        }
        let slot = slot.expect("in_ring > 0 but no slot is occupied");
        ((slot + RING - cur) % RING) as u64
    }
}

/// Sub-buckets of the counting pass of [`sort_stably`]: 2^5, 2 ns each.
const SUB_BITS: u32 = 5;

/// Sort `slots` by key, keeping equal keys in their order (`scratch` is a
/// reused buffer). A bucket holds a few tens of events in no particular
/// order: one stable counting pass spreads them over 32 sub-buckets by the
/// top bits of their key, which leaves an insertion sort almost nothing to
/// move (measured against the library's stable sort in docs/performance.md).
fn sort_stably(slots: &mut Vec<Slot>, scratch: &mut Vec<Slot>) {
    if slots.len() > 16 {
        let sub = |s: &Slot| (s.key >> (64 - SUB_BITS)) as usize;
        let mut at = [0u32; 1 << SUB_BITS];
        for s in slots.iter() {
            at[sub(s)] += 1;
        }
        let mut sum = 0;
        for a in &mut at {
            (*a, sum) = (sum, sum + *a);
        }
        scratch.clear();
        scratch.resize(slots.len(), slots[0]);
        for s in slots.iter() {
            let i = &mut at[sub(s)];
            scratch[*i as usize] = *s;
            *i += 1;
        }
        std::mem::swap(slots, scratch);
    }
    for i in 1..slots.len() {
        let x = slots[i];
        let mut j = i;
        while j > 0 && slots[j - 1].key > x.key {
            slots[j] = slots[j - 1];
            j -= 1;
        }
        slots[j] = x;
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

    /// The bucket sort is the library's stable sort, for sizes on both sides
    /// of its counting pass and keys that tie often, within and across
    /// sub-buckets.
    #[test]
    fn bucket_sort_is_stable() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(3);
        let mut scratch = Vec::new();
        for n in [0, 1, 2, 15, 16, 17, 40, 300] {
            for _ in 0..50 {
                let mut slots: Vec<Slot> = (0..n)
                    .map(|i| Slot {
                        key: (rng.random_range(0..8u64) << 60) | rng.random_range(0..4u64),
                        event: Event::Arrive(i),
                    })
                    .collect();
                let mut want = slots.clone();
                want.sort_by_key(|s| s.key);
                sort_stably(&mut slots, &mut scratch);
                let events = |v: &[Slot]| v.iter().map(|s| (s.key, s.event)).collect::<Vec<_>>();
                assert_eq!(events(&slots), events(&want));
            }
        }
    }

    /// The calendar pops exactly what a sorted list of (time, from, seq)
    /// gives, for times in the current bucket, across the ring, beyond the
    /// horizon and after long empty stretches, with `from` now or between now
    /// and the event (many ties), and pushes interleaved with pops.
    #[test]
    fn pops_in_time_then_scheduling_order() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(7);
        let mut q = EventQueue::default();
        let mut model = std::collections::BinaryHeap::new();
        let mut seq = 0;
        let mut now = 0u64;
        let bucket = 1u64 << BUCKET_SHIFT;
        for round in 0..20_000 {
            for _ in 0..rng.random_range(0..4) {
                let ahead = match rng.random_range(0..6) {
                    0 => 0,
                    1 => rng.random_range(0..bucket),
                    2 => rng.random_range(0..bucket * 8),
                    3 => rng.random_range(0..bucket * RING as u64),
                    4 => rng.random_range(0..bucket * RING as u64 * 5),
                    _ => 1_000_000 * rng.random_range(0..3),
                };
                // Coarse times and `from`s, so that many keys tie.
                let time = (now + ahead) & !0xff;
                let time = time.max(now);
                let from = match rng.random_range(0..3) {
                    0 => now,
                    1 => time,
                    _ => rng.random_range(now..=time) & !0xfff,
                }
                .max(now);
                seq += 1;
                q.schedule_from(Time(time), Time(from), Event::Arrive(seq as u32));
                model.push(std::cmp::Reverse((time, from, seq)));
            }
            if round % 3 != 0 {
                match (q.pop(), model.pop()) {
                    (Some((t, e)), Some(std::cmp::Reverse((mt, _, ms)))) => {
                        assert_eq!((t.0, e), (mt, Event::Arrive(ms as u32)));
                        now = t.0;
                    }
                    (None, None) => {}
                    (got, want) => panic!("{got:?} against {want:?}"),
                }
            }
        }
        while let Some(std::cmp::Reverse((mt, _, ms))) = model.pop() {
            assert_eq!(q.pop(), Some((Time(mt), Event::Arrive(ms as u32))));
        }
        assert_eq!(q.pop(), None);
    }
}
