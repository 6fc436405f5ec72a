//! `[transport]`: the TCP defaults every flow starts from. A flow may override
//! `protocol` (and, through its application, `mss`).
//!
//! `transport.profile` names a simulator whose TCP defaults the keys start
//! from ([`Profile`]); keys written in the scenario override the profile's.

use super::HEADER;
use crate::cc::{CcSettings, Protocol, SlowStart};
use crate::error::{parse_at, ScenarioError};
use crate::packet::MAX_SACK_BLOCKS;
use crate::units::{Bytes, Capacity, Time, MAX_RTO};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

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

/// `transport.recovery`: how the window moves during a fast recovery.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Recovery {
    /// NewReno's inflation by duplicate ACKs (RFC 6582) or, with SACK,
    /// cwnd = ssthresh and sending by pipe (RFC 6675): ns-3's
    /// `TcpClassicRecovery`, the default up to ns-3.31.
    #[default]
    Classic,
    /// Proportional Rate Reduction (RFC 6937, [`super::prr`]): the default
    /// of Linux (`tcp_cwnd_reduction`, net/ipv4/tcp_input.c) and of ns-3
    /// since 3.32 (`TcpPrrRecovery`). Needs `sack`.
    Prr,
    /// Reno (RFC 5681 §3.2): inflation by duplicate ACKs as NewReno, but
    /// the first ACK of new data, partial or not, ends the recovery with
    /// cwnd = ssthresh and grows the window as any new ACK does; a later
    /// third duplicate ACK may retransmit again in the same window after a
    /// fast retransmit (not after a timeout). ns-2.35 plain
    /// `Agent/TCP/FullTcp`: `FullTcpAgent::pack_action` and `ack_action`
    /// ("baseline reno TCP exits fast recovery on a partial ACK",
    /// reno_fastrecov_ true retracts cwnd to ssthresh_), open_cwnd_on_pack_
    /// true, and `dupack_action`'s `last_cwnd_action_ == CWND_ACTION_DUPACK`
    /// (tcp/tcp-full.cc lines 791–822, 2546–2574). Needs `sack` off.
    Reno,
}

/// `transport.sack_pipe`: how a SACK recovery counts the bytes in the
/// network, which a segment may be sent only below the window.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum SackPipe {
    /// RFC 6675 §4 SetPipe, from the scoreboard on every ACK: outstanding
    /// bytes neither SACKed nor deemed lost, plus those retransmitted.
    #[default]
    Rfc6675,
    /// ns-2.35 `Agent/TCP/FullTcp/Sack` ([`super::ns2_pipe`]): set at the
    /// third duplicate ACK to the outstanding bytes less the SACKed ones,
    /// lost ones included, then counted: + every byte sent, − one segment
    /// per duplicate ACK, − two per partial ACK (`SackFullTcpAgent::
    /// dupack_action`, `pack_action`, `send_allowed`, tcp/tcp-full.cc lines
    /// 2861, 2153, 2926, 3048).
    Ns2,
}

/// `transport.sack_holes`: which unSACKed segment a SACK sender
/// retransmits next.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum SackHoles {
    /// RFC 6675 NextSeg rule 1: the first unSACKed segment at or above
    /// HighRxt that IsLost deems lost (more than DupThresh − 1 segments
    /// SACKed above it), in a recovery only.
    #[default]
    Rfc6675,
    /// ns-2.35 `Agent/TCP/FullTcp/Sack` ([`super::ns2_holes`]): any
    /// unSACKed segment below the highest SACKed range, from the hole-fill
    /// pointer (`SackFullTcpAgent::nxt_tseq`, `sack_rtx_cthresh_` 1,
    /// tcp/tcp-full.cc lines 3059–3114); a recovery only at the third
    /// duplicate ACK; after a timeout, holes first until the ACK reaches
    /// the highest sequence sent.
    Ns2,
}

