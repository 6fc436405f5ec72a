//! BOTCP's sender (Ahmed and Arshad, "Buffer Occupancy-Based Transport to
//! Reduce Flow Completion Time of Short Flows in Data Center Networks",
//! Symmetry 2019; seed `botcp.txt`): BOCC, the buffer-occupancy-based
//! congestion control of §4.2, driven by BOF, the largest buffer occupancy
//! on the forward path (§4.1), which every segment carries in the 4-byte IP
//! option (type 226, [`crate::packet::OPTION_TYPE`]), which the
//! `max_occupancy` port stage stamps (`stage/max_occupancy.rs`: the queue in
//! 1500-byte packets, at most 255) and which the receiver echoes in the option's fourth
//! octet (`tcp/receiver.rs`). The echo of each ACK is `Bcr`
//! ([`Controller::on_feedback`]); the window moves only there.
//!
//! **Procedure 1** (CONGESTION_WINDOW, seed lines 1–13): with `cw` the
//! window in segments and `ft` the flow type (short until more than `X`
//! bytes were sent, §4.3),
//! ```text
//!  1 IF cw ≥ 1
//!  2-6   short: Bcr ≤ Bs → INCREASE(Bs)  else DECREASE(Bs, Bm)
//!  7-11  long:  Bcr ≤ Bl → INCREASE(Bl)  else DECREASE(Bl, Bs)
//! 12 ELSE SUB_MSS()
//! ```
//! **Procedure 2** INCREASE(B) (cases l1, s1):
//! `1-2` 2·Bcr ≤ B → cw ← cw + 1; `3-4` else cw ← cw + (B − Bcr)/Bcr.
//!
//! **Procedure 3** DECREASE(B1, B2) (cases l2, l3, l4, s2, s3):
//! `1-2` B1 < Bcr ≤ B2 → cw ← max(cw − (Bcr − B1)/Bcr, 1);
//! `4-6` else, long, Bs < Bcr ≤ Bm → cw ← max(cw − 0.5, 1) (l3);
//! `7-8` else, long → cw ← cw − 0.5 (l4, Bcr > Bm);
//! `9-10` short → cw ← cw − 0.5 (s3, Bcr > Bm).
//!
//! **Procedure 4** SUB_MSS (cw < 1; cases l5–l7, s4–s6, the same for both
//! types):
//! `1-3` Bcr ≤ Bs and 2·Bcr ≤ Bs → cw ← 2·cw (l6/s5);
//! `4-5` Bcr ≤ Bs, 2·Bcr > Bs → cw ← min(2·cw, 1) (l6/s5);
//! `7-8` Bs < Bcr ≤ Bm → cw ← min(cw·(1 + (Bm − Bcr)/Bcr), 1) (l7/s6);
//! `9-10` Bcr > Bm → cw ← cw·(1 − (Bcr − Bm)/Bcr) (l5/s4).
//!
//! **Readings** where the seed is ambiguous:
//! - *cw's unit.* The procedures compare cw with 1 and add 1 or 0.5: cw is in
//!   segments (MSS), as Di is defined in §3.2 ("represented in units of
//!   MSS"). The window the TCP machine fills is cw·MSS bytes.
//! - *Per ACK, unscaled.* §4.2 runs the procedures "with each received
//!   acknowledgement" and §5.2 states their effect per RTT as
//!   `cw × (1 + (Bs − Bcr)/Bcr)`: with cw ACKs per RTT, adding
//!   (Bs − Bcr)/Bcr per ACK *unscaled* gives exactly that, +1 per ACK doubles
//!   per RTT ("gets double in almost every RTT", §5.2) and −0.5 per ACK
//!   halves per RTT (cases l3, l4: "halved"). So each ACK (duplicates
//!   included: they carry an echo too) applies one step, not scaled by the
//!   window. With delayed ACKs a step covers two segments; the seed's
//!   evaluation has an ACK per segment.
//! - *Bcr = 0.* Every division sits on a branch where Bcr exceeds a
//!   threshold ≥ 0 (Procedure 2 line 4 needs 2·Bcr > B ≥ 0), so `(B −
//!   Bcr)/Bcr` is never evaluated at Bcr = 0: an empty queue takes
//!   Procedure 2 line 2 (cw + 1) or Procedure 4 line 3 (2·cw).
//! - *Real division.* `(B − Bcr)/Bcr` of integer occupancies is taken as a
//!   real quotient (the lemmas of §3.2 are real arithmetic), not C's integer
//!   division.
//! - *Case l6's cap.* The text of case l6/s5 and §4.2's prose cap the
//!   doubled window at 1 MSS; Procedure 4 line 3 does not (line 5 does).
//!   The procedure is followed: with 2·Bcr ≤ Bs the window doubles uncapped
//!   (at most to < 2 segments, where Procedure 2 would add 1 on the next ACK
//!   anyway).
//! - *Bcr's unit:* packets of 1500 B, as §5.3's arithmetic has it ("60 ×
//!   1500/1024 ≅ 89 Kb", a burst tolerance of 87 − 60 = 27 packets), not the
//!   KiB a 10-bit shift would give (`stage/max_occupancy.rs`); Bl, Bs, Bm
//!   are compared with it as they are.
//! - *X.* §4.3 suggests X = 50 KB, §5's evaluation sets 10 KB: the default
//!   is 10 KB; "exceeds" is strict (bytes sent > X).
//! - *Below one segment* (§3.2's extreme flow load): with cw < 1 one full
//!   segment leaves when nothing is in flight, and the next waits for
//!   RTT/cw of payload: the pacing rate is cw·MSS per smoothed RTT
//!   ([`Controller::pacing_rate`]), applied by the TCP machine to the
//!   segment's wire bytes (payload and headers, so the gap is RTT/cw times
//!   (MSS + headers)/MSS, 3 % longer at 1456 + 40 B). Di is "the amount of
//!   data the flow is allowed to send in one RTT" *now*: when an ACK changes
//!   cw, the wait since the last segment's start follows the new cw
//!   (`tcp/sender.rs`, `repace`), rather than the cw the segment left with.
//!   No pacing at cw ≥ 1 (the seed's windows are ACK-clocked) or before an
//!   RTT sample.
//! - *The window in use.* Lemma 1 (§3.2) reads Di as the data the flow
//!   sends in one RTT ("buffer occupancy with Di amount of data sent =
//!   Bcr"), and Procedure 2 raises it to bring Bcr to B. A sender that does
//!   not fill its window (held by its own NIC, `transport.host_queue_limit`,
//!   or by its data) sends no more when the window rises, and Bcr then says
//!   nothing of it: on a path whose queues stay empty (a flow alone behind its
//!   own 10 Gbps NIC) Procedure 2 would add a segment per ACK without end
//!   (2,000 segments for a 10 MB flow in 3 ms, issue 46's trace), and when
//!   competitors arrive Procedure 3's −0.5 per ACK, which halves a window per
//!   RTT only when the window is what is in flight, takes milliseconds to
//!   bite while the port overflows and every newcomer is pushed below one
//!   segment. So an increase applies only while the sender fills its window
//!   (outstanding data within two segments of it, or a window below one
//!   segment: RFC 7661 §4.1's test in its simplest form); decreases always
//!   apply.
//! - *Losses,* which the seed does not treat: TCP's reactions (fast
//!   retransmit and NewReno recovery as the machine runs them; on a
//!   timeout, RFC 5681's ssthresh) except that a timeout never raises a
//!   window below one segment (cw ← min(cw, 1)).
//! - *Initial window:* 1 MSS (§3.2: "The initial sending rate of both types
//!   of flows is 1 MSS"), whatever `transport.init_cwnd` says.

