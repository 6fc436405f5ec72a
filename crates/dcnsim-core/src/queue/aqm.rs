//! ECN marking and early drop at an egress port, decided when a packet arrives.
//!
//! - `threshold`: DCTCP-style marking (Alizadeh et al., SIGCOMM 2010, §3.1):
//!   an ECN-capable packet is marked CE when the instantaneous queue it finds
//!   is at least K (packets or bytes). Packets that are not ECN-capable pass;
//!   only a full buffer drops them.
//! - `red` / `wred`: Random Early Detection (Floyd & Jacobson 1993). The
//!   average queue is an EWMA with weight `weight`, decayed over idle periods
//!   as if packets of 1500 B had left; between `min` and `max` a packet is
//!   marked (ECN-capable) or dropped (not) with probability rising linearly to
//!   `max_p`, spread by the count since the last mark; at or above `max` every
//!   packet is marked or dropped. WRED keeps one such profile per traffic class
//!   (the QJUMP seed's switches use WRED with thresholds such as [40, 80]
//!   packets); a packet uses the profile of its class, the last one for
//!   higher classes.

use crate::error::{join_path, ScenarioError};
use crate::units::{Capacity, Time};
use rand::Rng;
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::Deserialize;
use strum::VariantNames;

/// `aqm = { kind = "threshold", k = "20pkt" }`, `{ kind = "red", min, max,
/// max_p, weight }` or `{ kind = "wred", weight, profiles = [{ min, max,
/// max_p }, …] }` (one profile per traffic class).
#[derive(Clone, Debug, Deserialize, PartialEq, strum::VariantNames)]
#[serde(try_from = "RawAqm")]
#[strum(serialize_all = "snake_case")]
pub enum AqmSpec {
    Threshold {
        k: Capacity,
    },
    Red {
        min: Capacity,
        max: Capacity,
        max_p: f64,
        weight: f64,
    },
    Wred {
        weight: f64,
        profiles: Vec<RedProfile>,
    },
}

/// `aqm` as written: every key of every kind, so that a bad key or value is
/// reported with its path (serde's internally tagged enums buffer the table
/// and lose it); [`AqmSpec::try_from`] then keeps the kind's own keys.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAqm {
    kind: String,
    k: Option<Capacity>,
    min: Option<Capacity>,
    max: Option<Capacity>,
    max_p: Option<f64>,
    weight: Option<f64>,
    profiles: Option<Vec<RedProfile>>,
}

impl TryFrom<RawAqm> for AqmSpec {
    type Error = String;

    fn try_from(raw: RawAqm) -> Result<AqmSpec, String> {
        let kind = raw.kind.as_str();
        let given = [
            ("k", raw.k.is_some()),
            ("min", raw.min.is_some()),
            ("max", raw.max.is_some()),
            ("max_p", raw.max_p.is_some()),
            ("weight", raw.weight.is_some()),
            ("profiles", raw.profiles.is_some()),
        ];
        let keys: &[&str] = match kind {
            "threshold" => &["k"],
            "red" => &["min", "max", "max_p", "weight"],
            "wred" => &["weight", "profiles"],
            other => {
                return Err(format!(
                    "unknown kind \"{other}\" (expected one of {})",
                    AqmSpec::VARIANTS.join(", ")
                ))
            }
        };
        if let Some((key, _)) = given.iter().find(|&&(k, set)| set && !keys.contains(&k)) {
            return Err(format!(
                "{key} is not a key of kind \"{kind}\" (its keys: {})",
                keys.join(", ")
            ));
        }
        let need = |v: Option<Capacity>, key: &str| {
            v.ok_or_else(|| format!("kind \"{kind}\" needs {key}"))
        };
        let weight = raw.weight.unwrap_or_else(default_red_weight);
        Ok(match kind {
            "threshold" => AqmSpec::Threshold {
                k: need(raw.k, "k")?,
            },
            "red" => AqmSpec::Red {
                min: need(raw.min, "min")?,
                max: need(raw.max, "max")?,
                max_p: raw.max_p.unwrap_or_else(default_max_p),
                weight,
            },
            _ => AqmSpec::Wred {
                weight,
                profiles: raw
                    .profiles
                    .ok_or_else(|| format!("kind \"{kind}\" needs profiles"))?,
            },
        })
    }
}

/// One RED marking curve: thresholds on the average queue and the marking
/// probability reached at `max`.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RedProfile {
    pub min: Capacity,
    pub max: Capacity,
    #[serde(default = "default_max_p")]
    pub max_p: f64,
}

/// Floyd & Jacobson's suggested w_q and max_p.
fn default_red_weight() -> f64 {
    0.002
}

fn default_max_p() -> f64 {
    0.1
}

