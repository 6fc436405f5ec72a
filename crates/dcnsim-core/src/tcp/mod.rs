//! The TCP machine shared by every congestion controller: one [`Conn`] holds a
//! flow's sender (at `src`) and receiver (at `dst`).
//!
//! Modelled after the RFCs the seeds' simulators follow:
//! - byte sequence numbers; with `handshake` the SYN takes sequence 0, data
//!   bytes are 1..=size and the FIN follows the data (RFC 793);
//! - cumulative ACKs; the receiver keeps out-of-order data as ranges and
//!   acknowledges at once when a segment arrives out of order, is a duplicate or
//!   fills a hole (RFC 5681 §4.2), otherwise every segment or, with delayed
//!   ACKs, every second full segment or after the delayed-ACK timeout (the
//!   first `quick_acks` data segments at once);
//! - slow start and congestion avoidance by bytes acknowledged (RFC 5681,
//!   RFC 3465), or per ACK or per segment as the profile's reference counts
//!   (`slow_start`), through [`crate::cc`];
//! - limited transmit (RFC 3042): one new segment on each of the first two
//!   duplicate ACKs, not counted in the ssthresh of a later fast retransmit;
//! - fast retransmit on the third duplicate ACK and NewReno fast recovery with
//!   partial ACKs (RFC 6582, resetting the timer on every partial ACK);
//! - with `undo`, Eifel detection of a spurious fast retransmit (RFC 3522: the
//!   ACK of the retransmitted segment echoes the original's older timestamp)
//!   and its response, the window restored (RFC 4015);
//! - with `dsack_undo`, undo of a recovery whose every retransmission the
//!   receiver reported as a duplicate by D-SACK (RFC 3708 §3);
//! - the receiver's window (`rwnd`): never more than that outstanding;
//! - with `sack`, SACK blocks on ACKs (RFC 2018 §4: the block of the latest
//!   segment first, then the others, highest first, up to `sack_blocks`) and
//!   SACK-based loss recovery (RFC 6675: a scoreboard, IsLost by bytes SACKed
//!   above, cwnd = ssthresh on entry, and while cwnd − pipe ≥ one segment the
//!   next lost hole above HighRxt, else new data); with `dsack`, a duplicate
//!   segment reported in the first block (RFC 2883 §4); with `recovery =
//!   "prr"`, the window during that recovery by PRR (RFC 6937, [`prr`]); with
//!   `sack_pipe = "ns2"`, ns-2.35 FullTcp/Sack's counted pipe instead of
//!   RFC 6675's ([`ns2_pipe`]); with `sack_holes = "ns2"`, its choice of
//!   the hole to retransmit, also after a timeout ([`ns2_holes`]);
//! - ssthresh on a loss halved from the flight, the window or the pipe
//!   (`ssthresh_from`), kept on a repeated timeout with
//!   `rto_keeps_ssthresh`;
//! - with `rack`, RACK-TLP (RFC 8985, [`rack`]): losses marked by time
//!   instead of IsLost, the reordering timer (`reo_at`), and the tail loss
//!   probe (`tlp_at`): after a PTO of 2·SRTT (plus the worst-case delayed
//!   ACK with one segment out) without ACKs, one new segment or the last one
//!   again;
//! - the retransmission timer of RFC 6298: SRTT/RTTVAR from timestamps echoed
//!   by the receiver (RFC 7323 rules for which timestamp to echo), RTO =
//!   SRTT + max(G, 4·RTTVAR) with the clock granularity G, bounded
//!   by `min_rto`/`max_rto`, doubled on each expiry, and go-back-N from the
//!   first unacknowledged byte with a one-segment window;
//! - ECN (RFC 3168): ECT(0) data, ECE echoed by the receiver — latched until
//!   CWR for `ecn`, per segment for the DCTCP family (DCTCP's two-state ACK
//!   rule, RFC 8257 §3.2) — and one window reduction per window of data.
//!
//! A full segment is `mss` bytes of payload plus `header` bytes of IPv4 and
//! TCP header (40 B, 52 B with timestamps) and its SACK option; pure ACKs,
//! SYNs and FINs are the header alone. The MSS may change during a
//! connection ([`Conn::set_mss`]).
//!
//! How the window starts, grows and reacts is the controller's
//! ([`crate::cc::Controller`]): it may disable fast retransmit, fix the
//! retransmission timeout (no backoff), ask for probe mode after consecutive
//! timeouts (one-byte probes of the first unacknowledged byte until an ACK
//! arrives, pFabric §4.2), and pace. With `transport.pacing` every controller
//! paces as Linux does.
//!
//! The connection emits [`Seg`]ments into a buffer the simulation turns into
//! packets, and shows the simulation one deadline, its earliest timer's
//! ([`Conn::next_deadline`]), calling [`Conn::on_timer`] when it comes. With a
//! controller that asks for it, its segments carry the in-band option and the
//! receiver echoes it back to the controller (`receiver.rs`).
//!
//! Rooms: `conn.rs` (the state and [`Params`]), `sender.rs`, `receiver.rs`,
//! `recovery.rs` (undo, the SACK scoreboard and RFC 6675, RACK's per-ACK
//! steps), `prr.rs` (RFC 6937), `ns2_pipe.rs` (ns-2's SACK pipe), `ns2_holes.rs` (ns-2's hole choice), `rack.rs` (RACK-TLP's segment list), `timers.rs`, `spec.rs`
//! (`[transport]` and its profiles).
mod conn;
mod ns2_holes;
mod ns2_pipe;
#[cfg(test)]
mod profile_tests;
mod prr;
mod rack;
mod receiver;
mod recovery;
mod sender;
mod spec;
#[cfg(test)]
mod tests;
mod timers;

