//! ns-2.35's choice of the hole a SACK sender retransmits
//! (`transport.sack_holes = "ns2"`), the one of `Agent/TCP/FullTcp/Sack`
//! (`SackFullTcpAgent::nxt_tseq`, tcp/tcp-full.cc lines 3059–3114), beside
//! RFC 6675's NextSeg (`recovery.rs`).
//!
//! ns-2 keeps a hole-fill pointer `h_seqno_` and a scoreboard `sq_` of the
//! SACKed ranges (a `ReassemblyQueue`, tcp/rq.cc). While the cumulative ACK
//! is below `recover_` (`in_recovery = highest_ack_ < recover_`, line 3062),
//! `nxt_tseq` asks `sq_.nexthole(h_seqno_)` for the first unSACKed byte at
//! or above the pointer (tcp/rq.cc lines 614–640; inside a SACKed range, its
//! end) and the number of SACKed ranges above it, `fcnt`. With ns-2's
//! defaults, `sack_rtx_threshmode_` 1 and `sack_rtx_cthresh_` 1
//! (tcl/lib/ns-default.tcl lines 1270–1272), the hole is sent when `fcnt
//! ≥ 1` (line 3090), else new data from `t_seqno_`: so any unSACKed byte
//! below the highest SACKed range's left edge is a hole to fill, where
//! RFC 6675's IsLost wants more than (DupThresh − 1) segments SACKed above
//! it. The pointer moves to the hole sent (line 3101) and past what is sent
//! from it (`sent`, tcp/tcp-full.h line 301), is set past the fast
//! retransmit (`dupack_action`, line 2909) and raised to the cumulative
//! ACK (`pack_action`, `ack_action`, lines 2927, 2947): as RFC 6675's
//! HighRxt.
//!
//! Three consequences this key carries, each from the same code:
//! - the hole rule: [`fill_bound`];
//! - a recovery starts only at the third duplicate ACK (`FullTcpAgent::
//!   recv`, line 2187: `++dupacks_ == tcprexmtthresh_`), not when SACKs
//!   alone show the first segment lost (RFC 6675 §5);
//! - after a timeout `recover_` is the highest sequence sent
//!   (`FullTcpAgent::timeout_action`, line 2593), so until the ACK reaches
//!   it `nxt_tseq` still fills holes first, from a pointer the timeout does
//!   not reset, under the plain window (`FullTcpAgent::send_allowed`, lines
//!   1269–1276: the segment starts below the ACK plus the window), before it
//!   goes back to `t_seqno_`, the go-back-N point. The scoreboard itself is
//!   cleared by the timeout (`clear_on_timeout_` true, line 2984) and filled
//!   again by the ACKs that follow.
//!
//! Other `sack_rtx_threshmode_` values (byte thresholds, both, either) and
//! `sack_rtx_cthresh_` above 1 are not modelled: ns-2 ships none of them on.

/// The end of the range whose unSACKed bytes ns-2 retransmits as holes: the
/// left edge of the highest SACKed range (`sack_rtx_cthresh_` 1: one range
/// above the hole), or `snd_una` (none) when nothing is SACKed. `sacked` is
/// sorted and disjoint, as the scoreboard in `Conn`.
pub(super) fn fill_bound(sacked: &[(u64, u64)], snd_una: u64) -> u64 {
    sacked.last().map_or(snd_una, |&(start, _)| start)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// tcp/rq.cc's `nexthole` with `sack_rtx_cthresh_` 1 on a scoreboard of
    /// [3, 5) and [8, 9) (1-byte segments): from 1, the hole 1 has two
    /// ranges above it; from 3, the end of [3, 5), 5, has one; from 8, the
    /// end 9 has none and new data goes out. So the holes to fill are the
    /// unSACKed bytes below 8 (1, 2, 5, 6, 7). RFC 6675's IsLost
    /// (DupThresh 3) wants more than 2 SACKed above: only below 3 (1, 2).
    #[test]
    fn holes_below_the_highest_sacked_range_qualify() {
        assert_eq!(fill_bound(&[(3, 5), (8, 9)], 1), 8);
        assert_eq!(fill_bound(&[(8, 9)], 1), 8, "one range above is enough");
        assert_eq!(fill_bound(&[], 1), 1, "nothing SACKed: no hole");
    }
}