impl AqmSpec {
    pub fn check(&self, path: &str) -> Result<(), ScenarioError> {
        let err = |k: &str, m: String| Err(ScenarioError::new(join_path(path, k), m));
        let check_profile = |at: &str, p: &RedProfile| {
            let same_unit = matches!(
                (p.min, p.max),
                (Capacity::Packets(_), Capacity::Packets(_))
                    | (Capacity::Bytes(_), Capacity::Bytes(_))
            );
            if !same_unit {
                return err(
                    at,
                    "min and max must both be in packets or both in bytes".into(),
                );
            }
            if p.min.amount() >= p.max.amount() {
                return err(at, format!("min ({}) must be below max ({})", p.min, p.max));
            }
            if !(p.max_p > 0.0 && p.max_p <= 1.0) {
                return err(
                    &join_path(at, "max_p"),
                    format!("must be in (0, 1], got {}", p.max_p),
                );
            }
            Ok(())
        };
        match self {
            AqmSpec::Threshold { .. } => Ok(()),
            AqmSpec::Red {
                min,
                max,
                max_p,
                weight,
            } => {
                check_weight(path, *weight)?;
                check_profile(
                    "",
                    &RedProfile {
                        min: *min,
                        max: *max,
                        max_p: *max_p,
                    },
                )
            }
            AqmSpec::Wred { weight, profiles } => {
                check_weight(path, *weight)?;
                if profiles.is_empty() {
                    return err("profiles", "needs at least one profile".into());
                }
                for (i, p) in profiles.iter().enumerate() {
                    check_profile(&format!("profiles[{i}]"), p)?;
                }
                Ok(())
            }
        }
    }
}

fn check_weight(path: &str, w: f64) -> Result<(), ScenarioError> {
    if w > 0.0 && w <= 1.0 {
        Ok(())
    } else {
        Err(ScenarioError::new(
            join_path(path, "weight"),
            format!("must be in (0, 1], got {w}"),
        ))
    }
}

/// What to do with an arriving packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Pass,
    /// Set CE (the packet is ECN-capable).
    Mark,
    Drop,
}

/// An AQM's state. RED's is boxed, so that an AQM takes 16 bytes and a
/// port keeps its first one in its hot lines ([`Aqms`]).
#[derive(Clone, Debug)]
pub enum Aqm {
    Threshold(Capacity),
    Red(Box<Red>),
}

/// A port's AQMs, one per AQM domain of its queue (none without AQM). The
/// usual single domain is kept inline, so that an arrival reads it from
/// the port's lines, not from an allocation of its own (one cache line
/// fewer per packet-hop when the ports outgrow the caches). 16 bytes, as
/// the boxed slice it replaces (several domains behind one thin pointer).
#[derive(Clone, Debug, Default)]
pub enum Aqms {
    #[default]
    None,
    One(Aqm),
    Many(Box<Vec<Aqm>>),
}

impl Aqms {
    pub fn new(mut aqms: Vec<Aqm>) -> Aqms {
        match aqms.len() {
            0 => Aqms::None,
            1 => Aqms::One(aqms.pop().expect("one")),
            _ => Aqms::Many(Box::new(aqms)),
        }
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        matches!(self, Aqms::None)
    }
}

impl std::ops::Index<usize> for Aqms {
    type Output = Aqm;
    #[inline]
    fn index(&self, domain: usize) -> &Aqm {
        match self {
            Aqms::None => panic!("AQM domain {domain} of a port without AQM"),
            Aqms::One(a) => a,
            Aqms::Many(all) => &all[domain],
        }
    }
}

impl std::ops::IndexMut<usize> for Aqms {
    #[inline]
    fn index_mut(&mut self, domain: usize) -> &mut Aqm {
        match self {
            Aqms::None => panic!("AQM domain {domain} of a port without AQM"),
            Aqms::One(a) => a,
            Aqms::Many(all) => &mut all[domain],
        }
    }
}

#[derive(Clone, Debug)]
pub struct Red {
    weight: f64,
    profiles: Vec<RedProfile>,
    /// Average queue, in the unit of the thresholds (packets or bytes).
    avg: f64,
    /// Packets since the last mark or drop, per profile.
    count: Vec<u32>,
    rng: Xoshiro256PlusPlus,
}

/// The queue an arriving packet finds.
#[derive(Clone, Copy, Debug)]
pub struct Occupancy {
    pub packets: u64,
    pub bytes: u64,
    /// Idle time since the port last went empty (zero when the port is busy).
    pub idle: Time,
    /// The time to transmit 1500 B at the port's rate: RED's idle decay counts
    /// idle time in these slots (computed only by the AQMs that need it).
    pub slot: Time,
}

fn level(c: Capacity, occ: &Occupancy) -> (f64, f64) {
    match c {
        Capacity::Packets(n) => (occ.packets as f64, n as f64),
        Capacity::Bytes(b) => (occ.bytes as f64, b as f64),
    }
}

