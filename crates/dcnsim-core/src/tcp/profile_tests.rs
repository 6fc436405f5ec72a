//! Each profile's loss rules against its reference's arithmetic: ssthresh
//! after a timeout (and a second one right after), the window after an ECE
//! cut (DCTCP's floor), and PRR driving a SACK recovery. Slow start per ACK
//! or per byte is tested in `cc/reno.rs`.

use super::*;
use crate::cc::Protocol;
use serde_json::json;

const M: u64 = 1000;

fn spec(profile: &str, protocol: &str) -> TransportSpec {
    TransportSpec::from_value(json!({
        "profile": profile, "protocol": protocol, "mss": "1000B", "rwnd": "1000pkt",
        // Segments here never leave their host: no host queue limit.
        "host_queue_limit": 1000,
    }))
    .unwrap()
}

/// An open connection of `t` with `outstanding` segments unacknowledged
/// and the window at `cwnd` segments.
fn open(t: &TransportSpec, outstanding: u64, cwnd: u64) -> Conn {
    let mut c = Conn::new(
        10_000 * M,
        Time::ZERO,
        None,
        t.protocol,
        t,
        conn::Params::new(t.protocol, t),
    );
    c.state = State::Open;
    c.snd_una = 1;
    c.snd_nxt = 1 + outstanding * M;
    c.snd_max = c.snd_nxt;
    c.win.cwnd = (cwnd * M) as f64;
    c
}

/// ssthresh in segments after one timeout and after a second one right
/// after it, with 300 segments outstanding, cwnd 20 and nothing SACKed.
fn ssthresh_after_timeouts(t: &TransportSpec) -> (f64, f64) {
    let mut c = open(t, 300, 20);
    let mut out = Vec::new();
    c.on_rto(Time::from_us(1000), &mut out);
    let first = c.win.ssthresh / M as f64;
    assert_eq!(c.win.cwnd, M as f64, "one segment after a timeout");
    c.on_rto(Time::from_us(3000), &mut out);
    (first, c.win.ssthresh / M as f64)
}

/// - ns-3.23 `TcpNewReno::Retransmit`: max(2 MSS, BytesInFlight () / 2)
///   with BytesInFlight = m_highTxMark − head, on every timeout: 150, 150.
/// - ns-3.48 `TcpSocketBase::ReTxTimeout`: GetSsThresh(pipe before the
///   RTO) = 150, then nothing in CA_LOSS with the head retransmitted.
/// - ns-2.35 `TcpAgent::timeout` → `slowdown(CLOSE_SSTHRESH_HALF|
///   CLOSE_CWND_RESTART)`: (int)(window() / 2) = 10, then window() = 1
///   gives 0, raised to the floor of 2.
/// - Linux `tcp_enter_loss`: `tcp_reno_ssthresh` = cwnd >> 1 = 10, not
///   reduced again inside the same loss window.
#[test]
fn ssthresh_after_a_timeout_as_each_reference_computes_it() {
    assert_eq!(
        ssthresh_after_timeouts(&spec("ns3", "newreno")),
        (150.0, 150.0)
    );
    assert_eq!(
        ssthresh_after_timeouts(&spec("ns3_current", "newreno")),
        (150.0, 150.0)
    );
    assert_eq!(
        ssthresh_after_timeouts(&spec("ns2", "newreno")),
        (10.0, 2.0)
    );
    assert_eq!(
        ssthresh_after_timeouts(&spec("ns2_oneway", "newreno")),
        (10.0, 2.0)
    );
    assert_eq!(
        ssthresh_after_timeouts(&spec("linux", "newreno")),
        (10.0, 10.0)
    );
    // dcnsim's own rule halves the flight on every expiry (RFC 5681 eq. 4).
    assert_eq!(
        ssthresh_after_timeouts(&spec("dcnsim", "newreno")),
        (150.0, 150.0)
    );
}

/// After the loss window is acknowledged a new timeout halves again, with
/// the rule that keeps ssthresh inside one.
#[test]
fn a_timeout_after_the_loss_window_reduces_again() {
    let t = spec("linux", "newreno");
    let mut c = open(&t, 300, 20);
    let mut out = Vec::new();
    c.on_rto(Time::from_us(1000), &mut out);
    assert!(c.in_loss);
    // Everything up to the timeout's snd_max is acknowledged; 12 more out.
    c.snd_una = c.recover;
    c.in_loss &= c.snd_una < c.recover;
    c.snd_max = c.snd_una + 12 * M;
    c.snd_nxt = c.snd_max;
    c.win.cwnd = (6 * M) as f64;
    c.on_rto(Time::from_us(5000), &mut out);
    assert_eq!(c.win.ssthresh, (3 * M) as f64);
}

