//! The TCP machine on a two-way pipe: fixed one-way delay, a serializing
//! bottleneck in the data direction, and a chooser that drops or marks chosen
//! transmissions.

use super::*;
use crate::cc::{SlowStart, Window};
use crate::units::Capacity;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

const RATE_PS_PER_BYTE: u64 = 8_000; // 1 Gbps
const DELAY: Time = Time(20_000_000); // 20 us one way

struct Pipe {
    conn: Conn,
    now: Time,
    queue: BinaryHeap<Reverse<(Time, u64, usize)>>,
    segs: Vec<(Seg, Time, bool)>,
    next_free: Time,
    n: u64,
    /// Every segment sent, with its send time.
    log: Vec<(Time, Seg)>,
    /// Data-direction transmissions so far (index passed to `fate`).
    data_tx: usize,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Fate {
    Deliver,
    Drop,
    Mark,
    /// Delivered this much later than its turn (reordered).
    Late(Time),
}

impl Pipe {
    fn new(size: u64, t: &TransportSpec) -> Pipe {
        Pipe {
            conn: Conn::new(
                size,
                Time::ZERO,
                None,
                t.protocol,
                t,
                Params::new(t.protocol, t),
            ),
            now: Time::ZERO,
            queue: BinaryHeap::new(),
            segs: Vec::new(),
            next_free: Time::ZERO,
            n: 0,
            log: Vec::new(),
            data_tx: 0,
        }
    }

    /// Put segments on the wire; the sender's leave its host at once.
    fn send(&mut self, mut out: Vec<Seg>, fate: &mut dyn FnMut(usize, &Seg, Time) -> Fate) {
        let mut i = 0;
        while i < out.len() {
            let seg = out[i];
            i += 1;
            if seg.to_receiver && self.conn.left_host() {
                let mut more = Vec::new();
                self.conn.resume(self.now, &mut more);
                out.extend(more);
            }
            self.log.push((self.now, seg));
            let mut at = self.now + DELAY;
            let mut ce = false;
            if seg.to_receiver {
                let i = self.data_tx;
                self.data_tx += 1;
                let mut late = Time::ZERO;
                match fate(i, &seg, self.now) {
                    Fate::Drop => continue,
                    Fate::Mark => ce = seg.ect,
                    Fate::Late(t) => late = t,
                    Fate::Deliver => {}
                }
                let bytes = u64::from(seg.payload + self.conn.header());
                self.next_free = self.next_free.max(self.now) + Time(bytes * RATE_PS_PER_BYTE);
                at = self.next_free + DELAY + late;
            }
            self.n += 1;
            self.segs.push((seg, self.now, ce));
            self.queue.push(Reverse((at, self.n, self.segs.len() - 1)));
        }
    }

