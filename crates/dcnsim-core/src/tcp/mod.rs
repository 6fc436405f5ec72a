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
//!   RFC 3465) through [`crate::cc`];
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
//!   segment reported in the first block (RFC 2883 §4);
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
//! packets, and asks for timers through `rto_at`, `delack_at`, `pace_at`,
//! `reo_at` and `tlp_at`.

mod rack;
mod spec;
#[cfg(test)]
mod tests;

pub use spec::{PrioScheme, Profile, TransportSpec, MAX_MSS, MIN_MSS};

use crate::cc::{Cc, FlowState, Protocol, Window};
use crate::packet::{Sack, TcpHeader};
use crate::units::{Capacity, Time};
use rack::{ProbeOutcome, Rack};
use std::sync::Arc;

/// Bytes of IPv4 + TCP header without options (the default `header`).
pub const HEADER: u32 = 40;

/// RFC 8985 §7.2 WCDelAckT: the worst-case delayed-ACK time a probe timeout
/// allows for when one segment is outstanding.
const WC_DEL_ACK: Time = Time(Time::PS_PER_S / 5);

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
            },
            payload: 0,
            ect: false,
            prio: 0,
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
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Closed,
    SynSent,
    Open,
    /// Everything, including the FIN exchange, is acknowledged.
    Done,
}

/// Parameters copied from `[transport]` (one protocol's view), shared by
/// that protocol's connections ([`Params::new`]): kept in every connection
/// they took two of its cache lines, which the event loop loads for every
/// segment delivered (docs/performance.md).
#[derive(Debug)]
pub struct Params {
    init_cwnd: u32,
    min_rto: Time,
    max_rto: Time,
    initial_rto: Time,
    granularity: f64,
    dupthresh: u32,
    limited_transmit: bool,
    undo: bool,
    /// SACK blocks per ACK, 0 without SACK.
    sack_blocks: u32,
    dsack: bool,
    dsack_undo: bool,
    /// IPv4 + TCP header bytes (SACK option aside).
    header: u32,
    /// The receiver's window in bytes (`u64::MAX`: none).
    rwnd: u64,
    delayed_ack: bool,
    delack_timeout: Time,
    quick_acks: u32,
    handshake: bool,
    host_limit: u32,
    ecn: bool,
    precise_echo: bool,
    prio: PrioScheme,
    pacing: bool,
}

