//! Random Early Detection (Floyd & Jacobson 1993) and its per-class form,
//! WRED. The average queue is an EWMA with weight `weight`, decayed over
//! idle periods as if packets of 1500 B had left; between `min` and `max` a
//! packet is marked (ECN-capable) or dropped (not) with probability rising
//! linearly to `max_p`, spread by the count since the last mark; at or above
//! `max` every packet is marked or dropped. WRED keeps one such profile per
//! traffic class (the QJUMP seed's switches use WRED with thresholds such as
//! [40, 80] packets); a packet uses the profile of its class, the last one
//! for higher classes. Both are one estimator ([`Estimator`]), boxed so that
//! a port keeps its AQM in 16 bytes.
//!
//! `aqm = { kind = "red", min, max, max_p, weight }` or `{ kind = "wred",
//! weight, profiles = [{ min, max, max_p }, …] }` (one profile per class).

use super::{Aqm, Occupancy, Verdict};
use crate::error::{join_path, ScenarioError};
use crate::units::{Capacity, Time};
use rand::Rng;
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::Deserialize;

/// `red`'s keys: one profile and the average's weight.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RedSpec {
    pub min: Capacity,
    pub max: Capacity,
    #[serde(default = "default_max_p")]
    pub max_p: f64,
    #[serde(default = "default_red_weight")]
    pub weight: f64,
}

/// `wred`'s keys: the average's weight and a profile per class.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct WredSpec {
    #[serde(default = "default_red_weight")]
    pub weight: f64,
    pub profiles: Vec<RedProfile>,
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

/// RED: one profile for every class.
#[derive(Debug)]
pub struct Red(Box<Estimator>);

/// WRED: a profile per class.
#[derive(Debug)]
pub struct Wred(Box<Estimator>);

impl Aqm for Red {
    type Spec = RedSpec;
    const DECAYS_WHEN_IDLE: bool = true;

    fn check(s: &RedSpec, path: &str) -> Result<(), ScenarioError> {
        check_weight(path, s.weight)?;
        let profile = RedProfile {
            min: s.min,
            max: s.max,
            max_p: s.max_p,
        };
        check_profile(path, "", &profile)
    }

    /// Above `max` every arrival is signalled (Floyd and Jacobson, 1993, §4).
    fn held_packets(s: &RedSpec, packet: u64) -> Option<u64> {
        Some(s.max.packets_of(packet))
    }

    fn new(s: &RedSpec, rng: Xoshiro256PlusPlus) -> Red {
        let profile = RedProfile {
            min: s.min,
            max: s.max,
            max_p: s.max_p,
        };
        Red(Box::new(Estimator::new(s.weight, vec![profile], rng)))
    }

    #[inline]
    fn on_arrival(&mut self, occ: Occupancy, ecn_capable: bool, class: u8) -> Verdict {
        Verdict::signal(self.0.congested(&occ, class), ecn_capable)
    }
}

impl Aqm for Wred {
    type Spec = WredSpec;
    const DECAYS_WHEN_IDLE: bool = true;

    fn check(s: &WredSpec, path: &str) -> Result<(), ScenarioError> {
        check_weight(path, s.weight)?;
        if s.profiles.is_empty() {
            return Err(ScenarioError::new(
                join_path(path, "profiles"),
                "needs at least one profile",
            ));
        }
        for (i, p) in s.profiles.iter().enumerate() {
            check_profile(path, &format!("profiles[{i}]"), p)?;
        }
        Ok(())
    }

    /// The largest profile's `max` (the class a busy port's traffic has is
    /// not known here).
    fn held_packets(s: &WredSpec, packet: u64) -> Option<u64> {
        s.profiles.iter().map(|p| p.max.packets_of(packet)).max()
    }

    fn new(s: &WredSpec, rng: Xoshiro256PlusPlus) -> Wred {
        Wred(Box::new(Estimator::new(s.weight, s.profiles.clone(), rng)))
    }

    #[inline]
    fn on_arrival(&mut self, occ: Occupancy, ecn_capable: bool, class: u8) -> Verdict {
        Verdict::signal(self.0.congested(&occ, class), ecn_capable)
    }
}

/// Profile `p` at `at` under `path`: thresholds in one unit, `min` below
/// `max`, `max_p` in (0, 1].
fn check_profile(path: &str, at: &str, p: &RedProfile) -> Result<(), ScenarioError> {
    let err = |k: &str, m: String| Err(ScenarioError::new(join_path(path, k), m));
    let same_unit = matches!(
        (p.min, p.max),
        (Capacity::Packets(_), Capacity::Packets(_)) | (Capacity::Bytes(_), Capacity::Bytes(_))
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

/// RED's state: the average queue and the counts since the last mark.
#[derive(Clone, Debug)]
pub struct Estimator {
    weight: f64,
    profiles: Vec<RedProfile>,
    /// Average queue, in the unit of the thresholds (packets or bytes).
    avg: f64,
    /// Packets since the last mark or drop, per profile.
    count: Vec<u32>,
    rng: Xoshiro256PlusPlus,
}

fn level(c: Capacity, occ: &Occupancy) -> (f64, f64) {
    match c {
        Capacity::Packets(n) => (occ.packets as f64, n as f64),
        Capacity::Bytes(b) => (occ.bytes as f64, b as f64),
    }
}

impl Estimator {
    fn new(weight: f64, profiles: Vec<RedProfile>, rng: Xoshiro256PlusPlus) -> Estimator {
        let n = profiles.len();
        Estimator {
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
    use crate::queue::AqmSpec;
    use rand::SeedableRng;
    use serde_json::json;

    #[test]
    fn aqm_tables_parse_with_their_defaults() {
        let red =
            AqmSpec::from_value(json!({"kind": "red", "min": "5pkt", "max": "15pkt"}), "").unwrap();
        assert_eq!(
            red,
            AqmSpec::Red(RedSpec {
                min: Capacity::Packets(5),
                max: Capacity::Packets(15),
                max_p: 0.1,
                weight: 0.002
            })
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
            let mut r = Estimator::new(1.0, vec![profile], Xoshiro256PlusPlus::seed_from_u64(7));
            let n = 200_000;
            let marked = (0..n).filter(|_| r.congested(&occ(q), 0)).count();
            let frac = marked as f64 / f64::from(n);
            let want = 2.0 * pb / (1.0 + pb);
            assert!(
                (frac - want).abs() < 0.05 * want,
                "q={q}: fraction {frac}, want {want}"
            );
        }
        let mut r = Estimator::new(1.0, vec![profile], Xoshiro256PlusPlus::seed_from_u64(7));
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
        let mut r = Estimator::new(0.5, vec![profile], Xoshiro256PlusPlus::seed_from_u64(1));
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
        let spec = WredSpec {
            weight: 1.0,
            profiles: vec![low, high],
        };
        let mut a = Wred::new(&spec, Xoshiro256PlusPlus::seed_from_u64(3));
        assert_eq!(a.on_arrival(occ(20), true, 0), Verdict::Mark);
        assert_eq!(a.on_arrival(occ(20), false, 0), Verdict::Drop);
        assert_eq!(a.on_arrival(occ(20), true, 1), Verdict::Pass);
        assert_eq!(a.on_arrival(occ(20), true, 7), Verdict::Pass);
    }
}