use super::{Build, Controller, Flags, FlowState, Need, Window};
use crate::packet::{BOF_MAX, BOF_UNIT};
use crate::units::{Bytes, Time};
use crate::workload::check_bytes;
use serde::Deserialize;

/// `[transport.botcp]`: the seed's constants (§3.2, §4.3; values of §5).
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct BotcpSpec {
    /// Bl: the occupancy long flows steer the bottleneck to (BOF units).
    pub bl: u32,
    /// Bs: the occupancy short flows steer it to.
    pub bs: u32,
    /// Bm: the largest occupancy allowed (extreme flow load is held here).
    pub bm: u32,
    /// X: a flow turns long once it has sent more than this.
    pub x: Bytes,
}

impl Default for BotcpSpec {
    fn default() -> Self {
        BotcpSpec {
            bl: 20,
            bs: 40,
            bm: 60,
            x: Bytes(10_000),
        }
    }
}

/// The BOCC window of one sender.
#[derive(Clone, Debug)]
pub struct Botcp {
    bl: f64,
    bs: f64,
    bm: f64,
    x: u64,
}

impl Botcp {
    /// Procedure 1: the window (in segments) after an ACK echoing `bcr`, for
    /// a long flow or a short one.
    pub fn step(&self, cw: f64, bcr: f64, long: bool) -> f64 {
        if cw >= 1.0 {
            match (long, bcr) {
                (false, b) if b <= self.bs => self.increase(cw, bcr, self.bs),
                (false, _) => self.decrease(cw, bcr, self.bs, self.bm, long),
                (true, b) if b <= self.bl => self.increase(cw, bcr, self.bl),
                (true, _) => self.decrease(cw, bcr, self.bl, self.bs, long),
            }
        } else {
            self.sub_mss(cw, bcr)
        }
    }