/// The window before a recovery, what tells whether it was spurious: the
/// first retransmission's time (Eifel) and the retransmissions the receiver
/// has not yet reported as duplicates (D-SACK, RFC 3708).
#[derive(Clone, Copy, Debug)]
struct Undo {
    cwnd: f64,
    ssthresh: f64,
    retransmitted_at: Time,
    /// The first ACK above `snd_una` still has to be checked (Eifel).
    eifel: bool,
    /// `snd_max` when the recovery began: retransmissions are below it.
    high: u64,
    /// Retransmissions in the recovery, and D-SACKs of them so far.
    retrans: u32,
    dsacked: u32,
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

impl Params {
    /// The parameters of `protocol`'s connections under `t`.
    pub fn new(protocol: Protocol, t: &TransportSpec) -> Arc<Params> {
        let cc = Cc::new(protocol, t);
        Arc::new(Params {
            init_cwnd: t.init_cwnd,
            min_rto: t.min_rto,
            max_rto: t.max_rto,
            initial_rto: t.initial_rto.max(t.min_rto).min(t.max_rto),
            granularity: t.rto_granularity.0 as f64,
            dupthresh: t.dupack_threshold,
            limited_transmit: t.limited_transmit && cc.fast_retransmit(),
            undo: t.undo,
            sack_blocks: if t.sack { t.sack_blocks } else { 0 },
            dsack: t.dsack,
            dsack_undo: t.dsack_undo,
            header: t.header.0 as u32,
            rwnd: t.rwnd.map_or(u64::MAX, |c| capacity_bytes(c, t)),
            delayed_ack: t.delayed_ack,
            delack_timeout: t.delayed_ack_timeout,
            quick_acks: t.quick_acks,
            handshake: t.handshake,
            host_limit: t.host_queue_limit,
            ecn: cc.ecn_capable(),
            precise_echo: cc.precise_echo(),
            prio: t.priority,
            pacing: t.pacing,
        })
    }
}

/// A capacity in bytes: packets of `t`'s MSS.
fn capacity_bytes(c: Capacity, t: &TransportSpec) -> u64 {
    match c {
        Capacity::Bytes(b) => b,
        Capacity::Packets(n) => n * t.mss.0,
    }
}

pub struct Conn {
    pub size: u64,
    pub start: Time,
    pub deadline: Option<Time>,
    pub protocol: Protocol,
    p: Arc<Params>,
    state: State,
    mss: u32,
    // Sender.
    pub snd_una: u64,
    pub snd_nxt: u64,
    snd_max: u64,
    /// One past the last data byte.
    data_end: u64,
    pub win: Window,
    cc: Cc,
    dupacks: u32,
    /// Bytes sent by limited transmit since the last new ACK.
    limited_sent: u64,
    /// SACK scoreboard: SACKed ranges above `snd_una`, sorted and disjoint.
    sacked: Vec<(u64, u64)>,
    /// RFC 6675's HighRxt: holes below it have been retransmitted.
    high_rxt: u64,
    /// What to restore if the last fast retransmit proves spurious.
    undo: Option<Undo>,
    /// RACK-TLP state, with `rack`.
    rack: Option<Box<Rack>>,
    /// When the RACK reordering timer and the tail loss probe timer expire.
    pub reo_at: Option<Time>,
    pub tlp_at: Option<Time>,
    in_recovery: bool,
    recover: u64,
    /// No ECN reaction until snd_una passes this (once per window).
    ecn_recover: u64,
    send_cwr: bool,
    pub srtt: Option<f64>,
    rttvar: f64,
    rto: Time,
    backoff: u32,
    /// Timeouts since the last new ACK, and whether probe mode is on.
    consecutive_timeouts: u32,
    probing: bool,
    /// When the retransmission timer expires, if it runs.
    pub rto_at: Option<Time>,
    /// Pacing: the next segment may not leave before this; while the sender
    /// waits for it, the simulation wakes it then.
    next_send: Time,
    pub pace_at: Option<Time>,
    /// The application has no more data: send the FIN after it.
    closing: bool,
    /// Segments of this sender still in its host (not yet on the wire).
    host_queued: u32,
    /// The sender stopped because its host queue limit was reached.
    host_blocked: bool,
    // Receiver.
    rcv_nxt: u64,
    /// Out-of-order ranges [start, end), sorted and disjoint.
    ooo: Vec<(u64, u64)>,
    /// Start of the latest out-of-order segment (the first SACK block's).
    last_ooo: u64,
    /// A duplicate segment for the next ACK's first block (D-SACK).
    dsack: Option<(u64, u64)>,
    /// Sequence number of the sender's FIN, once seen.
    fin_seq: Option<u64>,
    ts_recent: Time,
    last_ack_sent: u64,
    /// ECE to put on ACKs (latched for `ecn`, the last CE state for DCTCP).
    ece: bool,
    unacked_segments: u32,
    /// The receiver has sent its FIN.
    fin_sent: bool,
    /// When the delayed-ACK timer expires, if it runs.
    pub delack_at: Option<Time>,
    /// When the receiver first had every data byte.
    pub completed_at: Option<Time>,
    /// When the sender saw its last byte (and FIN) acknowledged.
    pub closed_at: Option<Time>,
    pub stats: Stats,
}

impl Conn {
    /// A connection of `protocol` for `size` bytes from `start`, with the
    /// protocol's shared parameters `p` ([`Params::new`] of the same `t`).
    pub fn new(
        size: u64,
        start: Time,
        deadline: Option<Time>,
        protocol: Protocol,
        t: &TransportSpec,
        p: Arc<Params>,
    ) -> Conn {
        let mss = t.mss.0 as u32;
        let cc = Cc::new(protocol, t);
        Conn {
            size,
            start,
            deadline,
            protocol,
            state: State::Closed,
            mss,
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            data_end: 1 + size,
            win: Window {
                cwnd: cc.initial_window(p.init_cwnd, f64::from(mss)),
                ssthresh: t
                    .initial_ssthresh
                    .map_or(f64::INFINITY, |c| capacity_bytes(c, t) as f64),
                mss: f64::from(mss),
            },
            cc,
            dupacks: 0,
            limited_sent: 0,
            sacked: Vec::new(),
            high_rxt: 0,
            undo: None,
            rack: t.rack.then(|| Box::new(Rack::new())),
            reo_at: None,
            tlp_at: None,
            in_recovery: false,
            recover: 0,
            ecn_recover: 0,
            send_cwr: false,
            srtt: None,
            rttvar: 0.0,
            rto: p.initial_rto,
            backoff: 0,
            consecutive_timeouts: 0,
            probing: false,
            rto_at: None,
            next_send: Time::ZERO,
            pace_at: None,
            closing: true,
            host_queued: 0,
            host_blocked: false,
            rcv_nxt: 0,
            ooo: Vec::new(),
            last_ooo: 0,
            dsack: None,
            fin_seq: None,
            ts_recent: NO_TS,
            last_ack_sent: 0,
            ece: false,
            unacked_segments: 0,
            fin_sent: false,
            delack_at: None,
            completed_at: None,
            closed_at: None,
            stats: Stats::default(),
            p,
        }
    }

    /// In-order payload bytes the receiver has.
    pub fn bytes_received(&self) -> u64 {
        self.rcv_nxt.saturating_sub(1).min(self.size)
    }

    pub fn outcome(&self) -> Outcome {
        Outcome {
            size: self.size,
            start: self.start,
            deadline: self.deadline,
            protocol: self.protocol,
            completed_at: self.completed_at,
            bytes_received: self.bytes_received(),
            stats: self.stats,
        }
    }

    pub fn mss(&self) -> u32 {
        self.mss
    }

    /// IPv4 + TCP header bytes of every segment, the SACK option aside.
    pub fn header(&self) -> u32 {
        self.p.header
    }

    /// DCTCP's α (NaN for controllers without one).
    pub fn alpha(&self) -> f64 {
        self.cc.alpha()
    }

    /// Change the segment size mid-connection (e.g. on an ICMP "fragmentation
    /// needed" with a smaller next-hop MTU). The window keeps its size in
    /// segments, as Linux's `tcp_sync_mss` does; segments already sent keep
    /// their size, retransmissions use the new one.
    pub fn set_mss(&mut self, mss: u32) {
        let scale = f64::from(mss) / f64::from(self.mss);
        self.win.cwnd *= scale;
        self.win.ssthresh *= scale;
        self.win.mss = f64::from(mss);
        self.mss = mss;
    }

    /// Whether both ends are finished and no timer is needed.
    pub fn is_done(&self) -> bool {
        self.state == State::Done
    }

    /// The application opens the connection and hands over its data.
    pub fn open(&mut self, now: Time, out: &mut Vec<Seg>) {
        debug_assert_eq!(self.state, State::Closed);
        if self.p.handshake {
            self.state = State::SynSent;
            self.send_syn(out);
            self.snd_nxt = 1;
            self.snd_max = 1;
            self.arm_rto(now);
        } else {
            self.state = State::Open;
            self.snd_una = 1;
            self.snd_nxt = 1;
            self.snd_max = 1;
            self.rcv_nxt = 1;
            self.last_ack_sent = 1;
            self.send_window(now, out);
        }
    }