pub use conn::{Conn, MakeController, Params};
pub use sender::linux_pacing_rate;
pub use spec::{
    PrioScheme, Profile, Recovery, SackHoles, SackPipe, SsthreshFrom, TransportSpec, MAX_MSS,
    MIN_MSS, MIN_PMTU,
};

use crate::cc::Protocol;
use crate::packet::{Sack, TcpHeader};
use crate::units::Time;

/// Bytes of IPv4 + TCP header without options (the default `header`).
pub const HEADER: u32 = 40;

/// TCP flag bits, as on the wire.
pub const FIN: u8 = 0x01;
pub const SYN: u8 = 0x02;
pub const ACK: u8 = 0x10;
pub const ECE: u8 = 0x40;
pub const CWR: u8 = 0x80;

/// "No timestamp" in [`Seg::ts_echo`].
pub const NO_TS: Time = Time(u64::MAX);

/// A segment leaving one end of a connection: the TCP header (declared once,
/// in [`crate::packet`]) and what the packet around it needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Seg {
    /// Sender → receiver (data, SYN, FIN) or receiver → sender (ACKs).
    pub to_receiver: bool,
    pub hdr: TcpHeader,
    pub payload: u32,
    /// Sent ECN-capable (ECT(0)).
    pub ect: bool,
    /// pFabric priority ([`PrioScheme`]); 0 (first) for segments without
    /// payload: SYN, SYN-ACK, ACKs and FINs carry no data a switch could trade
    /// off, are 40 B, and losing one costs a whole timeout.
    pub prio: u64,
    /// The in-band option its packet carries ([`crate::packet::Packet::option`],
    /// 4 bytes on the wire), when the flow's controller asked for one
    /// ([`crate::cc::Controller::inband_option`]): every segment of the flow,
    /// either way, leaves with the controller's value and switches may
    /// rewrite it on the way.
    pub option: Option<u32>,
}

impl Seg {
    /// A segment without payload (SYN, SYN-ACK, pure ACK, FIN-ACK), not
    /// ECN-capable (RFC 3168 §6.1.4).
    pub fn control(to_receiver: bool, seq: u64, ack: u64, flags: u8, ts_echo: Time) -> Seg {
        Seg {
            to_receiver,
            hdr: TcpHeader {
                seq,
                ack,
                flags,
                ts_echo,
                sack: Sack::default(),
                echo: None,
            },
            payload: 0,
            ect: false,
            prio: 0,
            option: None,
        }
    }
}

/// An arriving segment: what the network did to it matters too.
#[derive(Clone, Copy, Debug)]
pub struct Arrival {
    pub seg: Seg,
    /// When it was sent (its TSval).
    pub sent: Time,
    /// Marked Congestion Experienced on the way.
    pub ce: bool,
    /// The in-band option as it arrived (switches may have rewritten it).
    pub option: Option<u32>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Closed,
    SynSent,
    Open,
    /// Everything, including the FIN exchange, is acknowledged.
    Done,
}

/// Counters reported per flow.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Segments sent again (fast retransmit, partial ACKs, timeouts).
    pub retransmits: u64,
    pub timeouts: u64,
    /// Data segments that arrived above the next expected byte.
    pub ooo_packets: u64,
    /// Data segments the receiver got (including duplicates).
    pub data_packets_received: u64,
    /// Segments (data, ACK, SYN, FIN) sent by either end.
    pub packets_sent: u64,
    /// New payload bytes sent (retransmissions not counted).
    pub bytes_sent: u64,
}

/// What the flow table reports of a connection: kept when the connection's
/// state is let go.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Outcome {
    pub size: u64,
    pub start: Time,
    pub deadline: Option<Time>,
    pub protocol: Protocol,
    pub completed_at: Option<Time>,
    pub bytes_received: u64,
    pub stats: Stats,
}