impl Aqm {
    pub fn new(spec: &AqmSpec, rng: Xoshiro256PlusPlus) -> Aqm {
        match spec {
            AqmSpec::Threshold { k } => Aqm::Threshold(*k),
            AqmSpec::Red {
                min,
                max,
                max_p,
                weight,
            } => Aqm::Red(Box::new(Red::new(
                *weight,
                vec![RedProfile {
                    min: *min,
                    max: *max,
                    max_p: *max_p,
                }],
                rng,
            ))),
            AqmSpec::Wred { weight, profiles } => {
                Aqm::Red(Box::new(Red::new(*weight, profiles.clone(), rng)))
            }
        }
    }

    /// Whether the decision reads [`Occupancy::idle`] and
    /// [`Occupancy::slot`] (RED's average decays while the port is idle);
    /// otherwise the caller may leave them zero.
    #[inline]
    pub fn decays_when_idle(&self) -> bool {
        matches!(self, Aqm::Red(_))
    }

    /// Decide for a packet of traffic class `class` that finds `occ`.
    #[inline]
    pub fn on_arrival(&mut self, occ: Occupancy, ecn_capable: bool, class: u8) -> Verdict {
        let congested = match self {
            Aqm::Threshold(k) => {
                let over = match *k {
                    Capacity::Packets(n) => occ.packets >= n,
                    Capacity::Bytes(b) => occ.bytes >= b,
                };
                if over && ecn_capable {
                    return Verdict::Mark;
                }
                return Verdict::Pass;
            }
            Aqm::Red(red) => red.congested(&occ, class),
        };
        match (congested, ecn_capable) {
            (false, _) => Verdict::Pass,
            (true, true) => Verdict::Mark,
            (true, false) => Verdict::Drop,
        }
    }
}

impl Red {
    fn new(weight: f64, profiles: Vec<RedProfile>, rng: Xoshiro256PlusPlus) -> Red {
        let n = profiles.len();
        Red {
            weight,
            profiles,
            avg: 0.0,
            count: vec![0; n],
            rng,
        }
    }

    /// Update the average and decide whether this packet is marked/dropped.
    #[inline(never)]
    fn congested(&mut self, occ: &Occupancy, class: u8) -> bool {
        let i = usize::from(class).min(self.profiles.len() - 1);
        let p = self.profiles[i];
        let (q, min) = level(p.min, occ);
        let (_, max) = level(p.max, occ);
        if occ.idle > Time::ZERO {
            self.avg *= (1.0 - self.weight).powf(idle_slots(occ.idle, occ.slot));
        }
        self.avg += self.weight * (q - self.avg);
        if self.avg < min {
            self.count[i] = 0;
            return false;
        }
        if self.avg >= max {
            self.count[i] = 0;
            return true;
        }
        let pb = p.max_p * (self.avg - min) / (max - min);
        let pa = pb / (1.0 - f64::from(self.count[i]) * pb).max(f64::MIN_POSITIVE);
        self.count[i] += 1;
        if pa >= 1.0 || self.rng.random::<f64>() < pa {
            self.count[i] = 0;
            return true;
        }
        false
    }
}