    /// Run until nothing is left to do; returns the number of steps.
    fn run(&mut self, fate: &mut dyn FnMut(usize, &Seg, Time) -> Fate) {
        let mut out = Vec::new();
        self.conn.open(self.now, &mut out);
        self.send(std::mem::take(&mut out), fate);
        for _ in 0..1_000_000 {
            let next_pkt = self.queue.peek().map(|r| r.0 .0);
            let next_timer = self.conn.next_deadline();
            let t = match (next_pkt, next_timer) {
                (None, None) => return,
                (Some(p), Some(tm)) => p.min(tm),
                (Some(p), None) => p,
                (None, Some(tm)) => tm,
            };
            self.now = t;
            if next_pkt == Some(t) {
                let Reverse((_, _, i)) = self.queue.pop().unwrap();
                let (seg, sent, ce) = self.segs[i];
                let a = Arrival {
                    seg,
                    sent,
                    ce,
                    option: seg.option,
                };
                if seg.to_receiver {
                    self.conn.on_receiver_arrival(t, &a, &mut out);
                } else {
                    self.conn.on_sender_arrival(t, &a, &mut out);
                }
            } else {
                self.conn.on_timer(t, &mut out);
            }
            self.send(std::mem::take(&mut out), fate);
        }
        panic!("connection did not finish");
    }
}

fn spec() -> TransportSpec {
    TransportSpec {
        mss: crate::units::Bytes(1000),
        init_cwnd: 2,
        min_rto: Time::from_us(1000),
        ..TransportSpec::default()
    }
}

fn deliver_all(_: usize, _: &Seg, _: Time) -> Fate {
    Fate::Deliver
}

#[test]
fn handshake_data_and_close_are_real_segments() {
    let mut p = Pipe::new(10_000, &spec());
    p.run(&mut deliver_all);
    let flags: Vec<(bool, u8)> = p
        .log
        .iter()
        .map(|(_, s)| (s.to_receiver, s.hdr.flags))
        .collect();
    assert_eq!(flags[0], (true, SYN));
    assert_eq!(flags[1], (false, SYN | ACK));
    assert_eq!(flags[2], (true, ACK));
    let data: Vec<&Seg> = p
        .log
        .iter()
        .map(|(_, s)| s)
        .filter(|s| s.payload > 0)
        .collect();
    assert_eq!(data.len(), 10);
    assert!(data
        .iter()
        .enumerate()
        .all(|(i, s)| s.hdr.seq == 1 + 1000 * i as u64));
    // The close: the sender's FIN after the data, the receiver's FIN with the
    // ACK of it, and the sender's last ACK.
    let fins: Vec<&Seg> = p
        .log
        .iter()
        .map(|(_, s)| s)
        .filter(|s| s.hdr.flags & FIN != 0)
        .collect();
    assert_eq!(fins.len(), 2);
    assert_eq!((fins[0].to_receiver, fins[0].hdr.seq), (true, 10_001));
    assert_eq!((fins[1].to_receiver, fins[1].hdr.ack), (false, 10_002));
    let last = p.log.last().unwrap().1;
    assert_eq!(
        (last.to_receiver, last.hdr.flags, last.hdr.ack),
        (true, ACK, 2)
    );
    assert!(p.conn.is_done());
    assert_eq!(p.conn.stats.retransmits, 0);
    assert_eq!(p.conn.stats.ooo_packets, 0);
    // Slow start from 2 segments: 2, 4, 4 more → data done after the SYN
    // round trip plus three data round trips.
    assert!(p.conn.completed_at.unwrap() < p.conn.closed_at.unwrap());
}

#[test]
fn two_losses_in_a_window_recover_by_newreno_without_timeout() {
    let mut t = spec();
    t.init_cwnd = 10;
    let mut p = Pipe::new(40_000, &t);
    // Lose the first transmission of data segments 3 and 6 (seq 2001, 5001).
    let mut lost = Vec::new();
    p.run(&mut |_, s, _| {
        if (s.hdr.seq == 2001 || s.hdr.seq == 5001) && !lost.contains(&s.hdr.seq) {
            lost.push(s.hdr.seq);
            Fate::Drop
        } else {
            Fate::Deliver
        }
    });
    assert_eq!(p.conn.stats.timeouts, 0);
    assert_eq!(
        p.conn.stats.retransmits, 2,
        "one fast retransmit, one partial-ACK retransmit"
    );
    assert!(p.conn.stats.ooo_packets >= 3);
    assert!(p.conn.is_done());
    // The first retransmission follows the third duplicate ACK.
    let dup_acks = p
        .log
        .iter()
        .filter(|(_, s)| !s.to_receiver && s.hdr.ack == 2001 && s.hdr.flags == ACK)
        .count();
    assert!(dup_acks >= 4, "the original ACK and three duplicates");
}

#[test]
fn losing_everything_for_a_while_times_out_with_doubling_backoff() {
    let mut p = Pipe::new(400_000, &spec());
    // Drop every data-direction transmission between 0.5 ms and 30 ms.
    p.run(&mut |_, s, now| {
        if s.payload > 0 && now >= Time::from_us(500) && now < Time::from_us(30_000) {
            Fate::Drop
        } else {
            Fate::Deliver
        }
    });
    assert!(p.conn.is_done());
    assert!(
        p.conn.stats.timeouts >= 4,
        "timeouts: {}",
        p.conn.stats.timeouts
    );
    // Retransmissions of the first lost segment: gaps double from min_rto up.
    let first_lost = p
        .log
        .iter()
        .find(|(t, s)| s.payload > 0 && *t >= Time::from_us(500))
        .map(|(_, s)| s.hdr.seq)
        .unwrap();
    let times: Vec<Time> = p
        .log
        .iter()
        .filter(|(_, s)| s.to_receiver && s.hdr.seq == first_lost && s.payload > 0)
        .map(|(t, _)| *t)
        .collect();
    let gaps: Vec<f64> = times
        .windows(2)
        .map(|w| (w[1] - w[0]).as_secs_f64())
        .collect();
    assert!(gaps.len() >= 4);
    // The first gap runs from the original send to the first timeout (the
    // timer restarts on every new ACK); from then on each timeout doubles.
    assert!(gaps[0] >= 1e-3, "the minimum RTO bounds the first timeout");
    assert!((gaps[1] - 2e-3).abs() < 1e-9, "min_rto doubled: {gaps:?}");
    for w in gaps[1..].windows(2) {
        assert!(
            (w[1] / w[0] - 2.0).abs() < 1e-9,
            "backoff doubles: {gaps:?}"
        );
    }
}

#[test]
fn rto_converges_to_srtt_plus_four_rttvar_bounded_by_min_rto() {
    let mut t = spec();
    t.min_rto = Time::from_us(1);
    t.init_cwnd = 1;
    t.handshake = false;
    let mut p = Pipe::new(1000, &t);
    p.run(&mut deliver_all);
    // One segment, one sample: SRTT = R, RTTVAR = R/2, RTO = 3R.
    let r = (DELAY.0 * 2 + 1040 * RATE_PS_PER_BYTE) as f64;
    assert_eq!(p.conn.srtt, Some(r));
    assert_eq!(p.conn.rto.0 as f64, 3.0 * r);
}

#[test]
fn out_of_order_arrivals_are_counted_and_acknowledged_at_once() {
    let mut t = spec();
    t.delayed_ack = true;
    t.handshake = false;
    t.init_cwnd = 4;
    let mut p = Pipe::new(4000, &t);
    let mut held = None;
    // Swap segments 1 and 2 by delaying segment 1 behind segment 2: emulate by
    // dropping the first copy of seq 1 and checking the receiver's counters
    // for segments 2..4 (all above rcv_nxt).
    p.run(&mut |_, s, _| {
        if s.hdr.seq == 1 && held.is_none() {
            held = Some(s.hdr.seq);
            Fate::Drop
        } else {
            Fate::Deliver
        }
    });
    assert_eq!(p.conn.stats.ooo_packets, 3);
    // Each out-of-order segment got its own (duplicate) ACK despite delayed ACKs.
    let dup = p
        .log
        .iter()
        .filter(|(_, s)| !s.to_receiver && s.hdr.ack == 1)
        .count();
    assert_eq!(dup, 3);
}

#[test]
fn delayed_acks_acknowledge_every_second_segment() {
    let mut t = spec();
    t.delayed_ack = true;
    t.handshake = false;
    let mut p = Pipe::new(100_000, &t);
    p.run(&mut deliver_all);
    let acks = p.log.iter().filter(|(_, s)| !s.to_receiver).count();
    assert!((50..=56).contains(&acks), "{acks} ACKs for 100 segments");
}

#[test]
fn the_mss_can_change_mid_connection() {
    let mut t = spec();
    t.handshake = false;
    // Driven by hand, without a NIC: do not hold segments back.
    t.host_queue_limit = 100;
    let mut p = Pipe::new(5000, &t);
    let mut out = Vec::new();
    p.conn.open(Time::ZERO, &mut out);
    assert_eq!(
        out.iter().map(|s| s.payload).collect::<Vec<_>>(),
        vec![1000, 1000]
    );
    p.conn.set_mss(250);
    assert_eq!(p.conn.mss(), 250);
    assert_eq!(p.conn.win.cwnd, 500.0, "the window keeps its 2 segments");
    // ACK both segments: slow start adds 2 (new) segments, so the window of
    // 1000 B goes out as four 250 B segments.
    let ack = Arrival {
        seg: Seg::control(false, 1, 2001, ACK, Time::ZERO),
        sent: Time::ZERO,
        ce: false,
        option: None,
    };
    out.clear();
    p.conn.on_sender_arrival(Time::from_us(50), &ack, &mut out);
    assert_eq!(out.len(), 4);
    assert!(out.iter().all(|s| s.payload == 250));
    assert_eq!(out[0].hdr.seq, 2001);
}

#[test]
fn ecn_halves_once_per_window_and_the_receiver_latches_ece_until_cwr() {
    let mut t = spec();
    t.protocol = Protocol::Ecn;
    t.handshake = false;
    t.init_cwnd = 10;
    let mut p = Pipe::new(200_000, &t);
    // Mark data transmissions 20..25 (within one window).
    p.run(&mut |i, _, _| {
        if (20..25).contains(&i) {
            Fate::Mark
        } else {
            Fate::Deliver
        }
    });
    let cwr: Vec<&Seg> = p
        .log
        .iter()
        .map(|(_, s)| s)
        .filter(|s| s.hdr.flags & CWR != 0)
        .collect();
    assert_eq!(cwr.len(), 1, "one reduction for marks within one window");
    assert_eq!(p.conn.stats.retransmits, 0);
    // ECE stops after the CWR segment reaches the receiver.
    let last_ece = p
        .log
        .iter()
        .rposition(|(_, s)| !s.to_receiver && s.hdr.flags & ECE != 0)
        .unwrap();
    let cwr_at = p
        .log
        .iter()
        .position(|(_, s)| s.hdr.flags & CWR != 0)
        .unwrap();
    assert!(last_ece > cwr_at);
    assert!(
        p.log[last_ece..]
            .iter()
            .filter(|(_, s)| !s.to_receiver)
            .count()
            > 10
    );
}

/// pFabric (§4.2): a fixed RTO without backoff, no fast retransmit, and after
/// `probe_after` consecutive timeouts one-byte probes until an ACK arrives.
#[test]
fn pfabric_times_out_at_a_fixed_rto_then_probes_with_one_byte() {
    let mut t = spec();
    t.protocol = Protocol::Pfabric;
    t.cc.pfabric.rto = Time::from_us(500);
    t.cc.pfabric.probe_after = 3;
    let mut p = Pipe::new(100_000, &t);
    // Drop every data-direction transmission between 0.3 ms and 5 ms.
    p.run(&mut |_, s, now| {
        if s.payload > 0 && now >= Time::from_us(300) && now < Time::from_us(5_000) {
            Fate::Drop
        } else {
            Fate::Deliver
        }
    });
    assert!(p.conn.is_done());
    let rexmits: Vec<(Time, u32)> = p
        .log
        .iter()
        .filter(|(t, s)| s.to_receiver && s.payload > 0 && *t > Time::from_us(300))
        .map(|(t, s)| (*t, s.payload))
        .collect();
    // Timeouts come every 500 us (no backoff) once the last ACK is in.
    let timeouts = p.conn.stats.timeouts;
    assert!(timeouts >= 8, "timeouts: {timeouts}");
    let probes: Vec<Time> = rexmits
        .iter()
        .filter(|(_, len)| *len == 1)
        .map(|(t, _)| *t)
        .collect();
    assert!(
        probes.len() as u64 >= timeouts - 3,
        "after 3 timeouts every retransmission is a 1-byte probe: {probes:?}"
    );
    for w in probes.windows(2) {
        assert_eq!(w[1] - w[0], Time::from_us(500), "fixed RTO: {probes:?}");
    }
    // No fast retransmit: nothing is sent again before the first timeout.
    let first_rexmit = p
        .log
        .iter()
        .filter(|(_, s)| s.to_receiver && s.payload > 0)
        .map(|(t, s)| (s.hdr.seq, *t))
        .fold(
            (std::collections::HashMap::new(), None),
            |(mut seen, first), (seq, t)| {
                let again = seen.insert(seq, t).is_some();
                (seen, first.or(again.then_some(t)))
            },
        )
        .1
        .unwrap();
    assert!(first_rexmit >= Time::from_us(300) + Time::from_us(500) - DELAY * 2);
}

/// Linux's pacing rate: 2·cwnd/srtt while cwnd < ssthresh/2, else 1.2·cwnd/srtt,
/// none before an RTT sample.
#[test]
fn linux_pacing_rate_follows_the_ss_and_ca_ratios() {
    let srtt = Some(Time::from_us(100));
    let mut w = Window::new(10_000.0, f64::INFINITY, 1000.0, SlowStart::Bytes);
    assert_eq!(linux_pacing_rate(&w, srtt), Some(2.0 * 10_000.0 / 100e-6));
    w.ssthresh = 15_000.0;
    assert_eq!(linux_pacing_rate(&w, srtt), Some(1.2 * 10_000.0 / 100e-6));
    assert_eq!(linux_pacing_rate(&w, None), None);
}

/// With `pacing`, segments after the first RTT sample leave one pacing gap
/// apart (wire bytes over the rate, at least the gap at the largest window
/// and smallest RTT the run reaches); without it, ACK clocking sends pairs
/// back to back.
#[test]
fn pacing_spaces_the_segments_after_the_first_rtt_sample() {
    let gaps = |pacing: bool| -> Vec<Time> {
        let mut t = spec();
        t.pacing = pacing;
        t.init_cwnd = 10;
        let mut p = Pipe::new(100_000, &t);
        p.run(&mut deliver_all);
        assert!(p.conn.is_done());
        let sends: Vec<Time> = p
            .log
            .iter()
            .filter(|(_, s)| s.to_receiver && s.payload > 0)
            .map(|(t, _)| *t)
            .collect();
        // After the initial window (sent before any RTT sample).
        sends[10..].windows(2).map(|w| w[1] - w[0]).collect()
    };
    let unpaced = gaps(false);
    assert!(unpaced.contains(&Time::ZERO), "ACK-clocked bursts");
    let paced = gaps(true);
    // The window never exceeds the 100 kB flow and the RTT is at least the
    // 40 us two-way delay: the rate is at most 2·100 kB / 40 us, so a
    // 1040 B segment takes at least 1040 / that.
    let least = Time((1040.0 / (2.0 * 100_000.0 / 40e-6) * 1e12) as u64);
    assert!(paced.iter().all(|&g| g >= least), "paced gaps: {paced:?}");
}

/// The sender of `t` opened by hand (no NIC holds segments back), with what
/// it sent first.
fn opened(size: u64, t: &TransportSpec) -> (Conn, Vec<Seg>) {
    let t = TransportSpec {
        handshake: false,
        host_queue_limit: 1000,
        ..t.clone()
    };
    let mut conn = Conn::new(
        size,
        Time::ZERO,
        None,
        t.protocol,
        &t,
        Params::new(t.protocol, &t),
    );
    let mut out = Vec::new();
    conn.open(Time::ZERO, &mut out);
    (conn, out)
}

/// Feed the sender one pure ACK of `ack`; what it sends in answer.
fn ack(conn: &mut Conn, ack: u64, at_us: u64) -> Vec<Seg> {
    let a = Arrival {
        seg: Seg::control(false, 1, ack, ACK, NO_TS),
        sent: Time::ZERO,
        ce: false,
        option: None,
    };
    let mut out = Vec::new();
    conn.on_sender_arrival(Time::from_us(at_us), &a, &mut out);
    out
}

fn seqs(out: &[Seg]) -> Vec<u64> {
    out.iter().map(|s| s.hdr.seq).collect()
}

/// RFC 3042 §2: on each of the first two duplicate ACKs one new segment
/// (cwnd unchanged); the third triggers fast retransmit, and ssthresh is
/// half of the flight without the two limited-transmit segments (RFC 5681
/// §3.2 step 2).
#[test]
fn limited_transmit_sends_one_new_segment_per_first_two_duplicate_acks() {
    let t = TransportSpec {
        init_cwnd: 8,
        ..spec()
    };
    let (mut c, first) = opened(100_000, &t);
    assert_eq!(first.len(), 8);
    assert_eq!(seqs(&ack(&mut c, 1, 100)), vec![8001]);
    assert_eq!(c.win.cwnd, 8000.0, "cwnd unchanged by limited transmit");
    assert_eq!(seqs(&ack(&mut c, 1, 101)), vec![9001]);
    let third = ack(&mut c, 1, 102);
    assert_eq!(seqs(&third), vec![1], "fast retransmit of the hole");
    assert_eq!(c.stats.retransmits, 1);
    assert_eq!(c.win.ssthresh, 4000.0, "flight 8 segments, halved");

    // Switched off: nothing new before the third duplicate ACK.
    let (mut c, _) = opened(
        100_000,
        &TransportSpec {
            limited_transmit: false,
            ..t
        },
    );
    assert!(ack(&mut c, 1, 100).is_empty());
    assert!(ack(&mut c, 1, 101).is_empty());
    assert_eq!(seqs(&ack(&mut c, 1, 102)), vec![1]);
    assert_eq!(c.win.ssthresh, 4000.0);
}

/// With a window of two segments one loss leaves a single duplicate ACK:
/// limited transmit turns it into three, so the loss is repaired by fast
/// retransmit, not by the timeout (the incast seed's case).
#[test]
fn limited_transmit_repairs_a_loss_in_a_two_segment_window_without_timeout() {
    let run = |lt: bool| {
        let t = TransportSpec {
            limited_transmit: lt,
            ..spec()
        };
        let mut p = Pipe::new(20_000, &t);
        let mut lost = false;
        p.run(&mut |_, s, _| {
            if s.hdr.seq == 1 && s.payload > 0 && !lost {
                lost = true;
                Fate::Drop
            } else {
                Fate::Deliver
            }
        });
        assert!(p.conn.is_done());
        p.conn.stats.timeouts
    };
    assert_eq!(run(true), 0);
    assert_eq!(run(false), 1);
}

/// The receiver's window caps what is outstanding, in bytes or segments.
#[test]
fn rwnd_caps_the_outstanding_data() {
    let t = TransportSpec {
        init_cwnd: 10,
        rwnd: Some(Capacity::Packets(3)),
        ..spec()
    };
    let (mut c, first) = opened(100_000, &t);
    assert_eq!(seqs(&first), vec![1, 1001, 2001]);
    // One segment acknowledged: slow start grows cwnd, rwnd allows one more.
    assert_eq!(seqs(&ack(&mut c, 1001, 100)), vec![3001]);
    let t = TransportSpec {
        rwnd: Some(Capacity::Bytes(2500)),
        ..t
    };
    let (_, first) = opened(100_000, &t);
    assert_eq!(seqs(&first), vec![1, 1001]);
    // A whole transfer never has more than rwnd outstanding.
    let mut p = Pipe::new(200_000, &t);
    p.run(&mut deliver_all);
    assert!(p.conn.is_done());
    let mut highest_ack = 0;
    for (_, s) in &p.log {
        if s.to_receiver {
            assert!(s.hdr.seq + u64::from(s.payload) <= highest_ack.max(1) + 2500);
        } else {
            highest_ack = highest_ack.max(s.hdr.ack);
        }
    }
}

/// RFC 6298 §2.2: after the first sample R, RTO = R + max(G, 4·R/2).
#[test]
fn rto_granularity_bounds_the_variance_term() {
    let r = (DELAY.0 * 2 + 1040 * RATE_PS_PER_BYTE) as f64;
    for (g, expect) in [(Time::ZERO, 3.0 * r), (Time(10 * r as u64), 11.0 * r)] {
        let t = TransportSpec {
            min_rto: Time(1),
            init_cwnd: 1,
            handshake: false,
            rto_granularity: g,
            ..spec()
        };
        let mut p = Pipe::new(1000, &t);
        p.run(&mut deliver_all);
        assert_eq!(p.conn.rto.0 as f64, expect);
    }
}

#[test]
fn initial_ssthresh_is_infinite_unless_set() {
    let (c, _) = opened(1000, &spec());
    assert_eq!(c.win.ssthresh, f64::INFINITY);
    let t = TransportSpec {
        initial_ssthresh: Some(Capacity::Packets(20)),
        ..spec()
    };
    let (c, _) = opened(1000, &t);
    assert_eq!(c.win.ssthresh, 20_000.0);
}

/// With delayed ACKs and a one-segment initial window the first segment would
/// wait for the delayed-ACK timer; `quick_acks` answers it at once.
#[test]
fn quick_acks_answer_the_first_segments_at_once() {
    let first_ack_at = |quick: u32| {
        let t = TransportSpec {
            init_cwnd: 1,
            delayed_ack: true,
            delayed_ack_timeout: Time::from_us(200_000),
            quick_acks: quick,
            min_rto: Time::from_us(1_000_000),
            ..spec()
        };
        let mut p = Pipe::new(10_000, &t);
        p.run(&mut deliver_all);
        p.log
            .iter()
            .find(|(_, s)| !s.to_receiver && s.hdr.ack > 1)
            .map(|(t, _)| *t)
            .unwrap()
    };
    assert!(first_ack_at(0) >= Time::from_us(200_000));
    assert!(first_ack_at(1) < Time::from_us(1_000));
}

fn sack_spec() -> TransportSpec {
    TransportSpec {
        sack: true,
        init_cwnd: 20,
        ..spec()
    }
}

/// Run `size` bytes losing the first transmission of the segments starting
/// at `lost`; the sender's retransmissions (time, seq).
fn lose_once(t: &TransportSpec, size: u64, lost: &[u64]) -> (Pipe, Vec<(Time, u64)>) {
    let mut p = Pipe::new(size, t);
    let mut dropped = Vec::new();
    p.run(&mut |_, s, _| {
        if s.payload > 0 && lost.contains(&s.hdr.seq) && !dropped.contains(&s.hdr.seq) {
            dropped.push(s.hdr.seq);
            Fate::Drop
        } else {
            Fate::Deliver
        }
    });
    assert!(p.conn.is_done());
    let mut seen = std::collections::HashSet::new();
    let rexmits = p
        .log
        .iter()
        .filter(|(_, s)| s.to_receiver && s.payload > 0 && !seen.insert(s.hdr.seq))
        .map(|(t, s)| (*t, s.hdr.seq))
        .collect();
    (p, rexmits)
}

/// When the receiver sent its first ACK above `ack` (it reaches the sender
/// one `DELAY` later).
fn first_ack_above(p: &Pipe, ack: u64) -> Time {
    p.log
        .iter()
        .find(|(_, s)| !s.to_receiver && s.hdr.ack > ack)
        .unwrap()
        .0
}

/// RFC 2018 §4: the first block holds the latest segment, then the others;
/// no more than `sack_blocks`.
#[test]
fn sack_blocks_report_the_latest_segment_first() {
    let (p, _) = lose_once(&sack_spec(), 10_000, &[2001, 4001, 6001]);
    let blocks = |limit: usize| -> Vec<Vec<(u64, u64)>> {
        p.log
            .iter()
            .filter(|(_, s)| !s.to_receiver && !s.hdr.sack.is_empty())
            .map(|(_, s)| s.hdr.sack.blocks(s.hdr.ack).take(limit).collect())
            .collect()
    };
    let all = blocks(4);
    // After segments 1, 2, 4, 6, 8 arrive (3, 5, 7 lost), in order.
    assert_eq!(all[0], vec![(3001, 4001)]);
    assert_eq!(all[1], vec![(5001, 6001), (3001, 4001)]);
    assert_eq!(all[2], vec![(7001, 8001), (5001, 6001), (3001, 4001)]);
    let t = TransportSpec {
        sack_blocks: 1,
        ..sack_spec()
    };
    let (p1, _) = lose_once(&t, 10_000, &[2001, 4001, 6001]);
    assert!(p1.log.iter().all(|(_, s)| s.hdr.sack.len() <= 1));
    // Without SACK no ACK carries blocks.
    let t = TransportSpec {
        sack: false,
        ..sack_spec()
    };
    let (p0, _) = lose_once(&t, 10_000, &[2001, 4001, 6001]);
    assert!(p0.log.iter().all(|(_, s)| s.hdr.sack.is_empty()));
}

/// RFC 6675: four holes in one window are retransmitted, each exactly once
/// and nothing else, within one round trip (before the first retransmission
/// is acknowledged); NewReno needs a round trip per hole.
#[test]
fn sack_recovery_retransmits_exactly_the_holes_in_one_rtt() {
    let holes = [2001, 6001, 7001, 11001];
    let rtt = DELAY * 2;
    let (p, rexmits) = lose_once(&sack_spec(), 40_000, &holes);
    let seqs: Vec<u64> = rexmits.iter().map(|&(_, s)| s).collect();
    assert_eq!(seqs, holes, "the holes, in order, once each");
    assert_eq!(p.conn.stats.retransmits, 4);
    assert_eq!(p.conn.stats.timeouts, 0);
    // One round trip: all sent before the ACK of the first retransmission
    // reaches the sender (ACKs cross the pipe in DELAY, without queueing).
    let first_answer = p
        .log
        .iter()
        .find(|(_, s)| !s.to_receiver && s.hdr.ack > holes[0])
        .map(|(t, _)| *t + DELAY)
        .unwrap();
    assert!(
        rexmits.iter().all(|&(t, _)| t < first_answer),
        "{rexmits:?}, first hole acknowledged at {first_answer:?}"
    );

    let t = TransportSpec {
        sack: false,
        ..sack_spec()
    };
    let (_, newreno) = lose_once(&t, 40_000, &holes);
    let last = newreno.last().unwrap().0;
    assert!(last >= newreno[0].0 + rtt * 3, "{newreno:?}");
}

/// ns-2.35 FullTcp/Sack's pipe (`sack_pipe = "ns2"`, tcp/tcp-full.cc)
/// against RFC 6675's on one window of 20 segments whose 2nd to 13th are
/// lost. ns-2's arithmetic: at the third duplicate ACK (14th-16th SACKed)
/// the pipe is 19 outstanding less 3 SACKed = 16 segments (the fast
/// retransmit of the 2nd is not counted: `fast_retransmit` sends it
/// outside `sent`); four more duplicate ACKs leave 12 and the
/// retransmission's partial ACK 10, not below the window of 9.5 segments
/// (the flight of 19 halved) in whole segments, 9: nothing more is sent
/// and the sender waits for its timeout. RFC 6675 leaves the lost segments
/// out of the pipe and retransmits all twelve holes without one.
#[test]
fn ns2_pipe_counts_lost_segments_and_waits_for_the_timeout() {
    let lost: Vec<u64> = (1..13).map(|i| 1 + i * 1000).collect();
    let rfc = TransportSpec {
        handshake: false,
        ..sack_spec()
    };
    let (p, rexmits) = lose_once(&rfc, 20_000, &lost);
    assert_eq!(p.conn.stats.timeouts, 0);
    let seqs: Vec<u64> = rexmits.iter().map(|&(_, s)| s).collect();
    assert_eq!(seqs, lost, "every hole once, in order");

    let ns2 = TransportSpec {
        sack_pipe: SackPipe::Ns2,
        ..rfc
    };
    let (p, rexmits) = lose_once(&ns2, 20_000, &lost);
    assert_eq!(p.conn.stats.timeouts, 1);
    // The timeout resends from snd_una, the 3rd segment.
    let timeout = rexmits.iter().find(|&&(_, s)| s == 2001).unwrap().0;
    let before: Vec<u64> = rexmits
        .iter()
        .filter(|&&(t, _)| t < timeout)
        .map(|&(_, s)| s)
        .collect();
    assert_eq!(
        before,
        [1001],
        "only the fast retransmit before the timeout"
    );
    assert!(timeout >= Time::from_us(1000), "after min_rto: {timeout:?}");
}

/// ns-2's fast retransmit is outside its pipe: `dupack_action` sets
/// `pipe_` and sends the retransmission by `fast_retransmit`, which calls
/// `foutput` directly, where `send_much` would add it to `pipe_` through
/// `sent` (tcp/tcp-full.cc lines 1414-1422, 2861, 2906; tcp-full.h line
/// 198). One window of 20 segments loses the 1st and the 2nd; worked by
/// hand from ns-2's code: the third duplicate ACK (3rd-5th SACKed) sets
/// the pipe to 20 − 3 = 17 segments and cwnd to 10, and fast-retransmits
/// the 1st. Each later duplicate ACK takes a segment off, so the 11th
/// duplicate ACK (the 13th segment's) leaves 9 < 10, and the hole-fill
/// pointer (`h_seqno_`, past the fast retransmit) gives the 2nd, a hole
/// with SACKed data above it. Counting the fast retransmit (18) would hold
/// it to the 12th duplicate ACK. The fast retransmit's partial ACK comes
/// back only after all of them (it queues behind the window).
#[test]
fn ns2_pipe_leaves_out_the_fast_retransmit() {
    let t = TransportSpec {
        handshake: false,
        limited_transmit: false,
        sack_pipe: SackPipe::Ns2,
        sack_holes: SackHoles::Ns2,
        ..sack_spec()
    };
    let (p, rexmits) = lose_once(&t, 20_000, &[1, 1001]);
    assert_eq!(p.conn.stats.timeouts, 0);
    let seqs: Vec<u64> = rexmits.iter().map(|&(_, s)| s).collect();
    assert_eq!(seqs, [1, 1001]);
    // Duplicate ACKs (of byte 1) that have reached the sender by `at`.
    let dupacks_by = |at: Time| {
        p.log
            .iter()
            .filter(|(sent, s)| !s.to_receiver && s.hdr.ack == 1 && *sent + DELAY <= at)
            .count()
    };
    assert_eq!(dupacks_by(rexmits[0].0), 3, "the fast retransmit");
    assert_eq!(dupacks_by(rexmits[1].0), 11, "{rexmits:?}");
    let partial = first_ack_above(&p, 1);
    assert!(rexmits[1].0 < partial + DELAY);
}

/// ns-2.35 FullTcp/Sack's hole choice (`sack_holes = "ns2"`,
/// `SackFullTcpAgent::nxt_tseq`, tcp/tcp-full.cc) against RFC 6675's on one
/// window of 20 segments, both with ns-2's pipe, losing the 1st and the
/// 19th. Worked by hand: the third duplicate ACK (segments 2–4 SACKed)
/// starts the recovery with the pipe at 20 − 3 = 17 segments (the fast
/// retransmit of the 1st not counted) and cwnd 10. The duplicate ACKs of
/// segments 5–18 and 20 take it to 2. The 20th's ACK SACKs [20th], one range above
/// the 19th: for ns-2 (`sack_rtx_cthresh_` 1) a hole, retransmitted at
/// once, before the fast retransmit's ACK comes back; no timeout. For
/// RFC 6675 one segment SACKed above is not a loss (IsLost wants more than
/// two); after the partial ACK nothing is deemed lost and the 19th waits
/// for the timeout.
#[test]
fn ns2_holes_fill_a_hole_with_one_sacked_range_above() {
    let lost = [1, 18_001];
    let rfc = TransportSpec {
        handshake: false,
        sack_pipe: SackPipe::Ns2,
        ..sack_spec()
    };
    let (p, rexmits) = lose_once(&rfc, 20_000, &lost);
    assert_eq!(p.conn.stats.timeouts, 1);
    let seqs: Vec<u64> = rexmits.iter().map(|&(_, s)| s).collect();
    assert_eq!(seqs, lost);

    let ns2 = TransportSpec {
        sack_holes: SackHoles::Ns2,
        ..rfc
    };
    let (p, rexmits) = lose_once(&ns2, 20_000, &lost);
    assert_eq!(p.conn.stats.timeouts, 0);
    let seqs: Vec<u64> = rexmits.iter().map(|&(_, s)| s).collect();
    assert_eq!(seqs, lost);
    // The receiver's first ACK above 1 answers the fast retransmit; it
    // reaches the sender one delay after it is sent.
    let partial = first_ack_above(&p, 1);
    assert!(
        rexmits[1].0 < partial + DELAY,
        "on a duplicate ACK: {rexmits:?}"
    );
}

/// ns-2's FullTcp/Sack opens the window on the ACK that ends its recovery:
/// `FullTcpAgent::recv` calls `opencwnd` on every ACK of new data that is
/// not partial (tcp/tcp-full.cc lines 2293-2299); FullTcp/Sack's
/// `open_cwnd_on_pack_ false` (ns-default.tcl lines 1254-1264) keeps only
/// partial ACKs out, and its `ack_action` leaves cwnd as the cut set it.
/// One window of 20 segments loses the 1st: the cut leaves cwnd = ssthresh
/// = 10 segments, and the fast retransmit's ACK, which acknowledges all 20,
/// adds SMSS²/cwnd (`slow_start = "ack"`, ns-2's `opencwnd` above
/// ssthresh): 10.1 segments. RFC 6675's recovery ends with cwnd = ssthresh.
#[test]
fn ns2_recovery_opens_the_window_on_its_last_ack() {
    let rfc = TransportSpec {
        handshake: false,
        limited_transmit: false,
        slow_start: SlowStart::Ack,
        ..sack_spec()
    };
    let end_cwnd = |t: &TransportSpec| {
        let (p, rexmits) = lose_once(t, 20_000, &[1]);
        assert_eq!(rexmits.len(), 1);
        assert_eq!(p.conn.stats.timeouts, 0);
        (p.conn.win.cwnd, p.conn.win.ssthresh)
    };
    assert_eq!(end_cwnd(&rfc), (10_000.0, 10_000.0));
    let ns2 = TransportSpec {
        sack_pipe: SackPipe::Ns2,
        sack_holes: SackHoles::Ns2,
        ..rfc
    };
    let (cwnd, ssthresh) = end_cwnd(&ns2);
    assert_eq!(ssthresh, 10_000.0);
    assert!((cwnd - 10_100.0).abs() < 1e-6, "{cwnd}");
}

/// After a timeout ns-2 fills holes before it goes back (`recover_` set by
/// `timeout_action`, `nxt_tseq` from the hole-fill pointer the timeout
/// keeps). One window of 20 segments loses the 2nd to 11th and the 13th;
/// ns-2's pipe (16 segments at the third duplicate ACK, the fast
/// retransmit not counted, 11 after the other five, 9 after the partial
/// ACK, against a window of 9) holds all but the fast retransmit of the
/// 2nd, and the timer fires. From there, worked by hand with cwnd 1, +1
/// per ACK: the 3rd goes out; its ACK (of 3001) SACKs the 12th and
/// 14th–20th; the window then lets out 4th–5th, 6th–7th, 8th–9th and
/// 10th–11th as the ACKs of 3001 to 6001 arrive, and at the ACK of 7001
/// (cwnd 6) the 13th, a hole below the range [14th, 20th], goes before the
/// go-back point, the SACKed 12th, which follows with the 13th again.
/// RFC 6675's choice, with no recovery after a timeout, goes back in
/// order: the 11th, 12th, then the 13th.
#[test]
fn ns2_holes_come_first_after_a_timeout() {
    let mut lost: Vec<u64> = (1..11).map(|i| 1 + i * 1000).collect();
    lost.push(12_001);
    let rfc = TransportSpec {
        handshake: false,
        sack_pipe: SackPipe::Ns2,
        ..sack_spec()
    };
    let after_timeout = |t: &TransportSpec| {
        let (p, rexmits) = lose_once(t, 20_000, &lost);
        assert_eq!(p.conn.stats.timeouts, 1);
        assert_eq!(rexmits[0].1, 1001, "the fast retransmit");
        rexmits[1..]
            .iter()
            .map(|&(_, s)| s)
            .take(12)
            .collect::<Vec<u64>>()
    };
    let back_n: Vec<u64> = (2..14).map(|i| 1 + i * 1000).collect();
    assert_eq!(after_timeout(&rfc), back_n);
    let ns2 = TransportSpec {
        sack_holes: SackHoles::Ns2,
        ..rfc
    };
    let mut holes_first: Vec<u64> = (2..11).map(|i| 1 + i * 1000).collect();
    holes_first.extend([12_001, 11_001, 12_001]);
    assert_eq!(after_timeout(&ns2), holes_first);
}

/// `sack_pipe = "ns2"` is FullTcp/Sack's: it needs SACK and the classic
/// recovery, without RACK; `ns2_sack` sets it.
#[test]
fn ns2_pipe_needs_classic_sack_recovery() {
    use serde_json::json;
    let err = |v: serde_json::Value| TransportSpec::from_value(v).unwrap_err().to_string();
    let e = err(json!({"sack_pipe": "ns2"}));
    assert_eq!(
        e,
        "transport.sack_pipe: \"ns2\" needs sack = true, got sack off"
    );
    let e = err(json!({"profile": "ns2_sack", "recovery": "prr"}));
    assert!(
        e.starts_with("transport.recovery: \"prr\" is not with sack_pipe"),
        "{e}"
    );
    let e = err(json!({"profile": "ns2_sack", "rack": true}));
    assert!(
        e.starts_with("transport.rack: RACK keeps its own pipe"),
        "{e}"
    );
    let rfc = json!({"profile": "ns2_sack", "rack": true, "sack_pipe": "rfc6675",
                     "sack_holes": "rfc6675"});
    assert!(TransportSpec::from_value(rfc).is_ok());
    assert!(err(json!({"sack_pipe": "bsd"})).starts_with("transport.sack_pipe: unknown variant"));
    let ns2 = |p: &str| {
        TransportSpec::from_value(json!({ "profile": p }))
            .unwrap()
            .sack_pipe
    };
    assert_eq!(ns2("ns2_sack"), SackPipe::Ns2);
    assert_eq!(ns2("ns2"), SackPipe::Rfc6675);
    assert_eq!(ns2("linux"), SackPipe::Rfc6675);
}

/// `sack_holes = "ns2"` needs SACK and refuses RACK, which picks its own
/// holes; `ns2_sack` sets it.
#[test]
fn ns2_holes_need_sack_without_rack() {
    use serde_json::json;
    let err = |v: serde_json::Value| TransportSpec::from_value(v).unwrap_err().to_string();
    assert_eq!(
        err(json!({"sack_holes": "ns2"})),
        "transport.sack_holes: \"ns2\" needs sack = true, got sack off"
    );
    let e = err(json!({"sack": true, "rack": true, "sack_holes": "ns2"}));
    assert!(
        e.starts_with("transport.rack: RACK chooses its own holes"),
        "{e}"
    );
    assert!(err(json!({"sack_holes": "bsd"})).starts_with("transport.sack_holes: unknown variant"));
    let holes = |p: &str| {
        TransportSpec::from_value(json!({ "profile": p }))
            .unwrap()
            .sack_holes
    };
    assert_eq!(holes("ns2_sack"), SackHoles::Ns2);
    assert_eq!(holes("ns2"), SackHoles::Rfc6675);
    assert_eq!(holes("linux"), SackHoles::Rfc6675);
}

#[test]
fn sack_blocks_outside_one_to_four_are_refused() {
    for n in [0, 5] {
        let t = TransportSpec {
            sack_blocks: n,
            ..TransportSpec::default()
        };
        let (key, msg) = t.check().unwrap_err();
        assert_eq!(key, "sack_blocks");
        assert_eq!(msg, format!("must be between 1 and 4, got {n}"));
    }
}

/// Eifel (RFC 3522 §3.2, RFC 4015): segment 3 arrives after three later
/// segments, so its fast retransmit is spurious; the ACK the late original
/// draws echoes its older timestamp, and with `undo` the window comes back
/// (no loss happened: ssthresh stays at its initial infinity).
#[test]
fn undo_restores_the_window_after_a_spurious_fast_retransmit() {
    let run = |undo: bool| {
        let t = TransportSpec {
            init_cwnd: 10,
            handshake: false,
            undo,
            ..spec()
        };
        let mut p = Pipe::new(30_000, &t);
        let mut delayed = false;
        // Late by five segment times: after three duplicate ACKs have left the
        // receiver, before the retransmission arrives.
        let late = Time(5 * 1040 * RATE_PS_PER_BYTE);
        p.run(&mut |_, s, _| {
            if s.hdr.seq == 2001 && !delayed {
                delayed = true;
                Fate::Late(late)
            } else {
                Fate::Deliver
            }
        });
        assert!(p.conn.is_done());
        assert_eq!(p.conn.stats.timeouts, 0);
        (p.conn.win, p.conn.stats.retransmits)
    };
    let (undone, retransmits) = run(true);
    assert_eq!(undone.ssthresh, f64::INFINITY, "restored: {undone:?}");
    assert_eq!(retransmits, 1, "the spurious fast retransmit only");
    // Without undo the cut stays, and NewReno's partial ACKs (the late
    // original acknowledges only up to the segments still queued) resend
    // segments that were never lost.
    let (kept, retransmits) = run(false);
    assert!(kept.ssthresh.is_finite(), "cut and kept: {kept:?}");
    assert!(retransmits > 1);
}

fn rack_spec() -> TransportSpec {
    TransportSpec {
        sack: true,
        rack: true,
        init_cwnd: 3,
        min_rto: Time::from_us(200_000),
        ..spec()
    }
}

/// Two data segments and the FIN, the first dropped or delivered late.
fn three_segments(t: &TransportSpec, first: Fate) -> Pipe {
    let mut p = Pipe::new(2000, t);
    let mut done = false;
    p.run(&mut |_, s, _| {
        if s.payload > 0 && s.hdr.seq == 1 && !done {
            done = true;
            first
        } else {
            Fate::Deliver
        }
    });
    assert!(p.conn.is_done());
    p
}

/// When the SACK of the FIN reaches the sender.
fn sack_of_third_arrives(p: &Pipe) -> Time {
    p.log
        .iter()
        .find(|(_, s)| !s.to_receiver && s.hdr.sack.blocks(s.hdr.ack).any(|(_, r)| r == 2002))
        .map(|(t, _)| *t + DELAY)
        .expect("the FIN SACKed")
}

/// The handshake's round trip: the first RTT sample, hence RACK.min_RTT.
fn syn_rtt(p: &Pipe) -> Time {
    let (t, _) = p
        .log
        .iter()
        .find(|(_, s)| s.hdr.flags & SYN != 0 && !s.to_receiver)
        .unwrap();
    *t + DELAY
}

/// RFC 8985 §6.2 step 5: the first of two data segments is lost and the
/// second and the FIN draw two duplicate ACKs, fewer than DupThresh. All
/// three left together, so the first is lost once RACK.rtt (the FIN's RTT)
/// plus reo_wnd (min_RTT/4: no reordering seen, two SACKed segments) has
/// passed since it was sent: the reordering timer retransmits it reo_wnd after the
/// FIN's SACK arrives. Without RACK only the retransmission timer finds it.
#[test]
fn rack_marks_a_segment_lost_by_time_with_fewer_than_three_duplicate_acks() {
    let p = three_segments(&rack_spec(), Fate::Drop);
    let rexmit: Vec<Time> = p
        .log
        .iter()
        .filter(|(_, s)| s.to_receiver && s.payload > 0 && s.hdr.seq == 1)
        .map(|(t, _)| *t)
        .collect();
    assert_eq!(rexmit.len(), 2, "sent and retransmitted once");
    let reo_wnd = Time(syn_rtt(&p).0 / 4);
    assert_eq!(rexmit[1], sack_of_third_arrives(&p) + reo_wnd);
    assert_eq!(p.conn.stats.timeouts, 0);
    assert_eq!(p.conn.stats.retransmits, 1);

    let t = TransportSpec {
        rack: false,
        ..rack_spec()
    };
    let p = three_segments(&t, Fate::Drop);
    assert_eq!(
        p.conn.stats.timeouts, 1,
        "two duplicate ACKs: no fast retransmit"
    );
}

/// RFC 8985 §6.2: a segment delivered out of order within the reordering
/// window is not marked lost; one delivered after it is (spuriously).
#[test]
fn rack_does_not_mark_a_segment_reordered_within_the_window() {
    // The first segment's turn is a segment and a FIN time before the FIN's
    // arrival; more puts it that much behind the FIN.
    let two_segments = Time((1040 + 40) * RATE_PS_PER_BYTE);
    let probe = TransportSpec {
        min_rto: Time::from_us(200_000),
        ..spec()
    };
    let reo_wnd = Time(syn_rtt(&three_segments(&probe, Fate::Deliver)).0 / 4);
    let after = |us: u64| Fate::Late(two_segments + Time::from_us(us));
    let within = three_segments(&rack_spec(), after(reo_wnd.0 / 2 / 1_000_000));
    assert_eq!(within.conn.stats.retransmits, 0);
    let beyond = three_segments(&rack_spec(), after(2 * reo_wnd.0 / 1_000_000));
    assert_eq!(beyond.conn.stats.retransmits, 1);
    assert_eq!(beyond.conn.stats.timeouts, 0);
}

/// A pure ACK of `ack` echoing `ts_echo`, with SACK blocks.
fn ack_with(conn: &mut Conn, ack: u64, at: Time, ts_echo: Time, sack: &[(u64, u64)]) -> Vec<Seg> {
    let mut seg = Seg::control(false, 1, ack, ACK, ts_echo);
    for &(l, r) in sack {
        seg.hdr.sack.push(ack, l, r);
    }
    let a = Arrival {
        seg,
        sent: Time::ZERO,
        ce: false,
        option: None,
    };
    let mut out = Vec::new();
    conn.on_sender_arrival(at, &a, &mut out);
    out
}

/// RFC 8985 §7.2-7.3: with no ACK for a PTO of 2·SRTT (more than one
/// segment out), the sender probes with one new segment, cwnd or not; with
/// no new data, with its last segment again.
#[test]
fn tlp_probes_after_a_pto_without_acks() {
    let t = TransportSpec {
        init_cwnd: 4,
        ..rack_spec()
    };
    let us = Time::from_us;
    for (size, probe) in [(20_000, 8001), (4000, 3001)] {
        let (mut conn, out) = opened(size, &t);
        assert_eq!(seqs(&out), [1, 1001, 2001, 3001]);
        // Two segments acknowledged after 100 us: SRTT = 100 us.
        let out = ack_with(&mut conn, 2001, us(100), Time::ZERO, &[]);
        let sent = if size > 4000 { 4 } else { 0 };
        assert_eq!(out.len(), sent, "slow start: two per segment acknowledged");
        assert_eq!(conn.tlp_at, Some(us(300)), "2 SRTT after the ACK");
        assert!(conn.rto_at.unwrap() > us(300));
        let mut out = Vec::new();
        conn.on_tlp(us(300), &mut out);
        assert_eq!(seqs(&out), [probe], "one probe");
        assert_eq!(out[0].payload, 1000);
        assert_eq!(conn.tlp_at, None, "one probe until it is acknowledged");
        assert_eq!(conn.rto_at, Some(us(300) + conn.current_rto()));
    }
}

fn dsack_spec(undo: bool) -> TransportSpec {
    TransportSpec {
        init_cwnd: 10,
        sack: true,
        dsack: true,
        dsack_undo: undo,
        ..spec()
    }
}

/// RFC 2883 §4 and RFC 3708 §3: segment 3 arrives after three later ones,
/// so its fast retransmit is spurious; the receiver reports the duplicate
/// in the first SACK block, and with `dsack_undo` the sender restores the
/// window (no loss happened: ssthresh stays at its initial infinity).
#[test]
fn a_spurious_retransmission_is_reported_by_dsack_and_undone() {
    let run = |undo: bool| {
        let mut p = Pipe::new(30_000, &dsack_spec(undo));
        let mut delayed = false;
        let late = Time(5 * 1040 * RATE_PS_PER_BYTE);
        p.run(&mut |_, s, _| {
            if s.hdr.seq == 2001 && s.payload > 0 && !delayed {
                delayed = true;
                Fate::Late(late)
            } else {
                Fate::Deliver
            }
        });
        assert!(p.conn.is_done());
        assert_eq!(p.conn.stats.retransmits, 1);
        p
    };
    let p = run(true);
    let dsacks: Vec<(u64, u64)> = p
        .log
        .iter()
        .filter(|(_, s)| !s.to_receiver)
        .filter_map(|(_, s)| {
            s.hdr
                .sack
                .blocks(s.hdr.ack)
                .next()
                .filter(|b| b.1 <= s.hdr.ack)
        })
        .collect();
    assert_eq!(dsacks, [(2001, 3001)], "one D-SACK, of the duplicate");
    assert_eq!(
        p.conn.win.ssthresh,
        f64::INFINITY,
        "restored: {:?}",
        p.conn.win
    );
    let kept = run(false);
    assert!(kept.conn.win.ssthresh.is_finite(), "{:?}", kept.conn.win);
}

/// RFC 3708 §3: when every retransmission of the recovery has been reported
/// as a duplicate, cwnd and ssthresh are what they were before the cut.
#[test]
fn dsack_undo_restores_cwnd_and_ssthresh_exactly() {
    let us = Time::from_us;
    let (mut conn, _) = opened(30_000, &dsack_spec(true));
    let before = conn.win;
    // Three duplicate ACKs SACKing segments 2-4: segment 1 retransmitted.
    let mut rexmit = Vec::new();
    for (i, r) in [2001, 3001, 4001].into_iter().enumerate() {
        rexmit.extend(ack_with(
            &mut conn,
            1,
            us(50 + i as u64),
            NO_TS,
            &[(1001, r)],
        ));
    }
    assert!(seqs(&rexmit).contains(&1));
    assert!(conn.win.ssthresh < before.ssthresh && conn.win.cwnd < before.cwnd);
    // The original arrives: everything sent so far is acknowledged ...
    let high = conn.snd_nxt;
    ack_with(&mut conn, high, us(60), NO_TS, &[]);
    assert!(conn.win.ssthresh.is_finite());
    // ... then the retransmission, reported by D-SACK.
    ack_with(&mut conn, high, us(61), NO_TS, &[(1, 1001)]);
    assert_eq!(conn.win.cwnd, before.cwnd);
    assert_eq!(conn.win.ssthresh, before.ssthresh);
}

#[test]
fn rack_and_dsack_need_sack_and_headers_fit_their_options() {
    let err = |t: TransportSpec| t.check().unwrap_err();
    let (key, msg) = err(TransportSpec {
        rack: true,
        ..TransportSpec::default()
    });
    assert_eq!(key, "rack");
    assert_eq!(
        msg,
        "needs sack = true (it reads SACK blocks), got sack off"
    );
    assert_eq!(
        err(TransportSpec {
            dsack: true,
            ..TransportSpec::default()
        })
        .0,
        "dsack"
    );
    assert_eq!(
        err(TransportSpec {
            sack: true,
            dsack_undo: true,
            ..TransportSpec::default()
        })
        .0,
        "dsack_undo"
    );
    for bad in [36, 42, 84] {
        let (key, _) = err(TransportSpec {
            header: crate::units::Bytes(bad),
            ..TransportSpec::default()
        });
        assert_eq!(key, "header");
    }
    // Beside the 12 B timestamp option three SACK blocks fit, not four.
    let ts = |blocks| TransportSpec {
        header: crate::units::Bytes(52),
        sack: true,
        sack_blocks: blocks,
        ..TransportSpec::default()
    };
    assert!(ts(3).check().is_ok());
    let (key, msg) = err(ts(4));
    assert_eq!(key, "sack_blocks");
    assert_eq!(
        msg,
        "must be at most 3 with a 52 B header (TCP options fit in 40 B), got 4"
    );
}

/// Wire size = payload + header (+ SACK option): a 52 B header makes every
/// segment 12 B longer than a 40 B one on the same pipe.
#[test]
fn the_header_is_on_every_segment() {
    let plain = TransportSpec {
        handshake: false,
        init_cwnd: 10,
        ..spec()
    };
    let t = TransportSpec {
        header: crate::units::Bytes(52),
        ..plain.clone()
    };
    let mut p = Pipe::new(5000, &t);
    p.run(&mut deliver_all);
    assert_eq!(p.conn.header(), 52);
    let mut q = Pipe::new(5000, &plain);
    q.run(&mut deliver_all);
    // Five data segments serialized back to back on the bottleneck: the
    // last arrives 5 x 12 B x 8 ns later with the larger header.
    let last_data = |p: &Pipe| p.conn.completed_at.unwrap();
    assert_eq!(
        last_data(&p) - last_data(&q),
        Time(5 * 12 * RATE_PS_PER_BYTE)
    );
}

/// A controller with a timer of its own, declared here and plugged in: at
/// its deadline it opens the window to four segments and says when it was
/// called.
#[derive(Debug)]
struct OpensAt {
    at: Option<Time>,
    called: std::sync::Arc<std::sync::Mutex<Vec<Time>>>,
}

impl crate::cc::Controller for OpensAt {
    fn deadline(&self) -> Option<Time> {
        self.at
    }

