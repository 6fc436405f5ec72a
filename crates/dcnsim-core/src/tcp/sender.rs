//! The sender: data segments and the FIN by the window (slow start and
//! congestion avoidance by the controller, limited transmit, the receiver's
//! window, the host queue limit, pacing), and the ACKs it gets: RTT
//! samples, cumulative ACKs, duplicate ACKs, fast retransmit, NewReno's
//! partial ACKs (RFC 6582) and ECN's reaction (RFC 3168).

use super::recovery::{dsack_block, insert_range, Undo};
use super::spec::PrioScheme;
use super::{Arrival, Conn, Seg, State, ACK, CWR, ECE, FIN, NO_TS, SYN};
use crate::cc::Window;
use crate::packet::{Sack, TcpHeader};
use crate::units::Time;

impl Conn {
    pub(super) fn send_syn(&mut self, out: &mut Vec<Seg>) {
        // An ECN-setup SYN carries ECE and CWR (RFC 3168 §6.1.1).
        let ecn_setup = if self.p.flags.ecn_capable {
            ECE | CWR
        } else {
            0
        };
        self.emit(out, Seg::control(true, 0, 0, SYN | ecn_setup, NO_TS));
    }

    /// Send one data segment (or the FIN) starting at `seq`.
    pub(super) fn send_segment(&mut self, now: Time, seq: u64, out: &mut Vec<Seg>) -> u64 {
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
        if let Some(prr) = &mut self.prr {
            prr.sent(u64::from(payload));
        }
        if let Some(pipe) = &mut self.ns2_pipe {
            pipe.sent(u64::from(payload));
        }
        self.send_data(now, seq, payload, flags, out)
    }

    /// The fast retransmit of `snd_una` at the start of a recovery. ns-2's
    /// pipe does not count it: `SackFullTcpAgent::dupack_action` sets
    /// `pipe_` and then sends it by `FullTcpAgent::fast_retransmit`, which
    /// calls `foutput` itself, outside `send_much`, whose `sent` is what
    /// adds to `pipe_` (tcp/tcp-full.cc lines 1414-1422, 2861-2914;
    /// tcp/tcp-full.h line 198).
    fn fast_retransmit(&mut self, now: Time, out: &mut Vec<Seg>) -> u64 {
        let pipe = self.ns2_pipe.take();
        let next = self.send_segment(now, self.snd_una, out);
        self.ns2_pipe = pipe;
        next
    }

