//! Congestion controllers: how the window grows on ACKs and how much it is cut
//! when ECN marks arrive. Loss handling (fast retransmit, NewReno recovery,
//! timeouts) is shared by all of them and lives in [`crate::tcp`]; so is the
//! "once per window" rule for reacting to ECE (RFC 3168 §6.1.2).
//!
//! The controllers are variants of one closed enum, dispatched by `match`.

mod d2tcp;
mod dctcp;
mod l2dct;
mod reno;

pub use d2tcp::D2tcp;
pub use dctcp::Dctcp;
pub use l2dct::L2dct;

use crate::scenario::{Protocol, TransportSpec};
use crate::units::Time;

/// The sender's window, in bytes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Window {
    pub cwnd: f64,
    pub ssthresh: f64,
    pub mss: f64,
}

/// What a controller may look at when it reacts.
#[derive(Clone, Copy, Debug)]
pub struct FlowState {
    pub now: Time,
    /// New data bytes sent so far (L²DCT's attained service).
    pub bytes_sent: u64,
    /// Bytes not yet acknowledged or sent (D²TCP's B).
    pub remaining: u64,
    /// Smoothed RTT, if there is a sample.
    pub srtt: Option<Time>,
    pub deadline: Option<Time>,
}

#[derive(Clone, Debug)]
pub enum Cc {
    /// RFC 5681 slow start and congestion avoidance; also used by `ecn`, which
    /// halves on ECE (RFC 3168).
    Reno {
        ecn: bool,
    },
    Dctcp(Dctcp),
    D2tcp(D2tcp),
    L2dct(L2dct),
}

impl Cc {
    pub fn new(protocol: Protocol, t: &TransportSpec) -> Cc {
        match protocol {
            Protocol::Newreno => Cc::Reno { ecn: false },
            Protocol::Ecn => Cc::Reno { ecn: true },
            Protocol::Dctcp => Cc::Dctcp(Dctcp::new(t.dctcp_g, t.dctcp_alpha_init)),
            Protocol::D2tcp => Cc::D2tcp(D2tcp::new(
                Dctcp::new(t.dctcp_g, t.dctcp_alpha_init),
                t.d2tcp_d_min,
                t.d2tcp_d_max,
            )),
            Protocol::L2dct => Cc::L2dct(L2dct::new(
                Dctcp::new(t.dctcp_g, t.dctcp_alpha_init),
                t.l2dct_w_max,
                t.l2dct_w_min,
            )),
        }
    }

    /// Grow the window for `acked` newly acknowledged bytes (outside recovery).
    pub fn on_ack(&mut self, w: &mut Window, acked: u64, f: &FlowState) {
        let gain = match self {
            Cc::L2dct(l) => l.increase_gain(f.bytes_sent, w.mss),
            _ => 1.0,
        };
        reno::grow(w, acked, gain);
    }

    /// Account one ACK for the marked-fraction estimate (DCTCP family):
    /// `acked` bytes, whether it echoed CE, and the sender's `snd_una` /
    /// `snd_nxt` after it (an observation window ends when `snd_una` passes
    /// the `snd_nxt` of its start).
    pub fn observe(&mut self, acked: u64, ece: bool, snd_una: u64, snd_nxt: u64) {
        if let Some(d) = self.dctcp_mut() {
            d.observe(acked, ece, snd_una, snd_nxt);
        }
    }

    /// The window after reacting to ECE (called at most once per window).
    pub fn ecn_cut(&self, w: &Window, f: &FlowState) -> f64 {
        match self {
            Cc::Reno { .. } => w.cwnd / 2.0,
            Cc::Dctcp(d) => w.cwnd * (1.0 - d.alpha / 2.0),
            Cc::D2tcp(d) => d.cut(w, f),
            Cc::L2dct(l) => l.cut(w, f.bytes_sent),
        }
    }

    /// DCTCP's α, for traces (`NaN` for controllers without one).
    pub fn alpha(&self) -> f64 {
        match self {
            Cc::Reno { .. } => f64::NAN,
            Cc::Dctcp(d) => d.alpha,
            Cc::D2tcp(d) => d.dctcp.alpha,
            Cc::L2dct(l) => l.dctcp.alpha,
        }
    }

    fn dctcp_mut(&mut self) -> Option<&mut Dctcp> {
        match self {
            Cc::Reno { .. } => None,
            Cc::Dctcp(d) => Some(d),
            Cc::D2tcp(d) => Some(&mut d.dctcp),
            Cc::L2dct(l) => Some(&mut l.dctcp),
        }
    }
}