    fn on_timer(&mut self, w: &mut Window, f: &crate::cc::FlowState) {
        self.called.lock().unwrap().push(f.now);
        self.at = None;
        w.cwnd = 4.0 * w.mss;
    }
}

/// A timer added by a controller alone (no file outside `tcp/` and `cc/`
/// knows it): it is the connection's next deadline, the connection calls it
/// then, and sends what the window it set allows.
#[test]
fn a_controllers_own_timer_is_the_connections_deadline_and_is_called_on_time() {
    let called = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let c = called.clone();
    let t = TransportSpec {
        init_cwnd: 1,
        handshake: false,
        host_queue_limit: 1000,
        ..spec()
    };
    let make: MakeController = std::sync::Arc::new(move || {
        Box::new(OpensAt {
            at: Some(Time::from_us(5)),
            called: c.clone(),
        })
    });
    let mut conn = Conn::new(
        100_000,
        Time::ZERO,
        None,
        t.protocol,
        &t,
        Params::plugged(make, crate::cc::Flags::NEWRENO, &t),
    );
    let mut out = Vec::new();
    conn.open(Time::ZERO, &mut out);
    assert_eq!(seqs(&out), [1], "one segment of window");
    assert_eq!(conn.next_deadline(), Some(Time::from_us(5)));
    out.clear();
    conn.on_timer(Time::from_us(4), &mut out);
    assert!(
        out.is_empty() && called.lock().unwrap().is_empty(),
        "not yet"
    );
    conn.on_timer(Time::from_us(5), &mut out);
    assert_eq!(*called.lock().unwrap(), [Time::from_us(5)]);
    assert_eq!(seqs(&out), [1001, 2001, 3001], "the window it opened");
    assert_eq!(conn.next_deadline(), conn.rto_at, "its timer is cleared");
}

/// A controller that asks for the in-band option (leaving with 0) and keeps
/// the values ACKs echo.
#[derive(Debug)]
struct Listens {
    seen: std::sync::Arc<std::sync::Mutex<Vec<u32>>>,
}

/// `Listens` asks for the option, leaving with 0.
const LISTENS: crate::cc::Flags = crate::cc::Flags {
    inband_option: Some(0),
    ..crate::cc::Flags::NEWRENO
};

impl crate::cc::Controller for Listens {
    fn on_feedback(&mut self, _w: &mut Window, value: u32, _f: &crate::cc::FlowState) {
        self.seen.lock().unwrap().push(value);
    }
}

/// The option on the pipe: data leaves with the controller's value, the
/// pipe rewrites it (7, 3, then 2), and with delayed ACKs the receiver
/// echoes the largest value since its last ACK (7 on the ACK of the first
/// two segments, 2 on the delayed ACK of the third); the reverse path's
/// stamp on the ACKs' own option (100) is not what the sender sees.
#[test]
fn the_receiver_echoes_the_largest_option_since_its_last_ack_to_the_controller() {
    let (plain, out) = opened(10_000, &spec());
    assert!(out
        .iter()
        .all(|s| s.option.is_none() && s.hdr.echo.is_none()));
    drop(plain);
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let s = seen.clone();
    let make: MakeController = std::sync::Arc::new(move || Box::new(Listens { seen: s.clone() }));
    let t = TransportSpec {
        init_cwnd: 3,
        handshake: false,
        host_queue_limit: 1000,
        delayed_ack: true,
        ..spec()
    };
    let mut conn = Conn::new(
        100_000,
        Time::ZERO,
        None,
        t.protocol,
        &t,
        Params::plugged(make, LISTENS, &t),
    );
    let mut out = Vec::new();
    conn.open(Time::ZERO, &mut out);
    assert_eq!(seqs(&out), [1, 1001, 2001]);
    assert!(out.iter().all(|s| s.option == Some(0)));
    let mut acks = Vec::new();
    for (i, (seg, stamp)) in out.iter().zip([7, 3, 2]).enumerate() {
        let a = Arrival {
            seg: *seg,
            sent: Time::ZERO,
            ce: false,
            option: Some(stamp),
        };
        conn.on_receiver_arrival(Time::from_us(10 + i as u64), &a, &mut acks);
    }
    assert_eq!(acks.len(), 1, "one ACK for two full segments");
    assert_eq!((acks[0].hdr.ack, acks[0].hdr.echo), (2001, Some(7)));
    assert_eq!(acks[0].option, Some(0), "ACKs carry the option too");
    let delack = conn.delack_at.expect("the third segment waits");
    conn.on_timer(delack, &mut acks);
    assert_eq!((acks[1].hdr.ack, acks[1].hdr.echo), (3001, Some(2)));
    for (i, ack) in acks.iter().enumerate() {
        let a = Arrival {
            seg: *ack,
            sent: Time::ZERO,
            ce: false,
            option: Some(100),
        };
        conn.on_sender_arrival(delack + Time::from_us(i as u64), &a, &mut Vec::new());
    }
    assert_eq!(*seen.lock().unwrap(), [7, 2]);
}

/// ns-2.35 FullTcp's profile keys (`nagle`, `idle_restart`, `rto_ticks`,
/// `recovery = "reno"`) and the one-way agent's SYN (`oneway_syn`), each
/// against its rule in tcp/tcp-full.cc or tcp/tcp.cc.
fn ns2_spec() -> TransportSpec {
    TransportSpec {
        handshake: false,
        init_cwnd: 10,
        ..spec()
    }
}

/// Send times of the data segments, by payload.
fn data_sends(p: &Pipe) -> Vec<(Time, u32)> {
    p.log
        .iter()
        .filter(|(_, s)| s.to_receiver && s.payload > 0)
        .map(|(t, s)| (*t, s.payload))
        .collect()
}

/// When the ACK of everything up to `ack` reached the sender.
fn ack_arrival(p: &Pipe, ack: u64) -> Time {
    p.log
        .iter()
        .find(|(_, s)| !s.to_receiver && s.hdr.ack >= ack)
        .map(|(t, _)| *t + DELAY)
        .expect("that ACK")
}

#[test]
fn nagle_holds_a_short_segment_exactly_while_data_is_outstanding() {
    // 2.5 segments, a window of 10: without Nagle all three leave at 0; with
    // it the 500 B tail waits until both full segments are acknowledged
    // ("(quiet || nodelay_) && emptying_buffer", quiet = highest_ack_ ==
    // maxseq_), and leaves on that ACK.
    let mut off = Pipe::new(2500, &ns2_spec());
    off.run(&mut deliver_all);
    assert_eq!(
        data_sends(&off),
        vec![(Time::ZERO, 1000), (Time::ZERO, 1000), (Time::ZERO, 500)]
    );
    let mut on = Pipe::new(
        2500,
        &TransportSpec {
            nagle: true,
            ..ns2_spec()
        },
    );
    on.run(&mut deliver_all);
    let sends = data_sends(&on);
    assert_eq!(sends[..2], [(Time::ZERO, 1000), (Time::ZERO, 1000)]);
    assert_eq!(sends[2], (ack_arrival(&on, 2001), 500));
    assert!(ack_arrival(&on, 1001) < sends[2].0, "not on the first ACK");
    assert_eq!(on.conn.bytes_received(), 2500);
}

#[test]
fn nagle_lets_a_retransmission_and_a_half_window_segment_go() {
    let t = TransportSpec {
        nagle: true,
        rwnd: Some(Capacity::Bytes(2000)),
        ..ns2_spec()
    };
    let mut c = Conn::new(
        10_000,
        Time::ZERO,
        None,
        t.protocol,
        &t,
        Params::new(t.protocol, &t),
    );
    c.snd_una = 1;
    c.snd_max = 1001;
    // 999 B: 2·999 < 2000, held; 1000 B is a full segment.
    assert!(c.nagle_holds(1001, 999));
    assert!(!c.nagle_holds(1001, 1000));
    assert!(!c.nagle_holds(1, 999), "a retransmission goes");
    c.snd_una = 1001;
    assert!(!c.nagle_holds(1001, 999), "nothing outstanding");
    let wide = TransportSpec {
        rwnd: Some(Capacity::Bytes(1998)),
        ..t
    };
    let mut c = Conn::new(
        10_000,
        Time::ZERO,
        None,
        t.protocol,
        &wide,
        Params::new(t.protocol, &wide),
    );
    c.snd_una = 1;
    c.snd_max = 1001;
    assert!(
        !c.nagle_holds(1001, 999),
        "at least half the receiver's window"
    );
}

#[test]
fn the_oneway_syn_is_a_bare_header_and_data_waits_for_its_ack() {
    let t = TransportSpec {
        oneway_syn: true,
        ..ns2_spec()
    };
    let mut p = Pipe::new(5000, &t);
    p.run(&mut deliver_all);
    let (t0, syn) = p.log[0];
    assert_eq!((t0, syn.hdr.seq, syn.payload), (Time::ZERO, 0, 0));
    assert!(
        syn.hdr.flags & SYN != 0 && p.conn.header() == 40,
        "a 40 B SYN"
    );
    // Its ACK is back after the SYN's serialization and two delays.
    let back = Time(40 * RATE_PS_PER_BYTE) + DELAY * 2;
    let sends = data_sends(&p);
    assert_eq!(sends.len(), 5);
    assert!(sends.iter().all(|&(at, _)| at == back), "{sends:?}");
    let to_receiver: Vec<_> = p.log.iter().filter(|(_, s)| s.to_receiver).collect();
    assert_eq!(
        to_receiver.len(),
        6,
        "the SYN and the data: no third packet, no FIN"
    );
    assert!(to_receiver.iter().all(|(_, s)| s.hdr.flags & FIN == 0));
    assert!(p.conn.is_done());
    let both = TransportSpec::from_value(serde_json::json!({"oneway_syn": true}))
        .unwrap_err()
        .to_string();
    assert!(
        both.starts_with("transport.oneway_syn: needs handshake = false"),
        "{both}"
    );
}

/// A sender with 20 segments outstanding, cwnd 20, and what an ACK of
/// `ack` does to it.
fn twenty_out(t: &TransportSpec) -> Conn {
    let mut c = Conn::new(
        100_000,
        Time::ZERO,
        None,
        t.protocol,
        t,
        Params::new(t.protocol, t),
    );
    c.state = State::Open;
    c.snd_una = 1;
    c.snd_nxt = 20_001;
    c.snd_max = 20_001;
    c.win.cwnd = 20_000.0;
    c
}

#[test]
fn reno_leaves_recovery_on_the_first_new_ack_and_may_cut_again() {
    let t = TransportSpec::from_value(serde_json::json!({
        "profile": "ns2", "mss": "1000B", "rwnd": "100pkt", "host_queue_limit": 1000
    }))
    .unwrap();
    assert_eq!(t.recovery, Recovery::Reno);
    let mut c = twenty_out(&t);
    for _ in 0..3 {
        ack(&mut c, 1, 100);
    }
    // slowdown(CLOSE_SSTHRESH_HALF|CLOSE_CWND_HALF): ssthresh 10, then
    // cwnd_ = ssthresh_ + dupacks_ = 13.
    assert!(c.in_recovery);
    assert_eq!((c.win.ssthresh, c.win.cwnd), (10_000.0, 13_000.0));
    // A partial ACK: pack_action retracts cwnd to ssthresh and leaves;
    // open_cwnd_on_pack_ then opens it by one ACK in congestion avoidance.
    let out = ack(&mut c, 5_001, 100);
    assert!(!c.in_recovery);
    assert_eq!(c.win.cwnd, 10_000.0 + 1000.0 * 1000.0 / 10_000.0);
    assert!(
        out.iter().all(|s| s.hdr.seq != 5_001),
        "no partial-ACK retransmission"
    );
    // Three more duplicates of 5001, below recover_: Reno cuts again
    // (last_cwnd_action_ == CWND_ACTION_DUPACK); ssthresh = (int)(10.1/2).
    for _ in 0..3 {
        ack(&mut c, 5_001, 100);
    }
    assert!(c.in_recovery);
    assert_eq!(c.win.ssthresh, 5_000.0);
    // NewReno (classic) keeps the recovery on the partial ACK, deflated.
    let classic = TransportSpec {
        recovery: Recovery::Classic,
        ..t.clone()
    };
    let mut c = twenty_out(&classic);
    for _ in 0..3 {
        ack(&mut c, 1, 100);
    }
    ack(&mut c, 5_001, 100);
    assert!(c.in_recovery);
    assert_eq!(c.win.cwnd, 13_000.0 - 5_000.0 + 1000.0);
}

#[test]
fn reno_does_not_fast_retransmit_below_a_timeouts_recover() {
    let t = TransportSpec {
        recovery: Recovery::Reno,
        ..spec()
    };
    let mut c = twenty_out(&t);
    c.on_rto(Time::from_us(1000), &mut Vec::new());
    for _ in 0..5 {
        ack(&mut c, 1, 100);
    }
    assert!(!c.in_recovery, "bug_fix_: last_cwnd_action_ is a timeout");
    let e = TransportSpec::from_value(serde_json::json!({"recovery": "reno", "sack": true}))
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("transport.recovery: \"reno\" needs sack = false"),
        "{e}"
    );
}

