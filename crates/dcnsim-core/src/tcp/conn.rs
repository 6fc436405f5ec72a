//! The connection: its state, shared by the sender ([`super::sender`]), the
//! receiver ([`super::receiver`]), loss recovery ([`super::recovery`]) and the
//! timers ([`super::timers`]), and the parameters its protocol's connections
//! share ([`Params`]).

use super::ns2_pipe::Ns2Pipe;
use super::prr::Prr;
use super::rack::Rack;
use super::recovery::Undo;
use super::spec::{Recovery, SackHoles, SackPipe, TransportSpec};
use super::{Outcome, Seg, State, Stats, NO_TS};
use crate::cc::{Cc, Controller, Flags, FlowState, Protocol, Window};
use crate::units::{Capacity, Time};
use std::sync::Arc;

/// What one protocol's connections share ([`Params::new`]): `[transport]`
/// itself, the kind's [`Flags`], and the few values derived from them once.
/// Kept in every connection they took two of its cache lines, which the
/// event loop loads for every segment delivered (docs/performance.md).
pub struct Params {
    /// `[transport]` as validated: a key is read here, never copied.
    pub(super) t: TransportSpec,
    /// What the controller kind asks of the machine.
    pub(super) flags: Flags,
    /// `initial_rto`, clamped to `[min_rto, max_rto]`.
    pub(super) initial_rto: Time,
    /// `rto_granularity` in picoseconds.
    pub(super) granularity: f64,
    /// Limited transmit, only with fast retransmit.
    pub(super) limited_transmit: bool,
    /// SACK blocks per ACK, 0 without SACK.
    pub(super) sack_blocks: u32,
    /// IPv4 + TCP header bytes (SACK option aside).
    pub(super) header: u32,
    /// The receiver's window in bytes (`u64::MAX`: none).
    pub(super) rwnd: u64,
    /// ns-2's estimator in whole ticks: the tick, 0.0 when off.
    pub(super) tick: f64,
    /// What makes a plugged controller ([`Params::plugged`]).
    plug: Option<MakeController>,
}

/// Makes the controller of each connection of a protocol a Rust program
/// plugged in ([`Params::plugged`]).
pub type MakeController = Arc<dyn Fn() -> Box<dyn Controller> + Send + Sync>;

impl Params {
    /// The parameters of `protocol`'s connections under `t`.
    pub fn new(protocol: Protocol, t: &TransportSpec) -> Arc<Params> {
        Params::with(protocol.flags(), None, t)
    }

    /// The parameters of connections whose controllers `make` makes (a
    /// controller not in the registry, asking `flags` of the machine),
    /// under `t`.
    pub fn plugged(make: MakeController, flags: Flags, t: &TransportSpec) -> Arc<Params> {
        Params::with(flags, Some(make), t)
    }

    fn with(flags: Flags, plug: Option<MakeController>, t: &TransportSpec) -> Arc<Params> {
        Arc::new(Params {
            t: t.clone(),
            flags,
            initial_rto: t.initial_rto.max(t.min_rto).min(t.max_rto),
            granularity: t.rto_granularity.0 as f64,
            limited_transmit: t.limited_transmit && flags.fast_retransmit,
            sack_blocks: if t.sack { t.sack_blocks } else { 0 },
            header: t.header.0 as u32,
            rwnd: t.rwnd.map_or(u64::MAX, |c| capacity_bytes(c, t)),
            tick: if t.rto_ticks {
                t.rto_granularity.0 as f64
            } else {
                0.0
            },
            plug,
        })
    }

    /// Fast recovery by PRR (RFC 6937) instead of the classic one.
    #[inline]
    pub(super) fn prr(&self) -> bool {
        self.t.recovery == Recovery::Prr
    }

    /// ns-2's counted SACK pipe ([`SackPipe::Ns2`]) instead of RFC 6675's.
    #[inline]
    pub(super) fn ns2_pipe(&self) -> bool {
        self.t.sack_pipe == SackPipe::Ns2
    }

