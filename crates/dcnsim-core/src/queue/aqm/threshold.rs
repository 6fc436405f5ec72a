//! DCTCP-style marking (Alizadeh et al., SIGCOMM 2010, §3.1): an
//! ECN-capable packet is marked CE when the instantaneous queue it finds is
//! at least K (packets or bytes). Packets that are not ECN-capable pass;
//! only a full buffer drops them.
//! `aqm = { kind = "threshold", k = "20pkt" }`.

use super::{Aqm, Occupancy, Verdict};
use crate::units::Capacity;
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::Deserialize;

/// `k`: the marking threshold.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ThresholdSpec {
    pub k: Capacity,
}

/// The threshold K.
#[derive(Clone, Copy, Debug)]
pub struct Threshold(Capacity);

impl Aqm for Threshold {
    type Spec = ThresholdSpec;
    const STATELESS: bool = true;

    /// Every ECN-capable arrival at K is marked: DCTCP holds the queue about
    /// K (Alizadeh et al., §3.1).
    fn held_packets(spec: &ThresholdSpec, packet: u64) -> Option<u64> {
        Some(spec.k.packets_of(packet))
    }

    fn new(spec: &ThresholdSpec, _rng: Xoshiro256PlusPlus) -> Threshold {
        Threshold(spec.k)
    }

    #[inline]
    fn on_arrival(&mut self, occ: Occupancy, ecn_capable: bool, _class: u8) -> Verdict {
        let over = match self.0 {
            Capacity::Packets(n) => occ.packets >= n,
            Capacity::Bytes(b) => occ.bytes >= b,
        };
        if over && ecn_capable {
            Verdict::Mark
        } else {
            Verdict::Pass
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Time;
    use rand::SeedableRng;

    fn occ(packets: u64) -> Occupancy {
        Occupancy {
            packets,
            bytes: packets * 1500,
            idle: Time::ZERO,
            slot: Time::ZERO,
        }
    }

    #[test]
    fn threshold_marks_ect_at_and_above_k_only() {
        let make = |k| Threshold::new(&ThresholdSpec { k }, Xoshiro256PlusPlus::seed_from_u64(1));
        let mut a = make(Capacity::Packets(20));
        assert_eq!(a.on_arrival(occ(19), true, 0), Verdict::Pass);
        assert_eq!(a.on_arrival(occ(20), true, 0), Verdict::Mark);
        assert_eq!(a.on_arrival(occ(50), false, 0), Verdict::Pass);
        let mut b = make(Capacity::Bytes(30_000));
        assert_eq!(b.on_arrival(occ(19), true, 0), Verdict::Pass);
        assert_eq!(b.on_arrival(occ(20), true, 0), Verdict::Mark);
    }
}