/// Idle time in 1500 B transmission slots, for RED's idle decay.
fn idle_slots(idle: Time, slot: Time) -> f64 {
    if slot == Time::ZERO {
        0.0
    } else {
        idle.0 as f64 / slot.0 as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::parse_at;
    use rand::SeedableRng;
    use serde_json::json;

    fn parse_err(aqm: serde_json::Value) -> String {
        parse_at::<AqmSpec>(aqm, "network.queue.aqm")
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn aqm_tables_parse_with_their_defaults() {
        let red: AqmSpec =
            parse_at(json!({"kind": "red", "min": "5pkt", "max": "15pkt"}), "").unwrap();
        assert_eq!(
            red,
            AqmSpec::Red {
                min: Capacity::Packets(5),
                max: Capacity::Packets(15),
                max_p: 0.1,
                weight: 0.002
            }
        );
    }

    /// Errors name the bad key with its full path, also inside `profiles`.
    #[test]
    fn bad_aqm_keys_are_named_with_their_path() {
        assert_eq!(
            parse_err(json!({"kind": "threshold", "k": "20pkt", "kk": 1})),
            "network.queue.aqm.kk: unknown key (expected one of `kind`, `k`, `min`, `max`, `max_p`, `weight`, `profiles`)"
        );
        assert!(parse_err(json!({"kind": "threshold", "k": "1ms"}))
            .starts_with("network.queue.aqm.k: unknown unit \"ms\""));
        let e = parse_err(json!({"kind": "wred", "profiles": [
            {"min": "1pkt", "max": "2pkt"}, {"min": "1pkt", "max": "2pkt", "maxp": 0.1}]}));
        assert!(
            e.starts_with("network.queue.aqm.profiles[1].maxp: unknown key"),
            "{e}"
        );
        assert_eq!(
            parse_err(json!({"kind": "threshold", "k": "2pkt", "max_p": 0.5})),
            "network.queue.aqm: max_p is not a key of kind \"threshold\" (its keys: k)"
        );
        assert_eq!(
            parse_err(json!({"kind": "red", "max": "2pkt"})),
            "network.queue.aqm: kind \"red\" needs min"
        );
        assert_eq!(
            parse_err(json!({"kind": "codel"})),
            "network.queue.aqm: unknown kind \"codel\" (expected one of threshold, red, wred)"
        );
        assert_eq!(
            parse_err(json!(["threshold", "2pkt"])),
            "network.queue.aqm: invalid type: list, expected a table"
        );
    }

    fn occ(packets: u64) -> Occupancy {
        Occupancy {
            packets,
            bytes: packets * 1500,
            idle: Time::ZERO,
            slot: Time(12_000_000),
        }
    }

    #[test]
    fn threshold_marks_ect_at_and_above_k_only() {
        let mut a = Aqm::Threshold(Capacity::Packets(20));
        assert_eq!(a.on_arrival(occ(19), true, 0), Verdict::Pass);
        assert_eq!(a.on_arrival(occ(20), true, 0), Verdict::Mark);
        assert_eq!(a.on_arrival(occ(50), false, 0), Verdict::Pass);
        let mut b = Aqm::Threshold(Capacity::Bytes(30_000));
        assert_eq!(b.on_arrival(occ(19), true, 0), Verdict::Pass);
        assert_eq!(b.on_arrival(occ(20), true, 0), Verdict::Mark);
    }

    /// With weight 1 the average is the instantaneous queue. Spreading by the
    /// count makes the gap between marks uniform on 1..=1/pb, so the long-run
    /// marked fraction at a fixed queue is 2·pb/(1 + pb).
    #[test]
    fn red_marking_fraction_follows_the_linear_curve() {
        let profile = RedProfile {
            min: Capacity::Packets(40),
            max: Capacity::Packets(80),
            max_p: 0.1,
        };
        for (q, pb) in [(50u64, 0.025), (70, 0.075)] {
            let mut r = Red::new(1.0, vec![profile], Xoshiro256PlusPlus::seed_from_u64(7));
            let n = 200_000;
            let marked = (0..n).filter(|_| r.congested(&occ(q), 0)).count();
            let frac = marked as f64 / f64::from(n);
            let want = 2.0 * pb / (1.0 + pb);
            assert!(
                (frac - want).abs() < 0.05 * want,
                "q={q}: fraction {frac}, want {want}"
            );
        }
        let mut r = Red::new(1.0, vec![profile], Xoshiro256PlusPlus::seed_from_u64(7));
        assert!(!r.congested(&occ(39), 0));
        assert!(r.congested(&occ(80), 0));
    }

    #[test]
    fn red_average_is_an_ewma_and_decays_when_idle() {
        let profile = RedProfile {
            min: Capacity::Packets(1000),
            max: Capacity::Packets(2000),
            max_p: 0.1,
        };
        let mut r = Red::new(0.5, vec![profile], Xoshiro256PlusPlus::seed_from_u64(1));
        r.congested(&occ(100), 0);
        assert_eq!(r.avg, 50.0);
        r.congested(&occ(100), 0);
        assert_eq!(r.avg, 75.0);
        let idle = Occupancy {
            packets: 0,
            bytes: 0,
            idle: Time(24_000_000),
            slot: Time(12_000_000),
        };
        r.congested(&idle, 0);
        // 75 · 0.5² = 18.75, then the arrival's EWMA step towards 0.
        assert_eq!(r.avg, 18.75 / 2.0);
    }

    #[test]
    fn wred_uses_the_profile_of_the_class() {
        let low = RedProfile {
            min: Capacity::Packets(5),
            max: Capacity::Packets(10),
            max_p: 1.0,
        };
        let high = RedProfile {
            min: Capacity::Packets(40),
            max: Capacity::Packets(80),
            max_p: 0.1,
        };
        let mut a = Aqm::Red(Box::new(Red::new(
            1.0,
            vec![low, high],
            Xoshiro256PlusPlus::seed_from_u64(3),
        )));
        assert_eq!(a.on_arrival(occ(20), true, 0), Verdict::Mark);
        assert_eq!(a.on_arrival(occ(20), false, 0), Verdict::Drop);
        assert_eq!(a.on_arrival(occ(20), true, 1), Verdict::Pass);
        assert_eq!(a.on_arrival(occ(20), true, 7), Verdict::Pass);
    }
}
