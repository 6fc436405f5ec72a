//! An application written here, outside the crate, attached to a run as a
//! Rust program attaches one (`Simulation::attach_app`): it sends datagrams
//! and answers them, sets timers, opens TCP flows and writes operation rows,
//! which are checked against the closed forms of an idle star.

mod common;

use dcnsim_core::app::{Application, Context, Datagram, Delivered, Op, OpenFlow};
use dcnsim_core::units::Time;
use dcnsim_core::{Scenario, Simulation};

/// 1 Gbps links of 1 us: a byte takes 8 ns.
const LINK_PS_PER_BYTE: u64 = 8_000;
const DELAY_PS: u64 = 1_000_000;
/// TCP/IP headers and the default MSS.
const HEADER: u64 = 40;
const MSS: u64 = 1460;

/// One packet of `bytes` from one host to another of the star: two links,
/// store and forward.
fn one_way_ps(bytes: u64) -> u64 {
    2 * (bytes * LINK_PS_PER_BYTE + DELAY_PS)
}

/// The handshake's last ACK, sent ahead of the data on the sender's link
/// (`ideal_fct_s` leaves it out).
const ACK_PS: u64 = HEADER * LINK_PS_PER_BYTE;

/// A flow of `segments` full segments on an idle path: the handshake (SYN
/// and SYN-ACK), its last ACK, then the segments back to back through the
/// sender's link, the last one also through the switch's.
fn fct_ps(segments: u64) -> u64 {
    let wire = (MSS + HEADER) * LINK_PS_PER_BYTE;
    2 * one_way_ps(HEADER) + ACK_PS + (segments + 1) * wire + 2 * DELAY_PS
}

/// Pings host 1 from host 0 with a datagram that host 1 answers, and at
/// `FLOWS_AT` opens three flows on disjoint paths of the star (1→2, 3→4,
/// 5→6) of 3, 1 and 2 segments. Rows: the ping's round trip (op 0), and
/// each flow's completion (ops 1..=3, `value` its flow id).
#[derive(Default)]
struct Pinger {
    /// Flow id → (op id, source, size, opened at).
    flows: Vec<(u32, u64, u32, u64, Time)>,
}

const FLOWS_AT: Time = Time(1_000_000_000);
const PING: u32 = 300;
const TAG_PING: u32 = 7;
const TAG_PONG: u32 = 8;

impl Application for Pinger {
    fn start(&mut self, cx: &mut dyn Context) {
        cx.send_datagram(Datagram {
            src: 0,
            dst: 1,
            size: PING,
            class: 0,
            tag: TAG_PING,
        });
        cx.set_timer(FLOWS_AT, 42);
    }

    fn on_datagram(&mut self, cx: &mut dyn Context, d: &Delivered) {
        let g = d.datagram;
        match g.tag {
            TAG_PING => cx.send_datagram(Datagram {
                src: g.dst,
                dst: g.src,
                tag: TAG_PONG,
                ..g
            }),
            TAG_PONG => cx.write_op(Op {
                id: 0,
                host: g.dst,
                start: Time::ZERO,
                end: Some(cx.now()),
                bytes: 2 * u64::from(g.size),
                outcome: "done",
                value: f64::from(d.hops),
            }),
            other => panic!("unexpected tag {other}"),
        }
    }

    fn on_timer(&mut self, cx: &mut dyn Context, token: u64) {
        assert_eq!((token, cx.now()), (42, FLOWS_AT));
        for (op, src, segments) in [(1, 1, 3), (2, 3, 1), (3, 5, 2)] {
            let size = segments * MSS;
            let id = cx.open_flow(OpenFlow {
                src,
                dst: src + 1,
                size,
                deadline: None,
                class: 0,
                protocol: None,
                op: Some(op),
                keep_open: false,
            });
            self.flows.push((id, op.into(), src, size, cx.now()));
        }
    }

    fn on_flow_done(&mut self, cx: &mut dyn Context, flow: u32) {
        let &(_, op, host, bytes, start) = self.flows.iter().find(|f| f.0 == flow).unwrap();
        assert_eq!(cx.flow(flow).bytes_received, bytes);
        cx.write_op(Op {
            id: op,
            host,
            start,
            end: Some(cx.now()),
            bytes,
            outcome: "done",
            value: f64::from(flow),
        });
    }
}

