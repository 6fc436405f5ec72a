//! ns-2.35's SACK recovery pipe (`transport.sack_pipe = "ns2"`), the one of
//! `Agent/TCP/FullTcp/Sack` (`SackFullTcpAgent`, tcp/tcp-full.cc), beside
//! RFC 6675's SetPipe (`recovery.rs`).
//!
//! ns-2 does not recompute the pipe from the scoreboard: it sets it once,
//! when the third duplicate ACK starts the recovery, to the outstanding
//! bytes less the SACKed ones — segments that are lost included
//! (`dupack_action`, line 2861: `pipe_ = maxseq_ − highest_ack_ −
//! sq_.total()`) — and then counts: every byte `send_much` sends, new or
//! retransmitted, adds (`sent`, tcp/tcp-full.h line 201: `pipe_ += amt`),
//! every later duplicate ACK takes one segment off (`recv`, line 2153: `if
//! (fastrecov_ && (datalen == 0 || ackno > highest_ack_)) pipe_ -=
//! maxseg_`), and a partial ACK takes off two, that line's and
//! `pack_action`'s (line 2926). The fast retransmit itself is not counted:
//! `dupack_action` sends it by `fast_retransmit`, which calls `foutput`
//! directly, not through `send_much` and `sent` (lines 1414–1422, 2906), so
//! the sender (`Conn::fast_retransmit`) leaves it out.
//! A segment may go out while the pipe is below the window in whole
//! segments (`send_allowed`, line 3048: `pipe_ < int(cwnd_) * maxseg_`).
//!
//! So a lost segment stays in ns-2's pipe until a partial ACK covers it:
//! after many losses in one window the sender retransmits the first, sends
//! nothing more and waits for the timeout, where RFC 6675's pipe, leaving
//! out what IsLost marks, lets it retransmit every hole.
//!
//! The pipe lives from the recovery's start to its end (the ACK of
//! `recover`) or a timeout. ns-2 leaves `pipectrl_` set across a timeout
//! until the next new ACK (`timeout_action` clears `fastrecov_` only);
//! with cwnd at one segment and the pipe at least the segments still lost,
//! that sends what a one-segment window sends, so dcnsim ends it there.

/// ns-2's pipe over one SACK recovery, in bytes; a signed count as ns-2's
/// `int pipe_`, which a run of duplicate ACKs may take below zero.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Ns2Pipe(i64);

impl Ns2Pipe {
    /// A recovery starts with `outstanding` bytes sent and not
    /// cumulatively acknowledged, `sacked` of them SACKed.
    pub(super) fn new(outstanding: u64, sacked: u64) -> Ns2Pipe {
        Ns2Pipe(outstanding as i64 - sacked as i64)
    }

    /// `bytes` more were sent (new data or a retransmission).
    pub(super) fn sent(&mut self, bytes: u64) {
        self.0 += bytes as i64;
    }

    /// An ACK arrived in the recovery: a duplicate takes one segment of
    /// `mss` off, a partial ACK two.
    pub(super) fn acked(&mut self, partial: bool, mss: u32) {
        let segments = if partial { 2 } else { 1 };
        self.0 -= segments * i64::from(mss);
    }

    /// Whether a segment may go out under a congestion window of `cwnd`
    /// bytes: the pipe below the window counted in whole segments.
    pub(super) fn allows(&self, cwnd: f64, mss: u32) -> bool {
        let mss = i64::from(mss);
        self.0 < (cwnd / mss as f64).floor() as i64 * mss
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u32 = 536;

    /// ns-2's arithmetic on a window of 20 segments of which 10 are lost
    /// (segments 1–10) and 9 SACKed (11–19, the third duplicate ACK
    /// reporting 11–13): at the third duplicate ACK the pipe is the 20
    /// outstanding less the 3 SACKed, 17 (the fast retransmit of segment 1
    /// is not counted), and after the halving to 10 segments nothing may go
    /// out, since the 10 lost segments stay counted. RFC 6675 leaves them
    /// out: its pipe is 7 + 1.
    #[test]
    fn lost_segments_stay_in_the_pipe_until_acknowledged() {
        let seg = u64::from(MSS);
        let cwnd = 10.0 * f64::from(MSS);
        let mut pipe = Ns2Pipe::new(20 * seg, 3 * seg);
        assert_eq!(pipe, Ns2Pipe(17 * 536));
        assert!(!pipe.allows(cwnd, MSS), "17 segments against 10");
        // Six more duplicate ACKs (segments 14-19 arrive): 11 left.
        for _ in 0..6 {
            pipe.acked(false, MSS);
        }
        assert_eq!(pipe, Ns2Pipe(11 * 536));
        assert!(!pipe.allows(cwnd, MSS));
        // The retransmission of 1 arrives: a partial ACK takes off two, and
        // a hole may go out; sending it brings the pipe back to the window.
        pipe.acked(true, MSS);
        assert_eq!(pipe, Ns2Pipe(9 * 536));
        assert!(pipe.allows(cwnd, MSS));
        pipe.sent(seg);
        assert!(!pipe.allows(cwnd, MSS), "pipe_ < cwin is strict");
    }

    /// The window counts whole segments (`int(cwnd_)`): 2.9 segments of
    /// cwnd allow a pipe of up to 2 segments less one byte.
    #[test]
    fn the_window_is_whole_segments_and_the_pipe_may_go_negative() {
        let cwnd = 2.9 * f64::from(MSS);
        assert!(Ns2Pipe(2 * 536 - 1).allows(cwnd, MSS));
        assert!(!Ns2Pipe(2 * 536).allows(cwnd, MSS));
        let mut pipe = Ns2Pipe::new(536, 0);
        for _ in 0..3 {
            pipe.acked(false, MSS);
        }
        assert_eq!(pipe, Ns2Pipe(-2 * 536));
        assert!(pipe.allows(0.5 * f64::from(MSS), MSS), "-2 segments < 0");
    }
}
