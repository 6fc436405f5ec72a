//! RACK-TLP loss detection (RFC 8985): the sender's list of transmitted
//! segments with their latest transmit times, and the RACK state that marks a
//! segment lost once a segment sent sufficiently later has been delivered.
//!
//! - Per-segment state (§5.2): start and end sequence, latest transmit time,
//!   whether retransmitted, SACKed or marked lost.
//! - On each ACK (§6.2): the most recently sent delivered segment sets
//!   `RACK.xmit_ts`, `RACK.end_seq` and `RACK.rtt` (step 2; a retransmitted
//!   segment whose delivery may be its original's is skipped); delivery below
//!   `RACK.fack` of a segment never retransmitted is reordering (step 3); the
//!   reordering window `min_rtt/4 · reo_wnd_mult` grows by one on a D-SACK
//!   once per round trip and returns to 1 after 16 recoveries without one,
//!   and is 0 until reordering has been seen, in recovery or with at least
//!   DupThresh segments SACKed (step 4); a segment sent before `RACK.xmit_ts`
//!   is lost once `RACK.rtt + reo_wnd` has passed since it was sent (step 5,
//!   `RACK_detect_loss`), else the reordering timer waits for the latest such
//!   deadline (§6.3).
//! - Tail loss probe (§7): `TLP.end_seq` and whether the probe was a
//!   retransmission, to tell from the ACKs whether the probe repaired a loss
//!   (§7.4). When the probe timer is armed and what it sends is the
//!   connection's ([`super::Conn`]).
//!
//! `min_rtt` is the smallest RTT sample of the connection: Linux's windowed
//! minimum (`tcp_min_rtt_wlen` = 300 s, net/ipv4/tcp_input.c) over runs far
//! shorter than its window.

use std::collections::VecDeque;

use crate::units::Time;

/// One transmitted segment (RFC 8985 §5.2).
#[derive(Clone, Copy, Debug)]
struct Sent {
    start: u64,
    end: u64,
    xmit_ts: Time,
    retransmitted: bool,
    sacked: bool,
    lost: bool,
}

/// `RACK.reo_wnd_persist`: recoveries a grown window lasts (§6.2 step 4).
const REO_WND_PERSIST: u32 = 16;

#[derive(Debug)]
pub(super) struct Rack {
    /// Outstanding segments by sequence.
    segs: VecDeque<Sent>,
    /// SACKed segments on the list (`RACK.segs_sacked`).
    segs_sacked: u32,
    /// Segments marked lost and not yet retransmitted.
    lost: u32,
    xmit_ts: Time,
    end_seq: u64,
    rtt: Time,
    min_rtt: Option<Time>,
    fack: u64,
    reordering_seen: bool,
    reo_wnd_mult: u32,
    reo_wnd_persist: u32,
    dsack_round: Option<u64>,
    /// `TLP.end_seq` and `TLP.is_retrans` of the outstanding probe (§7.3).
    pub tlp: Option<(u64, bool)>,
}

/// What an ACK tells the probe's sender (RFC 8985 §7.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ProbeOutcome {
    /// Nothing yet decided, or nothing was lost.
    Pending,
    /// The probe repaired a loss: respond as to a loss.
    RepairedLoss,
}

impl Rack {
    pub fn new() -> Rack {
        Rack {
            segs: VecDeque::new(),
            segs_sacked: 0,
            lost: 0,
            xmit_ts: Time::ZERO,
            end_seq: 0,
            rtt: Time::ZERO,
            min_rtt: None,
            fack: 0,
            reordering_seen: false,
            reo_wnd_mult: 1,
            reo_wnd_persist: 0,
            dsack_round: None,
            tlp: None,
        }
    }