/// `transport.ssthresh_from`: what a loss halves into ssthresh, on the
/// duplicate-ACK threshold and on a timeout.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum SsthreshFrom {
    /// FlightSize, snd_max − snd_una (RFC 5681 eq. 4), less what limited
    /// transmit sent (RFC 3042 §2): ns-3.23 `TcpNewReno::Retransmit` and
    /// `DupAck` (`BytesInFlight ()` = `m_highTxMark` − head, tcp-newreno.cc,
    /// tcp-socket-base.cc).
    #[default]
    Flight,
    /// The window min(cwnd, rwnd) in whole segments: ns-2.35
    /// `TcpAgent::slowdown(CLOSE_SSTHRESH_HALF)`, `(int)(window() / 2)`
    /// (tcp/tcp.cc); Linux `tcp_reno_ssthresh`, `cwnd >> 1`
    /// (net/ipv4/tcp_cong.c).
    Window,
    /// RFC 6675's pipe, outstanding bytes neither SACKed nor lost: ns-3 since
    /// 3.27 (`TcpSocketBase::ReTxTimeout` and `EnterRecovery` pass
    /// `BytesInFlight()`, `TcpTxBuffer::BytesInFlight`, to `GetSsThresh`).
    Pipe,
}

/// TCP parameters (`[transport]`). The defaults are the `dcnsim` profile; the
/// seeds' experiments set what they need (the incast seed: `min_rto = "200ms"`,
/// `init_cwnd = 2`; BOTCP: `min_rto = "0.2ms"`) or name a profile.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct TransportSpec {
    pub protocol: Protocol,
    /// Maximum segment payload; a full packet is `mss` + `header`.
    pub mss: Bytes,
    /// IPv4 + TCP header bytes on every segment, options other than SACK
    /// included: 40 without options, 52 with the timestamp option (10 B,
    /// padded to 12, RFC 7323 §3 and Appendix A). SACK blocks add their own.
    pub header: Bytes,
    /// Initial congestion window in segments (RFC 6928: 10).
    pub init_cwnd: u32,
    /// Initial slow-start threshold (bytes, or segments of `mss`); none is
    /// infinite (RFC 5681 §3.1: "arbitrarily high").
    pub initial_ssthresh: Option<Capacity>,
    /// RFC 6298 bounds and the RTO before the first RTT sample.
    pub min_rto: Time,
    pub max_rto: Time,
    pub initial_rto: Time,
    /// The clock granularity G of RFC 6298 §2: RTO = SRTT + max(G, 4·RTTVAR).
    pub rto_granularity: Time,
    /// Duplicate ACKs that trigger fast retransmit.
    pub dupack_threshold: u32,
    /// Limited transmit (RFC 3042): one new segment on each of the first two
    /// duplicate ACKs.
    pub limited_transmit: bool,
    /// What an ACK adds to the window ([`SlowStart`]).
    pub slow_start: SlowStart,
    /// How the window moves in fast recovery ([`Recovery`]).
    pub recovery: Recovery,
    /// How a SACK recovery counts its pipe ([`SackPipe`]).
    pub sack_pipe: SackPipe,
    /// Which hole a SACK sender retransmits next ([`SackHoles`]).
    pub sack_holes: SackHoles,
    /// What a loss halves into ssthresh ([`SsthreshFrom`]).
    pub ssthresh_from: SsthreshFrom,
    /// A timeout repeated before the first one's data is acknowledged
    /// (the head already retransmitted) leaves ssthresh as it is: ns-3
    /// since 3.27 (`ReTxTimeout`: ssthresh only when not in `CA_LOSS` or
    /// the head not retransmitted), Linux (`tcp_enter_loss`: "Reduce
    /// ssthresh if it has not yet been made inside this window").
    pub rto_keeps_ssthresh: bool,
    /// The least window, in segments, an ECE cut leaves (cwnd and ssthresh):
    /// 2 for RFC 3168 §6.1.2 and Linux's DCTCP (`dctcp_ssthresh`:
    /// `max(..., 2U)`), 1 for ns-2.35's DCTCP (`slowdown`: `if (cwnd_ < 1)
    /// cwnd_ = 1`), 0 for ns-3's `TcpDctcp::GetSsThresh` (no floor; the
    /// sender still sends one segment at a time).
    pub ecn_floor: f64,
    /// Undo a fast retransmit found spurious by its timestamps (Eifel,
    /// RFC 3522 / RFC 4015): cwnd and ssthresh go back.
    pub undo: bool,
    /// SACK (RFC 2018 blocks on ACKs) and SACK-based loss recovery (RFC 6675).
    pub sack: bool,
    /// SACK blocks per ACK, 1 to 4 (at most 3 beside the timestamp option:
    /// the TCP options fit in 40 B).
    pub sack_blocks: u32,
    /// D-SACK (RFC 2883): the receiver reports a duplicate segment in the
    /// first SACK block. Needs `sack`.
    pub dsack: bool,
    /// Undo a recovery whose every retransmission the receiver reported as a
    /// duplicate (RFC 3708 §3): cwnd and ssthresh go back. Needs `dsack`.
    pub dsack_undo: bool,
    /// RACK-TLP (RFC 8985): losses detected by time from SACKs instead of by
    /// counting duplicates, and a tail loss probe. Needs `sack`.
    pub rack: bool,
    /// The receiver's window (bytes, or segments of `mss`): the sender never
    /// has more than this outstanding. None: no limit.
    pub rwnd: Option<Capacity>,
    /// Acknowledge every second full segment, or after `delayed_ack_timeout`.
    pub delayed_ack: bool,
    pub delayed_ack_timeout: Time,
    /// The first this many data segments of a connection are acknowledged at
    /// once even with delayed ACKs (ns-3.23 answers the first at once, Linux
    /// starts in quick-ACK mode).
    pub quick_acks: u32,
    /// SYN, SYN-ACK, ACK before data and FIN exchange after it, as real packets.
    pub handshake: bool,
    /// ns-2's one-way SYN (`Agent/TCP` `syn_ true`, `delay_growth_ true`):
    /// without `handshake`, a header-only SYN first, the data once its ACK
    /// is back (the window is one packet until then: `set_initial_window`,
    /// then `initial_window()` on the SYN's ACK), no third packet and no
    /// FIN (tcp/tcp.cc lines 423–430, 700–706, 1807–1811). Needs
    /// `handshake` off.
    pub oneway_syn: bool,
    /// Nagle's sender silly-window avoidance (RFC 896; RFC 1122 §4.2.3.4):
    /// a new segment shorter than `mss` waits while data is outstanding,
    /// unless it is at least half the receiver's window. ns-2.35 FullTcp
    /// with `nodelay_ false` (`FullTcpAgent::foutput`, tcp/tcp-full.cc
    /// lines 1050–1067).
    pub nagle: bool,
    /// Slow-start restart after idle (RFC 5681 §4.1): new data sent with
    /// nothing outstanding, longer than the retransmission timeout after
    /// the last segment sent, starts from `init_cwnd` again (ssthresh
    /// kept). ns-2.35 FullTcp `slow_start_restart_ true`
    /// (`FullTcpAgent::foutput` and `idle_restart`, tcp/tcp-full.cc lines
    /// 1014–1018, 1458–1472: the idle time in whole ticks, against the
    /// estimate `t_rtxcur_` before `minrto_`).
    pub idle_restart: bool,
    /// ns-2's retransmission-timeout estimator (`TcpAgent::rtt_update`,
    /// tcp/tcp.cc lines 565–604): RTT samples in whole ticks of
    /// `rto_granularity` (rounded, at least one), SRTT and RTTVAR in fixed
    /// point (1/8 and 1/4 tick), RTO = ⌊SRTT + 4·RTTVAR⌋ ticks, then
    /// `min_rto`/`max_rto`. Needs `rto_granularity` > 0.
    pub rto_ticks: bool,
    /// Segments a flow may have waiting in its host (processing and NIC
    /// queue) before it waits for one to go out: Linux's TCP Small Queues,
    /// which keeps a sender from filling its own NIC queue.
    pub host_queue_limit: u32,
    /// What TCP packets carry in `prio`.
    pub priority: PrioScheme,
    /// Pace segments as Linux does (`sch_fq` with `tcp_update_pacing_rate`):
    /// at 2·cwnd/srtt in slow start, 1.2·cwnd/srtt in congestion avoidance.
    pub pacing: bool,
    /// The smallest path MTU an ICMP "fragmentation needed" sets (RFC 1191
    /// §3), in bytes of a packet: a segment then carries at least this less
    /// `header` (and never under 24 B). 64 B, the Ethernet minimum the
    /// Packet Slicing seed slices to (§III.C); Linux's is 552 B
    /// (`ip_rt_min_pmtu` = 512 + 20 + 20, net/ipv4/route.c).
    pub min_pmtu: Bytes,
    /// Raise the MSS when an ICMP message carries a larger next-hop MTU
    /// (up to `mss`), as the Packet Slicing seed's switch intends when
    /// concurrency falls (§III.D). Off by default: RFC 1191 §3 ("a host
    /// MUST not increase its estimate of the Path MTU in response to the
    /// contents of a Datagram Too Big message") and Linux
    /// (`__ip_rt_update_pmtu` ignores a larger MTU) raise it only when the
    /// learnt PMTU ages out (RFC 1191 §6.3: 10 minutes; Linux
    /// `ip_rt_mtu_expires` 600 s), far beyond a data-center run, so here a
    /// connection keeps its smaller segments.
    pub pmtu_raise: bool,
    /// Each controller's settings, from its table `[transport.<protocol>]`
    /// (`[transport.dctcp]`, `[transport.pfabric]`, …; [`CcSettings`]).
    #[serde(skip)]
    pub cc: CcSettings,
}

