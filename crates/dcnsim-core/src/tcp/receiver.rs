//! The receiver: cumulative ACKs, out-of-order ranges, delayed ACKs
//! (RFC 5681 §4.2), SACK and D-SACK blocks (RFC 2018 §4, RFC 2883 §4) and
//! the ECN echo (RFC 3168; DCTCP's two-state rule, RFC 8257 §3.2) and the
//! in-band option's echo.
//!
//! **The option's echo.** When the flow's controller asks for the in-band
//! option, every segment of the flow carries it, each way, with the
//! controller's value; switches may rewrite it on the way (BOTCP's stamp).
//! The receiver echoes what arrives in `TcpHeader::echo` of its ACKs (the
//! option's fourth octet in BOTCP, seed §4.1; kept apart from the option
//! itself, which switches on the reverse path stamp in turn): **the largest
//! value that arrived since its last ACK**, or, when none did, the last one
//! it echoed. With an ACK per segment this is BOTCP's per-packet echo; with
//! delayed ACKs (one ACK for two segments) the larger of the two, so the
//! worst congestion either saw reaches the sender rather than whichever
//! came last (the seed echoes per packet and does not say).

use super::recovery::insert_range;
use super::{Arrival, Conn, Seg, ACK, CWR, ECE, FIN, SYN};
use crate::packet::Sack;
use crate::units::Time;

impl Conn {
    /// A segment reaches the receiver (`dst`). Returns true when this segment
    /// completed the data (the flow's completion time).
    pub fn on_receiver_arrival(&mut self, now: Time, a: &Arrival, out: &mut Vec<Seg>) -> bool {
        let seg = a.seg;
        if let Some(value) = a.option {
            self.echo = if self.echo_fresh {
                self.echo.max(Some(value))
            } else {
                Some(value)
            };
            self.echo_fresh = true;
        }
        if seg.hdr.flags & SYN != 0 {
            self.rcv_nxt = self.rcv_nxt.max(1);
            self.last_ack_sent = self.rcv_nxt;
            self.ts_recent = a.sent;
            let ecn_setup = if self.p.flags.ecn_capable { ECE } else { 0 };
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
        if self.p.flags.precise_echo {
            if a.ce != self.ece && self.unacked_segments > 0 {
                // DCTCP: acknowledge what came before with the old CE state.
                self.send_ack(0, out);
            }
            self.ece = a.ce;
        } else if self.p.flags.ecn_capable {
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
            || !self.p.t.delayed_ack
            || self.stats.data_packets_received <= u64::from(self.p.t.quick_acks);
        if self.p.t.dsack && seg.payload > 0 {
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
            self.delack_at = Some(now + self.p.t.delayed_ack_timeout);
        }
        completed
    }

    pub(super) fn send_ack(&mut self, extra: u8, out: &mut Vec<Seg>) {
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
    pub(super) fn sack_blocks(&self) -> Sack {
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

    /// A segment of a flow with the in-band option leaves: it carries the
    /// controller's value, and one of the receiver's carries the echo.
    pub(super) fn carry_option(&mut self, seg: &mut Seg) {
        seg.option = self.p.flags.inband_option;
        if !seg.to_receiver {
            seg.hdr.echo = self.echo;
            self.echo_fresh = false;
        }
    }
}
