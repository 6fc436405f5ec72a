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

/// `aqm = { kind = "threshold", k = "20pkt" }`, `{ kind = "red", min, max,
/// max_p, weight }` or `{ kind = "wred", weight, profiles = [{ min, max,
/// max_p }, …] }` (one profile per traffic class).
#[derive(Clone, Debug, Deserialize, PartialEq, strum::VariantNames)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
#[strum(serialize_all = "snake_case")]
pub enum AqmSpec {
    Threshold {
        k: Capacity,
    },
    Red {
        min: Capacity,
        max: Capacity,
        #[serde(default = "default_max_p")]
        max_p: f64,
        #[serde(default = "default_red_weight")]
        weight: f64,
    },
    Wred {
        #[serde(default = "default_red_weight")]
        weight: f64,
        profiles: Vec<RedProfile>,
    },
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
                return err(at, format!("max_p must be in (0, 1], got {}", p.max_p));
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

#[derive(Clone, Debug)]
pub enum Aqm {
    Threshold(Capacity),
    Red(Red),
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
            } => Aqm::Red(Red::new(
                *weight,
                vec![RedProfile {
                    min: *min,
                    max: *max,
                    max_p: *max_p,
                }],
                rng,
            )),
            AqmSpec::Wred { weight, profiles } => {
                Aqm::Red(Red::new(*weight, profiles.clone(), rng))
            }
        }
    }

    /// Decide for a packet of traffic class `class` that finds `occ`.
    pub fn on_arrival(&mut self, occ: Occupancy, ecn_capable: bool, class: u8) -> Verdict {
        let congested = match self {
            Aqm::Threshold(k) => {
                let (q, k) = level(*k, &occ);
                if q >= k && ecn_capable {
                    return Verdict::Mark;
                }
                return Verdict::Pass;
            }
            Aqm::Red(red) => red.congested(occ, class),
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
    fn congested(&mut self, occ: Occupancy, class: u8) -> bool {
        let i = usize::from(class).min(self.profiles.len() - 1);
        let p = self.profiles[i];
        let (q, min) = level(p.min, &occ);
        let (_, max) = level(p.max, &occ);
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
    use rand::SeedableRng;

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
            let marked = (0..n).filter(|_| r.congested(occ(q), 0)).count();
            let frac = marked as f64 / f64::from(n);
            let want = 2.0 * pb / (1.0 + pb);
            assert!(
                (frac - want).abs() < 0.05 * want,
                "q={q}: fraction {frac}, want {want}"
            );
        }
        let mut r = Red::new(1.0, vec![profile], Xoshiro256PlusPlus::seed_from_u64(7));
        assert!(!r.congested(occ(39), 0));
        assert!(r.congested(occ(80), 0));
    }

    #[test]
    fn red_average_is_an_ewma_and_decays_when_idle() {
        let profile = RedProfile {
            min: Capacity::Packets(1000),
            max: Capacity::Packets(2000),
            max_p: 0.1,
        };
        let mut r = Red::new(0.5, vec![profile], Xoshiro256PlusPlus::seed_from_u64(1));
        r.congested(occ(100), 0);
        assert_eq!(r.avg, 50.0);
        r.congested(occ(100), 0);
        assert_eq!(r.avg, 75.0);
        let idle = Occupancy {
            packets: 0,
            bytes: 0,
            idle: Time(24_000_000),
            slot: Time(12_000_000),
        };
        r.congested(idle, 0);
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
        let mut a = Aqm::Red(Red::new(
            1.0,
            vec![low, high],
            Xoshiro256PlusPlus::seed_from_u64(3),
        ));
        assert_eq!(a.on_arrival(occ(20), true, 0), Verdict::Mark);
        assert_eq!(a.on_arrival(occ(20), false, 0), Verdict::Drop);
        assert_eq!(a.on_arrival(occ(20), true, 1), Verdict::Pass);
        assert_eq!(a.on_arrival(occ(20), true, 7), Verdict::Pass);
    }
}