impl Default for TransportSpec {
    fn default() -> Self {
        TransportSpec {
            protocol: Protocol::Newreno,
            mss: Bytes(1460),
            header: Bytes(HEADER.into()),
            init_cwnd: 10,
            initial_ssthresh: None,
            min_rto: Time::from_us(200_000),
            max_rto: Time::from_us(60_000_000),
            initial_rto: Time::from_us(1_000_000),
            rto_granularity: Time::ZERO,
            dupack_threshold: 3,
            limited_transmit: true,
            slow_start: SlowStart::Bytes,
            recovery: Recovery::Classic,
            sack_pipe: SackPipe::Rfc6675,
            sack_holes: SackHoles::Rfc6675,
            ssthresh_from: SsthreshFrom::Flight,
            rto_keeps_ssthresh: false,
            ecn_floor: 2.0,
            undo: false,
            sack: false,
            sack_blocks: 3,
            dsack: false,
            dsack_undo: false,
            rack: false,
            rwnd: None,
            delayed_ack: false,
            delayed_ack_timeout: Time::from_us(40_000),
            quick_acks: 0,
            handshake: true,
            oneway_syn: false,
            nagle: false,
            idle_restart: false,
            rto_ticks: false,
            host_queue_limit: 4,
            priority: PrioScheme::Remaining,
            pacing: false,
            min_pmtu: Bytes(MIN_PMTU),
            pmtu_raise: false,
            cc: CcSettings::default(),
        }
    }
}

