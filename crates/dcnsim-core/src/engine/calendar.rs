//! The calendar queue's data: the ring of buckets, whose events sit in
//! chunks drawn from one pool ([`Ring`]), the one-`u64` key that orders the
//! events of a bucket ([`Slot`], [`Width`]), the overflow heap's entries
//! ([`Far`]) and the stable sort of a bucket as it becomes current
//! ([`sort_stably`]). The queue itself is [`super::EventQueue`].

use super::Event;
use crate::units::Time;
use std::cmp::Ordering;

/// Buckets in the ring: 4096 cover 268 us ahead of the current one at the
/// narrowest width, past every packet's next hop, even behind a thousand
/// packets committed to a 10 Gbps FIFO (those went through the overflow
/// heap with 2048 buckets, 1.5 % of the events at k = 24); timers further
/// out wait in the heap. A bucket's header is 12 bytes, so the ring's are
/// 48 kB (measured in docs/performance.md; with a vector per bucket,
/// 24 bytes and a separate allocation each, larger rings were slower).
pub(super) const RING: usize = 4096;
const WORDS: usize = RING / 64;

/// An event beyond the ring's horizon, with its full ordering key.
#[derive(Clone, Copy, Debug)]
pub(super) struct Far {
    pub(super) time: Time,
    /// When the event was scheduled, or is deemed scheduled (see
    /// [`super::EventQueue::schedule_from`]).
    pub(super) from: Time,
    pub(super) seq: u64,
    pub(super) event: Event,
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
/// within its bucket by one `u64`. Its high `shift` bits (the bucket width
/// is 2^`shift` ps) are the time within the bucket; the low `64 - shift`
/// rank the event among those at the same time by when it was scheduled:
/// `rank_max - (time - from)`, so an earlier `from` ranks lower. Events of
/// equal key keep the order they were put in the bucket, which is their
/// sequence order (see [`super::EventQueue::advance`]), so a stable sort by key
/// gives (time, from, seq).
#[derive(Clone, Copy, Debug)]
pub(super) struct Slot {
    pub(super) key: u64,
    pub(super) event: Event,
}

impl Slot {
    /// What fills a chunk before events are put in it.
    const EMPTY: Slot = Slot {
        key: 0,
        event: Event::AgentSend,
    };
}

/// The width of the buckets, 2^`shift` ps, and what slot keys derive from
/// it (kept, not recomputed per event).
#[derive(Clone, Copy, Debug)]
pub(super) struct Width {
    pub(super) shift: u32,
    /// Bits of a slot key that rank events at one time: `64 - shift`.
    pub(super) rank_bits: u32,
    /// The largest rank.
    rank_max: u64,
}

impl Width {
    pub(super) fn new(shift: u32) -> Width {
        Width {
            shift,
            rank_bits: 64 - shift,
            rank_max: u64::MAX >> shift,
        }
    }

    #[inline(always)]
    pub(super) fn bucket(self, time: Time) -> u64 {
        time.0 >> self.shift
    }

    /// `time - from` saturates at the largest rank (281 s with the narrowest
    /// buckets, 1.1 s with the widest), far beyond the ring's horizon. Only
    /// events that came through the overflow heap can be scheduled that far
    /// ahead; the heap hands them over in (time, from, seq) order and the
    /// stable sort keeps it, so the ranks that saturate never decide an order.
    #[inline(always)]
    pub(super) fn slot(self, time: Time, from: Time, event: Event) -> Slot {
        let rank = self.rank_max - (time.0 - from.0).min(self.rank_max);
        Slot {
            key: time.0 << self.rank_bits | rank,
            event,
        }
    }

    /// The first time of bucket `bucket`.
    pub(super) fn start(self, bucket: u64) -> Time {
        Time(bucket << self.shift)
    }