#[test]
fn an_application_of_a_test_opens_flows_sends_datagrams_and_writes_rows() {
    let sc = Scenario::from_toml_str(
        r#"
        [topology]
        kind = "star"
        hosts = 7
        link = { rate = "1Gbps", delay = "1us" }
        [[traffic.flows]]
        src = 0
        dst = 6
        size = "1KB"
        "#,
    )
    .unwrap();
    let mut sim = Simulation::new(&sc);
    sim.attach_app("pinger", Box::new(Pinger::default()));
    let out = sim.run(&mut |_| true).unwrap();
    let s = &out.summary;
    assert_eq!(s.packets_injected, s.packets_delivered, "nothing lost");

    let ops = &out.ops;
    assert_eq!(ops.rows(), 4);
    assert!(ops.str("application").iter().all(|a| a == "pinger"));
    assert_eq!(ops.i64("app"), [0, 0, 0, 0]);
    // The ping first; then the flows complete in the order of their sizes.
    assert_eq!(ops.i64("op_id"), [0, 2, 3, 1]);
    assert_eq!(ops.i64("host"), [0, 3, 5, 1]);
    let mss = MSS as i64;
    assert_eq!(
        ops.i64("bytes"),
        [2 * i64::from(PING), mss, 2 * mss, 3 * mss]
    );
    let took = |i: usize| ops.f64("end_s")[i] - ops.f64("start_s")[i];
    let close = |got: f64, ps: u64| (got - ps as f64 * 1e-12).abs() < 1e-12;
    let ping = 2 * one_way_ps(PING.into());
    assert!(close(took(0), ping), "ping {} vs {ping} ps", took(0));
    assert_eq!(ops.f64("value")[0], 2.0, "the answer crossed two links");
    for (row, segments) in [(1, 1), (2, 2), (3, 3)] {
        let fct = fct_ps(segments);
        assert!(
            close(took(row), fct),
            "{segments} segments: {} vs {fct} ps",
            took(row)
        );
        assert_eq!(ops.f64("start_s")[row], 1e-3);
    }

    // The flows table: the listed flow first, then the application's in the
    // order opened, named by the application and its operation.
    let f = &out.flows;
    assert_eq!(f.str("origin"), ["flow", "pinger", "pinger", "pinger"]);
    assert_eq!(f.i64("app"), [-1, 0, 0, 0]);
    assert_eq!(f.i64("round"), [-1, 1, 2, 3]);
    assert_eq!(f.i64("src"), [0, 1, 3, 5]);
    let ids: Vec<i64> = ops.f64("value")[1..].iter().map(|&v| v as i64).collect();
    assert_eq!(ids, [2, 3, 1], "flow ids in completion order");
    for id in 1..4 {
        let (fct, ideal) = (f.f64("fct_s")[id], f.f64("ideal_fct_s")[id]);
        assert!(
            close(fct - ideal, ACK_PS),
            "flow {id}: {fct} vs ideal {ideal}"
        );
    }
    assert_eq!(out.rounds.rows(), 0, "no incast");
}

/// Instances of one name are numbered in the order attached; a scenario's
/// applications come first.
#[test]
fn attached_applications_are_numbered_by_name_after_the_scenarios() {
    struct Once(u32);
    impl Application for Once {
        fn start(&mut self, cx: &mut dyn Context) {
            cx.write_op(Op {
                id: self.0.into(),
                host: 0,
                start: cx.now(),
                end: None,
                bytes: 0,
                outcome: "noted",
                value: f64::NAN,
            });
        }
    }
    let sc = Scenario::from_toml_str(
        r#"
        [topology]
        kind = "star"
        hosts = 3
        [[traffic.incast]]
        aggregator = 0
        workers = "all"
        sru = "3KB"
        rounds = 2
        "#,
    )
    .unwrap();
    let mut sim = Simulation::new(&sc);
    for i in 0..2 {
        sim.attach_app("once", Box::new(Once(i)));
    }
    sim.attach_app("other", Box::new(Once(9)));
    let out = sim.run(&mut |_| true).unwrap();
    let ops = &out.ops;
    let rows: Vec<(String, i64, i64)> = (0..ops.rows())
        .map(|i| {
            let name = ops.str("application")[i].clone();
            (name, ops.i64("app")[i], ops.i64("op_id")[i])
        })
        .collect();
    let expect = |n: &str, a, o| (n.to_string(), a, o);
    assert_eq!(
        rows,
        [
            expect("once", 0, 0),
            expect("once", 1, 1),
            expect("other", 0, 9),
            expect("incast", 0, 0),
            expect("incast", 0, 0),
            expect("incast", 0, 1),
            expect("incast", 0, 1),
        ]
    );
    assert!(ops.f64("end_s")[0].is_nan(), "unfinished");
    assert_eq!(out.rounds.i64("flows"), [2, 2]);
    assert_eq!(out.rounds.i64("bytes"), [6000, 6000]);
}

