//! L²DCT (Munir et al., "Minimizing flow completion times in data centers",
//! INFOCOM 2013): least-attained-service scheduling from the sender. A flow's
//! weight w_c falls with the data it has sent, from w_max = 2.5 to
//! w_min = 0.125 (the incast seed §IV): w_max up to 200 segments, then linearly
//! to w_min at 1000 segments (the schedule of the public ns-3 L²DCT model).
//! Congestion avoidance adds k = w_c / w_max segments per round trip; on ECE
//! the window is cut by b/2 with b = α^(w_c), so young flows (large w_c) back
//! off less than old ones.

use super::dctcp::{check_alpha, Alpha, Cut, Marked, ALPHA_INIT, FLAGS, G};
use super::{reno, Build, Flags, FlowState, Window};
use serde::Deserialize;

/// L²DCT's cut and growth: the flow weight's bounds.
#[derive(Clone, Debug)]
pub struct Weight {
    w_max: f64,
    w_min: f64,
}

pub type L2dct = Marked<Weight>;

/// Segments sent at full weight, and where the weight reaches its minimum.
const FULL_WEIGHT_SEGMENTS: f64 = 200.0;
const MIN_WEIGHT_SEGMENTS: f64 = 1000.0;

impl Weight {
    pub fn weight(&self, bytes_sent: u64, mss: f64) -> f64 {
        let segs = bytes_sent as f64 / mss;
        let w = if segs <= FULL_WEIGHT_SEGMENTS {
            self.w_max
        } else {
            self.w_max
                - (self.w_max - self.w_min) * (segs - FULL_WEIGHT_SEGMENTS)
                    / (MIN_WEIGHT_SEGMENTS - FULL_WEIGHT_SEGMENTS)
        };
        w.clamp(self.w_min, self.w_max)
    }

    pub fn increase_gain(&self, bytes_sent: u64, mss: f64) -> f64 {
        self.weight(bytes_sent, mss) / self.w_max
    }
}

impl Cut for Weight {
    fn cut(&self, alpha: f64, w: &Window, f: &FlowState) -> f64 {
        let b = alpha.powf(self.weight(f.bytes_sent, w.mss));
        w.cwnd * (1.0 - b / 2.0)
    }

    fn on_ack(&mut self, w: &mut Window, acked: u64, f: &FlowState) {
        reno::grow(w, acked, self.increase_gain(f.bytes_sent, w.mss));
    }
}

/// `[transport.l2dct]`.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct L2dctSpec {
    /// α's EWMA gain and initial value, as DCTCP's.
    pub g: f64,
    pub alpha_init: f64,
    /// The flow weight, from `w_max` down to `w_min`.
    pub w_max: f64,
    pub w_min: f64,
}

impl Default for L2dctSpec {
    fn default() -> Self {
        L2dctSpec {
            g: G,
            alpha_init: ALPHA_INIT,
            w_max: 2.5,
            w_min: 0.125,
        }
    }
}

impl Build for L2dct {
    type Settings = L2dctSpec;
    const MOVED: &'static [(&'static str, &'static str)] =
        &[("l2dct_w_max", "w_max"), ("l2dct_w_min", "w_min")];
    const FLAGS: Flags = FLAGS;

    fn new(s: &L2dctSpec) -> L2dct {
        Marked {
            alpha: Alpha::new(s.g, s.alpha_init),
            v: Weight {
                w_max: s.w_max,
                w_min: s.w_min,
            },
        }
    }

    fn check(s: &L2dctSpec) -> Result<(), (&'static str, String)> {
        check_alpha(s.g, s.alpha_init)?;
        if !(s.w_min > 0.0 && s.w_min <= s.w_max) {
            return Err((
                "w_min",
                format!("must be > 0 and ≤ w_max ({}), got {}", s.w_max, s.w_min),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::SlowStart;
    use crate::units::Time;

    fn sent(bytes_sent: u64) -> FlowState {
        FlowState {
            now: Time::ZERO,
            bytes_sent,
            remaining: 0,
            in_flight: 0,
            srtt: None,
            deadline: None,
        }
    }

    #[test]
    fn weight_falls_from_max_to_min_with_data_sent() {
        let l = Weight {
            w_max: 2.5,
            w_min: 0.125,
        };
        let mss = 1460.0;
        assert_eq!(l.weight(0, mss), 2.5);
        assert_eq!(l.weight(200 * 1460, mss), 2.5);
        assert!((l.weight(600 * 1460, mss) - (2.5 - 2.375 / 2.0)).abs() < 1e-12);
        assert_eq!(l.weight(1000 * 1460, mss), 0.125);
        assert_eq!(l.weight(10_000 * 1460, mss), 0.125);
        let w = Window::new(10_000.0, 0.0, mss, SlowStart::Bytes);
        // α = 0.5: a new flow cuts by 0.5^2.5/2 ≈ 8.8%, an old one by 0.5^0.125/2 ≈ 45.9%.
        let young = l.cut(0.5, &w, &sent(0));
        let old = l.cut(0.5, &w, &sent(5_000_000));
        assert!((young - 10_000.0 * (1.0 - 0.5f64.powf(2.5) / 2.0)).abs() < 1e-9);
        assert!((old - 10_000.0 * (1.0 - 0.5f64.powf(0.125) / 2.0)).abs() < 1e-9);
        assert!(young > old);
        assert_eq!(l.increase_gain(0, mss), 1.0);
        assert_eq!(l.increase_gain(5_000_000, mss), 0.05);
    }
}
