//! D²TCP (Vamanan, Hasan & Vijaykumar, "Deadline-aware datacenter TCP",
//! SIGCOMM 2012, §3): DCTCP's α, with the cut scaled by a deadline imminence
//! factor d: p = α^d and cwnd ← cwnd·(1 − p/2). d = T_c / D, where T_c is the
//! time the flow needs at its current rate (B / (¾·W/RTT), B the bytes left)
//! and D the time left to its deadline, clamped to [d_min, d_max] (the incast
//! seed §IV uses 0.5..2.0). Flows without a deadline use d = 1 (plain DCTCP);
//! a flow past its deadline uses d_max.

use super::dctcp::{check_alpha, Alpha, Cut, Marked, ALPHA_INIT, FLAGS, G};
use super::{Build, Flags, FlowState, Window};
use crate::units::Time;
use serde::Deserialize;

/// D²TCP's cut: the deadline imminence factor's bounds.
#[derive(Clone, Debug)]
pub struct Deadline {
    d_min: f64,
    d_max: f64,
}

pub type D2tcp = Marked<Deadline>;

impl Deadline {
    /// The deadline imminence factor d.
    pub fn imminence(&self, w: &Window, f: &FlowState) -> f64 {
        let Some(deadline) = f.deadline else {
            return 1.0;
        };
        if deadline <= f.now {
            return self.d_max;
        }
        let left = (deadline - f.now).as_secs_f64();
        let rtt = f.srtt.unwrap_or(Time::from_us(100)).as_secs_f64();
        let needed = f.remaining as f64 / (0.75 * w.cwnd / rtt);
        (needed / left).clamp(self.d_min, self.d_max)
    }
}

impl Cut for Deadline {
    fn cut(&self, alpha: f64, w: &Window, f: &FlowState) -> f64 {
        let p = alpha.powf(self.imminence(w, f));
        w.cwnd * (1.0 - p / 2.0)
    }
}

/// `[transport.d2tcp]`.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct D2tcpSpec {
    /// α's EWMA gain and initial value, as DCTCP's.
    pub g: f64,
    pub alpha_init: f64,
    /// Bounds on the deadline imminence factor d.
    pub d_min: f64,
    pub d_max: f64,
}

impl Default for D2tcpSpec {
    fn default() -> Self {
        D2tcpSpec {
            g: G,
            alpha_init: ALPHA_INIT,
            d_min: 0.5,
            d_max: 2.0,
        }
    }
}

impl Build for D2tcp {
    type Settings = D2tcpSpec;
    const MOVED: &'static [(&'static str, &'static str)] =
        &[("d2tcp_d_min", "d_min"), ("d2tcp_d_max", "d_max")];
    const FLAGS: Flags = FLAGS;

    fn new(s: &D2tcpSpec) -> D2tcp {
        Marked {
            alpha: Alpha::new(s.g, s.alpha_init),
            v: Deadline {
                d_min: s.d_min,
                d_max: s.d_max,
            },
        }
    }

    fn check(s: &D2tcpSpec) -> Result<(), (&'static str, String)> {
        check_alpha(s.g, s.alpha_init)?;
        if !(s.d_min > 0.0 && s.d_min <= s.d_max) {
            return Err((
                "d_min",
                format!("must be > 0 and ≤ d_max ({}), got {}", s.d_max, s.d_min),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::SlowStart;

    fn state(deadline: Option<u64>, remaining: u64) -> FlowState {
        FlowState {
            now: Time::from_us(1000),
            bytes_sent: 0,
            remaining,
            in_flight: 0,
            srtt: Some(Time::from_us(100)),
            deadline: deadline.map(Time::from_us),
        }
    }

    #[test]
    fn near_deadlines_back_off_less_and_far_ones_more() {
        let d = Deadline {
            d_min: 0.5,
            d_max: 2.0,
        };
        let w = Window::new(10_000.0, 0.0, 1000.0, SlowStart::Bytes);
        // No deadline: DCTCP's cut, 10000·(1 − 0.25).
        assert_eq!(d.cut(0.5, &w, &state(None, 100_000)), 7500.0);
        // 100 kB at ¾·10 kB per 100 us needs 1333 us; 1000 us left: d = 1.33.
        let near = state(Some(2000), 100_000);
        let dn = d.imminence(&w, &near);
        assert!((dn - 1.3333).abs() < 1e-3);
        assert!((d.cut(0.5, &w, &near) - 10_000.0 * (1.0 - 0.5f64.powf(dn) / 2.0)).abs() < 1e-9);
        // Far deadline clamps to d_min = 0.5: p = √0.5.
        let far = state(Some(1_000_000), 100_000);
        assert_eq!(d.imminence(&w, &far), 0.5);
        assert!(d.cut(0.5, &w, &far) < d.cut(0.5, &w, &near));
        // Missed deadline: d_max.
        assert_eq!(d.imminence(&w, &state(Some(500), 100_000)), 2.0);
    }
}