/// Header sizes: 20 B of IPv4 and 20 to 60 B of TCP.
const HEADER_RANGE: std::ops::RangeInclusive<u64> = 40..=MAX_HEADER;
const MAX_HEADER: u64 = 80;

/// Smallest and largest segment payloads: a 64 B packet carries 24 B.
pub const MIN_MSS: u64 = 24;
pub const MAX_MSS: u64 = 65_495;

/// The smallest `min_pmtu`: a 64 B packet (the Ethernet minimum).
pub const MIN_PMTU: u64 = 64;

/// The longest retransmission timeout, first or backed off: Linux's
/// Linux's `TCP_INFINITE_SSTHRESH` (include/net/tcp.h): 0x7fffffff
/// segments, the slow-start threshold that stands for none. A threshold of
/// that many segments or more is no threshold (ns-2's `window_ 1000000`,
/// the pFabric scripts' "none", is far below it).
pub const INFINITE_SSTHRESH: u64 = 0x7fff_ffff;

/// The longest delayed-ACK timer: RFC 1122 §4.2.3.2, "the delay MUST be less
/// than 0.5 seconds".
pub const MAX_DELAYED_ACK: Time = Time(Time::PS_PER_S / 2);

/// `transport.profile`: whose TCP defaults the keys start from. Each profile
/// is a table of `[transport]` keys in `profiles.toml`, every value cited to
/// its source there and in docs/scenario.md. Add one as a variant here and
/// its table there: a variant without its table (or a table without its
/// variant) fails `every_profile_has_its_table_and_every_table_a_profile`.
#[derive(
    Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq, strum::VariantNames,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum Profile {
    /// dcnsim's own defaults ([`TransportSpec::default`]).
    #[default]
    Dcnsim,
    /// Linux 6.1.
    Linux,
    /// ns-2.35 `Agent/TCP/FullTcp`.
    Ns2,
    /// ns-2.35 `Agent/TCP/FullTcp/Sack`.
    Ns2Sack,
    /// ns-2.35 `Agent/TCP/Newreno` with `Agent/TCPSink` (the one-way
    /// agents).
    Ns2Oneway,
    /// ns-3.23 `TcpNewReno`.
    Ns3,
    /// ns-3.48 `TcpNewReno` (the current release).
    Ns3Current,
}