    fn send_syn(&mut self, out: &mut Vec<Seg>) {
        // An ECN-setup SYN carries ECE and CWR (RFC 3168 §6.1.1).
        let ecn_setup = if self.p.ecn { ECE | CWR } else { 0 };
        self.emit(out, Seg::control(true, 0, 0, SYN | ecn_setup, NO_TS));
    }

    fn emit(&mut self, out: &mut Vec<Seg>, seg: Seg) {
        self.stats.packets_sent += 1;
        self.host_queued += u32::from(seg.to_receiver);
        out.push(seg);
    }

    /// One of the sender's segments started serializing on its NIC. Returns
    /// true when the sender was held back by its host queue limit and should
    /// be given the chance to send ([`Conn::resume`]).
    pub fn left_host(&mut self) -> bool {
        self.host_queued -= 1;
        self.host_blocked
    }

    /// Send what the window allows after the host queue drained.
    pub fn resume(&mut self, now: Time, out: &mut Vec<Seg>) {
        self.host_blocked = false;
        if self.state == State::Open {
            self.send_window(now, out);
        }
    }

    /// Sequence number after the last one the sender must get acknowledged:
    /// the FIN's, once the application has closed.
    fn final_seq(&self) -> u64 {
        self.data_end + u64::from(self.p.handshake && self.closing)
    }

    /// Keep the connection open after its data, for [`Conn::append`].
    pub fn keep_open(&mut self) {
        self.closing = false;
    }

    /// The application hands over `bytes` more (a persistent connection's
    /// next response); `close` closes the connection after them.
    pub fn append(&mut self, now: Time, bytes: u64, close: bool, out: &mut Vec<Seg>) {
        self.size += bytes;
        self.data_end += bytes;
        self.closing = close;
        self.completed_at = None;
        if self.state == State::Open {
            self.send_window(now, out);
        }
    }

    fn flight(&self) -> u64 {
        self.snd_max - self.snd_una
    }

    fn flow_state(&self, now: Time) -> FlowState {
        FlowState {
            now,
            bytes_sent: self.stats.bytes_sent,
            remaining: self.data_end.saturating_sub(self.snd_una),
            srtt: self.srtt_time(),
            deadline: self.deadline,
        }
    }

    /// The retransmission timeout with backoff, in RFC 6298's bounds, or the
    /// controller's fixed one.
    pub fn current_rto(&self) -> Time {
        if let Some(fixed) = self.cc.fixed_rto() {
            return fixed;
        }
        let backed = self.rto.0.saturating_mul(1u64 << self.backoff.min(30));
        Time(backed.min(self.p.max_rto.0))
    }

    fn arm_rto(&mut self, now: Time) {
        self.rto_at = Some(now + self.current_rto());
    }

    /// Send one data segment (or the FIN) starting at `seq`.
    fn send_segment(&mut self, now: Time, seq: u64, out: &mut Vec<Seg>) -> u64 {
        let retransmit = seq < self.snd_max;
        if retransmit {
            self.stats.retransmits += 1;
            if let Some(u) = &mut self.undo {
                u.retrans += 1;
            }
        }
        let (payload, flags) = if seq < self.data_end {
            let len = (self.data_end - seq).min(u64::from(self.mss));
            if !retransmit {
                self.stats.bytes_sent += len;
            }
            (len as u32, ACK)
        } else {
            (0, ACK | FIN)
        };
        self.send_data(now, seq, payload, flags, out)
    }

    /// Emit the data segment (or FIN) of `payload` bytes at `seq`.
    fn send_data(
        &mut self,
        now: Time,
        seq: u64,
        payload: u32,
        flags: u8,
        out: &mut Vec<Seg>,
    ) -> u64 {
        let cwr = if self.send_cwr && payload > 0 {
            self.send_cwr = false;
            CWR
        } else {
            0
        };
        let prio = match (payload, self.p.prio) {
            (0, _) => 0,
            (_, PrioScheme::Remaining) => self.data_end - self.snd_una.max(1),
            (_, PrioScheme::Size) => self.size,
            (_, PrioScheme::Sent) => self.stats.bytes_sent,
        };
        self.emit(
            out,
            Seg {
                to_receiver: true,
                hdr: TcpHeader {
                    seq,
                    ack: 1,
                    flags: flags | cwr,
                    ts_echo: NO_TS,
                    sack: Sack::default(),
                },
                payload,
                ect: self.p.ecn && payload > 0,
                prio,
            },
        );
        let end = seq + u64::from(payload) + u64::from(flags & FIN != 0);
        if let Some(rack) = &mut self.rack {
            rack.sent(seq, end, now);
        }
        end
    }

