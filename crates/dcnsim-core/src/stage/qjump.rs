//! QJUMP's host rate limiter (seed `qjump.txt`, "Bounded Queues—Bounded
//! Latency" to "Jump the Queue with Prioritization"): 802.1Q classes bound
//! to rate limits, so that the most latency-sensitive level never waits more
//! than one network epoch.
//!
//! The network epoch is 2nP/R (the seed's Equation 2: n hosts, P the largest
//! packet, R the slowest host link; doubled because hosts' epochs share a
//! frequency but not a phase). A *level* is a class with a throughput factor
//! f ≥ 1 (Equation 4): it may send f·P bytes per epoch, a rate of f·R/2n
//! (Equation 3 times f). The top level (f = 1) keeps every host to one
//! packet per epoch, so an n-to-1 burst drains within one epoch; a level with
//! f > 1 assumes at most n/f hosts send to one destination at once, and when
//! more do its packets may queue for up to f times as long. The priority of
//! a level over lower ones is the ports' strict-priority discipline
//! (`queue/priority.rs`, on the NICs and the switches), not this stage.
//!
//! Epochs follow the authors' Linux qdisc (camsas/qjump-tc, `sch_qjump.c`,
//! `qfifo_enqueue`): one per level, started lazily by the level's first
//! packet after the previous epoch has ended (`next_timeout = now + timeq`,
//! `bytes_left = limit`, where `limit = f · bytesq`); a packet is admitted
//! while it fits in what is left of the epoch's budget. What happens to a
//! packet that does not fit is `overflow`:
//! - `"drop"` (the default): it is dropped as it reaches the NIC, as the
//!   qdisc does (`NET_XMIT_DROP`); this is what the seed measured, so the
//!   study runs with it;
//! - `"hold"`: it waits in the NIC's queue until the epoch ends, and starts
//!   the next epoch then. The waiting packet's size is not looked at (the
//!   discipline skips a held class as it skips a paused one, as for
//!   `token_bucket`): the level may start a packet while its budget is not
//!   spent, and a packet that overshoots it carries the excess (less than
//!   one packet) into the next epoch's budget, so the long-run rate is
//!   exactly f·P per epoch.
//!
//! Classes not listed as a level are not limited. The epoch is computed
//! from the topology unless `epoch` is set (the qdisc's `timeq`); P is
//! `packet` (the qdisc's `bytesq`), the 1500 B Ethernet MTU by default. The
//! run's summary reports the epoch and each level's rate ([`Stage::report`]).
//! Flows, workloads and applications choose their level by their `class`.

use super::{Found, PortContext, Stage};
use crate::app::keys::MAX_PACKET;
use crate::error::{join_path, ScenarioError};
use crate::packet::{Hop, CLASSES};
use crate::tcp::MIN_PMTU;
use crate::units::{Bytes, Time};
use serde::Deserialize;
use serde_json::{json, Value};

/// `[[network.stages]] kind = "qjump"`.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct QjumpSpec {
    /// Up to 8 levels, each a class and its factor.
    pub levels: Vec<Level>,
    /// P: the largest packet (1500 B by default).
    #[serde(default = "mtu")]
    pub packet: Bytes,
    /// The network epoch; 2nP/R from the topology when not set. At most
    /// [`crate::units::MAX_DELAY`]: it is a network's worst-case delay.
    #[serde(default, deserialize_with = "crate::units::optional_delay")]
    pub epoch: Option<Time>,
    #[serde(default)]
    pub overflow: Overflow,
}

fn mtu() -> Bytes {
    Bytes(1500)
}

/// One QJUMP level: an 802.1Q class and its throughput factor f ≥ 1.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Level {
    pub class: u8,
    pub f: f64,
}

/// What becomes of a packet beyond its level's budget.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Overflow {
    #[default]
    Drop,
    Hold,
}

