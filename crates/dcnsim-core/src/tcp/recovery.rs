//! Loss recovery beside the timers: the window kept for undo (Eifel,
//! RFC 3522 / RFC 4015; D-SACK, RFC 3708), the SACK scoreboard and RFC 6675's
//! IsLost, pipe and NextSeg, what a loss halves into ssthresh, PRR's window
//! ([`super::prr`]) and RACK's per-ACK steps (RFC 8985, [`super::rack`]).

use super::ns2_holes;
use super::ns2_pipe::Ns2Pipe;
use super::prr::Prr;
use super::rack::ProbeOutcome;
use super::spec::SsthreshFrom;
use super::{Conn, Seg};
use crate::packet::Sack;
use crate::units::Time;

/// The window before a recovery, what tells whether it was spurious: the
/// first retransmission's time (Eifel) and the retransmissions the receiver
/// has not yet reported as duplicates (D-SACK, RFC 3708).
#[derive(Clone, Copy, Debug)]
pub(super) struct Undo {
    pub(super) cwnd: f64,
    pub(super) ssthresh: f64,
    pub(super) retransmitted_at: Time,
    /// The first ACK above `snd_una` still has to be checked (Eifel).
    pub(super) eifel: bool,
    /// `snd_max` when the recovery began: retransmissions are below it.
    pub(super) high: u64,
    /// Retransmissions in the recovery, and D-SACKs of them so far.
    pub(super) retrans: u32,
    pub(super) dsacked: u32,
}

impl Conn {
    /// RFC 8985 §6.2 step 5 and §6.3: mark losses, (re)arm the reordering
    /// timer, and start a recovery when a segment is newly lost.
    pub(super) fn rack_detect_loss(&mut self, now: Time) {
        let srtt = self.srtt_time();
        let Some(rack) = &mut self.rack else {
            return;
        };
        let wnd = rack.reo_wnd(self.in_recovery, self.p.t.dupack_threshold, srtt);
        self.reo_at = rack.detect_loss(now, wnd);
        if rack.has_lost() && !self.in_recovery && self.p.flags.fast_retransmit {
            self.tlp_at = None;
            self.enter_recovery(now);
        }
    }