    /// Send what the window allows, then the FIN once all data is out. In
    /// SACK recovery the window is cwnd − pipe and lost holes go first
    /// (RFC 6675 §5 step C).
    fn send_window(&mut self, now: Time, out: &mut Vec<Seg>) {
        let end = self.final_seq();
        let mut sent_new = false;
        loop {
            let sack_recovery = self.in_recovery && self.p.sack_blocks > 0;
            let hole = if sack_recovery {
                self.next_hole()
            } else {
                None
            };
            let seq = match hole {
                Some(h) => h,
                None if self.snd_nxt < end => self.snd_nxt,
                None => break,
            };
            let len = if seq < self.data_end {
                (self.data_end - seq).min(u64::from(self.mss))
            } else {
                0
            };
            let in_flight = self.snd_nxt - self.snd_una;
            let cwnd = self.win.cwnd.max(self.cc.send_floor(&self.win));
            let over_cwnd = (in_flight + len) as f64 > cwnd;
            let new_data_blocked = in_flight > 0 && in_flight + len > self.p.rwnd;
            let blocked = if sack_recovery {
                (self.pipe() + u64::from(self.mss)) as f64 > cwnd
                    || (hole.is_none() && new_data_blocked)
            } else {
                in_flight > 0
                    && (new_data_blocked
                        || (over_cwnd && in_flight + len > self.limited_allowance(cwnd)))
            };
            if blocked {
                break;
            }
            if self.host_queued >= self.p.host_limit {
                self.host_blocked = true;
                break;
            }
            if self.next_send > now {
                self.pace_at = Some(self.next_send);
                break;
            }
            if hole.is_some() {
                self.send_segment(now, seq, out);
                self.high_rxt = seq + len.max(1);
            } else {
                if over_cwnd && in_flight > 0 && !sack_recovery {
                    self.limited_sent += len;
                }
                self.snd_nxt = self.send_segment(now, self.snd_nxt, out);
                self.snd_max = self.snd_max.max(self.snd_nxt);
                sent_new = true;
            }
            self.pace(now, len);
        }
        if self.rto_at.is_none() && self.snd_max > self.snd_una {
            self.arm_rto(now);
        }
        if sent_new {
            self.arm_tlp(now);
        }
    }

    /// RFC 8985 §7.2: after new data or an ACK of new data, outside
    /// recovery, with nothing SACKed and no reordering timer, the probe
    /// timeout is 2·SRTT (plus WCDelAckT with one segment out; 1 s before
    /// an RTT sample), never after the retransmission timer.
    fn arm_tlp(&mut self, now: Time) {
        if !self.tlp_allowed() {
            self.tlp_at = None;
            return;
        }
        let flight = self.flight();
        let pto = match self.srtt_time() {
            Some(srtt) if flight <= u64::from(self.mss) => srtt * 2 + WC_DEL_ACK,
            Some(srtt) => srtt * 2,
            None => Time(Time::PS_PER_S),
        };
        let at = now + pto;
        self.tlp_at = Some(self.rto_at.map_or(at, |rto| rto.min(at)));
    }

    /// Whether a probe may be scheduled (RFC 8985 §7.2): RACK on, data
    /// outstanding, no recovery, no SACKed segment, no reordering timer and
    /// no probe unacknowledged.
    fn tlp_allowed(&self) -> bool {
        self.rack.as_ref().is_some_and(|rack| {
            self.state == State::Open
                && self.flight() > 0
                && !self.in_recovery
                && !self.probing
                && self.reo_at.is_none()
                && rack.tlp.is_none()
                && !rack.any_sacked()
        })
    }

    /// The probe timer fired (the caller checked `tlp_at <= now`): one new
    /// segment if the receiver's window allows, else the last segment again
    /// (RFC 8985 §7.3), then the retransmission timer.
    pub fn on_tlp(&mut self, now: Time, out: &mut Vec<Seg>) {
        self.tlp_at = None;
        if self.state != State::Open || self.flight() == 0 || self.in_recovery {
            return;
        }
        let end = self.final_seq();
        let len = self
            .data_end
            .saturating_sub(self.snd_nxt)
            .min(u64::from(self.mss));
        let new_data = self.snd_nxt == self.snd_max
            && self.snd_nxt < end
            && self.flight() + len <= self.p.rwnd;
        let rack = self.rack.as_ref().expect("a probe needs RACK");
        let retransmit = match rack.last_start() {
            Some(_) if new_data => None,
            Some(last) => Some(last),
            None => return,
        };
        match retransmit {
            None => {
                self.snd_nxt = self.send_segment(now, self.snd_nxt, out);
                self.snd_max = self.snd_nxt;
            }
            Some(seq) => {
                self.send_segment(now, seq, out);
            }
        }
        let end_seq = self.snd_max;
        if let Some(rack) = &mut self.rack {
            rack.tlp = Some((end_seq, retransmit.is_some()));
        }
        self.arm_rto(now);
    }

    /// The RACK reordering timer fired (the caller checked `reo_at <= now`).
    pub fn on_reo(&mut self, now: Time, out: &mut Vec<Seg>) {
        self.reo_at = None;
        if self.state == State::Open && self.flight() > 0 {
            self.rack_detect_loss(now);
            self.send_window(now, out);
        }
    }

    /// RFC 8985 §6.2 step 5 and §6.3: mark losses, (re)arm the reordering
    /// timer, and start a recovery when a segment is newly lost.
    fn rack_detect_loss(&mut self, now: Time) {
        let srtt = self.srtt_time();
        let Some(rack) = &mut self.rack else {
            return;
        };
        let wnd = rack.reo_wnd(self.in_recovery, self.p.dupthresh, srtt);
        self.reo_at = rack.detect_loss(now, wnd);
        if rack.has_lost() && !self.in_recovery && self.cc.fast_retransmit() {
            self.tlp_at = None;
            self.enter_recovery(now);
        }
    }

    /// RFC 6675 IsLost: an unSACKed byte is lost when more than
    /// (DupThresh − 1)·SMSS bytes above it are SACKed. Every unSACKed byte
    /// below the point returned is lost (`snd_una`: none is).
    fn lost_point(&self) -> u64 {
        let threshold = u64::from(self.p.dupthresh - 1) * u64::from(self.mss);
        let mut above = 0;
        for &(s, e) in self.sacked.iter().rev() {
            above += e - s;
            if above > threshold {
                return s;
            }
        }
        self.snd_una
    }

    /// Bytes in [a, b) not SACKed.
    fn unsacked(&self, a: u64, b: u64) -> u64 {
        let covered: u64 = self
            .sacked
            .iter()
            .map(|&(s, e)| e.min(b).saturating_sub(s.max(a)))
            .sum();
        b.saturating_sub(a) - covered
    }