    /// Procedure 2, INCREASE_CONGESTION_WINDOW(B).
    fn increase(&self, cw: f64, bcr: f64, b: f64) -> f64 {
        if bcr * 2.0 <= b {
            cw + 1.0
        } else {
            cw + (b - bcr) / bcr
        }
    }

    /// Procedure 3, DECREASE_CONGESTION_WINDOW(B1, B2).
    fn decrease(&self, cw: f64, bcr: f64, b1: f64, b2: f64, long: bool) -> f64 {
        if bcr > b1 && bcr <= b2 {
            (cw - (bcr - b1) / bcr).max(1.0)
        } else if long && bcr > self.bs && bcr <= self.bm {
            (cw - 0.5).max(1.0)
        } else {
            cw - 0.5
        }
    }

    /// Procedure 4, SUB_MSS_CONGESTION_WINDOW.
    fn sub_mss(&self, cw: f64, bcr: f64) -> f64 {
        if bcr <= self.bs {
            if bcr * 2.0 <= self.bs {
                cw * 2.0
            } else {
                (cw * 2.0).min(1.0)
            }
        } else if bcr <= self.bm {
            (cw * (1.0 + (self.bm - bcr) / bcr)).min(1.0)
        } else {
            cw * (1.0 - (bcr - self.bm) / bcr)
        }
    }
}

impl Build for Botcp {
    type Settings = BotcpSpec;
    /// BOF: every segment leaves with the field at 0 for the switches to
    /// raise.
    const FLAGS: Flags = Flags {
        inband_option: Some(0),
        ..Flags::NEWRENO
    };

    fn new(s: &BotcpSpec) -> Botcp {
        Botcp {
            bl: f64::from(s.bl),
            bs: f64::from(s.bs),
            bm: f64::from(s.bm),
            x: s.x.0,
        }
    }

    /// The seed's order Bl < Bs < Bm (§3.2), Bm within the BOF octet; the
    /// port buffer is checked with the network ([`Build::needs`]).
    fn check(s: &BotcpSpec) -> Result<(), (&'static str, String)> {
        if s.bl >= s.bs {
            return Err(("bl", format!("must be below bs ({}), got {}", s.bs, s.bl)));
        }
        if s.bs >= s.bm {
            return Err(("bs", format!("must be below bm ({}), got {}", s.bm, s.bs)));
        }
        if s.bm > BOF_MAX {
            return Err((
                "bm",
                format!(
                    "must be at most {BOF_MAX} (the BOF octet's largest value), got {}",
                    s.bm
                ),
            ));
        }
        // X is a flow size: one beyond the largest a flow may have would
        // leave every flow short.
        check_bytes(String::new(), s.x).map_err(|e| ("x", e.reason))?;
        Ok(())
    }