    /// Segment [start, end) left at `now`: appended, or, when sent before,
    /// its record (or the records it overlaps, after an MSS change) takes the
    /// new transmit time and is no longer lost.
    pub fn sent(&mut self, start: u64, end: u64, now: Time) {
        if self.segs.back().is_none_or(|s| s.end <= start) {
            self.segs.push_back(Sent {
                start,
                end,
                xmit_ts: now,
                retransmitted: false,
                sacked: false,
                lost: false,
            });
            return;
        }
        let first = self.segs.partition_point(|s| s.end <= start);
        for s in self.segs.range_mut(first..) {
            if s.start >= end {
                break;
            }
            s.xmit_ts = now;
            s.retransmitted = true;
            if s.lost {
                s.lost = false;
                self.lost -= 1;
            }
        }
    }

    /// A new RTT sample of the connection (§6.2 step 1).
    pub fn rtt_sample(&mut self, rtt: Time) {
        self.min_rtt = Some(self.min_rtt.map_or(rtt, |m| m.min(rtt)));
    }

    /// The cumulative ACK reached `ack` (`ts_echo`: the ACK's TSecr, if any).
    pub fn acked(&mut self, ack: u64, now: Time, ts_echo: Option<Time>) {
        while let Some(s) = self.segs.front_mut() {
            if s.end > ack {
                s.start = s.start.max(ack);
                break;
            }
            let s = self.segs.pop_front().expect("a front segment");
            if s.sacked {
                self.segs_sacked -= 1;
            } else {
                if s.lost {
                    self.lost -= 1;
                }
                self.delivered(&s, now, ts_echo);
            }
        }
    }

    /// The ACK SACKs [left, right): segments wholly inside are delivered.
    pub fn sacked(&mut self, left: u64, right: u64, now: Time, ts_echo: Option<Time>) {
        let first = self.segs.partition_point(|s| s.start < left);
        for i in first..self.segs.len() {
            let s = self.segs[i];
            if s.end > right {
                break;
            }
            if !s.sacked {
                self.segs[i].sacked = true;
                self.segs_sacked += 1;
                if s.lost {
                    self.segs[i].lost = false;
                    self.lost -= 1;
                }
                self.delivered(&s, now, ts_echo);
            }
        }
    }

    /// §6.2 steps 2 and 3 for a newly delivered segment.
    fn delivered(&mut self, s: &Sent, now: Time, ts_echo: Option<Time>) {
        let rtt = now - s.xmit_ts.min(now);
        // A retransmitted segment acknowledged sooner than any RTT, or whose
        // ACK echoes an older timestamp, was delivered by its original.
        let ambiguous = s.retransmitted
            && (ts_echo.is_some_and(|e| e < s.xmit_ts) || self.min_rtt.is_some_and(|m| rtt < m));
        if !ambiguous && sent_after(s.xmit_ts, s.end, self.xmit_ts, self.end_seq) {
            self.rtt = rtt;
            self.xmit_ts = s.xmit_ts;
            self.end_seq = s.end;
        }
        if s.end > self.fack {
            self.fack = s.end;
        } else if s.end < self.fack && !s.retransmitted {
            self.reordering_seen = true;
        }
    }

    /// §6.2 step 4, the state part: a D-SACK on this ACK widens the window
    /// once per round trip (`snd_una`, `snd_nxt` after the ACK); leaving a
    /// recovery counts towards narrowing it again.
    pub fn update_reo_wnd(&mut self, snd_una: u64, snd_nxt: u64, dsack: bool, left_recovery: bool) {
        if self.dsack_round.is_some_and(|r| snd_una >= r) {
            self.dsack_round = None;
        }
        if self.dsack_round.is_none() && dsack {
            self.dsack_round = Some(snd_nxt);
            self.reo_wnd_mult += 1;
            self.reo_wnd_persist = REO_WND_PERSIST;
        } else if left_recovery {
            self.reo_wnd_persist = self.reo_wnd_persist.saturating_sub(1);
            if self.reo_wnd_persist == 0 {
                self.reo_wnd_mult = 1;
            }
        }
    }

    /// §6.2 step 4, `RACK.reo_wnd`.
    pub fn reo_wnd(&self, in_recovery: bool, dupthresh: u32, srtt: Option<Time>) -> Time {
        if !self.reordering_seen && (in_recovery || self.segs_sacked >= dupthresh) {
            return Time::ZERO;
        }
        let Some(min_rtt) = self.min_rtt else {
            return Time::ZERO;
        };
        let wnd = Time(min_rtt.0 / 4 * u64::from(self.reo_wnd_mult));
        srtt.map_or(wnd, |s| wnd.min(s))
    }

