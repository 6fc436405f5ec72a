//! `[transport]`: the TCP defaults every flow starts from. A flow may override
//! `protocol` (and, through its application, `mss`).

use crate::cc::{PfabricSpec, Protocol};
use crate::units::{Bytes, Time};
use serde::Deserialize;

/// What a TCP packet carries in its pFabric `prio` field (smaller is served
/// first). pFabric's reference ns-2 code uses the flow's remaining bytes
/// (`curseq − highest_ack − sacked`, plus a constant that only separates data
/// from its ACKs): [`PrioScheme::Remaining`].
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum PrioScheme {
    /// Bytes of the flow not yet acknowledged, at send time (pFabric §4.1).
    #[default]
    Remaining,
    /// The flow's size (shortest flow first, sizes known in advance).
    Size,
    /// Bytes sent so far (least attained service, sizes unknown).
    Sent,
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
    /// What TCP packets carry in `prio`.
    pub priority: PrioScheme,
    /// pFabric's host parameters (`[transport.pfabric]`).
    pub pfabric: PfabricSpec,
    /// Pace segments as Linux does (`sch_fq` with `tcp_update_pacing_rate`):
    /// at 2·cwnd/srtt in slow start, 1.2·cwnd/srtt in congestion avoidance.
    pub pacing: bool,
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
            priority: PrioScheme::Remaining,
            pacing: false,
            pfabric: PfabricSpec::default(),
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
        self.pfabric.check()?;
        if !(self.l2dct_w_min > 0.0 && self.l2dct_w_min <= self.l2dct_w_max) {
            return bad("l2dct_w_min", "must be > 0 and ≤ l2dct_w_max".into());
        }
        Ok(())
    }
}
