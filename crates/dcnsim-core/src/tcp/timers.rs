//! The connection's timers: retransmission (RFC 6298: the estimator, the
//! backoff, go-back-N and pFabric's probe mode), the tail loss probe and
//! RACK's reordering timer (RFC 8985 §7, §6.3), pacing, the delayed ACK and
//! the controller's own ([`crate::cc::Controller::deadline`]).
//!
//! Each timer is a deadline in the connection; the simulation sees one, the
//! earliest ([`Conn::next_deadline`]), and calls [`Conn::on_timer`] when it
//! has come. A new timer is a deadline here, a term of `next_deadline` and
//! an arm of `on_timer`: nothing outside `tcp/` changes.

use super::{Conn, Seg, State, ACK, FIN};
use crate::units::Time;

/// RFC 8985 §7.2 WCDelAckT: the worst-case delayed-ACK time a probe timeout
/// allows for when one segment is outstanding.
const WC_DEL_ACK: Time = Time(Time::PS_PER_S / 5);

impl Conn {
    /// The earliest deadline of the connection's timers, if any runs: the
    /// retransmission, delayed-ACK, pacing, reordering and probe timers and,
    /// until the connection is done, the controller's.
    #[inline]
    pub fn next_deadline(&self) -> Option<Time> {
        // No deadline reads as the end of time, so the earliest is a plain
        // minimum over integers. This runs on every segment sent and ACK,
        // mostly with the retransmission timer alone: the four timers that
        // run only with delayed ACKs, pacing or RACK are tested together
        // first, and the controller's state only when it has a deadline.
        let at = |t: Option<Time>| t.map_or(u64::MAX, |t| t.0);
        let mut first = at(self.rto_at);
        if self.delack_at.is_some()
            | self.pace_at.is_some()
            | self.reo_at.is_some()
            | self.tlp_at.is_some()
        {
            first = first
                .min(at(self.delack_at))
                .min(at(self.pace_at))
                .min(at(self.reo_at))
                .min(at(self.tlp_at));
        }
        if let Some(t) = self.cc.deadline() {
            if self.state != State::Done {
                first = first.min(t.0);
            }
        }
        (first != u64::MAX).then_some(Time(first))
    }

    /// The connection's time has come: run every timer whose deadline is at
    /// or before `now`, in this order (each seeing what the ones before it
    /// did): retransmission, delayed ACK, reordering, probe, pacing, the
    /// controller's. None may be due (the deadline moved since it was
    /// scheduled): then nothing happens.
    pub fn on_timer(&mut self, now: Time, out: &mut Vec<Seg>) {
        let due = |at: Option<Time>| at.is_some_and(|t| t <= now);
        if due(self.rto_at) {
            self.on_rto(now, out);
        }
        if due(self.delack_at) {
            self.on_delack(out);
        }
        if due(self.reo_at) {
            self.on_reo(now, out);
        }
        if due(self.tlp_at) {
            self.on_tlp(now, out);
        }
        if due(self.pace_at) {
            self.on_pace(now, out);
        }
        if self.state != State::Done && due(self.cc.deadline()) {
            let (cc, win, fs) = self.controller(now);
            cc.on_timer(win, fs);
            if self.state == State::Open {
                self.send_window(now, out);
            }
        }
    }

    /// The retransmission timeout with backoff, in RFC 6298's bounds, or the
    /// controller's fixed one.
    pub fn current_rto(&self) -> Time {
        if let Some(fixed) = self.cc.fixed_rto() {
            return fixed;
        }
        let backed = self.rto.0.saturating_mul(1u64 << self.backoff.min(30));
        Time(backed.min(self.p.t.max_rto.0))
    }

    pub(super) fn arm_rto(&mut self, now: Time) {
        self.rto_at = Some(now + self.current_rto());
    }

