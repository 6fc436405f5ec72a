//! `[transport]`: the TCP defaults every flow starts from. A flow may override
//! `protocol` (and, through its application, `mss`).

use crate::units::{Bytes, Time};
use serde::Deserialize;

/// Congestion controllers, all running on the one TCP machine in [`crate::tcp`].
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Protocol {
    /// Loss-based TCP NewReno (RFC 5681, RFC 6582); not ECN-capable.
    #[default]
    Newreno,
    /// NewReno with RFC 3168 ECN: halve once per window on ECE.
    Ecn,
    /// DCTCP (Alizadeh et al., SIGCOMM 2010; RFC 8257).
    Dctcp,
    /// D²TCP (Vamanan et al., SIGCOMM 2012): deadline-aware DCTCP.
    D2tcp,
    /// L²DCT (Munir et al., INFOCOM 2013): least-attained-service DCTCP.
    L2dct,
}

impl Protocol {
    /// Whether data segments are sent ECN-capable (ECT(0)).
    pub fn ecn_capable(self) -> bool {
        self != Protocol::Newreno
    }

    /// Whether the receiver echoes each CE mark exactly (DCTCP's ACK state
    /// machine) rather than latching ECE until CWR (RFC 3168).
    pub fn precise_echo(self) -> bool {
        matches!(self, Protocol::Dctcp | Protocol::D2tcp | Protocol::L2dct)
    }
}

/// TCP parameters (`[transport]`). Defaults follow Linux/ns-3 practice; the
/// seeds' experiments set what they need (the incast seed: `min_rto = "200ms"`,
/// `init_cwnd = 2`; BOTCP: `min_rto = "0.2ms"`).
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct TransportSpec {
    pub protocol: Protocol,
    /// Maximum segment payload; a full packet is `mss` + 40 B of IPv4/TCP header.
    pub mss: Bytes,
    /// Initial congestion window in segments (RFC 6928: 10).
    pub init_cwnd: u32,
    /// RFC 6298 bounds and the RTO before the first RTT sample.
    pub min_rto: Time,
    pub max_rto: Time,
    pub initial_rto: Time,
    /// Duplicate ACKs that trigger fast retransmit.
    pub dupack_threshold: u32,
    /// Acknowledge every second full segment, or after `delayed_ack_timeout`.
    pub delayed_ack: bool,
    pub delayed_ack_timeout: Time,
    /// SYN, SYN-ACK, ACK before data and FIN exchange after it, as real packets.
    pub handshake: bool,
    /// Segments a flow may have waiting in its host (processing and NIC
    /// queue) before it waits for one to go out: Linux's TCP Small Queues,
    /// which keeps a sender from filling its own NIC queue.
    pub host_queue_limit: u32,
    /// DCTCP's EWMA gain g and the initial α (RFC 8257 §3.3 starts at 1).
    pub dctcp_g: f64,
    pub dctcp_alpha_init: f64,
    /// D²TCP's bounds on the deadline imminence factor d.
    pub d2tcp_d_min: f64,
    pub d2tcp_d_max: f64,
    /// L²DCT's flow weight, from `l2dct_w_max` down to `l2dct_w_min`.
    pub l2dct_w_max: f64,
    pub l2dct_w_min: f64,
}

impl Default for TransportSpec {
    fn default() -> Self {
        TransportSpec {
            protocol: Protocol::Newreno,
            mss: Bytes(1460),
            init_cwnd: 10,
            min_rto: Time::from_us(200_000),
            max_rto: Time::from_us(60_000_000),
            initial_rto: Time::from_us(1_000_000),
            dupack_threshold: 3,
            delayed_ack: false,
            delayed_ack_timeout: Time::from_us(40_000),
            handshake: true,
            host_queue_limit: 4,
            dctcp_g: 1.0 / 16.0,
            dctcp_alpha_init: 1.0,
            d2tcp_d_min: 0.5,
            d2tcp_d_max: 2.0,
            l2dct_w_max: 2.5,
            l2dct_w_min: 0.125,
        }
    }
}

/// Smallest and largest segment payloads: a 64 B packet carries 24 B.
pub const MIN_MSS: u64 = 24;
pub const MAX_MSS: u64 = 65_495;

impl TransportSpec {
    /// Check ranges; errors name the key under `transport`.
    pub(crate) fn check(&self) -> Result<(), (String, String)> {
        let bad = |k: &str, m: String| Err((k.to_string(), m));
        if !(MIN_MSS..=MAX_MSS).contains(&self.mss.0) {
            return bad(
                "mss",
                format!(
                    "must be between {MIN_MSS} and {MAX_MSS} B, got {}",
                    self.mss.0
                ),
            );
        }
        if self.init_cwnd == 0 {
            return bad("init_cwnd", "must be at least 1 segment".into());
        }
        if self.min_rto == Time::ZERO || self.min_rto > self.max_rto {
            return bad(
                "min_rto",
                format!(
                    "must be > 0 and ≤ max_rto ({}), got {}",
                    self.max_rto, self.min_rto
                ),
            );
        }
        if self.host_queue_limit == 0 {
            return bad("host_queue_limit", "must be at least 1 segment".into());
        }
        if self.dupack_threshold == 0 {
            return bad("dupack_threshold", "must be at least 1".into());
        }
        if !(self.dctcp_g > 0.0 && self.dctcp_g <= 1.0) {
            return bad(
                "dctcp_g",
                format!("must be in (0, 1], got {}", self.dctcp_g),
            );
        }
        if !(0.0..=1.0).contains(&self.dctcp_alpha_init) {
            return bad(
                "dctcp_alpha_init",
                format!("must be in [0, 1], got {}", self.dctcp_alpha_init),
            );
        }
        if !(self.d2tcp_d_min > 0.0 && self.d2tcp_d_min <= self.d2tcp_d_max) {
            return bad("d2tcp_d_min", "must be > 0 and ≤ d2tcp_d_max".into());
        }
        if !(self.l2dct_w_min > 0.0 && self.l2dct_w_min <= self.l2dct_w_max) {
            return bad("l2dct_w_min", "must be > 0 and ≤ l2dct_w_max".into());
        }
        Ok(())
    }
}
