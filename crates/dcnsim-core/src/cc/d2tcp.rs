//! D²TCP (Vamanan, Hasan & Vijaykumar, "Deadline-aware datacenter TCP",
//! SIGCOMM 2012, §3): DCTCP's α, with the cut scaled by a deadline imminence
//! factor d: p = α^d and cwnd ← cwnd·(1 − p/2). d = T_c / D, where T_c is the
//! time the flow needs at its current rate (B / (¾·W/RTT), B the bytes left)
//! and D the time left to its deadline, clamped to [d_min, d_max] (the incast
//! seed §IV uses 0.5..2.0). Flows without a deadline use d = 1 (plain DCTCP);
//! a flow past its deadline uses d_max.

use super::{Build, Controller, Dctcp, FlowState, Window};
use crate::tcp::TransportSpec;
use crate::units::Time;

#[derive(Clone, Debug)]
pub struct D2tcp {
    pub dctcp: Dctcp,
    d_min: f64,
    d_max: f64,
}

impl D2tcp {
    pub fn with(dctcp: Dctcp, d_min: f64, d_max: f64) -> D2tcp {
        D2tcp {
            dctcp,
            d_min,
            d_max,
        }
    }

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

    pub fn cut(&self, w: &Window, f: &FlowState) -> f64 {
        let p = self.dctcp.alpha.powf(self.imminence(w, f));
        w.cwnd * (1.0 - p / 2.0)
    }
}

impl Build for D2tcp {
    fn new(t: &TransportSpec) -> D2tcp {
        D2tcp::with(Dctcp::new(t), t.d2tcp_d_min, t.d2tcp_d_max)
    }
}

impl Controller for D2tcp {
    fn ecn_capable(&self) -> bool {
        true
    }

    fn precise_echo(&self) -> bool {
        true
    }

    fn observe(&mut self, acked: u64, ece: bool, snd_una: u64, snd_nxt: u64) {
        self.dctcp.update(acked, ece, snd_una, snd_nxt);
    }

    fn ecn_cut(&self, w: &Window, f: &FlowState) -> f64 {
        self.cut(w, f)
    }

    fn alpha(&self) -> f64 {
        self.dctcp.alpha
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(deadline: Option<u64>, remaining: u64) -> FlowState {
        FlowState {
            now: Time::from_us(1000),
            bytes_sent: 0,
            remaining,
            srtt: Some(Time::from_us(100)),
            deadline: deadline.map(Time::from_us),
        }
    }

    #[test]
    fn near_deadlines_back_off_less_and_far_ones_more() {
        let mut d = D2tcp::with(Dctcp::with(1.0 / 16.0, 0.5), 0.5, 2.0);
        d.dctcp.alpha = 0.5;
        let w = Window {
            cwnd: 10_000.0,
            ssthresh: 0.0,
            mss: 1000.0,
        };
        // No deadline: DCTCP's cut, 10000·(1 − 0.25).
        assert_eq!(d.cut(&w, &state(None, 100_000)), 7500.0);
        // 100 kB at ¾·10 kB per 100 us needs 1333 us; 1000 us left: d = 1.33.
        let near = state(Some(2000), 100_000);
        let dn = d.imminence(&w, &near);
        assert!((dn - 1.3333).abs() < 1e-3);
        assert!((d.cut(&w, &near) - 10_000.0 * (1.0 - 0.5f64.powf(dn) / 2.0)).abs() < 1e-9);
        // Far deadline clamps to d_min = 0.5: p = √0.5.
        let far = state(Some(1_000_000), 100_000);
        assert_eq!(d.imminence(&w, &far), 0.5);
        assert!(d.cut(&w, &far) < d.cut(&w, &near));
        // Missed deadline: d_max.
        assert_eq!(d.imminence(&w, &state(Some(500), 100_000)), 2.0);
    }
}