/// `[[traffic.web_search]]` on an idle star: a query is a 64 B request to
/// each worker and its answer of `total` / n bytes. With two workers of 3
/// segments each the answers share the aggregator's link, so a query takes
/// the request's one way, a 3-segment flow and 3 more segments through that
/// link, plus at most the 512 ns by which the second request leaves the
/// aggregator after the first (the second handshake's packets queue behind
/// the first's); the next query leaves `gap` after.
#[test]
fn web_search_queries_take_a_request_and_the_answers() {
    let out = common::run_toml(
        r#"
        [topology]
        kind = "star"
        hosts = 3
        link = { rate = "1Gbps", delay = "1us" }
        [[traffic.web_search]]
        aggregator = 0
        workers = "all"
        total = "8760B"
        queries = 2
        gap = "1ms"
        "#,
    );
    let ops = &out.ops;
    assert_eq!(ops.rows(), 2);
    assert!(ops.str("application").iter().all(|a| a == "web_search"));
    assert_eq!(ops.i64("op_id"), [0, 1]);
    assert_eq!(ops.i64("bytes"), [2 * 3 * MSS as i64; 2]);
    assert_eq!(ops.str("outcome"), ["done", "done"]);
    let took = |i: usize| ops.f64("end_s")[i] - ops.f64("start_s")[i];
    let wire = (MSS + HEADER) * LINK_PS_PER_BYTE;
    let srt = one_way_ps(64) + fct_ps(3) + 3 * wire;
    for q in 0..2 {
        let extra = took(q) - srt as f64 * 1e-12;
        assert!(
            (-1e-12..=512e-9).contains(&extra),
            "query {q}: {} vs {srt} ps",
            took(q)
        );
    }
    assert_eq!(ops.f64("start_s")[1], ops.f64("end_s")[0] + 1e-3);
    assert_eq!(out.flows.rows(), 4, "a new connection per answer");
}

/// `[[traffic.incast]]` with `spread` (the Packet Slicing seed, §IV.B.3: "sending
/// time of each flow in the 10ms time interval with the uniform distribution"):
/// each worker opens its response at its own time, uniform in [0, spread) after
/// its round's start; without `spread` every worker starts at the round's start.
/// 200 workers of one 1 KB segment each (a new connection per response), two
/// rounds: each round's starts fill its 10 ms evenly (Pearson's chi-square over
/// ten 1 ms bins below 27.88, P = 0.001 for 9 degrees of freedom), and the second
/// round starts only when the last response of the first is complete.
#[test]
fn incast_spread_starts_each_worker_uniformly_within_the_spread() {
    let text = |spread: &str| {
        format!(
            r#"
            [topology]
            kind = "star"
            hosts = 201
            link = {{ rate = "10Gbps", delay = "1us" }}
            [[traffic.incast]]
            aggregator = 0
            workers = "all"
            sru = "1KB"
            rounds = 2
            persistent = false
            {spread}
            "#
        )
    };
    let together = common::run_toml(&text(""));
    let starts = together.flows.f64("start_s");
    assert_eq!(starts.len(), 400);
    assert!(starts[..200].iter().all(|&s| s == starts[0]));

    let out = common::run_toml(&text("spread = \"10ms\""));
    let (ops, starts) = (&out.ops, out.flows.f64("start_s"));
    assert_eq!((ops.rows(), starts.len()), (400, 400));
    // Each round's start, and the end of its last response.
    let round = |r: i64, column: &str| -> Vec<f64> {
        (0..400)
            .filter(|&i| ops.i64("op_id")[i] == r)
            .map(|i| ops.f64(column)[i])
            .collect()
    };
    let begins = [round(0, "start_s")[0], round(1, "start_s")[0]];
    let first_end = round(0, "end_s").into_iter().fold(0.0, f64::max);
    assert_eq!(begins[1], first_end, "the barrier: after the last response");
    for (r, &begin) in begins.iter().enumerate() {
        let end = begins.get(r + 1).copied().unwrap_or(f64::INFINITY);
        let mut bins = [0u32; 10];
        for &s in starts.iter().filter(|&&s| (begin..end).contains(&s)) {
            bins[(((s - begin) / 1e-3) as usize).min(9)] += 1;
        }
        assert_eq!(bins.iter().sum::<u32>(), 200, "round {r}: {bins:?}");
        let chi2: f64 = bins
            .iter()
            .map(|&b| (f64::from(b) - 20.0).powi(2) / 20.0)
            .sum();
        assert!(chi2 < 27.88, "round {r}: {bins:?}");
    }
}
