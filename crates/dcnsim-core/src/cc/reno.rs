//! TCP NewReno's window (RFC 5681 slow start and congestion avoidance, by
//! the rule of [`SlowStart`]); its loss reactions are the [`Controller`]
//! defaults.

use super::{Build, Controller, NoSettings, Window};
use serde::Deserialize;

/// `transport.slow_start`: what an ACK adds to the window, as each
/// simulator's reference code counts it.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum SlowStart {
    /// Appropriate byte counting (RFC 3465, limit L = 2 SMSS): slow start
    /// adds the bytes acknowledged, at most two segments per ACK; congestion
    /// avoidance adds SMSS·acked/cwnd (dcnsim's own rule).
    #[default]
    Bytes,
    /// One segment per ACK of new data in slow start, SMSS²/cwnd per ACK in
    /// congestion avoidance, whatever the ACK covers: ns-2.35
    /// `TcpAgent::opencwnd` (tcp/tcp.cc: `cwnd_ += 1`, else
    /// `increase_num_ / cwnd_`), ns-3 `TcpNewReno::SlowStart` /
    /// `CongestionAvoidance` (ns-3.48 src/internet/model/tcp-congestion-ops.cc;
    /// ns-3.23 `TcpNewReno::NewAck`, tcp-newreno.cc). With an ACK per two
    /// segments the window grows ×1.5 per round trip.
    Ack,
    /// The segments acknowledged, without RFC 3465's limit, up to ssthresh,
    /// the rest of the ACK going to congestion avoidance (SMSS·acked/cwnd):
    /// Linux `tcp_slow_start` and `tcp_cong_avoid_ai` (net/ipv4/tcp_cong.c).
    Segments,
}

#[derive(Clone, Debug)]
pub struct NewReno;

impl Build for NewReno {
    type Settings = NoSettings;

    fn new(_s: &NoSettings) -> NewReno {
        NewReno
    }
}

impl Controller for NewReno {}

/// Grow `w` for one ACK of `acked` new bytes, by `w.slow_start`'s rule;
/// `gain` scales congestion avoidance's one segment per round trip (1 for
/// Reno; L²DCT's k).
pub fn grow(w: &mut Window, acked: u64, gain: f64) {
    if acked == 0 {
        return;
    }
    let acked = acked as f64;
    match w.slow_start {
        SlowStart::Bytes if w.cwnd < w.ssthresh => w.cwnd += acked.min(2.0 * w.mss),
        SlowStart::Bytes => w.cwnd += gain * w.mss * acked / w.cwnd,
        SlowStart::Ack if w.cwnd < w.ssthresh => w.cwnd += w.mss,
        SlowStart::Ack => w.cwnd += gain * w.mss * w.mss / w.cwnd,
        SlowStart::Segments => {
            let mut rest = acked;
            if w.cwnd < w.ssthresh {
                let to = (w.cwnd + acked).min(w.ssthresh);
                rest -= to - w.cwnd;
                w.cwnd = to;
            }
            if rest > 0.0 {
                w.cwnd += gain * w.mss * rest / w.cwnd;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slow_start_doubles_and_avoidance_adds_one_segment_per_window() {
        let mss = 1000.0;
        let mut w = Window::new(2.0 * mss, 1e12, mss, SlowStart::Bytes);
        // One round trip: an ACK per segment of the window.
        for _ in 0..2 {
            grow(&mut w, 1000, 1.0);
        }
        assert_eq!(w.cwnd, 4.0 * mss);
        w.ssthresh = 0.0;
        let start = w.cwnd;
        for _ in 0..4 {
            grow(&mut w, 1000, 1.0);
        }
        // 4 ACKs of mss·mss/cwnd with cwnd growing: just under one segment.
        assert!(w.cwnd - start > 0.9 * mss && w.cwnd - start <= mss);
    }

    /// Five ACKs, each covering two segments, from cwnd 10 segments in slow
    /// start: RFC 3465 (L = 2) adds 10 segments, ns-2's and ns-3's one per
    /// ACK adds 5 (`cwnd_ += 1`; ns-3.48 `TcpNewReno::SlowStart`: one
    /// `m_segmentSize` while `segmentsAcked >= 1`), Linux's
    /// `tcp_slow_start` adds the 10 segments acknowledged.
    #[test]
    fn a_window_after_five_delayed_acks_by_each_rule() {
        let m = 1000.0;
        let after = |rule| {
            let mut w = Window::new(10.0 * m, f64::INFINITY, m, rule);
            for _ in 0..5 {
                grow(&mut w, 2000, 1.0);
            }
            w.cwnd / m
        };
        assert_eq!(after(SlowStart::Bytes), 20.0);
        assert_eq!(after(SlowStart::Ack), 15.0);
        assert_eq!(after(SlowStart::Segments), 20.0);
    }

    /// Past ssthresh: one ACK per window adds SMSS²/cwnd (ns-2
    /// `increase_num_ / cwnd_`, ns-3 `MSS²/cWnd`) whatever it covers; Linux
    /// stops slow start at ssthresh and gives the rest to congestion
    /// avoidance (`tcp_slow_start` returns it to `tcp_cong_avoid_ai`).
    #[test]
    fn avoidance_per_ack_and_the_slow_start_remainder() {
        let m = 1000.0;
        let mut w = Window::new(10.0 * m, 10.0 * m, m, SlowStart::Ack);
        grow(&mut w, 2000, 1.0);
        assert_eq!(w.cwnd, 10.0 * m + m / 10.0);
        let mut w = Window::new(9.0 * m, 10.0 * m, m, SlowStart::Segments);
        grow(&mut w, 3000, 1.0);
        assert_eq!(w.cwnd, 10.0 * m + 2.0 * m * m / (10.0 * m));
        // No new data acknowledged (a SYN-ACK, a FIN): no growth.
        grow(&mut w, 0, 1.0);
        assert_eq!(w.cwnd, 10.0 * m + 200.0);
    }
}
