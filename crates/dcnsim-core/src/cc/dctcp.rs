//! DCTCP (Alizadeh et al., "Data Center TCP", SIGCOMM 2010, §3.1; RFC 8257)
//! and the one place of what its family (D²TCP, L²DCT) shares: ECN-capable
//! data, the receiver's per-segment echo (RFC 8257 §3.2) and the estimate α
//! of the fraction of marked bytes ([`Alpha`]): once per window of data,
//! α ← (1 − g)·α + g·F, where F is the fraction of bytes acknowledged with
//! ECE in that window (RFC 8257 §3.3). A member ([`Marked`]) says only how it
//! cuts on ECE (at most once per window) and how it grows; DCTCP cuts to
//! cwnd·(1 − α/2) and grows as Reno.

use super::{reno, Build, Controller, Flags, FlowState, Window};
use serde::Deserialize;

/// α's gain g and its initial value (RFC 8257 §3.3: g = 1/16, α starts at 1):
/// the defaults of every family member's `g` and `alpha_init`.
pub const G: f64 = 1.0 / 16.0;
pub const ALPHA_INIT: f64 = 1.0;

/// The family's flags: ECN-capable data, echoed segment by segment.
pub const FLAGS: Flags = Flags {
    ecn_capable: true,
    precise_echo: true,
    ..Flags::NEWRENO
};

/// Check α's keys (`g`, `alpha_init`) of a family member's table.
pub fn check_alpha(g: f64, alpha_init: f64) -> Result<(), (&'static str, String)> {
    if !(g > 0.0 && g <= 1.0) {
        return Err(("g", format!("must be in (0, 1], got {g}")));
    }
    if !(0.0..=1.0).contains(&alpha_init) {
        return Err(("alpha_init", format!("must be in [0, 1], got {alpha_init}")));
    }
    Ok(())
}

/// The estimate α of the fraction of marked bytes.
#[derive(Clone, Debug)]
pub struct Alpha {
    pub alpha: f64,
    g: f64,
    acked: u64,
    marked: u64,
    /// The observation window ends when snd_una passes this.
    window_end: u64,
}

impl Alpha {
    /// The estimator with gain `g` and initial α.
    pub fn new(g: f64, alpha: f64) -> Alpha {
        Alpha {
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

/// What a member of the DCTCP family does with α.
pub trait Cut: Clone + std::fmt::Debug + Send {
    /// The window after ECE, given α.
    fn cut(&self, alpha: f64, w: &Window, f: &FlowState) -> f64;

    /// Growth for `acked` newly acknowledged bytes: Reno's by default.
    fn on_ack(&mut self, w: &mut Window, acked: u64, _f: &FlowState) {
        reno::grow(w, acked, 1.0);
    }
}

/// A DCTCP-family controller: α and the ECN echo here, the member's cut and
/// growth from `V`.
#[derive(Clone, Debug)]
pub struct Marked<V> {
    pub alpha: Alpha,
    pub v: V,
}

impl<V: Cut> Controller for Marked<V> {
    fn on_ack(&mut self, w: &mut Window, acked: u64, f: &FlowState) {
        self.v.on_ack(w, acked, f);
    }

    fn observe(&mut self, acked: u64, ece: bool, snd_una: u64, snd_nxt: u64) {
        self.alpha.update(acked, ece, snd_una, snd_nxt);
    }

    fn ecn_cut(&self, w: &Window, f: &FlowState) -> f64 {
        self.v.cut(self.alpha.alpha, w, f)
    }

    fn alpha(&self) -> f64 {
        self.alpha.alpha
    }
}

/// DCTCP's cut: cwnd·(1 − α/2).
#[derive(Clone, Debug)]
pub struct Halved;

impl Cut for Halved {
    fn cut(&self, alpha: f64, w: &Window, _f: &FlowState) -> f64 {
        w.cwnd * (1.0 - alpha / 2.0)
    }
}

pub type Dctcp = Marked<Halved>;

/// `[transport.dctcp]`.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct DctcpSpec {
    /// α's EWMA gain.
    pub g: f64,
    /// α's initial value.
    pub alpha_init: f64,
}

impl Default for DctcpSpec {
    fn default() -> Self {
        DctcpSpec {
            g: G,
            alpha_init: ALPHA_INIT,
        }
    }
}

impl Build for Dctcp {
    type Settings = DctcpSpec;
    const MOVED: &'static [(&'static str, &'static str)] =
        &[("dctcp_g", "g"), ("dctcp_alpha_init", "alpha_init")];
    const FLAGS: Flags = FLAGS;

    fn new(s: &DctcpSpec) -> Dctcp {
        Marked {
            alpha: Alpha::new(s.g, s.alpha_init),
            v: Halved,
        }
    }

    fn check(s: &DctcpSpec) -> Result<(), (&'static str, String)> {
        check_alpha(s.g, s.alpha_init)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// With every byte marked, α after n windows is 1 − (1 − g)^n · (1 − α₀).
    #[test]
    fn alpha_is_an_ewma_of_the_marked_fraction_per_window() {
        let g = 1.0 / 16.0;
        let mut d = Alpha::new(g, 0.0);
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
        let mut d = Alpha::new(g, 1.0);
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