    /// RFC 6675 §4 SetPipe: outstanding bytes neither SACKed nor lost, plus
    /// those retransmitted (below HighRxt).
    fn pipe(&self) -> u64 {
        if let Some(rack) = &self.rack {
            return rack.pipe();
        }
        let lost = self.lost_point().max(self.snd_una);
        self.unsacked(lost, self.snd_max) + self.unsacked(self.snd_una, self.high_rxt)
    }

    /// RFC 6675 NextSeg rule 1: the first lost, unSACKed byte at or above
    /// HighRxt.
    fn next_hole(&self) -> Option<u64> {
        if let Some(rack) = &self.rack {
            return rack.next_lost();
        }
        let lost = self.lost_point();
        let mut seq = self.high_rxt.max(self.snd_una);
        for &(s, e) in &self.sacked {
            if seq < s {
                break;
            }
            seq = seq.max(e);
        }
        (seq < lost).then_some(seq)
    }

    /// What limited transmit lets the sender have outstanding (RFC 3042 §2):
    /// cwnd plus one segment per duplicate ACK, for the first two, outside
    /// recovery; new data only, since `send_window` sends from `snd_nxt`.
    fn limited_allowance(&self, cwnd: f64) -> u64 {
        if !self.p.limited_transmit || self.in_recovery {
            return 0;
        }
        cwnd as u64 + u64::from(self.dupacks.min(2)) * u64::from(self.mss)
    }

    /// After a segment of `len` payload bytes: when the next may leave.
    fn pace(&mut self, now: Time, len: u64) {
        let rate = self
            .cc
            .pacing_rate(&self.win, self.srtt_time())
            .or_else(|| {
                self.p
                    .pacing
                    .then(|| linux_pacing_rate(&self.win, self.srtt_time()))
                    .flatten()
            });
        if let Some(rate) = rate {
            let bytes = (len + u64::from(self.p.header)) as f64;
            self.next_send = now + Time((bytes / rate * Time::PS_PER_S as f64).round() as u64);
        }
    }

    fn srtt_time(&self) -> Option<Time> {
        self.srtt.map(|s| Time(s as u64))
    }

    /// The pacing timer fired (the caller checked `pace_at <= now`).
    pub fn on_pace(&mut self, now: Time, out: &mut Vec<Seg>) {
        self.pace_at = None;
        if self.state == State::Open {
            self.send_window(now, out);
        }
    }

    /// RFC 6298 §2 with a new round-trip sample `r` (picoseconds).
    fn rtt_sample(&mut self, r: f64) {
        if let Some(rack) = &mut self.rack {
            rack.rtt_sample(Time(r as u64));
        }
        match self.srtt {
            None => {
                self.srtt = Some(r);
                self.rttvar = r / 2.0;
            }
            Some(s) => {
                self.rttvar = 0.75 * self.rttvar + 0.25 * (s - r).abs();
                self.srtt = Some(0.875 * s + 0.125 * r);
            }
        }
        let rto = self.srtt.unwrap_or(r) + (4.0 * self.rttvar).max(self.p.granularity);
        self.rto = Time(rto.round() as u64)
            .max(self.p.min_rto)
            .min(self.p.max_rto);
    }

    /// A segment reaches the sender (`src`).
    pub fn on_sender_arrival(&mut self, now: Time, a: &Arrival, out: &mut Vec<Seg>) {
        let seg = a.seg;
        if seg.hdr.ts_echo != NO_TS && seg.hdr.ack > self.snd_una && now >= seg.hdr.ts_echo {
            self.rtt_sample((now - seg.hdr.ts_echo).0 as f64);
            self.backoff = 0;
        }
        match self.state {
            State::SynSent if seg.hdr.flags & (SYN | ACK) == SYN | ACK => {
                self.state = State::Open;
                self.snd_una = 1;
                self.rto_at = None;
                // The third packet of the handshake.
                self.emit(out, Seg::control(true, 1, 1, ACK, NO_TS));
                self.send_window(now, out);
            }
            State::Open => self.on_ack(now, a, out),
            _ => {}
        }
    }