/// The epoch of a network of `ctx`'s hosts and slowest host link for
/// packets of `packet` bytes, or the one set.
pub fn epoch(spec: &QjumpSpec, ctx: &PortContext) -> Time {
    spec.epoch.unwrap_or_else(|| {
        ctx.slowest_host_link
            .serialization(2 * ctx.hosts as u64 * spec.packet.0)
    })
}

#[derive(Clone, Debug)]
pub struct Qjump {
    /// Classes limited (bit c for class c).
    limited: u8,
    hold: bool,
    epoch: Time,
    /// f·P bytes per epoch, per class.
    budget: [i64; CLASSES],
    /// Bytes left in the current epoch (negative: a held level's overshoot).
    left: [i64; CLASSES],
    /// When each class's current epoch ends (no epoch yet: zero).
    end: [Time; CLASSES],
}

impl Qjump {
    /// A new epoch of class `c` starts at `now` if its last one has ended.
    fn roll(&mut self, c: usize, now: Time) {
        if now >= self.end[c] {
            self.end[c] = now + self.epoch;
            self.left[c] = self.budget[c] + self.left[c].min(0);
        }
    }
}

fn budget(spec: &QjumpSpec, l: &Level) -> i64 {
    (l.f * spec.packet.0 as f64).floor() as i64
}

impl Stage for Qjump {
    type Spec = QjumpSpec;
    const ON_ENQUEUE: bool = true;
    const SHAPES: bool = true;

    /// Only `"hold"` holds classes: with `"drop"` the port stays as it was.
    fn shapes(spec: &QjumpSpec) -> bool {
        spec.overflow == Overflow::Hold
    }

    fn check(spec: &QjumpSpec, path: &str) -> Result<(), ScenarioError> {
        let at = join_path(path, "levels");
        if spec.levels.is_empty() {
            return Err(ScenarioError::new(at, "lists no level"));
        }
        if spec.levels.len() > CLASSES {
            return Err(ScenarioError::new(
                at,
                format!(
                    "at most 8 levels (one per 802.1Q class), got {}",
                    spec.levels.len()
                ),
            ));
        }
        for (i, l) in spec.levels.iter().enumerate() {
            if usize::from(l.class) >= CLASSES {
                return Err(ScenarioError::new(
                    format!("{at}[{i}].class"),
                    format!("802.1Q classes are 0 to 7, got {}", l.class),
                ));
            }
            if spec.levels[..i].iter().any(|o| o.class == l.class) {
                return Err(ScenarioError::new(
                    format!("{at}[{i}].class"),
                    format!("class {} is listed twice", l.class),
                ));
            }
            if !(l.f >= 1.0 && l.f.is_finite()) {
                return Err(ScenarioError::new(
                    format!("{at}[{i}].f"),
                    format!("a throughput factor is at least 1, got {}", l.f),
                ));
            }
        }
        if !(MIN_PMTU..=MAX_PACKET).contains(&spec.packet.0) {
            return Err(ScenarioError::new(
                join_path(path, "packet"),
                format!(
                    "must be from {MIN_PMTU} B (the Ethernet minimum) to {MAX_PACKET} B, got {} B",
                    spec.packet.0
                ),
            ));
        }
        if spec.epoch == Some(Time::ZERO) {
            return Err(ScenarioError::new(
                join_path(path, "epoch"),
                "must be longer than zero",
            ));
        }
        Ok(())
    }

    fn new(spec: &QjumpSpec, ctx: &PortContext) -> Qjump {
        let mut q = Qjump {
            limited: 0,
            hold: spec.overflow == Overflow::Hold,
            epoch: epoch(spec, ctx),
            budget: [0; CLASSES],
            left: [0; CLASSES],
            end: [Time::ZERO; CLASSES],
        };
        for l in &spec.levels {
            q.limited |= 1 << l.class;
            q.budget[usize::from(l.class)] = budget(spec, l);
        }
        q
    }