    /// §6.2 step 5 (`RACK_detect_loss`): mark lost every unSACKed segment
    /// sent before the most recently delivered one by more than RACK.rtt +
    /// `reo_wnd`. Returns when the reordering timer should fire, if a segment
    /// is still within its window (§6.3).
    pub fn detect_loss(&mut self, now: Time, reo_wnd: Time) -> Option<Time> {
        let mut timeout: Option<Time> = None;
        let (rack_ts, rack_end, wait) = (self.xmit_ts, self.end_seq, self.rtt + reo_wnd);
        for s in self.segs.iter_mut() {
            if s.sacked || s.lost {
                continue;
            }
            if sent_after(s.xmit_ts, s.end, rack_ts, rack_end) {
                if !s.retransmitted {
                    // Later originals were sent later still; only earlier
                    // sequence numbers can have been retransmitted since.
                    break;
                }
                continue;
            }
            let deadline = s.xmit_ts + wait;
            if deadline <= now {
                s.lost = true;
                self.lost += 1;
            } else {
                timeout = Some(timeout.map_or(deadline, |t| t.max(deadline)));
            }
        }
        timeout
    }

    /// Whether any segment is marked lost and not yet retransmitted.
    pub fn has_lost(&self) -> bool {
        self.lost > 0
    }

    /// The first segment marked lost and not retransmitted since.
    pub fn next_lost(&self) -> Option<u64> {
        if self.lost == 0 {
            return None;
        }
        self.segs.iter().find(|s| s.lost).map(|s| s.start)
    }

    /// Bytes in flight (RFC 6675 §4's pipe with RACK's loss marks): sent,
    /// not SACKed, not lost.
    pub fn pipe(&self) -> u64 {
        self.segs
            .iter()
            .filter(|s| !s.sacked && !s.lost)
            .map(|s| s.end - s.start)
            .sum()
    }

    /// Whether any outstanding segment is SACKed.
    pub fn any_sacked(&self) -> bool {
        self.segs_sacked > 0
    }

    /// The start of the highest segment sent (what a probe retransmits).
    pub fn last_start(&self) -> Option<u64> {
        self.segs.back().map(|s| s.start)
    }

    /// A retransmission timeout (§6.3 with go-back-N): every outstanding
    /// segment will be sent again; forget SACK and loss marks and the probe.
    pub fn on_rto(&mut self) {
        for s in self.segs.iter_mut() {
            s.sacked = false;
            s.lost = false;
        }
        self.segs_sacked = 0;
        self.lost = 0;
        self.tlp = None;
    }

    /// RFC 8985 §7.4 with an ACK of `ack`: `advanced` when it moved snd_una
    /// or SACKed new data; `dsack`, its D-SACK block.
    pub fn probe_acked(
        &mut self,
        ack: u64,
        advanced: bool,
        dsack: Option<(u64, u64)>,
    ) -> ProbeOutcome {
        let Some((end, is_retrans)) = self.tlp else {
            return ProbeOutcome::Pending;
        };
        let dsack_probe = dsack.is_some_and(|(l, r)| l < end && end <= r);
        if ack < end {
            return ProbeOutcome::Pending;
        }
        if !is_retrans || dsack_probe || (ack == end && !advanced) {
            // New data, or both the original and the probe arrived.
            self.tlp = None;
        } else if ack > end {
            self.tlp = None;
            return ProbeOutcome::RepairedLoss;
        }
        ProbeOutcome::Pending
    }
}

/// RFC 8985 §6.2 `RACK_sent_after`: whether (t1, seq1) was sent after
/// (t2, seq2), ties broken by sequence.
fn sent_after(t1: Time, seq1: u64, t2: Time, seq2: u64) -> bool {
    t1 > t2 || (t1 == t2 && seq1 > seq2)
}