    /// ns-2's choice of holes ([`SackHoles::Ns2`]) instead of RFC 6675's.
    #[inline]
    pub(super) fn ns2_holes(&self) -> bool {
        self.t.sack_holes == SackHoles::Ns2
    }

    /// Reno's recovery ([`Recovery::Reno`]) instead of NewReno's.
    #[inline]
    pub(super) fn reno(&self) -> bool {
        self.t.recovery == Recovery::Reno
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
    pub(super) p: Arc<Params>,
    pub(super) state: State,
    pub(super) mss: u32,
    // Sender.
    pub snd_una: u64,
    pub snd_nxt: u64,
    pub(super) snd_max: u64,
    /// One past the last data byte.
    pub(super) data_end: u64,
    pub win: Window,
    pub(super) cc: Cc,
    pub(super) dupacks: u32,
    /// Bytes sent by limited transmit since the last new ACK.
    pub(super) limited_sent: u64,
    /// SACK scoreboard: SACKed ranges above `snd_una`, sorted and disjoint.
    pub(super) sacked: Vec<(u64, u64)>,
    /// RFC 6675's HighRxt: holes below it have been retransmitted.
    pub(super) high_rxt: u64,
    /// What to restore if the last fast retransmit proves spurious.
    pub(super) undo: Option<Undo>,
    /// PRR's counters during a recovery, with `recovery = "prr"`.
    pub(super) prr: Option<Box<Prr>>,
    /// ns-2's counted pipe during a SACK recovery, with `sack_pipe = "ns2"`.
    pub(super) ns2_pipe: Option<Ns2Pipe>,
    /// A timeout's data is not yet all acknowledged (`recover` not reached):
    /// a further timeout repeats it (`rto_keeps_ssthresh`).
    pub(super) in_loss: bool,
    /// The last window cut was a fast retransmit's: Reno may retransmit
    /// again in the same window (`recovery = "reno"`).
    pub(super) cut_by_dupacks: bool,
    /// When the sender last sent a segment (`idle_restart`).
    pub(super) last_sent: Time,
    /// RACK-TLP state, with `rack`.
    pub(super) rack: Option<Box<Rack>>,
    /// When the RACK reordering timer and the tail loss probe timer expire.
    pub(super) reo_at: Option<Time>,
    pub(super) tlp_at: Option<Time>,
    pub(super) in_recovery: bool,
    pub(super) recover: u64,
    /// No ECN reaction until snd_una passes this (once per window).
    pub(super) ecn_recover: u64,
    pub(super) send_cwr: bool,
    pub srtt: Option<f64>,
    pub(super) rttvar: f64,
    pub(super) rto: Time,
    pub(super) backoff: u32,
    /// Timeouts since the last new ACK, and whether probe mode is on.
    pub(super) consecutive_timeouts: u32,
    pub(super) probing: bool,
    /// When the retransmission timer expires, if it runs.
    pub(super) rto_at: Option<Time>,
    /// Pacing: the next segment may not leave before this; while the sender
    /// waits for it, the simulation wakes it then.
    pub(super) next_send: Time,
    pub(super) pace_at: Option<Time>,
    /// The start and wire bytes of the last segment the controller's own
    /// pacing rate spaced ([`crate::cc::Controller::pacing_rate`]): its gap
    /// follows the rate as the window changes (`Conn::repace`).
    pub(super) paced: Option<(Time, u64)>,
    /// The application has no more data: send the FIN after it.
    pub(super) closing: bool,
    /// Segments of this sender still in its host (not yet on the wire).
    pub(super) host_queued: u32,
    /// The sender stopped because its host queue limit was reached.
    pub(super) host_blocked: bool,
    // Receiver.
    pub(super) rcv_nxt: u64,
    /// Out-of-order ranges [start, end), sorted and disjoint.
    pub(super) ooo: Vec<(u64, u64)>,
    /// Start of the latest out-of-order segment (the first SACK block's).
    pub(super) last_ooo: u64,
    /// A duplicate segment for the next ACK's first block (D-SACK).
    pub(super) dsack: Option<(u64, u64)>,
    /// Sequence number of the sender's FIN, once seen.
    pub(super) fin_seq: Option<u64>,
    pub(super) ts_recent: Time,
    pub(super) last_ack_sent: u64,
    /// ECE to put on ACKs (latched for `ecn`, the last CE state for DCTCP).
    pub(super) ece: bool,
    pub(super) unacked_segments: u32,
    /// The receiver has sent its FIN.
    pub(super) fin_sent: bool,
    /// The in-band option's value to echo on the next ACK, and whether one
    /// arrived since the last ACK (see `receiver.rs`).
    pub(super) echo: Option<u32>,
    pub(super) echo_fresh: bool,
    /// When the delayed-ACK timer expires, if it runs.
    pub(super) delack_at: Option<Time>,
    /// When the receiver first had every data byte.
    pub completed_at: Option<Time>,
    /// When the sender saw its last byte (and FIN) acknowledged.
    pub closed_at: Option<Time>,
    pub stats: Stats,
}
impl Conn {
    /// A connection of `protocol` for `size` bytes from `start`, with the
    /// protocol's shared parameters `p` ([`Params::new`] of the same `t`, or
    /// [`Params::plugged`]: then its controller is the plugged one).
    pub fn new(
        size: u64,
        start: Time,
        deadline: Option<Time>,
        protocol: Protocol,
        t: &TransportSpec,
        p: Arc<Params>,
    ) -> Conn {
        let mss = t.mss.0 as u32;
        let cc = match &p.plug {
            Some(make) => Cc::Plugged(make()),
            None => Cc::new(protocol, &t.cc),
        };
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
            win: Window::new(
                cc.initial_window(p.t.init_cwnd, f64::from(mss)),
                t.initial_ssthresh
                    .map_or(f64::INFINITY, |c| capacity_bytes(c, t) as f64),
                f64::from(mss),
                t.slow_start,
            ),
            cc,
            dupacks: 0,
            limited_sent: 0,
            sacked: Vec::new(),
            high_rxt: 0,
            undo: None,
            prr: None,
            ns2_pipe: None,
            in_loss: false,
            cut_by_dupacks: false,
            last_sent: Time::ZERO,
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
            paced: None,
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
            echo: None,
            echo_fresh: false,
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
        if self.p.t.handshake || self.p.t.oneway_syn {
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

    pub(super) fn emit(&mut self, out: &mut Vec<Seg>, mut seg: Seg) {
        self.stats.packets_sent += 1;
        self.host_queued += u32::from(seg.to_receiver);
        if self.p.flags.inband_option.is_some() {
            self.carry_option(&mut seg);
        }
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
    pub(super) fn final_seq(&self) -> u64 {
        self.data_end + u64::from(self.p.t.handshake && self.closing)
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

    pub(super) fn flight(&self) -> u64 {
        self.snd_max - self.snd_una
    }

    /// The controller and the window, and what the controller may look at
    /// now ([`FlowState`]) as a maker, which the controller's dispatch calls
    /// only for controllers that read it ([`Cc::on_ack`]): most do not, and
    /// building it before the dispatch cost every ACK some 30 instructions.
    pub(super) fn controller(
        &mut self,
        now: Time,
    ) -> (&mut Cc, &mut Window, impl FnOnce() -> FlowState + '_) {
        let Conn {
            cc,
            win,
            stats,
            data_end,
            snd_una,
            snd_max,
            srtt,
            deadline,
            ..
        } = self;
        let flow_state = move || FlowState {
            now,
            bytes_sent: stats.bytes_sent,
            remaining: data_end.saturating_sub(*snd_una),
            in_flight: snd_max.saturating_sub(*snd_una),
            srtt: srtt.map(|s| Time(s as u64)),
            deadline: *deadline,
        };
        (cc, win, flow_state)
    }

    pub(super) fn srtt_time(&self) -> Option<Time> {
        self.srtt.map(|s| Time(s as u64))
    }
}