    /// The time and (up to the saturation above) the `from` of a slot of
    /// bucket `bucket`.
    pub(super) fn times(self, bucket: u64, slot: &Slot) -> (Time, Time) {
        let time = Time(self.start(bucket).0 | slot.key >> self.rank_bits);
        let from = Time(time.0 - (self.rank_max - (slot.key & self.rank_max)));
        (time, from)
    }
}

/// Slots in a chunk of a ring bucket: two cache lines.
const CHUNK: usize = 8;

#[derive(Clone, Copy)]
#[repr(C, align(64))]
pub(super) struct Chunk([Slot; CHUNK]);

/// A ring bucket: a chain of chunks, the first and the last, and how many
/// events it holds.
#[derive(Clone, Copy, Default)]
struct Bucket {
    first: u32,
    last: u32,
    len: u32,
}

/// The ring's buckets, their events in chunks of eight (two cache lines)
/// drawn from one pool, and the links of the chunks apart from them. A
/// bucket fills while the clock is a few hundred ns to a few tens of us
/// short of it, and gives its chunks back when it becomes current; the
/// pool hands out the chunk given back last, whose lines are still in the
/// cache. With a vector per bucket, each bucket's memory was last touched
/// a whole turn of the ring earlier (134 us with 2048 buckets), so appends
/// missed the caches at every new line (docs/performance.md).
pub(super) struct Ring {
    buckets: Box<[Bucket; RING]>,
    /// Which buckets hold events.
    occupied: [u64; WORDS],
    pub(super) chunks: Vec<Chunk>,
    /// The chunk after each chunk in its bucket. Apart from the chunks, in
    /// a small table that stays cached: a bucket's walk through its chunks
    /// ([`Ring::take`]) finds each next chunk without waiting for the one
    /// before, so a dense bucket's chunks (a hundred at k = 24) load
    /// together.
    next: Vec<u32>,
    /// Chunks holding no bucket's events, the one given back last on top.
    free: Vec<u32>,
}

impl Default for Ring {
    fn default() -> Ring {
        Ring {
            buckets: Box::new([Bucket::default(); RING]),
            occupied: [0; WORDS],
            chunks: Vec::new(),
            next: Vec::new(),
            free: Vec::new(),
        }
    }
}

impl Ring {
    /// Append `slot` to bucket `i`.
    #[inline(always)]
    pub(super) fn push(&mut self, i: usize, slot: Slot) {
        let at = self.buckets[i].len as usize % CHUNK;
        if at == 0 {
            self.chain(i);
        }
        let b = &mut self.buckets[i];
        b.len += 1;
        self.chunks[b.last as usize].0[at] = slot;
    }

    /// Give bucket `i` a new last chunk (its first: it now holds events).
    #[inline(always)]
    fn chain(&mut self, i: usize) {
        let c = self.free.pop().unwrap_or_else(|| {
            crate::cache::push_advised(&mut self.chunks, Chunk([Slot::EMPTY; CHUNK]));
            self.next.push(0);
            (self.chunks.len() - 1) as u32
        });
        let b = &mut self.buckets[i];
        if b.len == 0 {
            b.first = c;
            self.occupied[i / 64] |= 1 << (i % 64);
        } else {
            self.next[b.last as usize] = c;
        }
        b.last = c;
    }

    /// Bucket `b`'s events in order, a chunk's worth at a time.
    fn parts(&self, b: Bucket) -> impl Iterator<Item = &[Slot]> + Clone {
        let (mut c, mut left) = (b.first as usize, b.len as usize);
        std::iter::from_fn(move || {
            if left == 0 {
                return None;
            }
            let n = left.min(CHUNK);
            let part = &self.chunks[c].0[..n];
            left -= n;
            if left > 0 {
                c = self.next[c] as usize;
            }
            Some(part)
        })
    }

    /// Empty bucket `i`: its events go to `put` (a chunk's worth at a
    /// time, in order), its chunks back to the pool.
    #[inline(always)]
    fn take_with(&mut self, i: usize, put: impl FnOnce(&Ring, Bucket)) {
        let b = std::mem::take(&mut self.buckets[i]);
        self.occupied[i / 64] &= !(1 << (i % 64));
        put(self, b);
        let (mut c, mut left) = (b.first, b.len as usize);
        while left > 0 {
            self.free.push(c);
            left -= left.min(CHUNK);
            c = self.next[c as usize];
        }
    }

    /// Append bucket `b`'s events, in order, to `into`.
    fn copy_out(&self, b: Bucket, into: &mut Vec<Slot>) {
        for part in self.parts(b) {
            // Slot by slot: `extend_from_slice` called `memmove` for these
            // few bytes.
            for &slot in part {
                into.push(slot);
            }
        }
    }

    /// Move bucket `i`'s events, in order, to the end of `into`.
    pub(super) fn take(&mut self, i: usize, into: &mut Vec<Slot>) {
        self.take_with(i, |ring, b| ring.copy_out(b, into));
    }

    /// Whether no bucket holds an event.
    pub(super) fn is_empty(&self) -> bool {
        self.occupied.iter().all(|&w| w == 0)
    }

    /// Make bucket `i`'s events the contents of `into`, sorted stably by
    /// key ([`sort_stably`], its counting pass reading the chunks: no copy
    /// in between).
    pub(super) fn take_sorted(&mut self, i: usize, into: &mut Vec<Slot>) {
        self.take_with(i, |ring, b| {
            into.clear();
            if b.len as usize > SPREAD_ABOVE {
                spread(ring.parts(b), b.len as usize, into);
            } else {
                ring.copy_out(b, into);
            }
        });
        insertion_sort(into);
    }