    fn on_ack(&mut self, now: Time, a: &Arrival, out: &mut Vec<Seg>) {
        let seg = a.seg;
        let ece = seg.hdr.flags & ECE != 0 && self.p.ecn;
        let ack = seg.hdr.ack.min(self.snd_max);
        if self.probing {
            // Probe mode ends with any ACK (pFabric §4.2): back to slow start
            // from the timeout's window.
            self.probing = false;
            self.consecutive_timeouts = 0;
            self.snd_nxt = self.snd_una.max(ack);
        }
        let ts_echo = (seg.hdr.ts_echo != NO_TS).then_some(seg.hdr.ts_echo);
        let dsack = if self.p.sack_blocks > 0 {
            dsack_block(&seg.hdr.sack, seg.hdr.ack)
        } else {
            None
        };
        if self.p.sack_blocks > 0 {
            // RFC 6675 §5 step 1: the scoreboard takes the ACK's SACK blocks.
            for (l, r) in seg.hdr.sack.blocks(seg.hdr.ack) {
                let (l, r) = (l.max(ack), r.min(self.snd_max));
                if l < r {
                    insert_range(&mut self.sacked, l, r);
                    if let Some(rack) = &mut self.rack {
                        rack.sacked(l, r, now, ts_echo);
                    }
                }
            }
        }
        if let Some((l, _)) = dsack {
            self.count_dsack(l);
        }
        let una_before = self.snd_una;
        let mut left_recovery = false;
        if ack > self.snd_una {
            self.consecutive_timeouts = 0;
            if let Some(rack) = &mut self.rack {
                rack.acked(ack, now, ts_echo);
            }
            if let Some(u) = self.undo.filter(|u| u.eifel) {
                // The first ACK of the fast-retransmitted segment: an echoed
                // timestamp older than the retransmission means the original
                // arrived and the retransmission was spurious (Eifel, RFC 3522
                // §3.2); restore the window it cut (RFC 4015 §3).
                if ts_echo.is_some_and(|e| e < u.retransmitted_at) {
                    self.restore(u);
                } else if self.p.dsack_undo {
                    self.undo = Some(Undo { eifel: false, ..u });
                } else {
                    self.undo = None;
                }
            }
            let acked = ack - self.snd_una;
            let data_acked = ack.min(self.data_end).saturating_sub(self.snd_una.max(1));
            self.snd_una = ack;
            self.snd_nxt = self.snd_nxt.max(ack);
            self.sacked.retain(|&(_, e)| e > ack);
            if let Some(first) = self.sacked.first_mut() {
                first.0 = first.0.max(ack);
            }
            self.cc.observe(data_acked, ece, self.snd_una, self.snd_nxt);
            let mut grow = true;
            if self.in_recovery {
                grow = false;
                if ack >= self.recover {
                    self.in_recovery = false;
                    left_recovery = true;
                    self.win.cwnd = self.win.ssthresh.max(self.win.mss);
                } else if self.p.sack_blocks > 0 {
                    // SACK recovery sends by pipe (`send_window`).
                    self.arm_rto(now);
                } else {
                    // Partial ACK: resend the next hole, deflate by what was
                    // acknowledged, add back one segment (RFC 6582 §3.2).
                    self.send_segment(now, self.snd_una, out);
                    self.win.cwnd = (self.win.cwnd - acked as f64 + self.win.mss).max(self.win.mss);
                    self.arm_rto(now);
                }
            }
            self.dupacks = 0;
            self.limited_sent = 0;
            if ece && self.snd_una > self.ecn_recover && !self.in_recovery {
                grow = false;
                let fs = self.flow_state(now);
                // Never below two segments (RFC 3168 §6.1.2; Linux's DCTCP).
                let cut = self
                    .cc
                    .ecn_cut(&self.win, &fs)
                    .max(self.cc.ecn_floor(&self.win));
                self.win.cwnd = cut;
                self.win.ssthresh = cut;
                self.ecn_recover = self.snd_max;
                self.send_cwr = true;
            }
            if grow {
                let fs = self.flow_state(now);
                self.cc.on_ack(&mut self.win, data_acked, &fs);
            }
            if self.snd_una >= self.final_seq() {
                self.rto_at = None;
                if !self.p.handshake && self.closing {
                    self.finish(now);
                }
            } else if self.snd_una == self.snd_max {
                self.rto_at = None;
            } else if !self.in_recovery {
                self.arm_rto(now);
            }
        } else if ack == self.snd_una
            && seg.payload == 0
            && seg.hdr.flags & (SYN | FIN) == 0
            && self.snd_max > self.snd_una
        {
            self.dupacks += 1;
            self.cc.observe(0, ece, self.snd_una, self.snd_nxt);
            // RFC 6675 §5: recovery also starts when SACKs show snd_una lost.
            let sack_lost = self.p.sack_blocks > 0 && self.lost_point() > self.snd_una;
            if !self.in_recovery
                && self.rack.is_none()
                && (self.dupacks == self.p.dupthresh || sack_lost)
                && ack > self.recover
                && self.cc.fast_retransmit()
            {
                self.enter_recovery(now);
                let next = self.send_segment(now, self.snd_una, out);
                if self.p.sack_blocks > 0 {
                    self.high_rxt = next;
                } else {
                    self.win.cwnd = self.win.ssthresh + f64::from(self.p.dupthresh) * self.win.mss;
                }
                self.arm_rto(now);
            } else if self.in_recovery && self.p.sack_blocks == 0 {
                self.win.cwnd += self.win.mss;
            }
        }
        if self.rack.is_some() {
            self.rack_on_ack(now, ack, una_before, dsack, left_recovery, &seg);
        }
        if seg.hdr.flags & FIN != 0 && self.closing && self.snd_una >= self.final_seq() {
            // The receiver's FIN: acknowledge it and close.
            let last_ack = Seg::control(true, self.final_seq(), seg.hdr.seq + 1, ACK, NO_TS);
            self.emit(out, last_ack);
            self.finish(now);
            return;
        }
        self.send_window(now, out);
    }

    fn finish(&mut self, now: Time) {
        self.state = State::Done;
        self.closed_at = Some(now);
        self.rto_at = None;
        self.reo_at = None;
        self.tlp_at = None;
    }

    /// A loss is detected: the window before it is kept for undo, the
    /// controller reduces it (RFC 5681 §3.2 step 2: ssthresh from the flight
    /// without what limited transmit sent) and the recovery runs to
    /// `snd_max`; with SACK cwnd = ssthresh, no inflation (RFC 6675 §5 steps
    /// 4.2-4.3).
    fn enter_recovery(&mut self, now: Time) {
        if self.p.undo || self.p.dsack_undo {
            self.undo = Some(Undo {
                cwnd: self.win.cwnd,
                ssthresh: self.win.ssthresh,
                retransmitted_at: now,
                eifel: self.p.undo,
                high: self.snd_max,
                retrans: 0,
                dsacked: 0,
            });
        }
        let flight = self.flight() - self.limited_sent.min(self.flight());
        self.cc.on_dupacks(&mut self.win, flight);
        self.recover = self.snd_max;
        self.ecn_recover = self.snd_max;
        self.in_recovery = true;
        if self.p.sack_blocks > 0 {
            self.win.cwnd = self.win.ssthresh;
        }
    }

    /// The window from before a recovery found spurious comes back, and the
    /// recovery ends (RFC 4015 §3, RFC 3708 §3).
    fn restore(&mut self, u: Undo) {
        self.win.cwnd = u.cwnd;
        self.win.ssthresh = u.ssthresh;
        self.in_recovery = false;
        self.undo = None;
    }

