//! L²DCT (Munir et al., "Minimizing flow completion times in data centers",
//! INFOCOM 2013): least-attained-service scheduling from the sender. A flow's
//! weight w_c falls with the data it has sent, from w_max = 2.5 to
//! w_min = 0.125 (the incast seed §IV): w_max up to 200 segments, then linearly
//! to w_min at 1000 segments (the schedule of the public ns-3 L²DCT model).
//! Congestion avoidance adds k = w_c / w_max segments per round trip; on ECE
//! the window is cut by b/2 with b = α^(w_c), so young flows (large w_c) back
//! off less than old ones.

use super::{reno, Build, Controller, Dctcp, FlowState, Window};
use crate::tcp::TransportSpec;

#[derive(Clone, Debug)]
pub struct L2dct {
    pub dctcp: Dctcp,
    w_max: f64,
    w_min: f64,
}

/// Segments sent at full weight, and where the weight reaches its minimum.
const FULL_WEIGHT_SEGMENTS: f64 = 200.0;
const MIN_WEIGHT_SEGMENTS: f64 = 1000.0;

impl L2dct {
    pub fn with(dctcp: Dctcp, w_max: f64, w_min: f64) -> L2dct {
        L2dct {
            dctcp,
            w_max,
            w_min,
        }
    }

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

    pub fn cut(&self, w: &Window, bytes_sent: u64) -> f64 {
        let b = self.dctcp.alpha.powf(self.weight(bytes_sent, w.mss));
        w.cwnd * (1.0 - b / 2.0)
    }
}

impl Build for L2dct {
    fn new(t: &TransportSpec) -> L2dct {
        L2dct::with(Dctcp::new(t), t.l2dct_w_max, t.l2dct_w_min)
    }
}

impl Controller for L2dct {
    fn ecn_capable(&self) -> bool {
        true
    }

    fn precise_echo(&self) -> bool {
        true
    }

    fn on_ack(&mut self, w: &mut Window, acked: u64, f: &FlowState) {
        reno::grow(w, acked, self.increase_gain(f.bytes_sent, w.mss));
    }

    fn observe(&mut self, acked: u64, ece: bool, snd_una: u64, snd_nxt: u64) {
        self.dctcp.update(acked, ece, snd_una, snd_nxt);
    }

    fn ecn_cut(&self, w: &Window, f: &FlowState) -> f64 {
        self.cut(w, f.bytes_sent)
    }

    fn alpha(&self) -> f64 {
        self.dctcp.alpha
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weight_falls_from_max_to_min_with_data_sent() {
        let l = L2dct::with(Dctcp::with(1.0 / 16.0, 0.5), 2.5, 0.125);
        let mss = 1460.0;
        assert_eq!(l.weight(0, mss), 2.5);
        assert_eq!(l.weight(200 * 1460, mss), 2.5);
        assert!((l.weight(600 * 1460, mss) - (2.5 - 2.375 / 2.0)).abs() < 1e-12);
        assert_eq!(l.weight(1000 * 1460, mss), 0.125);
        assert_eq!(l.weight(10_000 * 1460, mss), 0.125);
        let w = Window {
            cwnd: 10_000.0,
            ssthresh: 0.0,
            mss,
        };
        // α = 0.5: a new flow cuts by 0.5^2.5/2 ≈ 8.8%, an old one by 0.5^0.125/2 ≈ 45.9%.
        let young = l.cut(&w, 0);
        let old = l.cut(&w, 5_000_000);
        assert!((young - 10_000.0 * (1.0 - 0.5f64.powf(2.5) / 2.0)).abs() < 1e-9);
        assert!((old - 10_000.0 * (1.0 - 0.5f64.powf(0.125) / 2.0)).abs() < 1e-9);
        assert!(young > old);
        assert_eq!(l.increase_gain(0, mss), 1.0);
        assert_eq!(l.increase_gain(5_000_000, mss), 0.05);
    }
}