    /// The `max_occupancy` stamp on every switch egress port, and Bm below
    /// the switch ports' buffer Cb in BOF units (§3.2: Bl < Bs < Bm < Cb):
    /// a buffer of at least Bm + 1 whole units.
    fn needs(s: &BotcpSpec) -> Vec<Need> {
        vec![
            Need::SwitchStage {
                kind: "max_occupancy",
                why: "without it every echo is 0 and the window grows without bound",
            },
            Need::Buffer {
                bytes: (u64::from(s.bm) + 1) * BOF_UNIT,
                key: "bm",
                why: format!(
                    "must be below the switch ports' buffer in BOF units of {BOF_UNIT} B, got {}",
                    s.bm
                ),
            },
        ]
    }
}

/// Whether the sender fills its window: after an ACK (one per segment) a
/// window-limited sender has at most a segment less than its window
/// outstanding; one more segment of slack covers a window's fraction, which
/// never sends. Below one segment the window is the pacing and always in use.
fn fills(w: &Window, in_flight: u64) -> bool {
    w.cwnd < w.mss || in_flight as f64 + 2.0 * w.mss >= w.cwnd
}

impl Controller for Botcp {
    fn initial_window(&self, _init_cwnd: u32, mss: f64) -> f64 {
        mss
    }

    /// The window moves on the echo only ([`Controller::on_feedback`]).
    fn on_ack(&mut self, _w: &mut Window, _acked: u64, _f: &FlowState) {}

    fn on_timeout(&mut self, w: &mut Window, flight: u64) {
        w.ssthresh = (flight as f64 / 2.0).max(2.0 * w.mss);
        w.cwnd = w.cwnd.min(w.mss);
    }

    /// The window itself: below one segment the sender still sends one
    /// segment when nothing is in flight, paced.
    fn send_floor(&self, _w: &Window) -> f64 {
        0.0
    }

    /// Below one segment: cw·MSS bytes per smoothed RTT.
    fn pacing_rate(&self, w: &Window, srtt: Option<Time>) -> Option<f64> {
        let srtt = srtt.filter(|s| *s > Time::ZERO)?.as_secs_f64();
        (w.cwnd < w.mss).then(|| w.cwnd / srtt)
    }

