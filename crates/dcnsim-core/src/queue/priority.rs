//! Strict priority over the eight 802.1Q traffic classes, one FIFO per class
//! in one shared buffer.
//!
//! Transmission selection is IEEE 802.1Q's strict priority algorithm (IEEE Std
//! 802.1Q-2018, §8.6.8.1): when the wire frees, the port sends the head of the
//! highest non-empty class queue; packets of one class leave in arrival order.
//! A packet's priority code point (`class`, 0–7) is used directly as its
//! traffic class, so class 7 is served first and class 0 last (the identity
//! mapping; the standard's recommended priority-to-traffic-class mapping for
//! eight queues instead ranks PCP 1, background, below PCP 0, best effort).
//! Serialization is not preempted: a high-class arrival waits for the packet
//! on the wire.
//!
//! Priority-based flow control (IEEE 802.1Qbb, now IEEE 802.1Q-2018 clause 36)
//! pauses classes one by one: a class whose bit is set in the `paused` mask is
//! skipped, and lower unpaused classes are served in its place.
//!
//! Buffering is one shared pool of `capacity` (packets or bytes). A class may
//! be held to at most `class_limits[c]` of it; classes without an entry are
//! bounded only by the pool. An arrival that does not fit the pool or its
//! class's limit is dropped (tail drop; nothing queued is evicted).
//!
//! AQM runs per class (eight AQM domains): a threshold, RED or WRED decision
//! for a class-`c` packet sees only class `c`'s own packets and bytes and keeps
//! class `c`'s own average.

use super::{fits, Discipline, Next, PortContext, Queued};
use crate::error::{join_path, ScenarioError};
use crate::packet::CLASSES;
use crate::units::{Capacity, Time};
use serde::Deserialize;
use std::collections::VecDeque;

/// `[network.queue.priority]`: the discipline's own keys.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PrioritySpec {
    /// The most each class may hold of the shared buffer (one entry per
    /// class 0, 1, …; classes not listed share freely).
    pub class_limits: Option<Vec<Capacity>>,
}

#[derive(Clone, Debug)]
pub struct Priority {
    /// The classes, index 7 served first (boxed: every port's `Queue` is as
    /// large as its largest discipline).
    classes: Box<[Class; CLASSES]>,
    /// The classes holding packets (bit c for class c), so that a wake-up
    /// finds the class to serve in one step, without looking at the empty
    /// classes above it.
    occupied: u8,
    packets: u64,
    bytes: u64,
    capacity: Capacity,
}

/// One traffic class's FIFO, the bytes in it and its share of the buffer.
#[derive(Clone, Debug, Default)]
struct Class {
    fifo: VecDeque<Entry>,
    bytes: u64,
    limit: Option<Capacity>,
}

/// What a class's FIFO keeps of a queued packet: 8 bytes instead of
/// [`Queued`]'s 32 (the class is the FIFO's; strict priority never looks at
/// `prio` or the flow).
#[derive(Clone, Copy, Debug)]
struct Entry {
    pkt: u32,
    size: u32,
}

/// The highest class whose bit is set in `mask`.
#[inline(always)]
fn highest(mask: u8) -> Option<usize> {
    (mask != 0).then(|| 7 - mask.leading_zeros() as usize)
}

/// The class index of a code point (classes are checked to be 0–7; anything
/// larger is treated as the top class rather than indexing out of bounds).
#[inline]
fn slot(class: u8) -> usize {
    usize::from(class).min(CLASSES - 1)
}

fn same_unit(a: Capacity, b: Capacity) -> bool {
    matches!(
        (a, b),
        (Capacity::Packets(_), Capacity::Packets(_)) | (Capacity::Bytes(_), Capacity::Bytes(_))
    )
}

fn unit_name(c: Capacity) -> &'static str {
    match c {
        Capacity::Packets(_) => "packets",
        Capacity::Bytes(_) => "bytes",
    }
}

impl Discipline for Priority {
    type Spec = PrioritySpec;

    fn new(spec: &PrioritySpec, port: &PortContext) -> Priority {
        let mut classes: Box<[Class; CLASSES]> = Box::default();
        for (class, &l) in classes.iter_mut().zip(spec.class_limits.iter().flatten()) {
            class.limit = Some(l);
        }
        Priority {
            classes,
            occupied: 0,
            packets: 0,
            bytes: 0,
            capacity: port.buffer,
        }
    }