/// The window an ECE cut leaves with α = 1 (half the window) from 1.5
/// segments: ns-3's `TcpDctcp::GetSsThresh` has no floor (0.75 segments;
/// the `ns3` profiles' `ecn_floor` is TcpNewReno's 2, so ns-3's DCTCP is
/// the profile with `ecn_floor = 0` beside `protocol = "dctcp"`, the pairing
/// crosscheck requires), ns-2.35's `slowdown(CLOSE_CWND_DCTCP)` keeps one
/// segment, Linux's `dctcp_ssthresh` two.
#[test]
fn dctcp_window_floor_as_each_reference_has_it() {
    let after_cut = |profile: &str| {
        let mut t = spec(profile, "dctcp");
        if profile.starts_with("ns3") {
            t.ecn_floor = 0.0;
        }
        assert_eq!(t.protocol, Protocol::Dctcp);
        let mut c = open(&t, 2, 0);
        c.win.cwnd = 1.5 * M as f64;
        c.win.ssthresh = 0.0;
        let ack = Arrival {
            seg: Seg::control(false, 1, 1 + M, ACK | ECE, NO_TS),
            sent: Time::ZERO,
            ce: false,
            option: None,
        };
        let mut out = Vec::new();
        c.on_ack(Time::from_us(100), &ack, &mut out);
        c.win.cwnd / M as f64
    };
    assert_eq!(after_cut("ns3_current"), 0.75);
    assert_eq!(after_cut("ns2"), 1.0);
    assert_eq!(after_cut("linux"), 2.0);
}

/// A SACK recovery under PRR (ns-3.48's default) sends about half of what
/// is delivered while pipe is above ssthresh, so the sender never bursts,
/// and leaves the recovery at ssthresh; the classic RFC 6675 recovery sets
/// cwnd = ssthresh at once and sends nothing new until pipe falls below it.
#[test]
fn prr_recovery_paces_the_reduction_and_ends_at_ssthresh() {
    let t = TransportSpec {
        rack: false,
        ..spec("ns3_current", "newreno")
    };
    let mut c = open(&t, 20, 20);
    let mut out = Vec::new();
    // Segment 1 (bytes 1..=1000) lost; the next three arrive: SACKs.
    let dup = |c: &mut Conn, upto: u64, out: &mut Vec<Seg>| {
        let mut seg = Seg::control(false, 1, 1, ACK, NO_TS);
        seg.hdr.sack.push(1, 1 + M, 1 + upto * M);
        let a = Arrival {
            seg,
            sent: Time::ZERO,
            ce: false,
            option: None,
        };
        c.on_ack(Time::from_us(100), &a, out);
    };
    dup(&mut c, 2, &mut out);
    dup(&mut c, 3, &mut out);
    assert!(!c.in_recovery);
    assert_eq!(
        out.len(),
        2,
        "limited transmit: one new segment per duplicate ACK"
    );
    out.clear();
    dup(&mut c, 4, &mut out);
    assert!(c.in_recovery);
    // ssthresh: ns-3's pipe at the start of recovery (22 out, 3 SACKed,
    // the head lost: 18) halved; only the fast retransmit leaves.
    assert_eq!(c.win.ssthresh, (9 * M) as f64);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].hdr.seq, 1);
    // Each further ACK SACKs one more segment: with RecoverFS 18 and
    // ssthresh 9, k delivered allow k·500 B less what was sent, so a
    // segment leaves on every other ACK (pipe stays above ssthresh).
    let mut sent = Vec::new();
    for upto in 5..=12 {
        out.clear();
        dup(&mut c, upto, &mut out);
        sent.push(out.len());
    }
    assert_eq!(sent, vec![0, 0, 1, 0, 1, 0, 1, 0]);
    // The classic recovery sets cwnd = ssthresh at once: nothing leaves
    // until pipe is below 9 segments.
    let classic = TransportSpec {
        recovery: Recovery::Classic,
        ..t
    };
    let mut c = open(&classic, 20, 20);
    for upto in 2..=4 {
        dup(&mut c, upto, &mut out);
    }
    let mut sent = Vec::new();
    for upto in 5..=12 {
        out.clear();
        dup(&mut c, upto, &mut out);
        sent.push(out.len());
    }
    assert_eq!(sent, vec![0, 0, 0, 0, 0, 0, 0, 0]);
}