    /// Procedure 1 on the echo, but a window the sender does not fill is
    /// not raised (the *window in use* reading in the module's doc).
    fn on_feedback(&mut self, w: &mut Window, value: u32, f: &FlowState) {
        let long = f.bytes_sent > self.x;
        let cw = self.step(w.cwnd / w.mss, f64::from(value), long) * w.mss;
        if cw <= w.cwnd || fills(w, f.in_flight) {
            w.cwnd = cw;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::SlowStart;

    fn bocc() -> Botcp {
        Botcp::new(&BotcpSpec::default())
    }

    const LONG: bool = true;
    const SHORT: bool = false;

    fn close(got: f64, want: f64) {
        assert!((got - want).abs() < 1e-12, "got {got}, want {want}");
    }

    // Bl, Bs, Bm = 20, 40, 60 throughout; windows worked out by hand.

    #[test]
    fn l1_long_below_bl_grows_to_bring_bcr_to_bl() {
        let b = bocc();
        close(b.step(4.0, 10.0, LONG), 5.0); // 2·10 ≤ 20: +1
        close(b.step(4.0, 0.0, LONG), 5.0); // empty queue: +1, no division
        close(b.step(4.0, 16.0, LONG), 4.25); // + (20 − 16)/16
        close(b.step(1.0, 20.0, LONG), 1.0); // Bcr = Bl: + 0
    }

    #[test]
    fn l2_long_between_bl_and_bs_shrinks_to_bring_bcr_to_bl_not_below_one() {
        let b = bocc();
        close(b.step(4.0, 25.0, LONG), 3.8); // − (25 − 20)/25
        close(b.step(4.0, 40.0, LONG), 3.5); // − 20/40
        close(b.step(1.2, 40.0, LONG), 1.0); // 0.7 → 1
        close(b.step(1.0, 30.0, LONG), 1.0); // kept at 1
    }

    #[test]
    fn l3_long_between_bs_and_bm_halves_per_rtt_not_below_one() {
        let b = bocc();
        close(b.step(4.0, 50.0, LONG), 3.5);
        close(b.step(1.3, 60.0, LONG), 1.0);
        close(b.step(1.0, 41.0, LONG), 1.0);
        // A window of 4 takes 4 ACKs per RTT: 4 → 2 (halved).
        let cw = (0..4).fold(4.0, |cw, _| b.step(cw, 50.0, LONG));
        close(cw, 2.0);
    }

    #[test]
    fn l4_long_above_bm_halves_per_rtt_even_below_one() {
        let b = bocc();
        close(b.step(4.0, 61.0, LONG), 3.5);
        close(b.step(1.0, 80.0, LONG), 0.5);
        close(b.step(1.4, 255.0, LONG), 0.9);
    }

    #[test]
    fn l5_s4_below_one_above_bm_shrink_to_bring_bcr_to_bm() {
        let b = bocc();
        for ft in [LONG, SHORT] {
            close(b.step(0.5, 80.0, ft), 0.375); // · (1 − 20/80)
            close(b.step(0.9, 120.0, ft), 0.45); // · 60/120
        }
    }

    #[test]
    fn l6_s5_below_one_at_or_below_bs_double() {
        let b = bocc();
        for ft in [LONG, SHORT] {
            close(b.step(0.3, 10.0, ft), 0.6); // 2·10 ≤ 40: line 3
            close(b.step(0.7, 20.0, ft), 1.4); // line 3 is not capped
            close(b.step(0.7, 30.0, ft), 1.0); // line 5: min(1.4, 1)
            close(b.step(0.3, 40.0, ft), 0.6); // line 5
        }
    }

    #[test]
    fn l7_s6_below_one_between_bs_and_bm_grow_to_bring_bcr_to_bm_capped_at_one() {
        let b = bocc();
        for ft in [LONG, SHORT] {
            close(b.step(0.4, 50.0, ft), 0.48); // · (1 + 10/50)
            close(b.step(0.5, 60.0, ft), 0.5); // Bcr = Bm: kept
            close(b.step(0.9, 45.0, ft), 1.0); // 1.2 → 1
        }
    }

    #[test]
    fn s1_short_at_or_below_bs_grows_to_bring_bcr_to_bs() {
        let b = bocc();
        close(b.step(2.0, 20.0, SHORT), 3.0); // 2·20 ≤ 40: +1
        close(b.step(2.0, 25.0, SHORT), 2.6); // + 15/25
        close(b.step(2.0, 40.0, SHORT), 2.0);
        // A window of 2 takes 2 ACKs per RTT: with Bcr ≤ Bs/2 it doubles.
        close((0..2).fold(2.0, |cw, _| b.step(cw, 10.0, SHORT)), 4.0);
        // The key scenario (§3.3, §4.2): at Bl < Bcr ≤ Bs short flows grow
        // while long ones shrink.
        assert!(b.step(3.0, 30.0, SHORT) > 3.0 && b.step(3.0, 30.0, LONG) < 3.0);
    }

    #[test]
    fn s2_short_between_bs_and_bm_shrinks_to_bring_bcr_to_bs_not_below_one() {
        let b = bocc();
        close(b.step(4.0, 50.0, SHORT), 3.8); // − 10/50
        close(b.step(4.0, 60.0, SHORT), 4.0 - 20.0 / 60.0);
        close(b.step(1.1, 60.0, SHORT), 1.0);
        close(b.step(1.0, 45.0, SHORT), 1.0);
    }

    #[test]
    fn s3_short_above_bm_halves_per_rtt_even_below_one() {
        let b = bocc();
        close(b.step(4.0, 61.0, SHORT), 3.5);
        close(b.step(1.0, 200.0, SHORT), 0.5);
    }

    #[test]
    fn a_flow_turns_long_after_x_bytes_and_the_window_is_in_segments() {
        let mut b = bocc();
        let mss = 1000.0;
        let mut w = Window::new(
            b.initial_window(10, mss),
            f64::INFINITY,
            mss,
            SlowStart::Bytes,
        );
        assert_eq!(w.cwnd, mss, "initial window: 1 MSS");
        let sent = |bytes_sent| FlowState {
            now: Time::ZERO,
            bytes_sent,
            remaining: 0,
            in_flight: 2000, // a window of 3 in use
            srtt: None,
            deadline: None,
        };
        w.cwnd = 3.0 * mss;
        // Bcr = 30: a short flow (s1) grows by 10/30, a long one (l2) shrinks by 10/30.
        b.on_feedback(&mut w, 30, &sent(10_000));
        close(w.cwnd, 3000.0 + 1000.0 / 3.0);
        w.cwnd = 3.0 * mss;
        b.on_feedback(&mut w, 30, &sent(10_001));
        close(w.cwnd, 3000.0 - 1000.0 / 3.0);
    }

    #[test]
    fn a_window_the_sender_does_not_fill_is_not_raised() {
        let mut b = bocc();
        let mss = 1000.0;
        let state = |in_flight: f64, bytes_sent| FlowState {
            now: Time::ZERO,
            bytes_sent,
            remaining: 0,
            in_flight: (in_flight * mss) as u64,
            srtt: None,
            deadline: None,
        };
        let mut w = Window::new(10.0 * mss, f64::INFINITY, mss, SlowStart::Bytes);
        // Bcr = 0, long flow (l1: +1), 4 of 10 segments out: kept at 10.
        b.on_feedback(&mut w, 0, &state(4.0, 20_000));
        close(w.cwnd, 10.0 * mss);
        // 8 out after the ACK (9 before it): the window is in use, +1.
        b.on_feedback(&mut w, 0, &state(8.0, 20_000));
        close(w.cwnd, 11.0 * mss);
        // Decreases apply whatever is out: Bcr = 80 > Bm (l4), −0.5.
        b.on_feedback(&mut w, 80, &state(0.0, 20_000));
        close(w.cwnd, 10.5 * mss);
        // Below one segment the window is the pacing, always in use (l6).
        w.cwnd = 0.25 * mss;
        b.on_feedback(&mut w, 10, &state(0.0, 20_000));
        close(w.cwnd, 0.5 * mss);
    }

    #[test]
    fn below_one_segment_one_segment_per_rtt_over_cw() {
        let b = bocc();
        let mss = 1000.0;
        let w = |cw: f64| Window::new(cw * mss, f64::INFINITY, mss, SlowStart::Bytes);
        let rtt = Some(Time::from_us(100));
        assert_eq!(b.pacing_rate(&w(1.0), rtt), None);
        assert_eq!(b.pacing_rate(&w(0.25), None), None);
        // cw = 0.25: 250 B per 100 µs, so a 1000 B payload every 400 µs.
        close(b.pacing_rate(&w(0.25), rtt).unwrap(), 2.5e6);
        let mut t = w(0.25);
        let mut bocc = b.clone();
        bocc.on_timeout(&mut t, 1000);
        assert_eq!(t.cwnd, 250.0, "a timeout keeps a window below one segment");
        let mut t = w(5.0);
        bocc.on_timeout(&mut t, 5000);
        assert_eq!((t.cwnd, t.ssthresh), (mss, 2500.0));
    }

    #[test]
    fn settings_keep_the_seeds_order() {
        let bad = |s: BotcpSpec| Botcp::check(&s).unwrap_err().0;
        let d = BotcpSpec::default();
        assert_eq!(Botcp::check(&d), Ok(()));
        assert_eq!(
            bad(BotcpSpec {
                bl: 40,
                ..d.clone()
            }),
            "bl"
        );
        assert_eq!(
            bad(BotcpSpec {
                bs: 60,
                ..d.clone()
            }),
            "bs"
        );
        assert_eq!(
            bad(BotcpSpec {
                bm: 256,
                ..d.clone()
            }),
            "bm"
        );
    }
}