    fn check(spec: &PrioritySpec, capacity: Capacity, path: &str) -> Result<(), ScenarioError> {
        if capacity.amount() == 0 {
            return Err(ScenarioError::new(
                join_path(path, "capacity"),
                "a priority queue needs a capacity above 0",
            ));
        }
        let Some(limits) = &spec.class_limits else {
            return Ok(());
        };
        let at = join_path(path, "priority.class_limits");
        if limits.len() > CLASSES {
            return Err(ScenarioError::new(
                at,
                format!(
                    "at most {CLASSES} entries (classes 0 to 7), got {}",
                    limits.len()
                ),
            ));
        }
        for (i, &l) in limits.iter().enumerate() {
            let at = format!("{at}[{i}]");
            if !same_unit(l, capacity) {
                return Err(ScenarioError::new(
                    at,
                    format!(
                        "class limit {l} must be in {} like the capacity ({})",
                        unit_name(capacity),
                        capacity
                    ),
                ));
            }
            if l.amount() > capacity.amount() {
                return Err(ScenarioError::new(
                    at,
                    format!("class limit {l} is larger than the capacity ({})", capacity),
                ));
            }
        }
        Ok(())
    }

    #[inline]
    fn enqueue(&mut self, q: Queued, dropped: &mut Vec<u32>) {
        let c = slot(q.class);
        let class = &mut self.classes[c];
        let in_class = class
            .limit
            .is_none_or(|limit| fits(limit, class.fifo.len() as u64, class.bytes, q.size));
        if in_class && fits(self.capacity, self.packets, self.bytes, q.size) {
            let size = u64::from(q.size);
            class.bytes += size;
            crate::cache::push_back_checked(
                &mut class.fifo,
                Entry {
                    pkt: q.pkt,
                    size: q.size,
                },
            );
            self.occupied |= 1 << c;
            self.bytes += size;
            self.packets += 1;
        } else {
            dropped.push(q.pkt);
        }
    }

    #[inline]
    fn dequeue(&mut self, _now: Time, paused: u8) -> Next {
        let Some(c) = highest(self.occupied & !paused) else {
            return Next::Empty;
        };
        let class = &mut self.classes[c];
        let e = class
            .fifo
            .pop_front()
            .expect("an occupied class holds packets");
        if class.fifo.is_empty() {
            self.occupied &= !(1 << c);
        }
        let size = u64::from(e.size);
        class.bytes -= size;
        self.bytes -= size;
        self.packets -= 1;
        Next::Packet(e.pkt)
    }

    fn packets(&self) -> u64 {
        self.packets
    }

    fn bytes(&self) -> u64 {
        self.bytes
    }

    fn aqm_domains(&self) -> usize {
        CLASSES
    }

