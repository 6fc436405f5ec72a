//! Proportional Rate Reduction (RFC 6937), the fast recovery of Linux
//! (`tcp_init_cwnd_reduction` / `tcp_cwnd_reduction`, net/ipv4/tcp_input.c)
//! and of ns-3 since 3.32 (`TcpPrrRecovery`, ns-3.48
//! src/internet/model/tcp-prr-recovery.cc), beside the classic recovery of
//! RFC 6582 / RFC 6675 (`sender.rs`, `recovery.rs`).
//!
//! Over a recovery the sender sends `ssthresh / RecoverFS` of what the
//! receiver reports delivered while pipe is above ssthresh, and once pipe
//! has fallen to ssthresh grows back to it by slow start, each ACK allowing
//! at most what it delivered plus one segment when it moved snd_una
//! (PRR-SSRB, RFC 6937 §3.1; ns-3's "safe ACK", Linux's
//! `FLAG_SND_UNA_ADVANCED`). The ACK that starts the recovery always lets
//! the fast retransmit out. cwnd is set to pipe plus what may be sent.
//!
//! Readings: RecoverFS is RFC 6675's pipe when the recovery starts, as
//! ns-3.48 has it (`m_recoveryFlightSize = tcb->m_bytesInFlight`); Linux
//! takes the window before the cut (`prior_cwnd`), the same while the window
//! was full. Delivered data is what the ACK cumulatively acknowledged plus
//! what it newly SACKed (RFC 6937 §3 DeliveredData, Linux's
//! `newly_acked_sacked`); ns-3.48 adds one segment more per duplicate ACK,
//! which is not modelled. PRR runs with SACK only (`transport.recovery`
//! checks it), since pipe needs the scoreboard. Counts are in bytes, as
//! ns-3 keeps them; Linux counts segments (`tcp_cwnd_reduction` rounds the
//! proportional share up to a whole segment, letting one out half an ACK
//! earlier).

/// PRR's counters over one recovery, in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Prr {
    /// RecoverFS: pipe when the recovery started.
    recover_fs: u64,
    /// prr_delivered: bytes the receiver reported since.
    delivered: u64,
    /// prr_out: bytes sent since.
    out: u64,
}

impl Prr {
    /// A recovery starts with `pipe` bytes in the network.
    pub(super) fn new(pipe: u64) -> Prr {
        Prr {
            recover_fs: pipe.max(1),
            delivered: 0,
            out: 0,
        }
    }

    /// `bytes` more were sent (new data or retransmissions).
    pub(super) fn sent(&mut self, bytes: u64) {
        self.out += bytes;
    }

    /// An ACK in the recovery reported `delivered` bytes (acknowledged or
    /// newly SACKed) and left `pipe`; `advanced` when it moved snd_una.
    /// Returns the window: pipe plus what may be sent now (RFC 6937 §3).
    pub(super) fn on_ack(
        &mut self,
        delivered: u64,
        pipe: u64,
        ssthresh: f64,
        mss: u64,
        advanced: bool,
    ) -> f64 {
        self.delivered += delivered;
        let ssthresh = ssthresh.max(0.0) as u64;
        let sndcnt = if pipe > ssthresh {
            // Proportional: CEIL(prr_delivered · ssthresh / RecoverFS) − prr_out.
            let due = (self.delivered * ssthresh).div_ceil(self.recover_fs);
            due.saturating_sub(self.out)
        } else {
            // Slow start back to ssthresh, bounded by what was delivered (SSRB).
            let safe = if advanced { mss } else { 0 };
            let limit = self.delivered.saturating_sub(self.out).max(delivered) + safe;
            limit.min(ssthresh - pipe)
        };
        // The fast retransmit leaves on the ACK that starts the recovery.
        let sndcnt = if self.out == 0 {
            sndcnt.max(mss)
        } else {
            sndcnt
        };
        (pipe + sndcnt) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const M: u64 = 1000;

    /// RFC 6937 Appendix A's first example (RecoverFS 20 segments, one
    /// lost, ssthresh 10): while pipe stays above ssthresh, every other ACK
    /// lets one segment out, CEIL(delivered · 10/20) − out in bytes as
    /// ns-3.48 counts (a segment leaves once a whole one is due).
    #[test]
    fn proportional_part_sends_half_of_what_is_delivered() {
        let mut p = Prr::new(20 * M);
        let ss = 10.0 * M as f64;
        // The third duplicate ACK (one segment SACKed): the fast retransmit.
        let w = p.on_ack(M, 18 * M, ss, M, false);
        assert_eq!(w, 19.0 * M as f64, "pipe + the retransmission");
        p.sent(M);
        let mut sent = Vec::new();
        let mut pipe = 19 * M;
        for _ in 0..6 {
            pipe -= M;
            let w = p.on_ack(M, pipe, ss, M, false);
            let n = (w as u64 - pipe) / M;
            p.sent(n * M);
            pipe += n * M;
            sent.push(n);
        }
        // k·1000·10/20 − out bytes for k = 2..7 delivered: 0, 500, 1000,
        // 500, 1000, 500.
        assert_eq!(sent, vec![0, 0, 1, 0, 1, 0]);
    }

    /// Below ssthresh PRR-SSRB grows by what was delivered plus one
    /// segment on an ACK that moves snd_una, never past ssthresh
    /// (ns-3.48 `DoRecovery`: `min(limit, ssThresh − bytesInFlight)`).
    #[test]
    fn reduction_bound_below_ssthresh() {
        let mut p = Prr::new(20 * M);
        p.sent(M);
        // Pipe fell to 4 segments, ssthresh 10: 2 delivered + 1 (safe ACK).
        assert_eq!(
            p.on_ack(2 * M, 4 * M, 10.0 * M as f64, M, true),
            7.0 * M as f64
        );
        // Not safe (a duplicate ACK): max(prr_delivered − prr_out, what
        // this ACK delivered), 2 segments.
        let mut p = Prr::new(20 * M);
        p.sent(M);
        assert_eq!(
            p.on_ack(2 * M, 4 * M, 10.0 * M as f64, M, false),
            6.0 * M as f64
        );
        // Never beyond ssthresh.
        let mut p = Prr::new(20 * M);
        p.sent(M);
        assert_eq!(
            p.on_ack(10 * M, 8 * M, 10.0 * M as f64, M, true),
            10.0 * M as f64
        );
    }
}