const PROFILES: &str = include_str!("profiles.toml");

impl Profile {
    /// The profile's `[transport]` keys: its table, over its `base`'s.
    /// Every variant has its table (a test holds it so): a missing one is a
    /// defect of the build, not of the scenario.
    fn keys(self) -> Map<String, Value> {
        let all: Map<String, Value> =
            toml::from_str(PROFILES).expect("profiles.toml is valid TOML");
        let value = serde_json::to_value(self).expect("a profile name");
        profile_keys(&all, value.as_str().expect("a profile name"))
    }
}

/// The keys of profile `name` among the tables `all`: its table, over its
/// `base`'s.
fn profile_keys(all: &Map<String, Value>, name: &str) -> Map<String, Value> {
    let table = |name: &str| match all.get(name) {
        Some(Value::Object(keys)) => keys.clone(),
        _ => panic!("profiles.toml has no [{name}] table"),
    };
    let mut keys = table(name);
    match keys.remove("base") {
        Some(Value::String(base)) => {
            let mut merged = table(&base);
            merged.extend(keys);
            merged
        }
        _ => keys,
    }
}

impl TransportSpec {
    /// Bytes of one full-sized data segment on the wire: `mss` payload plus
    /// `header`.
    pub fn segment_bytes(&self) -> u64 {
        self.mss.0 + self.header.0
    }

