//! TCP NewReno's window (RFC 5681 slow start and congestion avoidance, both
//! counting acknowledged bytes, RFC 3465 with limit L = 2 SMSS); its loss
//! reactions are the [`Controller`] defaults.

use super::{Build, Controller, NoSettings, Window};

#[derive(Clone, Debug)]
pub struct NewReno;

impl Build for NewReno {
    type Settings = NoSettings;

    fn new(_s: &NoSettings) -> NewReno {
        NewReno
    }
}

impl Controller for NewReno {}

/// Grow `w` for `acked` bytes; `gain` scales congestion avoidance's one
/// segment per round trip (1 for Reno; L²DCT's k).
pub fn grow(w: &mut Window, acked: u64, gain: f64) {
    let acked = acked as f64;
    if w.cwnd < w.ssthresh {
        w.cwnd += acked.min(2.0 * w.mss);
    } else {
        w.cwnd += gain * w.mss * acked / w.cwnd;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slow_start_doubles_and_avoidance_adds_one_segment_per_window() {
        let mss = 1000.0;
        let mut w = Window {
            cwnd: 2.0 * mss,
            ssthresh: 1e12,
            mss,
        };
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
}
