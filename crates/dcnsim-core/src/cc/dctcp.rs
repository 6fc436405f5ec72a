//! DCTCP's estimate of the fraction of marked bytes (Alizadeh et al.,
//! "Data Center TCP", SIGCOMM 2010, §3.1; RFC 8257 §3.3): once per window of
//! data, α ← (1 − g)·α + g·F, where F is the fraction of bytes acknowledged
//! with ECE in that window. On ECE the window is cut to cwnd·(1 − α/2), at most
//! once per window.

use super::{Build, Controller, FlowState, Window};
use crate::tcp::TransportSpec;

#[derive(Clone, Debug)]
pub struct Dctcp {
    pub alpha: f64,
    g: f64,
    acked: u64,
    marked: u64,
    /// The observation window ends when snd_una passes this.
    window_end: u64,
}

impl Dctcp {
    /// DCTCP's estimator with gain `g` and initial α.
    pub fn with(g: f64, alpha: f64) -> Dctcp {
        Dctcp {
            alpha,
            g,
            acked: 0,
            marked: 0,
            window_end: 0,
        }
    }

    pub fn update(&mut self, acked: u64, ece: bool, snd_una: u64, snd_nxt: u64) {
        self.acked += acked;
        if ece {
            self.marked += acked;
        }
        if snd_una > self.window_end {
            if self.acked > 0 {
                let f = self.marked as f64 / self.acked as f64;
                self.alpha = (1.0 - self.g) * self.alpha + self.g * f;
            }
            self.acked = 0;
            self.marked = 0;
            self.window_end = snd_nxt;
        }
    }
}

impl Build for Dctcp {
    fn new(t: &TransportSpec) -> Dctcp {
        Dctcp::with(t.dctcp_g, t.dctcp_alpha_init)
    }
}

impl Controller for Dctcp {
    fn ecn_capable(&self) -> bool {
        true
    }

    fn precise_echo(&self) -> bool {
        true
    }

    fn observe(&mut self, acked: u64, ece: bool, snd_una: u64, snd_nxt: u64) {
        self.update(acked, ece, snd_una, snd_nxt);
    }

    fn ecn_cut(&self, w: &Window, _f: &FlowState) -> f64 {
        w.cwnd * (1.0 - self.alpha / 2.0)
    }

    fn alpha(&self) -> f64 {
        self.alpha
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// With every byte marked, α after n windows is 1 − (1 − g)^n · (1 − α₀).
    #[test]
    fn alpha_is_an_ewma_of_the_marked_fraction_per_window() {
        let g = 1.0 / 16.0;
        let mut d = Dctcp::with(g, 0.0);
        // The first ACK opens the first observation window (no bytes yet).
        let mut una = 1;
        d.update(0, false, una, 10_000);
        for n in 1..=20 {
            // A window of 10 segments of 1000 B, all marked.
            for _ in 0..10 {
                una += 1000;
                d.update(1000, true, una, una + 9_999);
            }
            let want = 1.0 - (1.0 - g).powi(n);
            assert!(
                (d.alpha - want).abs() < 1e-12,
                "window {n}: {} vs {want}",
                d.alpha
            );
        }
        // Half the bytes marked: α converges to 1/2.
        let mut d = Dctcp::with(g, 1.0);
        let mut una = 1;
        d.update(0, false, una, 10_000);
        for _ in 0..400 {
            for i in 0..10 {
                una += 1000;
                d.update(1000, i % 2 == 0, una, una + 9_999);
            }
        }
        assert!((d.alpha - 0.5).abs() < 1e-6);
    }
}