    /// What the summary reports of an entry: the epoch, and each level's
    /// factor, budget and rate (f·P per epoch).
    fn report(spec: &QjumpSpec, ctx: &PortContext) -> Option<Value> {
        let e = epoch(spec, ctx);
        let rate = |l: &Level| budget(spec, l) as f64 * 8.0 / e.as_secs_f64();
        let levels: Vec<Value> = spec
            .levels
            .iter()
            .map(|l| json!({"class": l.class, "f": l.f, "bytes_per_epoch": budget(spec, l), "rate_bps": rate(l)}))
            .collect();
        let line = spec
            .levels
            .iter()
            .map(|l| format!("class {} f={} {:.4} Gbps", l.class, l.f, rate(l) / 1e9))
            .collect::<Vec<_>>()
            .join(", ");
        Some(json!({
            "kind": "qjump",
            "epoch_s": e.as_secs_f64(),
            "hosts": ctx.hosts,
            "packet_bytes": spec.packet.0,
            "slowest_host_link_bps": ctx.slowest_host_link.bps(),
            "levels": levels,
            "line": format!("qjump epoch {:.3} us ({} hosts); {line}", e.as_secs_f64() * 1e6, ctx.hosts),
        }))
    }

    /// `"drop"`: admit the packet if it fits in its level's epoch, else drop
    /// it (`qfifo_enqueue`).
    fn on_enqueue(&mut self, pkt: &mut Hop, _found: Found, now: Time) -> bool {
        let c = usize::from(pkt.class);
        if self.hold || self.limited & (1 << c) == 0 {
            return true;
        }
        self.roll(c, now);
        let size = i64::from(pkt.size);
        if size > self.left[c] {
            return false;
        }
        self.left[c] -= size;
        true
    }

    /// `"hold"`: a level whose epoch's budget is spent waits for its end.
    fn held(&self, now: Time) -> u8 {
        if !self.hold {
            return 0;
        }
        let mut held = 0;
        for c in 0..CLASSES {
            if self.limited & (1 << c) != 0 && now < self.end[c] && self.left[c] <= 0 {
                held |= 1 << c;
            }
        }
        held
    }

    fn release_at(&self, held: u8) -> Time {
        (0..CLASSES)
            .filter(|&c| held & self.limited & (1 << c) != 0)
            .map(|c| self.end[c])
            .min()
            .unwrap_or(Time(u64::MAX))
    }