    /// RFC 8985 §7.2: after new data or an ACK of new data, outside
    /// recovery, with nothing SACKed and no reordering timer, the probe
    /// timeout is 2·SRTT (plus WCDelAckT with one segment out; 1 s before
    /// an RTT sample), never after the retransmission timer.
    pub(super) fn arm_tlp(&mut self, now: Time) {
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
    pub(super) fn tlp_allowed(&self) -> bool {
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
    pub(super) fn on_tlp(&mut self, now: Time, out: &mut Vec<Seg>) {
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
    pub(super) fn on_reo(&mut self, now: Time, out: &mut Vec<Seg>) {
        self.reo_at = None;
        if self.state == State::Open && self.flight() > 0 {
            self.rack_detect_loss(now);
            self.send_window(now, out);
        }
    }

    /// The pacing timer fired (the caller checked `pace_at <= now`).
    pub(super) fn on_pace(&mut self, now: Time, out: &mut Vec<Seg>) {
        self.pace_at = None;
        if self.state == State::Open {
            self.send_window(now, out);
        }
    }

    /// RFC 6298 §2 with a new round-trip sample `r` (picoseconds).
    pub(super) fn rtt_sample(&mut self, r: f64) {
        if let Some(rack) = &mut self.rack {
            rack.rtt_sample(Time(r as u64));
        }
        if self.p.tick > 0.0 {
            self.rtt_sample_ticks(r);
        } else {
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
        }
        let floor = Time((2.0 * self.p.tick) as u64);
        self.rto = Time(self.rto_estimate().round() as u64)
            .max(self.p.t.min_rto)
            .max(floor)
            .min(self.p.t.max_rto);
    }

    /// ns-2.35 `TcpAgent::rtt_update` (tcp/tcp.cc lines 565–604) with
    /// `rto_ticks`: the sample in whole ticks (rounded, at least 1: the
    /// `ts_option_` rounding; without timestamps ns-2 adds a random
    /// `boot_time_` offset instead), t_srtt_ in 1/8 and t_rttvar_ in 1/4
    /// tick, integers. SRTT and RTTVAR are kept in picoseconds, exact
    /// multiples of those fractions.
    fn rtt_sample_ticks(&mut self, r: f64) {
        let tick = self.p.tick;
        let m = ((r / tick).round() as i64).max(1);
        let (a, v) = match self.srtt {
            None => (m << 3, m << 1),
            Some(s) => {
                let (mut a, mut v) = (
                    (s * 8.0 / tick).round() as i64,
                    (self.rttvar * 4.0 / tick).round() as i64,
                );
                let delta = m - (a >> 3);
                a = (a + delta).max(1);
                v = (v + delta.abs() - (v >> 2)).max(1);
                (a, v)
            }
        };
        self.srtt = Some(a as f64 * tick / 8.0);
        self.rttvar = v as f64 * tick / 4.0;
    }

    /// The timeout the estimator gives before `min_rto`, backoff and
    /// `max_rto`, in picoseconds: SRTT + max(G, 4·RTTVAR) (RFC 6298 §2),
    /// with `rto_ticks` ns-2's t_rtxcur_, ⌊SRTT + 4·RTTVAR⌋ whole ticks
    /// (`((t_rttvar_ << 3) + t_srtt_) >> 3`); `initial_rto` before any
    /// sample.
    pub(super) fn rto_estimate(&self) -> f64 {
        let Some(srtt) = self.srtt else {
            return self.p.initial_rto.0 as f64;
        };
        let tick = self.p.tick;
        if tick > 0.0 {
            ((srtt + 4.0 * self.rttvar) / tick).floor() * tick
        } else {
            srtt + (4.0 * self.rttvar).max(self.p.granularity)
        }
    }

    /// The retransmission timer fired (the caller checked `rto_at <= now`).
    pub(super) fn on_rto(&mut self, now: Time, out: &mut Vec<Seg>) {
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
                    let base = self.ssthresh_base(self.flight());
                    let kept = self.win.ssthresh;
                    self.cc.on_timeout(&mut self.win, base);
                    if self.in_loss && self.p.t.rto_keeps_ssthresh {
                        self.win.ssthresh = kept;
                    }
                }
                self.in_loss = true;
                self.cut_by_dupacks = false;
                self.in_recovery = false;
                self.prr = None;
                self.ns2_pipe = None;
                self.dupacks = 0;
                self.limited_sent = 0;
                // A timeout forgets the SACK scoreboard (the receiver may
                // renege, RFC 2018 §8).
                self.sacked.clear();
                if !self.p.ns2_holes() {
                    // ns-2 keeps its hole-fill pointer ([`super::ns2_holes`]).
                    self.high_rxt = 0;
                }
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
                self.paced = None;
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
    pub(super) fn send_probe(&mut self, now: Time, out: &mut Vec<Seg>) {
        self.stats.retransmits += 1;
        let seq = self.snd_una;
        let flags = if seq < self.data_end { ACK } else { ACK | FIN };
        let payload = u32::from(seq < self.data_end);
        self.send_data(now, seq, payload, flags, out);
    }

    /// The delayed-ACK timer fired (the caller checked `delack_at <= now`).
    pub(super) fn on_delack(&mut self, out: &mut Vec<Seg>) {
        self.delack_at = None;
        if self.unacked_segments > 0 {
            self.send_ack(0, out);
        }
    }
}