    /// Emit the data segment (or FIN) of `payload` bytes at `seq`.
    pub(super) fn send_data(
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
        let prio = match (payload, self.p.t.priority) {
            (0, _) => 0,
            (_, PrioScheme::Remaining) => self.data_end - self.snd_una.max(1),
            (_, PrioScheme::Size) => self.size,
            (_, PrioScheme::Sent) => self.stats.bytes_sent,
        };
        if self.p.t.idle_restart {
            self.last_sent = now;
        }
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
                    echo: None,
                },
                payload,
                ect: self.p.flags.ecn_capable && payload > 0,
                prio,
                option: None,
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
    /// (RFC 6675 §5 step C); with `sack_holes = "ns2"` holes also go first
    /// after a timeout, each while it starts inside the window
    /// ([`super::ns2_holes`]).
    pub(super) fn send_window(&mut self, now: Time, out: &mut Vec<Seg>) {
        let end = self.final_seq();
        let mut sent_new = false;
        // Sending changes neither: only ACKs and timers move the recovery.
        let sack_recovery = self.in_recovery && self.p.sack_blocks > 0;
        // ns-2 after a timeout: holes first until the ACK passes `recover`.
        let ns2_after_rto = self.in_loss && self.p.ns2_holes();
        let holes_first = sack_recovery || ns2_after_rto;
        loop {
            let hole = if holes_first { self.next_hole() } else { None };
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
            if self.p.t.nagle && hole.is_none() && self.nagle_holds(seq, len) {
                break;
            }
            // What the window must hold: up to the segment's end. A hole of
            // ns-2's after a timeout (at or above snd_nxt) must start inside
            // the window, whatever is below it (`FullTcpAgent::send_allowed`,
            // tcp/tcp-full.cc lines 1269–1276).
            let in_flight = seq.max(self.snd_nxt) - self.snd_una;
            let cwnd = self.win.cwnd.max(self.cc.send_floor(&self.win));
            let over_cwnd = (in_flight + len) as f64 > cwnd;
            let new_data_blocked = in_flight > 0 && in_flight + len > self.p.rwnd;
            let blocked = if sack_recovery {
                self.pipe_full(cwnd) || (hole.is_none() && new_data_blocked)
            } else {
                in_flight > 0
                    && (new_data_blocked
                        || (over_cwnd && in_flight + len > self.limited_allowance(cwnd)))
            };
            if blocked {
                break;
            }
            if self.host_queued >= self.p.t.host_queue_limit {
                self.host_blocked = true;
                break;
            }
            if self.next_send > now {
                self.pace_at = Some(self.next_send);
                break;
            }
            if hole.is_some() {
                let next = self.send_segment(now, seq, out);
                self.high_rxt = seq + len.max(1);
                if ns2_after_rto && seq == self.snd_nxt {
                    // ns-2's `sent` moves `t_seqno_` too when the hole is
                    // there (tcp/tcp-full.h line 203), after a timeout.
                    self.snd_nxt = next;
                }
            } else {
                if over_cwnd && in_flight > 0 && !sack_recovery {
                    self.limited_sent += len;
                }
                if self.p.t.idle_restart {
                    self.restart_after_idle(now, len);
                }
                // ns-2 raises the hole-fill pointer to the cumulative ACK on
                // every new ACK (`pack_action`, `ack_action`, tcp/tcp-full.cc
                // lines 2927, 2947): dcnsim reads it as max(HighRxt, snd_una).
                let from_pointer = ns2_after_rto && self.snd_nxt == self.high_rxt.max(self.snd_una);
                self.snd_nxt = self.send_segment(now, self.snd_nxt, out);
                if from_pointer {
                    // ns-2's `sent`: the hole-fill pointer moves past what
                    // goes out from it (tcp/tcp-full.h line 301).
                    self.high_rxt = self.snd_nxt;
                }
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

    /// Nagle (RFC 896, ns-2.35 `FullTcpAgent::foutput`'s "sender SWS
    /// avoidance", tcp/tcp-full.cc lines 1050–1067): new data of `len`
    /// bytes at `seq`, shorter than a segment, waits while anything is
    /// outstanding, unless it is at least half the receiver's window. A
    /// retransmission (below `snd_max`) never waits.
    pub(super) fn nagle_holds(&self, seq: u64, len: u64) -> bool {
        len > 0
            && len < u64::from(self.mss)
            && seq >= self.snd_max
            && self.snd_max > self.snd_una
            && 2 * len < self.p.rwnd
    }

    /// Slow-start restart (`idle_restart`; ns-2.35 `FullTcpAgent::foutput`
    /// and `idle_restart`, tcp/tcp-full.cc lines 1014–1018 and 1458–1472):
    /// new data with nothing outstanding, after an idle time longer than
    /// the timeout estimate (before `min_rto`), sets cwnd to `init_cwnd`
    /// and keeps ssthresh. With `rto_ticks` the idle time counts whole
    /// ticks crossed since the last segment (ns-2's `boot_time_` offset
    /// taken as 0).
    pub(super) fn restart_after_idle(&mut self, now: Time, len: u64) {
        if len == 0 || self.snd_una != self.snd_max || self.stats.packets_sent == 0 {
            return;
        }
        let tick = self.p.tick;
        let idle = if tick > 0.0 {
            ((now.0 as f64 / tick).floor() - (self.last_sent.0 as f64 / tick).floor()) * tick
        } else {
            (now - self.last_sent).0 as f64
        };
        if idle > self.rto_estimate() {
            self.win.cwnd = f64::from(self.p.t.init_cwnd) * self.win.mss;
        }
    }

    /// What limited transmit lets the sender have outstanding (RFC 3042 §2):
    /// cwnd plus one segment per duplicate ACK, for the first two, outside
    /// recovery; new data only, since `send_window` sends from `snd_nxt`.
    pub(super) fn limited_allowance(&self, cwnd: f64) -> u64 {
        if !self.p.limited_transmit || self.in_recovery {
            return 0;
        }
        cwnd as u64 + u64::from(self.dupacks.min(2)) * u64::from(self.mss)
    }

    /// After a segment of `len` payload bytes: when the next may leave.
    pub(super) fn pace(&mut self, now: Time, len: u64) {
        let bytes = len + u64::from(self.p.header);
        let own = self.cc.pacing_rate(&self.win, self.srtt_time());
        self.paced = own.map(|_| (now, bytes));
        let rate = own.or_else(|| {
            self.p
                .t
                .pacing
                .then(|| linux_pacing_rate(&self.win, self.srtt_time()))
                .flatten()
        });
        if let Some(rate) = rate {
            self.next_send = paced_after(now, bytes, rate);
        }
    }

    /// A controller's own pacing follows its window: after an ACK the next
    /// segment waits from the start of the last paced one at the rate the
    /// window gives now (BOTCP: "Di, the data allowed in one RTT", is the
    /// window as it is), and not at all once the controller stops pacing.
    /// Linux's pacing (`transport.pacing`) keeps the gap set when the
    /// segment left, as `sch_fq` does.
    fn repace(&mut self) {
        if let Some((from, bytes)) = self.paced {
            self.next_send = match self.cc.pacing_rate(&self.win, self.srtt_time()) {
                Some(rate) => paced_after(from, bytes, rate),
                None => from,
            };
        }
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
                if self.p.t.handshake {
                    // The third packet of the handshake (ns-2's one-way
                    // SYN has none: the data follows its ACK).
                    self.emit(out, Seg::control(true, 1, 1, ACK, NO_TS));
                }
                self.send_window(now, out);
            }
            State::Open => self.on_ack(now, a, out),
            _ => {}
        }
    }

    pub(super) fn on_ack(&mut self, now: Time, a: &Arrival, out: &mut Vec<Seg>) {
        let seg = a.seg;
        let ece = seg.hdr.flags & ECE != 0 && self.p.flags.ecn_capable;
        let ack = seg.hdr.ack.min(self.snd_max);
        if self.probing {
            // Probe mode ends with any ACK (pFabric §4.2): back to slow start
            // from the timeout's window.
            self.probing = false;
            self.consecutive_timeouts = 0;
            self.snd_nxt = self.snd_una.max(ack);
        }
        let ts_echo = (seg.hdr.ts_echo != NO_TS).then_some(seg.hdr.ts_echo);
        // PRR's DeliveredData: the change in snd_una plus in SACKed bytes
        // (RFC 6937 §3), counted from before this ACK's blocks.
        let una_before = self.snd_una;
        let sacked_before = if self.p.prr() { self.sacked_bytes() } else { 0 };
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
                } else if self.p.t.dsack_undo {
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
                if ack >= self.recover || self.p.reno() {
                    // Reno leaves on any new ACK and opens the window on it
                    // (ns-2.35 `FullTcpAgent::pack_action`, open_cwnd_on_pack_).
                    // ns-2's FullTcp/Sack opens it on the ACK that ends its
                    // recovery too: `FullTcpAgent::recv` calls `opencwnd` on
                    // every ACK of new data that is not partial (tcp/tcp-full.cc
                    // lines 2293-2299; `open_cwnd_on_pack_ false` only keeps
                    // partial ACKs out, ns-default.tcl lines 1254-1264).
                    self.in_recovery = false;
                    self.prr = None;
                    let ns2_pipe = self.ns2_pipe.take().is_some();
                    left_recovery = true;
                    self.win.cwnd = self.win.ssthresh.max(self.win.mss);
                    grow = self.p.reno() || ns2_pipe;
                } else if self.p.sack_blocks > 0 {
                    // SACK recovery sends by pipe (`send_window`).
                    if let Some(pipe) = &mut self.ns2_pipe {
                        pipe.acked(true, self.mss);
                    }
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
            self.in_loss &= self.snd_una < self.recover;
            if ece && self.snd_una > self.ecn_recover && !self.in_recovery {
                grow = false;
                let floor = self.p.t.ecn_floor * self.win.mss;
                let (cc, win, fs) = self.controller(now);
                let cut = cc.ecn_cut(win, fs).max(floor);
                self.win.cwnd = cut;
                self.win.ssthresh = cut;
                self.ecn_recover = self.snd_max;
                self.send_cwr = true;
                self.cut_by_dupacks = false;
            }
            if grow {
                let (cc, win, fs) = self.controller(now);
                cc.on_ack(win, data_acked, fs);
            }
            if self.snd_una >= self.final_seq() {
                self.rto_at = None;
                if !self.p.t.handshake && self.closing {
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
            // RFC 6675 §5: recovery also starts when SACKs show snd_una lost
            // (not in ns-2, whose FullTcp counts duplicate ACKs only).
            let sack_lost =
                self.p.sack_blocks > 0 && !self.p.ns2_holes() && self.lost_point() > self.snd_una;
            if !self.in_recovery
                && self.rack.is_none()
                && (self.dupacks == self.p.t.dupack_threshold || sack_lost)
                && (ack > self.recover || (self.p.reno() && self.cut_by_dupacks))
                && self.p.flags.fast_retransmit
            {
                self.enter_recovery(now);
                let next = self.fast_retransmit(now, out);
                if self.p.sack_blocks > 0 {
                    self.high_rxt = next;
                } else {
                    self.win.cwnd =
                        self.win.ssthresh + f64::from(self.p.t.dupack_threshold) * self.win.mss;
                }
                self.arm_rto(now);
            } else if self.in_recovery && self.p.sack_blocks == 0 {
                self.win.cwnd += self.win.mss;
            } else if let Some(pipe) = &mut self.ns2_pipe {
                pipe.acked(false, self.mss);
            }
        }
        if self.rack.is_some() {
            self.rack_on_ack(now, ack, una_before, dsack, left_recovery, &seg);
        }
        if let Some(value) = seg.hdr.echo {
            let (cc, win, fs) = self.controller(now);
            cc.on_feedback(win, value, fs);
        }
        if self.in_recovery && self.prr.is_some() {
            let delivered =
                (self.snd_una - una_before + self.sacked_bytes()).saturating_sub(sacked_before);
            self.prr_window(delivered, self.snd_una > una_before);
        }
        self.repace();
        if seg.hdr.flags & FIN != 0 && self.closing && self.snd_una >= self.final_seq() {
            // The receiver's FIN: acknowledge it and close.
            let last_ack = Seg::control(true, self.final_seq(), seg.hdr.seq + 1, ACK, NO_TS);
            self.emit(out, last_ack);
            self.finish(now);
            return;
        }
        self.send_window(now, out);
    }

    pub(super) fn finish(&mut self, now: Time) {
        self.state = State::Done;
        self.closed_at = Some(now);
        self.rto_at = None;
        self.reo_at = None;
        self.tlp_at = None;
    }
}

/// When the next segment may leave after `bytes` started at `from`, at `rate`
/// bytes per second. Saturating: a rate near 0 (a window far below one
/// segment) waits to the end of time rather than wrapping the clock.
fn paced_after(from: Time, bytes: u64, rate: f64) -> Time {
    let gap = (bytes as f64 / rate * Time::PS_PER_S as f64).round() as u64;
    Time(from.0.saturating_add(gap))
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