#[test]
fn rto_ticks_is_ns2s_fixed_point_estimator_in_whole_ticks() {
    let tick = 10_000_000_000u64; // 10 ms in ps
    let t = TransportSpec {
        rto_ticks: true,
        rto_granularity: Time(tick),
        min_rto: Time::from_us(1000),
        ..spec()
    };
    let mut c = twenty_out(&t);
    // 25 ms rounds to 3 ticks: t_srtt_ = 24, t_rttvar_ = 6, t_rtxcur_ =
    // ((6 << 3) + 24) >> 3 = 9 ticks.
    c.rtt_sample(25e9);
    assert_eq!(c.rto, Time(9 * tick));
    // 100 us is less than a tick: 1. delta = 1 - 3 = -2: t_srtt_ = 22,
    // t_rttvar_ = 6 + 2 - (6 >> 2) = 7, t_rtxcur_ = (56 + 22) >> 3 = 9.
    c.rtt_sample(1e8);
    assert_eq!(
        (c.srtt, c.rttvar),
        (Some(22.0 * tick as f64 / 8.0), 7.0 * tick as f64 / 4.0)
    );
    assert_eq!(c.rto, Time(9 * tick));
    // A data-center RTT alone: t_rtxcur_ = ((2 << 3) + 8) >> 3 = 3 ticks,
    // below ns-2's minrto_ of 200 ms, which wins.
    let ns2 = TransportSpec::from_value(serde_json::json!({"profile": "ns2"})).unwrap();
    let mut c = twenty_out(&ns2);
    c.rtt_sample(1e8);
    assert_eq!(c.rto_estimate(), 3.0 * tick as f64);
    assert_eq!(c.rto, Time::from_us(200_000));
    let e = TransportSpec::from_value(serde_json::json!({"rto_ticks": true}))
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("transport.rto_ticks: needs rto_granularity > 0"),
        "{e}"
    );
}

#[test]
fn idle_restart_slow_starts_after_more_whole_ticks_than_the_estimate() {
    let tick = Time::from_us(10_000);
    let t = TransportSpec {
        idle_restart: true,
        rto_ticks: true,
        rto_granularity: tick,
        init_cwnd: 2,
        ..ns2_spec()
    };
    // 20 segments: the window has grown past 2 when the data is all acked.
    let after_idle = |idle_ticks: u64| {
        let mut p = Pipe::new(20_000, &t);
        p.conn.keep_open();
        p.run(&mut deliver_all);
        let grown = p.conn.win.cwnd;
        assert!(grown > 10_000.0);
        // RTT 40 us: 1 tick, t_rtxcur_ = 3 ticks; the last segment left in
        // the first tick, so resuming in tick n has crossed n ticks.
        let now = tick * idle_ticks + Time(1);
        let mut out = Vec::new();
        p.conn.append(now, 1000, true, &mut out);
        (grown, p.conn.win.cwnd)
    };
    let (grown, kept) = after_idle(3);
    assert_eq!(kept, grown, "3 ticks is not more than t_rtxcur_ = 3");
    let (_, restarted) = after_idle(4);
    assert_eq!(restarted, 2000.0, "cwnd_ = wnd_init_");
}
