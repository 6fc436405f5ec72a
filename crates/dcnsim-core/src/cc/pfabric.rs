//! pFabric's host transport (Alizadeh et al., SIGCOMM 2013, §4.2), with the
//! parameters of its authors' ns-2 code for 10 Gbps fabrics:
//!
//! - flows start at line rate: an initial window of about one bandwidth-delay
//!   product (12 packets);
//! - additive increase as TCP's (slow start, then one segment per RTT), with
//!   the window capped (buffer − 1 = 23 packets);
//! - no fast retransmit: duplicate ACKs are ignored, since priority dropping
//!   makes reordering and loss of low-priority packets normal;
//! - a fixed retransmission timeout without backoff (45 µs ≈ 3 RTTs);
//!   on a timeout the flow enters slow start with ssthresh at half the window;
//! - after 5 consecutive timeouts, probe mode: one-byte probes until an ACK
//!   arrives, then slow start again (run by the TCP machine, asked for by
//!   [`Controller::probe_after`]).
//!
//! The switch half is [`crate::queue::Pfabric`]; the priority every data
//! segment carries is `transport.priority` (remaining bytes by default).

use super::{reno, Build, Controller, Flags, FlowState, Window};
use crate::units::Time;
use crate::units::MAX_RTO;
use serde::Deserialize;

/// `[transport.pfabric]`.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct PfabricSpec {
    /// Initial window in packets (≈ one BDP).
    pub init_cwnd: u32,
    /// Largest window in packets.
    pub max_cwnd: u32,
    /// The fixed retransmission timeout.
    pub rto: Time,
    /// Consecutive timeouts before probe mode.
    pub probe_after: u32,
}

impl Default for PfabricSpec {
    fn default() -> Self {
        PfabricSpec {
            init_cwnd: 12,
            max_cwnd: 23,
            rto: Time::from_us(45),
            probe_after: 5,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Pfabric {
    spec: PfabricSpec,
}

impl Build for Pfabric {
    type Settings = PfabricSpec;
    /// No fast retransmit: losses are recovered by the fixed timeout.
    const FLAGS: Flags = Flags {
        fast_retransmit: false,
        ..Flags::NEWRENO
    };

    fn new(s: &PfabricSpec) -> Pfabric {
        Pfabric { spec: s.clone() }
    }

    /// Ranges; errors name the key in `[transport.pfabric]`.
    fn check(s: &PfabricSpec) -> Result<(), (&'static str, String)> {
        let bad = |k: &'static str, m: &str| Err((k, m.to_string()));
        if s.init_cwnd == 0 {
            return bad("init_cwnd", "must be at least 1 packet");
        }
        if s.max_cwnd < s.init_cwnd {
            return bad("max_cwnd", "must be at least init_cwnd");
        }
        if s.rto == Time::ZERO {
            return bad("rto", "must be above 0 (the reference: 45us at 10 Gbps)");
        }
        if s.rto > MAX_RTO {
            return Err((
                "rto",
                format!(
                    "must be at most {MAX_RTO} (120 s, Linux's TCP_RTO_MAX), got {}",
                    s.rto
                ),
            ));
        }
        if s.probe_after == 0 {
            return bad("probe_after", "must be at least 1 timeout");
        }
        Ok(())
    }
}

impl Controller for Pfabric {
    fn initial_window(&self, _init_cwnd: u32, mss: f64) -> f64 {
        f64::from(self.spec.init_cwnd) * mss
    }

    fn on_ack(&mut self, w: &mut Window, acked: u64, _f: &FlowState) {
        reno::grow(w, acked, 1.0);
        w.cwnd = w.cwnd.min(f64::from(self.spec.max_cwnd) * w.mss);
    }

    fn on_timeout(&mut self, w: &mut Window, _flight: u64) {
        w.ssthresh = (w.cwnd / 2.0).max(w.mss);
        w.cwnd = w.mss;
    }

    fn fixed_rto(&self) -> Option<Time> {
        Some(self.spec.rto)
    }

    fn probe_after(&self) -> Option<u32> {
        Some(self.spec.probe_after)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::SlowStart;

    fn flow() -> FlowState {
        FlowState {
            now: Time::ZERO,
            bytes_sent: 0,
            remaining: 0,
            in_flight: 0,
            srtt: None,
            deadline: None,
        }
    }

    #[test]
    fn starts_at_a_bdp_grows_to_the_cap_and_halves_into_slow_start_on_timeout() {
        let mut p = Pfabric::new(&PfabricSpec::default());
        let mss = 1460.0;
        let mut w = Window::new(
            p.initial_window(10, mss),
            f64::INFINITY,
            mss,
            SlowStart::Bytes,
        );
        assert_eq!(w.cwnd, 12.0 * mss);
        for _ in 0..100 {
            p.on_ack(&mut w, 1460, &flow());
        }
        assert_eq!(w.cwnd, 23.0 * mss);
        p.on_timeout(&mut w, 0);
        assert_eq!((w.cwnd, w.ssthresh), (mss, 11.5 * mss));
        const { assert!(!Pfabric::FLAGS.fast_retransmit) };
        assert_eq!(p.fixed_rto(), Some(Time::from_us(45)));
        assert_eq!(p.probe_after(), Some(5));
    }
}