    /// A D-SACK starting at `left`: with `dsack_undo`, one more
    /// retransmission of the recovery proved unnecessary; when all of them
    /// have, the recovery was spurious (RFC 3708 §3).
    fn count_dsack(&mut self, left: u64) {
        if !self.p.dsack_undo {
            return;
        }
        if let Some(u) = &mut self.undo {
            if left < u.high && u.retrans > 0 {
                u.dsacked += 1;
                if u.dsacked >= u.retrans {
                    let u = *u;
                    self.restore(u);
                }
            }
        }
    }

    /// RFC 8985 on an ACK: the probe's outcome (§7.4), the reordering
    /// window's state (§6.2 step 4), loss detection (step 5) and the probe
    /// timer (§7.2).
    fn rack_on_ack(
        &mut self,
        now: Time,
        ack: u64,
        una_before: u64,
        dsack: Option<(u64, u64)>,
        left_recovery: bool,
        seg: &Seg,
    ) {
        let (snd_una, snd_nxt) = (self.snd_una, self.snd_nxt);
        let rack = self.rack.as_mut().expect("RACK on");
        let advanced = ack > una_before || (!seg.hdr.sack.is_empty() && dsack.is_none());
        if rack.probe_acked(ack, advanced, dsack) == ProbeOutcome::RepairedLoss {
            // §7.4.2: the probe repaired a loss; respond as to one.
            let flight = self.flight();
            self.cc.on_dupacks(&mut self.win, flight);
            self.win.cwnd = self.win.ssthresh;
            self.ecn_recover = self.snd_max;
        }
        let rack = self.rack.as_mut().expect("RACK on");
        rack.update_reo_wnd(snd_una, snd_nxt, dsack.is_some(), left_recovery);
        self.rack_detect_loss(now);
        if ack > una_before {
            self.arm_tlp(now);
        } else if !self.tlp_allowed() {
            self.tlp_at = None;
        }
    }

    /// The retransmission timer fired (the caller checked `rto_at <= now`).
    pub fn on_rto(&mut self, now: Time, out: &mut Vec<Seg>) {
        self.rto_at = None;
        match self.state {
            State::SynSent => {
                self.stats.timeouts += 1;
                self.stats.retransmits += 1;
                self.backoff += 1;
                self.send_syn(out);
                self.arm_rto(now);
            }
            State::Open if self.snd_max > self.snd_una => {
                self.stats.timeouts += 1;
                self.backoff += 1;
                self.consecutive_timeouts += 1;
                if !self.probing {
                    let flight = self.flight();
                    self.cc.on_timeout(&mut self.win, flight);
                }
                self.in_recovery = false;
                self.dupacks = 0;
                self.limited_sent = 0;
                // A timeout forgets the SACK scoreboard (the receiver may
                // renege, RFC 2018 §8).
                self.sacked.clear();
                self.high_rxt = 0;
                self.undo = None;
                self.reo_at = None;
                self.tlp_at = None;
                if let Some(rack) = &mut self.rack {
                    rack.on_rto();
                }
                self.recover = self.snd_max;
                self.ecn_recover = self.snd_max;
                self.snd_nxt = self.snd_una;
                self.next_send = now;
                self.pace_at = None;
                self.probing |= self
                    .cc
                    .probe_after()
                    .is_some_and(|n| self.consecutive_timeouts >= n);
                if self.probing {
                    self.send_probe(now, out);
                } else {
                    self.send_window(now, out);
                }
                self.arm_rto(now);
            }
            _ => {}
        }
    }

    /// Probe mode: one byte of the first unacknowledged data (or the FIN), so
    /// the receiver answers with an ACK (pFabric §4.2's "minimum-sized packets
    /// with a one byte payload").
    fn send_probe(&mut self, now: Time, out: &mut Vec<Seg>) {
        self.stats.retransmits += 1;
        let seq = self.snd_una;
        let flags = if seq < self.data_end { ACK } else { ACK | FIN };
        let payload = u32::from(seq < self.data_end);
        self.send_data(now, seq, payload, flags, out);
    }