    /// RFC 6675 IsLost: an unSACKed byte is lost when more than
    /// (DupThresh − 1)·SMSS bytes above it are SACKed. Every unSACKed byte
    /// below the point returned is lost (`snd_una`: none is).
    pub(super) fn lost_point(&self) -> u64 {
        let threshold = u64::from(self.p.t.dupack_threshold - 1) * u64::from(self.mss);
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
    pub(super) fn unsacked(&self, a: u64, b: u64) -> u64 {
        let covered: u64 = self
            .sacked
            .iter()
            .map(|&(s, e)| e.min(b).saturating_sub(s.max(a)))
            .sum();
        b.saturating_sub(a) - covered
    }

    /// Bytes SACKed above `snd_una`.
    pub(super) fn sacked_bytes(&self) -> u64 {
        self.sacked.iter().map(|&(s, e)| e - s).sum()
    }

    /// What a loss halves into ssthresh ([`SsthreshFrom`]); `flight` is the
    /// flight the caller counts (less limited transmit's on fast retransmit).
    /// The window is counted in whole segments and made even, so that the
    /// controller's halving gives `(int)(window() / 2)` segments (ns-2.35
    /// `TcpAgent::slowdown`; Linux `cwnd >> 1`).
    pub(super) fn ssthresh_base(&self, flight: u64) -> u64 {
        match self.p.t.ssthresh_from {
            SsthreshFrom::Flight => flight,
            SsthreshFrom::Pipe => self.pipe(),
            SsthreshFrom::Window => {
                let mss = u64::from(self.mss);
                let window = (self.win.cwnd.max(0.0) as u64).min(self.p.rwnd);
                window / (2 * mss) * 2 * mss
            }
        }
    }

    /// PRR's window after an ACK of the recovery that reported `delivered`
    /// bytes (`advanced`: it moved snd_una).
    pub(super) fn prr_window(&mut self, delivered: u64, advanced: bool) {
        let pipe = self.pipe();
        if let Some(prr) = &mut self.prr {
            let mss = u64::from(self.mss);
            self.win.cwnd = prr.on_ack(delivered, pipe, self.win.ssthresh, mss, advanced);
        }
    }

    /// Whether the pipe leaves no room for a segment under a window of
    /// `cwnd` bytes: RFC 6675 §5 step C (cwnd − pipe ≥ 1 SMSS to send), or
    /// ns-2's `send_allowed` with its counted pipe ([`Ns2Pipe`]).
    pub(super) fn pipe_full(&self, cwnd: f64) -> bool {
        match &self.ns2_pipe {
            Some(p) => !p.allows(cwnd, self.mss),
            None => (self.pipe() + u64::from(self.mss)) as f64 > cwnd,
        }
    }

    /// RFC 6675 §4 SetPipe: outstanding bytes neither SACKed nor lost, plus
    /// those retransmitted (below HighRxt).
    pub(super) fn pipe(&self) -> u64 {
        if let Some(rack) = &self.rack {
            return rack.pipe();
        }
        let lost = self.lost_point().max(self.snd_una);
        self.unsacked(lost, self.snd_max) + self.unsacked(self.snd_una, self.high_rxt)
    }

    /// RFC 6675 NextSeg rule 1: the first lost, unSACKed byte at or above
    /// HighRxt; with `sack_holes = "ns2"` lost is below the highest SACKed
    /// range ([`ns2_holes::fill_bound`]).
    pub(super) fn next_hole(&self) -> Option<u64> {
        if let Some(rack) = &self.rack {
            return rack.next_lost();
        }
        let lost = if self.p.ns2_holes() {
            ns2_holes::fill_bound(&self.sacked, self.snd_una)
        } else {
            self.lost_point()
        };
        let mut seq = self.high_rxt.max(self.snd_una);
        for &(s, e) in &self.sacked {
            if seq < s {
                break;
            }
            seq = seq.max(e);
        }
        (seq < lost).then_some(seq)
    }

    /// A loss is detected: the window before it is kept for undo, the
    /// controller reduces it (RFC 5681 §3.2 step 2: ssthresh from the flight
    /// without what limited transmit sent) and the recovery runs to
    /// `snd_max`; with SACK cwnd = ssthresh, no inflation (RFC 6675 §5 steps
    /// 4.2-4.3).
    pub(super) fn enter_recovery(&mut self, now: Time) {
        if self.p.t.undo || self.p.t.dsack_undo {
            self.undo = Some(Undo {
                cwnd: self.win.cwnd,
                ssthresh: self.win.ssthresh,
                retransmitted_at: now,
                eifel: self.p.t.undo,
                high: self.snd_max,
                retrans: 0,
                dsacked: 0,
            });
        }
        let flight = self.flight() - self.limited_sent.min(self.flight());
        let base = self.ssthresh_base(flight);
        self.cc.on_dupacks(&mut self.win, base);
        self.recover = self.snd_max;
        self.ecn_recover = self.snd_max;
        self.in_recovery = true;
        self.cut_by_dupacks = true;
        if self.p.prr() {
            // RFC 6937: RecoverFS is the pipe now; the ACK's own share
            // follows once the fast retransmit is out (`Conn::on_ack`).
            self.prr = Some(Box::new(Prr::new(self.pipe())));
            self.prr_window(0, false);
        } else if self.p.sack_blocks > 0 {
            self.win.cwnd = self.win.ssthresh;
            if self.p.ns2_pipe() {
                let sacked = self.sacked_bytes();
                self.ns2_pipe = Some(Ns2Pipe::new(self.snd_max - self.snd_una, sacked));
            }
        }
    }

    /// The window from before a recovery found spurious comes back, and the
    /// recovery ends (RFC 4015 §3, RFC 3708 §3).
    pub(super) fn restore(&mut self, u: Undo) {
        self.win.cwnd = u.cwnd;
        self.win.ssthresh = u.ssthresh;
        self.in_recovery = false;
        self.prr = None;
        self.ns2_pipe = None;
        self.undo = None;
    }

    /// A D-SACK starting at `left`: with `dsack_undo`, one more
    /// retransmission of the recovery proved unnecessary; when all of them
    /// have, the recovery was spurious (RFC 3708 §3).
    pub(super) fn count_dsack(&mut self, left: u64) {
        if !self.p.t.dsack_undo {
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
    pub(super) fn rack_on_ack(
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
}

/// The D-SACK block of an ACK of `ack`, if it has one (RFC 2883 §4): a first
/// block below the cumulative ACK or inside the second block.
pub(super) fn dsack_block(sack: &Sack, ack: u64) -> Option<(u64, u64)> {
    let mut blocks = sack.blocks(ack);
    let (l, r) = blocks.next()?;
    let inside_second = blocks.next().is_some_and(|(l2, r2)| l2 <= l && r <= r2);
    (r <= ack || inside_second).then_some((l, r))
}

/// Insert [s, e) into sorted, disjoint ranges, merging what it touches.
pub(super) fn insert_range(ranges: &mut Vec<(u64, u64)>, s: u64, e: u64) {
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