    /// Distance (1..RING) from bucket slot `cur` to the next occupied one,
    /// if any; `cur` itself is empty (its events are current), so a full
    /// turn ends there.
    pub(super) fn next_occupied(&self, cur: usize) -> Option<u64> {
        let start = (cur + 1) % RING;
        let (w0, b0) = (start / 64, start % 64);
        let first = self.occupied[w0] & (u64::MAX << b0);
        let slot = if first != 0 {
            w0 * 64 + first.trailing_zeros() as usize
        } else {
            let w = (1..=WORDS)
                .map(|i| (w0 + i) % WORDS)
                .find(|&w| self.occupied[w] != 0)?;
            w * 64 + self.occupied[w].trailing_zeros() as usize
        };
        Some(((slot + RING - cur) % RING) as u64)
    }
}

/// Above this many events a bucket's sort begins with the counting pass.
const SPREAD_ABOVE: usize = 16;

/// Sort `slots` by key, keeping equal keys in their order (`scratch` is a
/// reused buffer). A bucket holds a few tens of events in no particular
/// order (a few hundred at k = 24): one stable counting pass ([`spread`])
/// spreads them over about as many sub-buckets by the top bits of their
/// key, which leaves an insertion sort almost nothing to move (measured
/// against the library's stable sort in docs/performance.md).
pub(super) fn sort_stably(slots: &mut Vec<Slot>, scratch: &mut Vec<Slot>) {
    if slots.len() > SPREAD_ABOVE {
        spread(std::iter::once(&slots[..]), slots.len(), scratch);
        std::mem::swap(slots, scratch);
    }
    insertion_sort(slots);
}

/// Make `into` the `n` slots of `parts` (read twice) ordered stably by the
/// top bits of their key: a counting sort's one pass, over 64 sub-buckets
/// (1 ns each in a 65.5 ns bucket) up to 63 events, 256 up to 511, else
/// 1024. With 32 for all, a dense bucket at k = 24 left the insertion sort
/// a dozen events per sub-bucket to order; with 32 up to 63 events, B1's
/// buckets of a few tens left it enough that its loop's exit was
/// mispredicted for about one event in four (callgrind's branch model; 64
/// sub-buckets: a tenth of a misprediction fewer per event for 0.4 % more
/// instructions; 128: more of both; docs/performance.md, item 26).
fn spread<'a>(parts: impl Iterator<Item = &'a [Slot]> + Clone, n: usize, into: &mut Vec<Slot>) {
    match n {
        0..64 => spread_over::<64>(parts, n, into),
        64..512 => spread_over::<256>(parts, n, into),
        _ => spread_over::<1024>(parts, n, into),
    }
}

/// [`spread`] over `SUBS` (a power of two) sub-buckets.
fn spread_over<'a, const SUBS: usize>(
    parts: impl Iterator<Item = &'a [Slot]> + Clone,
    n: usize,
    into: &mut Vec<Slot>,
) {
    let sub = |s: &Slot| (s.key >> (64 - SUBS.trailing_zeros())) as usize;
    let mut at = [0u32; SUBS];
    for part in parts.clone() {
        for s in part {
            at[sub(s)] += 1;
        }
    }
    let mut sum = 0;
    for a in &mut at {
        (*a, sum) = (sum, sum + *a);
    }
    into.clear();
    into.resize(n, Slot::EMPTY);
    for part in parts {
        for s in part {
            let i = &mut at[sub(s)];
            into[*i as usize] = *s;
            *i += 1;
        }
    }
}

fn insertion_sort(slots: &mut [Slot]) {
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

    /// The bucket sort is the library's stable sort, for sizes on both sides
    /// of its counting pass and keys that tie often, within and across
    /// sub-buckets: sorting a vector, and taking a ring bucket sorted (its
    /// counting pass reading the chunks).
    #[test]
    fn bucket_sort_is_stable() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(3);
        let mut scratch = Vec::new();
        let mut ring = Ring::default();
        let mut taken = Vec::new();
        for n in [0, 1, 2, 8, 9, 15, 16, 17, 40, 63, 64, 300, 511, 512, 700] {
            for round in 0..50 {
                // Coarse keys tie often; fine ones spread over every
                // sub-bucket count (their top ten bits) and still tie.
                let top = if round % 2 == 0 { 3 } else { 12 };
                let mut slots: Vec<Slot> = (0..n)
                    .map(|i| Slot {
                        key: (rng.random_range(0..1u64 << top) << (64 - top))
                            | rng.random_range(0..4u64),
                        event: Event::Arrive(i),
                    })
                    .collect();
                let mut want = slots.clone();
                want.sort_by_key(|s| s.key);
                for &slot in &slots {
                    ring.push(5, slot);
                }
                ring.take_sorted(5, &mut taken);
                sort_stably(&mut slots, &mut scratch);
                let events = |v: &[Slot]| v.iter().map(|s| (s.key, s.event)).collect::<Vec<_>>();
                assert_eq!(events(&slots), events(&want));
                assert_eq!(events(&taken), events(&want));
                assert_eq!(ring.next_occupied(4), None, "the bucket is empty again");
            }
        }
    }
}