    /// A segment reaches the receiver (`dst`). Returns true when this segment
    /// completed the data (the flow's completion time).
    pub fn on_receiver_arrival(&mut self, now: Time, a: &Arrival, out: &mut Vec<Seg>) -> bool {
        let seg = a.seg;
        if seg.hdr.flags & SYN != 0 {
            self.rcv_nxt = self.rcv_nxt.max(1);
            self.last_ack_sent = self.rcv_nxt;
            self.ts_recent = a.sent;
            let ecn_setup = if self.p.ecn { ECE } else { 0 };
            self.emit(
                out,
                Seg::control(false, 0, 1, SYN | ACK | ecn_setup, a.sent),
            );
            return false;
        }
        let fin = seg.hdr.flags & FIN != 0;
        if seg.payload == 0 && !fin {
            return false; // a pure ACK (the handshake's third packet)
        }
        if seg.payload > 0 {
            self.stats.data_packets_received += 1;
        }
        // ECN echo.
        if self.p.precise_echo {
            if a.ce != self.ece && self.unacked_segments > 0 {
                // DCTCP: acknowledge what came before with the old CE state.
                self.send_ack(0, out);
            }
            self.ece = a.ce;
        } else if self.p.ecn {
            if seg.hdr.flags & CWR != 0 {
                self.ece = false;
            }
            if a.ce {
                self.ece = true;
            }
        }
        let (s, e) = (
            seg.hdr.seq,
            seg.hdr.seq + u64::from(seg.payload) + u64::from(fin),
        );
        if fin {
            self.fin_seq = Some(e - 1);
        }
        let mut immediate = fin
            || !self.p.delayed_ack
            || self.stats.data_packets_received <= u64::from(self.p.quick_acks);
        if self.p.dsack && seg.payload > 0 {
            // RFC 2883 §4: the duplicate part of the segment, below rcv_nxt
            // or inside a block already held.
            let held = self
                .ooo
                .iter()
                .find(|&&(rs, re)| rs <= s && s < re)
                .map(|&(_, re)| re.min(e));
            self.dsack = if s < self.rcv_nxt {
                Some((s, e.min(self.rcv_nxt)))
            } else {
                held.map(|re| (s, re))
            };
        }
        if s > self.rcv_nxt {
            // A FIN overtaking the last data is not an out-of-order packet.
            self.stats.ooo_packets += u64::from(seg.payload > 0);
            insert_range(&mut self.ooo, s, e);
            self.last_ooo = s;
            immediate = true;
        } else if e <= self.rcv_nxt {
            immediate = true;
        } else {
            if s <= self.last_ack_sent {
                self.ts_recent = a.sent;
            }
            let filled_hole = !self.ooo.is_empty();
            self.rcv_nxt = e;
            while let Some(&(rs, re)) = self.ooo.first() {
                if rs > self.rcv_nxt {
                    break;
                }
                self.rcv_nxt = self.rcv_nxt.max(re);
                self.ooo.remove(0);
            }
            immediate |= filled_hole;
            if seg.payload >= self.mss {
                self.unacked_segments += 1;
            } else {
                immediate = true;
            }
        }
        let completed = self.completed_at.is_none() && self.rcv_nxt >= self.data_end;
        if completed {
            self.completed_at = Some(now);
        }
        let fin_in = self.fin_seq.is_some_and(|f| self.rcv_nxt > f);
        if fin_in {
            // Acknowledge the FIN together with our own (a simultaneous close
            // that leaves the sender to send the last ACK).
            self.send_ack(FIN, out);
        } else if immediate || self.unacked_segments >= 2 {
            self.send_ack(0, out);
        } else if self.delack_at.is_none() {
            self.delack_at = Some(now + self.p.delack_timeout);
        }
        completed
    }

    fn send_ack(&mut self, extra: u8, out: &mut Vec<Seg>) {
        let ece = if self.ece { ECE } else { 0 };
        // The receiver's own sequence space: SYN at 0, its FIN at 1.
        let seq = if self.fin_sent && extra & FIN == 0 {
            2
        } else {
            1
        };
        self.fin_sent |= extra & FIN != 0;
        let mut ack = Seg::control(false, seq, self.rcv_nxt, ACK | ece | extra, self.ts_recent);
        ack.hdr.sack = self.sack_blocks();
        self.emit(out, ack);
        self.last_ack_sent = self.rcv_nxt;
        self.unacked_segments = 0;
        self.delack_at = None;
        self.dsack = None;
    }

    /// The SACK option of the next ACK (RFC 2018 §4): a D-SACK block first
    /// (RFC 2883 §4), then the block holding the latest out-of-order segment,
    /// then the other blocks, highest first, up to `sack_blocks`.
    fn sack_blocks(&self) -> Sack {
        let mut sack = Sack::default();
        let mut limit = self.p.sack_blocks as usize;
        if let Some((s, e)) = self.dsack {
            sack.push(self.rcv_nxt, s, e);
            limit -= 1;
        }
        if limit == 0 || self.ooo.is_empty() {
            return sack;
        }
        let latest = self
            .ooo
            .iter()
            .position(|&(s, e)| s <= self.last_ooo && self.last_ooo < e);
        let others = (0..self.ooo.len()).rev().filter(|&i| Some(i) != latest);
        for i in latest.into_iter().chain(others).take(limit) {
            let (s, e) = self.ooo[i];
            sack.push(self.rcv_nxt, s, e);
        }
        sack
    }

    /// The delayed-ACK timer fired (the caller checked `delack_at <= now`).
    pub fn on_delack(&mut self, out: &mut Vec<Seg>) {
        self.delack_at = None;
        if self.unacked_segments > 0 {
            self.send_ack(0, out);
        }
    }
}

/// The D-SACK block of an ACK of `ack`, if it has one (RFC 2883 §4): a first
/// block below the cumulative ACK or inside the second block.
fn dsack_block(sack: &Sack, ack: u64) -> Option<(u64, u64)> {
    let mut blocks = sack.blocks(ack);
    let (l, r) = blocks.next()?;
    let inside_second = blocks.next().is_some_and(|(l2, r2)| l2 <= l && r <= r2);
    (r <= ack || inside_second).then_some((l, r))
}

/// Insert [s, e) into sorted, disjoint ranges, merging what it touches.
fn insert_range(ranges: &mut Vec<(u64, u64)>, s: u64, e: u64) {
    let i = ranges.partition_point(|&(_, re)| re < s);
    let mut start = s;
    let mut end = e;
    let mut j = i;
    while j < ranges.len() && ranges[j].0 <= end {
        start = start.min(ranges[j].0);
        end = end.max(ranges[j].1);
        j += 1;
    }
    ranges.splice(i..j, [(start, end)]);
}

/// Linux's pacing rate in bytes per second (`tcp_update_pacing_rate`,
/// net/ipv4/tcp_input.c): cwnd/srtt times `tcp_pacing_ss_ratio` = 200 % while
/// cwnd is below half of ssthresh (slow start), else `tcp_pacing_ca_ratio` =
/// 120 %. No pacing before the first RTT sample.
pub fn linux_pacing_rate(w: &Window, srtt: Option<Time>) -> Option<f64> {
    let srtt = srtt.filter(|s| *s > Time::ZERO)?.as_secs_f64();
    let ratio = if w.cwnd < w.ssthresh / 2.0 { 2.0 } else { 1.2 };
    Some(ratio * w.cwnd / srtt)
}