    /// `[transport]` as written: the profile's keys, overridden by the ones
    /// given, then checked. Errors name the key under `transport`.
    pub fn from_value(value: Value) -> Result<TransportSpec, ScenarioError> {
        let mut given = match value {
            Value::Null => Map::new(),
            Value::Object(m) => m,
            other => {
                return Err(ScenarioError::new(
                    "transport",
                    format!("must be a table, got {other}"),
                ))
            }
        };
        let profile: Profile = match given.remove("profile") {
            Some(p) => parse_at(p, "transport.profile")?,
            None => Profile::default(),
        };
        let mut keys = profile.keys();
        keys.extend(given);
        let cc = CcSettings::take(&mut keys)?;
        let spec = TransportSpec {
            cc,
            ..parse_at(Value::Object(keys), "transport")?
        };
        spec.check()
            .map_err(|(k, m)| ScenarioError::new(format!("transport.{k}"), m))?;
        Ok(spec)
    }

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
        if let Some(Capacity::Bytes(b)) = self.rwnd {
            if b < self.mss.0 {
                return bad(
                    "rwnd",
                    format!(
                        "{b} B is smaller than one segment (mss {} B): the receiver could never take a full one",
                        self.mss.0
                    ),
                );
            }
        }
        if let Some(ssthresh) = self.initial_ssthresh {
            let segments = match ssthresh {
                Capacity::Bytes(b) => b / self.mss.0,
                Capacity::Packets(n) => n,
            };
            if segments >= INFINITE_SSTHRESH {
                return bad(
                    "initial_ssthresh",
                    format!(
                        "{ssthresh} is {segments} segments, at least Linux's TCP_INFINITE_SSTHRESH \
                         ({INFINITE_SSTHRESH}, its value for none): leave the key out for no threshold"
                    ),
                );
            }
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
        for (key, value) in [
            ("max_rto", self.max_rto),
            ("initial_rto", self.initial_rto),
            ("rto_granularity", self.rto_granularity),
        ] {
            if value > MAX_RTO {
                return bad(
                    key,
                    format!("must be at most {MAX_RTO} (120 s, Linux's TCP_RTO_MAX), got {value}"),
                );
            }
        }
        if self.delayed_ack_timeout >= MAX_DELAYED_ACK {
            return bad(
                "delayed_ack_timeout",
                format!(
                    "must be less than 0.5 s (RFC 1122 §4.2.3.2), got {}",
                    self.delayed_ack_timeout
                ),
            );
        }
        if self.host_queue_limit == 0 {
            return bad("host_queue_limit", "must be at least 1 segment".into());
        }
        if !(1..=MAX_SACK_BLOCKS as u32).contains(&self.sack_blocks) {
            return bad(
                "sack_blocks",
                format!(
                    "must be between 1 and {MAX_SACK_BLOCKS}, got {}",
                    self.sack_blocks
                ),
            );
        }
        if !(HEADER_RANGE.contains(&self.header.0) && self.header.0.is_multiple_of(4)) {
            return bad(
                "header",
                format!(
                    "must be a multiple of 4 from {} to {} B (20 B of IPv4, 20 to 60 B of TCP), got {}",
                    HEADER_RANGE.start(),
                    HEADER_RANGE.end(),
                    self.header.0
                ),
            );
        }
        // RFC 2018 §3: the SACK option is 2 + 8n bytes, after two NOPs.
        let sack_max = (MAX_HEADER - self.header.0).saturating_sub(4) / 8;
        if self.sack && u64::from(self.sack_blocks) > sack_max {
            return bad(
                "sack_blocks",
                format!(
                    "must be at most {sack_max} with a {} B header (TCP options fit in 40 B), got {}",
                    self.header.0, self.sack_blocks
                ),
            );
        }
        let prr = self.recovery == Recovery::Prr;
        for (key, on) in [
            ("rack", self.rack),
            ("dsack", self.dsack),
            ("recovery", prr),
        ] {
            if on && !self.sack {
                return bad(
                    key,
                    "needs sack = true (it reads SACK blocks), got sack off".into(),
                );
            }
        }
        if self.dsack_undo && !self.dsack {
            return bad(
                "dsack_undo",
                "needs dsack = true (it counts D-SACKs), got dsack off".into(),
            );
        }
        if !(MIN_PMTU..=u64::from(u16::MAX)).contains(&self.min_pmtu.0) {
            return bad(
                "min_pmtu",
                format!(
                    "must be from {MIN_PMTU} B (the Ethernet minimum) to 65535 B, got {}",
                    self.min_pmtu.0
                ),
            );
        }
        if !(0.0..=1000.0).contains(&self.ecn_floor) {
            return bad(
                "ecn_floor",
                format!("must be from 0 to 1000 segments, got {}", self.ecn_floor),
            );
        }
        if self.oneway_syn && self.handshake {
            return bad(
                "oneway_syn",
                "needs handshake = false (the handshake already sends a SYN), got handshake on"
                    .into(),
            );
        }
        if self.rto_ticks && self.rto_granularity == Time::ZERO {
            return bad(
                "rto_ticks",
                "needs rto_granularity > 0 (the tick), got 0".into(),
            );
        }
        if self.recovery == Recovery::Reno && self.sack {
            return bad(
                "recovery",
                "\"reno\" needs sack = false (SACK recovery is RFC 6675's), got sack on".into(),
            );
        }
        if self.sack_pipe == SackPipe::Ns2 {
            // ns-2's pipe is FullTcp/Sack's classic SACK recovery: the key in
            // conflict is named, since sack_pipe usually comes from ns2_sack.
            let ns2 = "sack_pipe = \"ns2\" (ns2_sack's FullTcp/Sack pipe)";
            if !self.sack {
                return bad(
                    "sack_pipe",
                    "\"ns2\" needs sack = true, got sack off".into(),
                );
            }
            if self.rack {
                return bad("rack", format!("RACK keeps its own pipe: not with {ns2}"));
            }
            if self.recovery != Recovery::Classic {
                let r = format!("{:?}", self.recovery).to_lowercase();
                return bad(
                    "recovery",
                    format!("\"{r}\" is not with {ns2}: \"classic\" only"),
                );
            }
        }
        if self.sack_holes == SackHoles::Ns2 {
            let ns2 = "sack_holes = \"ns2\" (ns2_sack's FullTcp/Sack hole choice)";
            if !self.sack {
                return bad(
                    "sack_holes",
                    "\"ns2\" needs sack = true, got sack off".into(),
                );
            }
            if self.rack {
                return bad(
                    "rack",
                    format!("RACK chooses its own holes: not with {ns2}"),
                );
            }
        }
        if self.dupack_threshold == 0 {
            return bad("dupack_threshold", "must be at least 1".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn no_profile_is_the_default_spec() {
        assert_eq!(
            TransportSpec::from_value(Value::Null).unwrap(),
            TransportSpec::default()
        );
        assert_eq!(
            TransportSpec::from_value(json!({"profile": "dcnsim"})).unwrap(),
            TransportSpec::default()
        );
    }

    /// A profile variant without its table in profiles.toml would silently
    /// get dcnsim's defaults; a table without its variant could never be
    /// named. Every `base` names a table, and every profile is valid.
    #[test]
    fn every_profile_has_its_table_and_every_table_a_profile() {
        use strum::VariantNames;
        let all: Map<String, Value> = toml::from_str(PROFILES).unwrap();
        let mut tables: Vec<&str> = all.keys().map(String::as_str).collect();
        let mut names = Profile::VARIANTS.to_vec();
        tables.sort_unstable();
        names.sort_unstable();
        assert_eq!(
            tables, names,
            "profiles.toml's tables against Profile's variants"
        );
        for (name, keys) in &all {
            if let Some(base) = keys.get("base") {
                let base = base.as_str().expect("base is a profile name");
                assert!(
                    all.contains_key(base),
                    "[{name}] base = \"{base}\" has no table"
                );
            }
            let spec = TransportSpec::from_value(json!({ "profile": name }));
            assert!(spec.is_ok(), "profile {name}: {}", spec.unwrap_err());
        }
    }

    /// The "to add a TCP profile" recipe (docs/architecture.md), as a tiny
    /// example: a table over a base, as a new one is written in
    /// profiles.toml, gives its base's keys with its own over them.
    #[test]
    fn a_profile_table_over_its_base_sets_its_keys_over_the_bases() {
        let mut all: Map<String, Value> = toml::from_str(PROFILES).unwrap();
        let mine: Map<String, Value> =
            toml::from_str("[mine]\nbase = \"ns3\"\ninit_cwnd = 4\n").unwrap();
        all.extend(mine);
        let keys = profile_keys(&all, "mine");
        let t = TransportSpec::from_value(Value::Object(keys)).unwrap();
        let ns3 = TransportSpec::from_value(json!({"profile": "ns3"})).unwrap();
        assert_eq!(t.init_cwnd, 4, "its own key");
        assert_ne!(ns3.init_cwnd, 4);
        assert_eq!(
            TransportSpec {
                init_cwnd: 4,
                ..ns3
            },
            t,
            "every other key its base's"
        );
    }

    /// Every profile is valid and sets what its source says (a sample; the
    /// whole table with sources is in profiles.toml and docs/scenario.md).
    #[test]
    fn profiles_set_their_simulators_defaults() {
        let ns3 = TransportSpec::from_value(json!({"profile": "ns3"})).unwrap();
        assert_eq!(ns3.mss, Bytes(536));
        assert_eq!(ns3.init_cwnd, 1);
        assert_eq!(ns3.initial_ssthresh, Some(Capacity::Bytes(65_535)));
        assert_eq!(ns3.rwnd, Some(Capacity::Bytes(131_072)));
        assert_eq!(ns3.min_rto, Time::from_us(1_000_000));
        assert!(!ns3.limited_transmit);
        let ns2 = TransportSpec::from_value(json!({"profile": "ns2"})).unwrap();
        assert_eq!(ns2.init_cwnd, 2);
        assert_eq!(ns2.rwnd, Some(Capacity::Packets(20)));
        assert_eq!(ns2.rto_granularity, Time::from_us(10_000));
        let linux = TransportSpec::from_value(json!({"profile": "linux"})).unwrap();
        assert_eq!(linux.init_cwnd, 10);
        assert!(linux.delayed_ack && linux.limited_transmit);
        assert_eq!(linux.initial_ssthresh, None);
        assert!(linux.sack && linux.sack_blocks == 3 && linux.undo);
        let sack = TransportSpec::from_value(json!({"profile": "ns2_sack"})).unwrap();
        assert!(sack.sack && sack.sack_blocks == 3 && !ns2.sack);
        assert_eq!(
            TransportSpec {
                sack: false,
                recovery: Recovery::Reno,
                sack_pipe: SackPipe::Rfc6675,
                sack_holes: SackHoles::Rfc6675,
                ..sack
            },
            ns2,
            "FullTcp/Sack is FullTcp with SACK (and SACK's recovery)"
        );
    }

    /// FullTcp's Nagle, slow-start restart and tick estimator, without the
    /// one-way SYN.
    fn ns2_full(t: &TransportSpec) -> bool {
        t.nagle && t.idle_restart && t.rto_ticks && !t.oneway_syn
    }

    /// The one-way agents and ns-3's current release, and each profile's
    /// rules for growth, recovery, ssthresh and the ECN floor.
    #[test]
    fn oneway_current_ns3_and_the_loss_rules() {
        let get = |p: &str| TransportSpec::from_value(json!({ "profile": p })).unwrap();
        let one = get("ns2_oneway");
        assert_eq!(one.mss, Bytes(1000), "packetSize_ 1000, the payload");
        assert_eq!(one.header, Bytes(40));
        assert!(one.limited_transmit && !one.handshake && !one.delayed_ack && !one.sack);
        assert!(one.oneway_syn && !one.nagle && !one.idle_restart && one.rto_ticks);
        assert!(ns2_full(&get("ns2")) && ns2_full(&get("ns2_sack")));
        assert_eq!(one.rwnd, Some(Capacity::Packets(20)));
        let cur = get("ns3_current");
        assert_eq!(cur.init_cwnd, 10);
        assert!(cur.sack && cur.limited_transmit && cur.delayed_ack);
        assert_eq!(cur.recovery, Recovery::Prr);
        assert_eq!(cur.min_rto, Time::from_us(1_000_000));
        let rules = |p: &str| {
            let t = get(p);
            (
                t.slow_start,
                t.recovery,
                t.ssthresh_from,
                t.rto_keeps_ssthresh,
                t.ecn_floor,
            )
        };
        use {Recovery::*, SlowStart as S, SsthreshFrom as F};
        assert_eq!(rules("dcnsim"), (S::Bytes, Classic, F::Flight, false, 2.0));
        assert_eq!(rules("linux"), (S::Segments, Prr, F::Window, true, 2.0));
        assert_eq!(rules("ns2"), (S::Ack, Reno, F::Window, false, 1.0));
        assert_eq!(rules("ns2_sack"), (S::Ack, Classic, F::Window, false, 1.0));
        assert_eq!(
            rules("ns2_oneway"),
            (S::Ack, Classic, F::Window, false, 1.0)
        );
        assert_eq!(rules("ns3"), (S::Ack, Classic, F::Flight, false, 2.0));
        assert_eq!(rules("ns3_current"), (S::Ack, Prr, F::Pipe, true, 2.0));
        let e = TransportSpec::from_value(json!({"recovery": "prr"}))
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("transport.recovery: needs sack = true"),
            "{e}"
        );
    }

    /// A controller's table reaches its settings; the rest keep defaults.
    #[test]
    fn controller_tables_are_their_settings() {
        let t = TransportSpec::from_value(json!({
            "protocol": "d2tcp", "d2tcp": {"g": 0.125, "d_max": 3.0}, "pfabric": {"max_cwnd": 30}
        }))
        .unwrap();
        assert_eq!(
            (t.cc.d2tcp.g, t.cc.d2tcp.d_max, t.cc.d2tcp.d_min),
            (0.125, 3.0, 0.5)
        );
        assert_eq!(t.cc.pfabric.max_cwnd, 30);
        assert_eq!(t.cc.dctcp, Default::default());
    }

    #[test]
    fn keys_written_override_the_profile() {
        let t = TransportSpec::from_value(json!({
            "profile": "ns3", "mss": "1460B", "limited_transmit": true, "protocol": "dctcp"
        }))
        .unwrap();
        assert_eq!(t.mss, Bytes(1460));
        assert!(t.limited_transmit);
        assert_eq!(t.protocol, Protocol::Dctcp);
        assert_eq!(t.init_cwnd, 1, "the rest from the profile");
    }

    #[test]
    fn bad_profile_and_zero_windows_are_one_line_errors() {
        let err = |v: Value| TransportSpec::from_value(v).unwrap_err().to_string();
        let e = err(json!({"profile": "bsd"}));
        assert!(
            e.starts_with("transport.profile: unknown variant `bsd`") && !e.contains('\n'),
            "{e}"
        );
        let e = err(json!({"rwnd": "0B"}));
        assert!(
            e.starts_with("transport.rwnd: size must be positive") && !e.contains('\n'),
            "{e}"
        );
        assert!(err(json!({"profile": "ns2", "rwnd": "0pkt"})).starts_with("transport.rwnd:"));
        assert!(err(json!({"initial_ssthresh": "0B"})).starts_with("transport.initial_ssthresh:"));
    }
}