    /// An empty class (its bit clear in `occupied`) holds nothing: its
    /// counts without reading its boxed FIFO, a line of its own, which an
    /// arrival that then goes straight to the wire would touch for nothing.
    #[inline]
    fn aqm_domain(&self, class: u8) -> (usize, u64, u64) {
        let c = slot(class);
        if self.occupied & (1 << c) == 0 {
            return (c, 0, 0);
        }
        let class = &self.classes[c];
        (c, class.fifo.len() as u64, class.bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::{Queue, QueueKind, QueueSpec};

    fn q(pkt: u32, class: u8, size: u32) -> Queued {
        Queued {
            pkt,
            size,
            class,
            prio: 0,
            flow: 0,
        }
    }

    fn spec(capacity: Capacity, limits: Option<Vec<Capacity>>) -> QueueSpec {
        QueueSpec {
            priority: Some(PrioritySpec {
                class_limits: limits,
            }),
            ..QueueSpec::new(QueueKind::Priority, capacity)
        }
    }

    fn priority(capacity: Capacity, limits: Option<Vec<Capacity>>) -> Priority {
        let spec = PrioritySpec {
            class_limits: limits,
        };
        Priority::new(&spec, &PortContext::of_buffer(capacity))
    }

    fn drain(p: &mut Priority, paused: u8) -> Vec<u32> {
        let mut out = Vec::new();
        while let Next::Packet(x) = p.dequeue(Time::ZERO, paused) {
            out.push(x);
        }
        out
    }

    #[test]
    fn the_highest_class_leaves_first_and_each_class_in_order() {
        let mut p = priority(Capacity::Packets(100), None);
        let mut dropped = Vec::new();
        for (pkt, class) in [(1, 0), (2, 3), (3, 7), (4, 0), (5, 3), (6, 7), (7, 5)] {
            p.enqueue(q(pkt, class, 100), &mut dropped);
        }
        assert!(dropped.is_empty());
        assert_eq!((p.packets(), p.bytes()), (7, 700));
        assert_eq!(drain(&mut p, 0), [3, 6, 7, 2, 5, 1, 4]);
        assert_eq!((p.packets(), p.bytes()), (0, 0));
        assert_eq!(p.dequeue(Time::ZERO, 0), Next::Empty);
    }

    #[test]
    fn a_late_high_class_arrival_overtakes_waiting_low_class_packets() {
        let mut p = priority(Capacity::Packets(100), None);
        let mut dropped = Vec::new();
        p.enqueue(q(1, 0, 1500), &mut dropped);
        p.enqueue(q(2, 0, 1500), &mut dropped);
        assert_eq!(p.dequeue(Time::ZERO, 0), Next::Packet(1));
        p.enqueue(q(3, 6, 64), &mut dropped);
        assert_eq!(drain(&mut p, 0), [3, 2]);
    }

    #[test]
    fn paused_classes_are_skipped_not_blocking() {
        let mut p = priority(Capacity::Packets(100), None);
        let mut dropped = Vec::new();
        for (pkt, class) in [(1, 7), (2, 3), (3, 3), (4, 0)] {
            p.enqueue(q(pkt, class, 100), &mut dropped);
        }
        // Class 7 and class 3 paused: class 0 goes ahead of them.
        let paused = (1 << 7) | (1 << 3);
        assert_eq!(drain(&mut p, paused), [4]);
        assert_eq!(p.dequeue(Time::ZERO, paused), Next::Empty);
        assert_eq!(p.packets(), 3);
        // Everything paused: nothing is eligible.
        assert_eq!(p.dequeue(Time::ZERO, 0xff), Next::Empty);
        // Class 7 resumes alone, then all.
        assert_eq!(drain(&mut p, 1 << 3), [1]);
        assert_eq!(drain(&mut p, 0), [2, 3]);
        // A paused class does not bypass an idle port; others do.
        assert!(!p.may_bypass(3, 1 << 3));
        assert!(p.may_bypass(2, 1 << 3));
    }

    /// The occupied-class mask finds what a scan of the classes from the
    /// top finds (IEEE 802.1Q §8.6.8.1 as written): random arrivals of
    /// random classes and sizes into a small buffer with class limits,
    /// interleaved with wake-ups under random pause masks, against a model
    /// that keeps one FIFO per class and scans them.
    #[test]
    fn the_occupied_mask_serves_as_a_scan_from_the_top_would() {
        use rand::{Rng, SeedableRng};
        let limits = vec![Capacity::Packets(5), Capacity::Packets(3)];
        let mut p = priority(Capacity::Packets(12), Some(limits));
        let mut model: [VecDeque<u32>; CLASSES] = Default::default();
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(7);
        let mut dropped = Vec::new();
        let (mut served, mut empty) = (0, 0);
        for pkt in 0..20_000u32 {
            let class = rng.random_range(0..10u8);
            let c = slot(class);
            let held = model.iter().map(|f| f.len()).sum::<usize>();
            let room = match c {
                0 => 5,
                1 => 3,
                _ => usize::MAX,
            };
            p.enqueue(q(pkt, class, 64 + pkt % 1400), &mut dropped);
            if held < 12 && model[c].len() < room {
                model[c].push_back(pkt);
            } else {
                assert_eq!(dropped.pop(), Some(pkt));
            }
            for _ in 0..rng.random_range(0..3) {
                let paused: u8 = if rng.random_bool(0.5) {
                    0
                } else {
                    rng.random()
                };
                let want = (0..CLASSES)
                    .rev()
                    .find(|&c| paused & (1 << c) == 0 && !model[c].is_empty())
                    .map_or(Next::Empty, |c| Next::Packet(model[c].pop_front().unwrap()));
                assert_eq!(p.dequeue(Time::ZERO, paused), want);
                match want {
                    Next::Packet(_) => served += 1,
                    _ => empty += 1,
                }
            }
            let n = model.iter().map(|f| f.len() as u64).sum::<u64>();
            assert_eq!(p.packets(), n);
        }
        assert!(
            served > 10_000 && empty > 1_000,
            "{served} served, {empty} empty"
        );
    }

    #[test]
    fn the_shared_buffer_drops_any_class_once_full() {
        let mut p = priority(Capacity::Packets(3), None);
        let mut dropped = Vec::new();
        for (pkt, class) in [(1, 0), (2, 0), (3, 0), (4, 7), (5, 0)] {
            p.enqueue(q(pkt, class, 1500), &mut dropped);
        }
        // No eviction: the class-7 arrival is tail-dropped like any other.
        assert_eq!(dropped, [4, 5]);
        assert_eq!(p.dequeue(Time::ZERO, 0), Next::Packet(1));
        p.enqueue(q(6, 7, 1500), &mut dropped);
        assert_eq!(dropped, [4, 5]);
        assert_eq!(drain(&mut p, 0), [6, 2, 3]);

        let mut b = priority(Capacity::Bytes(3000), None);
        let mut dropped = Vec::new();
        for (pkt, class, size) in [(1, 1, 1500), (2, 2, 1400), (3, 3, 101), (4, 4, 100)] {
            b.enqueue(q(pkt, class, size), &mut dropped);
        }
        assert_eq!(dropped, [3]);
        assert_eq!((b.packets(), b.bytes()), (3, 3000));
    }

    #[test]
    fn class_limits_cap_their_class_and_leave_room_for_others() {
        let limits = vec![Capacity::Packets(2), Capacity::Packets(4)];
        let mut p = priority(Capacity::Packets(4), Some(limits));
        let mut dropped = Vec::new();
        for pkt in 1..=3 {
            p.enqueue(q(pkt, 0, 1500), &mut dropped);
        }
        assert_eq!(dropped, [3], "class 0 holds at most 2");
        // Class 1 may use the whole buffer, but class 0 already holds 2.
        for pkt in 4..=6 {
            p.enqueue(q(pkt, 1, 1500), &mut dropped);
        }
        assert_eq!(dropped, [3, 6]);
        // Class 0 has left room, but the shared buffer is full.
        p.enqueue(q(7, 7, 64), &mut dropped);
        assert_eq!(dropped, [3, 6, 7]);
        assert_eq!(drain(&mut p, 0), [4, 5, 1, 2]);

        let limits = vec![Capacity::Bytes(3000)];
        let mut b = priority(Capacity::Bytes(10_000), Some(limits));
        let mut dropped = Vec::new();
        for (pkt, class, size) in [(1, 0, 1500), (2, 0, 1500), (3, 0, 1), (4, 5, 7000)] {
            b.enqueue(q(pkt, class, size), &mut dropped);
        }
        assert_eq!(dropped, [3]);
        assert_eq!((b.packets(), b.bytes()), (3, 10_000));
    }

    #[test]
    fn aqm_sees_each_class_on_its_own() {
        let mut p = priority(Capacity::Packets(100), None);
        assert_eq!(p.aqm_domains(), 8);
        let mut dropped = Vec::new();
        for (pkt, class, size) in [(1, 0, 1500), (2, 0, 1500), (3, 0, 1500), (4, 5, 64)] {
            p.enqueue(q(pkt, class, size), &mut dropped);
        }
        assert_eq!(p.aqm_domain(0), (0, 3, 4500));
        assert_eq!(p.aqm_domain(5), (5, 1, 64));
        assert_eq!(p.aqm_domain(7), (7, 0, 0));
        p.dequeue(Time::ZERO, 0);
        assert_eq!(p.aqm_domain(5), (5, 0, 0));
        assert_eq!(p.aqm_domain(0), (0, 3, 4500));

        // Through the registry too (the port builds one AQM per domain).
        let queue = Queue::new(
            &spec(Capacity::Packets(10), None),
            &PortContext::of_buffer(Capacity::Packets(10)),
        );
        assert_eq!(queue.aqm_domains(), 8);
        assert_eq!(queue.aqm_domain(3), (3, 0, 0));
    }

    #[test]
    fn check_names_the_bad_field() {
        let err = |s: QueueSpec| s.check("network.queue").unwrap_err().to_string();
        assert_eq!(
            err(spec(Capacity::Packets(0), None)),
            "network.queue.capacity: a priority queue needs a capacity above 0"
        );
        assert_eq!(
            err(spec(Capacity::Bytes(0), None)),
            "network.queue.capacity: a priority queue needs a capacity above 0"
        );
        assert_eq!(
            err(spec(
                Capacity::Packets(10),
                Some(vec![Capacity::Packets(1); 9])
            )),
            "network.queue.priority.class_limits: at most 8 entries (classes 0 to 7), got 9"
        );
        assert_eq!(
            err(spec(
                Capacity::Packets(10),
                Some(vec![Capacity::Packets(5), Capacity::Bytes(64_000)])
            )),
            "network.queue.priority.class_limits[1]: class limit 64000B must be in packets like the capacity (10pkt)"
        );
        assert_eq!(
            err(spec(
                Capacity::Bytes(64_000),
                Some(vec![Capacity::Bytes(64_000), Capacity::Bytes(64_001)])
            )),
            "network.queue.priority.class_limits[1]: class limit 64001B is larger than the capacity (64000B)"
        );
        let ok = spec(Capacity::Packets(10), Some(vec![Capacity::Packets(10); 8]));
        assert_eq!(ok.check("network.queue"), Ok(()));
        assert_eq!(spec(Capacity::Packets(1), None).check("x"), Ok(()));
        // Other disciplines have no such table.
        let droptail = QueueSpec {
            priority: Some(PrioritySpec::default()),
            ..QueueSpec::new(QueueKind::Droptail, Capacity::Packets(10))
        };
        assert!(droptail
            .check("network.queue")
            .unwrap_err()
            .to_string()
            .starts_with("network.queue.priority: keys of the priority discipline"));
    }
}