    fn on_start(&mut self, class: u8, size: u32, start: Time) {
        let c = usize::from(class);
        if self.hold && self.limited & (1 << class) != 0 {
            self.roll(c, start);
            self.left[c] -= i64::from(size);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{Kind, Packet};
    use crate::units::Capacity;

    /// 16 hosts of 10 Gbps: the epoch is 2 · 16 · 1500 B / 10 Gbps = 38.4 us.
    fn ctx() -> PortContext {
        PortContext {
            rate: "10Gbps".parse().unwrap(),
            buffer: Capacity::Packets(100),
            nic: true,
            hosts: 16,
            slowest_host_link: "10Gbps".parse().unwrap(),
        }
    }

    fn spec(f: f64, overflow: Overflow) -> QjumpSpec {
        QjumpSpec {
            levels: vec![Level { class: 7, f }],
            packet: Bytes(1500),
            epoch: None,
            overflow,
        }
    }

    #[test]
    fn the_epoch_is_2np_over_r_and_a_level_sends_f_packets_per_epoch() {
        let s = spec(4.0, Overflow::Drop);
        assert_eq!(epoch(&s, &ctx()), Time(38_400_000));
        let r = Qjump::report(&s, &ctx()).unwrap();
        assert_eq!(r["epoch_s"], 38.4e-6);
        // 4 · 1500 B per 38.4 us = 1.25 Gbps = f · R / 2n.
        let rate = r["levels"][0]["rate_bps"].as_f64().unwrap();
        assert!((rate - 4.0 * 10e9 / 32.0).abs() < 1.0, "{rate}");
    }

    /// Drop: a burst of 10 packets of 1000 B at class 7 with f = 2 (3000 B
    /// per epoch): the first three fit, the rest are dropped until the
    /// epoch, started by the first packet, ends; the epoch after starts
    /// lazily with the next packet.
    #[test]
    fn drop_admits_what_fits_in_an_epoch_started_by_the_first_packet() {
        let mut q = Qjump::new(&spec(2.0, Overflow::Drop), &ctx());
        let mut pkt = Packet::new(Kind::Datagram, 0, 1, 1000, 0, Time::ZERO);
        pkt.class = 7;
        let t0 = Time(5_000_000);
        let admitted: Vec<bool> = (0..10)
            .map(|_| q.on_enqueue(&mut pkt, Found::default(), t0))
            .collect();
        assert_eq!(admitted.iter().filter(|&&a| a).count(), 3);
        assert!(!q.on_enqueue(&mut pkt, Found::default(), t0 + Time(38_399_999)));
        let late = t0 + Time(50_000_000);
        assert!(q.on_enqueue(&mut pkt, Found::default(), late));
        assert_eq!(q.end[7], late + Time(38_400_000));
        // Other classes pass and nothing is held.
        let mut other = Packet::new(Kind::Datagram, 0, 1, 1500, 0, Time::ZERO);
        other.class = 3;
        assert!((0..100).all(|_| q.on_enqueue(&mut other, Found::default(), late)));
        assert_eq!(q.held(late), 0);
    }

    /// Hold, backlogged with 1500 B packets on a 10 Gbps NIC at f = 3: three
    /// go back to back, then the level waits for its epoch's end; over many
    /// epochs the rate is exactly f · P per epoch.
    #[test]
    fn hold_sends_f_packets_per_epoch() {
        let mut q = Qjump::new(&spec(3.0, Overflow::Hold), &ctx());
        let line = Time(1_200_000);
        let mut free = Time::ZERO;
        let mut starts = Vec::new();
        for _ in 0..300 {
            let t = if q.held(free) != 0 {
                q.release_at(1 << 7)
            } else {
                free
            };
            assert_eq!(q.held(t), 0);
            q.on_start(7, 1500, t);
            starts.push(t);
            free = t + line;
        }
        let e = Time(38_400_000);
        assert_eq!(&starts[..4], [Time::ZERO, line, line * 2, e]);
        assert_eq!(starts[299], e * 99 + line * 2);
    }

    /// Hold with 1000 B packets at f = 1 (1500 B per epoch): two go in the
    /// first epoch (the second overshoots by 500 B), the next epoch has
    /// 1000 B left, and so on: 3 packets per 2 epochs in the long run.
    #[test]
    fn hold_carries_an_overshoot_into_the_next_epoch() {
        let mut q = Qjump::new(&spec(1.0, Overflow::Hold), &ctx());
        let mut free = Time::ZERO;
        let mut n = 0;
        let e = Time(38_400_000);
        loop {
            let t = if q.held(free) != 0 {
                q.release_at(1 << 7)
            } else {
                free
            };
            if t >= e * 200 {
                break;
            }
            q.on_start(7, 1000, t);
            n += 1;
            free = t + Time(800_000);
        }
        assert_eq!(n, 300);
    }

    #[test]
    fn check_names_the_bad_field() {
        let err = |levels: Vec<(u8, f64)>| {
            let s = QjumpSpec {
                levels: levels
                    .into_iter()
                    .map(|(class, f)| Level { class, f })
                    .collect(),
                ..spec(1.0, Overflow::Drop)
            };
            Qjump::check(&s, "network.stages[0]")
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            err(vec![(7, 0.5)]),
            "network.stages[0].levels[0].f: a throughput factor is at least 1, got 0.5"
        );
        assert_eq!(
            err(vec![(7, 1.0), (9, 2.0)]),
            "network.stages[0].levels[1].class: 802.1Q classes are 0 to 7, got 9"
        );
        assert_eq!(
            err((0..9).map(|c| (c % 8, 1.0)).collect()),
            "network.stages[0].levels: at most 8 levels (one per 802.1Q class), got 9"
        );
        assert_eq!(err(vec![]), "network.stages[0].levels: lists no level");
    }
}
