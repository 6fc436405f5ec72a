//! TCP against closed forms and the seeds' settings: line rate, fairness,
//! DCTCP's queue, recovery by timeout.

mod common;

use common::{port_value, run_toml};
use dcnsim_core::Output;

/// The row of TCP flow `id` in the flows table.
fn tcp_row(out: &Output, id: i64) -> usize {
    let kinds = out.flows.str("kind");
    let ids = out.flows.i64("flow_id");
    (0..kinds.len())
        .find(|&i| kinds[i] == "tcp" && ids[i] == id)
        .expect("flow row")
}

#[test]
fn one_flow_reaches_the_payload_line_rate_and_its_ideal_fct() {
    let out = run_toml(
        r#"
        [topology]
        kind = "star"
        hosts = 2
        link = { rate = "1Gbps", delay = "10us" }
        [[traffic.flows]]
        src = 0
        dst = 1
        size = "10MB"
        "#,
    );
    let r = tcp_row(&out, 0);
    let fct = out.flows.f64("fct_s")[r];
    let ideal = out.flows.f64("ideal_fct_s")[r];
    let goodput = out.flows.f64("goodput_bps")[r];
    let payload_line_rate = 1e9 * 1460.0 / 1500.0;
    assert!(goodput >= 0.97 * payload_line_rate, "goodput {goodput}");
    assert!(
        fct >= ideal && fct <= 1.05 * ideal,
        "fct {fct} ideal {ideal}"
    );
    assert_eq!(out.flows.i64("retransmits")[r], 0);
    assert_eq!(out.flows.i64("bytes_delivered")[r], 10_000_000);
}

/// `n` long flows from hosts 0..n to host n through one switch port, for
/// `stop` of simulated time, with the switch queue given as TOML.
fn dumbbell(protocol: &str, n: usize, rate: &str, delay: &str, queue: &str, stop: &str) -> Output {
    let flows: String = (0..n)
        .map(|i| format!("[[traffic.flows]]\nsrc = {i}\ndst = {n}\nsize = \"10GB\"\n"))
        .collect();
    run_toml(&format!(
        r#"
        stop_time = "{stop}"
        [topology]
        kind = "star"
        hosts = {hosts}
        link = {{ rate = "{rate}", delay = "{delay}" }}
        [network]
        queue = {queue}
        [transport]
        protocol = "{protocol}"
        [trace]
        queues = ["sw0->host{n}"]
        {flows}
        "#,
        hosts = n + 1,
    ))
}

/// Time-weighted mean of the traced queue (packets) from `from` to `to`.
fn mean_queue(out: &Output, from: f64, to: f64) -> f64 {
    let t = out.queues.f64("time_s");
    let q = out.queues.i64("packets");
    let mut area = 0.0;
    for i in 0..t.len() {
        let start = t[i].max(from);
        let end = t.get(i + 1).copied().unwrap_or(to).min(to);
        if end > start {
            area += q[i] as f64 * (end - start);
        }
    }
    area / (to - from)
}

fn utilization(out: &Output, port: &str, rate: f64, secs: f64) -> f64 {
    let names = out.ports.str("port");
    let i = names.iter().position(|n| n == port).expect("port");
    out.ports.i64("bytes_sent")[i] as f64 * 8.0 / (rate * secs)
}

fn jain(out: &Output) -> f64 {
    let x: Vec<f64> = (0..out.flows.rows())
        .filter(|&i| out.flows.str("kind")[i] == "tcp")
        .map(|i| out.flows.i64("bytes_delivered")[i] as f64)
        .collect();
    let sum: f64 = x.iter().sum();
    sum * sum / (x.len() as f64 * x.iter().map(|v| v * v).sum::<f64>())
}

/// Four flows started together through a 100-packet drop-tail port (RTT
/// about 0.4 ms plus queueing), over 2 s.
///
/// With identical 10 us links instead, NewReno shows drop-tail's phase effect
/// (Floyd & Jacobson 1991): every sender's packets reach the full queue at the
/// same offset from its departures, so the same flows lose every time and
/// time out; a deterministic simulator reproduces that exactly.
#[test]
fn long_flows_share_a_bottleneck_fairly() {
    for protocol in ["newreno", "dctcp"] {
        let queue = r#"{ capacity = "100pkt", aqm = { kind = "threshold", k = "20pkt" } }"#;
        let out = dumbbell(protocol, 4, "1Gbps", "100us", queue, "2s");
        let j = jain(&out);
        eprintln!("{protocol}: Jain {j:.4}");
        assert!(j >= 0.95, "{protocol}: Jain's index {j}");
    }
}

#[test]
fn dctcp_holds_the_queue_near_k_at_full_utilization() {
    for (rate, bps, stop) in [("1Gbps", 1e9, 0.1), ("10Gbps", 1e10, 0.02)] {
        let k = 20.0;
        let marking = r#"{ capacity = "200pkt", aqm = { kind = "threshold", k = "20pkt" } }"#;
        let out = dumbbell("dctcp", 4, rate, "10us", marking, &format!("{stop}s"));
        let util = utilization(&out, "sw0->host4", bps, stop);
        let q = mean_queue(&out, stop / 4.0, stop);
        eprintln!("dctcp {rate}: utilization {util:.4}, mean queue {q:.2} pkt");
        assert!(util >= 0.95, "{rate}: utilization {util}");
        assert!(q >= k / 2.0 && q <= 2.0 * k, "{rate}: mean queue {q}");
        // Drop-tail NewReno on the same link fills the buffer.
        let droptail = r#"{ capacity = "200pkt" }"#;
        let out = dumbbell("newreno", 4, rate, "10us", droptail, &format!("{stop}s"));
        let q_reno = mean_queue(&out, stop / 4.0, stop);
        let max = out.queues.i64("packets").iter().copied().max().unwrap_or(0);
        eprintln!("newreno {rate}: mean queue {q_reno:.2} pkt, max {max}");
        assert_eq!(max, 200, "{rate}: drop-tail reaches the buffer size");
        assert!(q_reno > 4.0 * q, "{rate}: {q_reno} vs DCTCP {q}");
    }
}

/// Every packet offered to the bottleneck is dropped for 50 ms: the flow
/// recovers by retransmission timeouts (200 ms minimum, doubling) and finishes.
#[test]
fn a_flow_blacked_out_for_a_while_recovers_by_timeout() {
    let out = run_toml(
        r#"
        [topology]
        kind = "star"
        hosts = 2
        link = { rate = "1Gbps", delay = "10us" }
        [[network.outages]]
        port = "sw0->host1"
        start = "1ms"
        stop = "51ms"
        [[traffic.flows]]
        src = 0
        dst = 1
        size = "1MB"
        "#,
    );
    let r = tcp_row(&out, 0);
    assert!(out.flows.i64("timeouts")[r] >= 1);
    assert!(out.flows.i64("drops")[r] > 0);
    assert_eq!(out.flows.i64("bytes_delivered")[r], 1_000_000);
    let fct = out.flows.f64("fct_s")[r];
    // The first timeout fires at least 200 ms after the last ACK before the outage.
    assert!(fct > 0.2 && fct < 0.3, "fct {fct}");
    // The run ends when the flow has closed, not at a stale timer.
    assert!(out.summary.sim_time_s < fct + 0.001);
}

/// L²DCT favours the young flow: a 200 KB flow joining a long one finishes
/// sooner than under DCTCP, which shares equally.
#[test]
fn l2dct_finishes_a_short_flow_sooner_than_dctcp() {
    let fct = |protocol: &str| {
        let out = run_toml(&format!(
            r#"
            [topology]
            kind = "star"
            hosts = 3
            link = {{ rate = "1Gbps", delay = "10us" }}
            [network]
            queue = {{ capacity = "200pkt", aqm = {{ kind = "threshold", k = "20pkt" }} }}
            [transport]
            protocol = "{protocol}"
            [[traffic.flows]]
            src = 0
            dst = 2
            size = "20MB"
            [[traffic.flows]]
            src = 1
            dst = 2
            size = "500KB"
            start = "20ms"
            "#
        ));
        out.flows.f64("fct_s")[tcp_row(&out, 1)]
    };
    let (dctcp, l2dct) = (fct("dctcp"), fct("l2dct"));
    eprintln!("short-flow FCT: dctcp {dctcp:.6} s, l2dct {l2dct:.6} s");
    // Equal sharing: about 500 KB at half of 1 Gbps (8 ms).
    assert!(dctcp > 7e-3, "{dctcp}");
    assert!(l2dct < 0.8 * dctcp, "l2dct {l2dct} vs dctcp {dctcp}");
}

/// A connection's state is let go once both ends are done and nothing of it
/// is pending, and its slot goes to a later flow: about 2,000 short flows
/// arriving one after another at 30 % load are held a few at a time, and
/// every one of them still reports its whole size delivered, at least its
/// ideal FCT and at least one data packet per MSS. Incast rounds (new connections each round,
/// which read their timeouts after earlier ones were let go) and a capture of
/// the aggregator's deliveries (which names each connection's ports) run
/// alongside.
#[test]
fn connections_are_let_go_when_done_and_their_slots_reused() {
    let out = run_toml(
        r#"
        seed = 3
        [topology]
        kind = "star"
        hosts = 8
        link = { rate = "10Gbps", delay = "2us" }
        [transport]
        protocol = "dctcp"
        min_rto = "1ms"
        [[traffic.workloads]]
        src = "all"
        dst = "random"
        cdf = "detail"
        load = 0.3
        stop = "60ms"
        [[traffic.incast]]
        aggregator = 0
        workers = [1, 2, 3, 4, 5, 6, 7]
        sru = "20KB"
        rounds = 20
        persistent = false
        start = "1ms"
        [trace]
        pcap = ["host0"]
        "#,
    );
    let kinds = out.flows.str("kind");
    let tcp: Vec<usize> = (0..kinds.len()).filter(|&i| kinds[i] == "tcp").collect();
    let peak = out.summary.tcp_connections_peak as usize;
    assert!(tcp.len() > 1500, "{} flows", tcp.len());
    assert!(
        peak * 10 < tcp.len(),
        "{peak} connections held for {} flows",
        tcp.len()
    );
    let col = |name| out.flows.i64(name);
    let (size, bytes, sent) = (
        col("size_bytes"),
        col("bytes_delivered"),
        col("packets_sent"),
    );
    let (fct, ideal) = (out.flows.f64("fct_s"), out.flows.f64("ideal_fct_s"));
    for &i in &tcp {
        assert_eq!(bytes[i], size[i], "flow row {i}");
        assert!(
            fct[i] >= ideal[i],
            "flow row {i}: fct {} ideal {}",
            fct[i],
            ideal[i]
        );
        assert!(sent[i] >= (size[i] + 1459) / 1460, "flow row {i}");
    }
    assert_eq!(out.rounds.rows(), 20);
    assert!(!out.pcaps.is_empty() && out.pcaps[0].1.len() > 24);
}

/// `[[traffic.flows]]` of (source, destination, size, start).
fn flows_toml(flows: &[(u32, u32, &str, &str)]) -> String {
    flows
        .iter()
        .map(|(src, dst, size, start)| {
            format!("[[traffic.flows]]\nsrc = {src}\ndst = {dst}\nsize = \"{size}\"\nstart = \"{start}\"\n")
        })
        .collect()
}

/// Run a star's scenario (`scenario` given the `[trace] queues` list) with
/// the NICs of hosts `0..hosts` untraced, so that what they will be doing a
/// host delay ahead is known, and traced, so that every TCP packet reaches
/// its NIC at a `HostSend` event. With no two events at one picosecond the
/// runs must agree: packet-hops, flows, and ports with their deepest queues
/// and drops. Returns the untraced run and the traced one.
fn nics_untraced_and_traced(hosts: u32, scenario: impl Fn(&str) -> String) -> (Output, Output) {
    let nics = (0..hosts)
        .map(|h| format!("\"host{h}->sw0\""))
        .collect::<Vec<_>>()
        .join(", ");
    let (ahead, at_host_send) = (run_toml(&scenario("")), run_toml(&scenario(&nics)));
    assert_eq!(ahead.summary.packet_hops, at_host_send.summary.packet_hops);
    assert_eq!(ahead.flows, at_host_send.flows);
    assert_eq!(ahead.ports, at_host_send.ports);
    (ahead, at_host_send)
}

/// A receiver's segment (an ACK) that will find its NIC idle a host delay
/// after it is sent starts serializing then, committed when sent, without a
/// `HostSend` event. Host 0 both sends and receives, so ACKs and data share
/// its NIC.
#[test]
fn acks_committed_ahead_to_an_idle_nic_match_host_send_events() {
    let flows = flows_toml(&[
        (0, 4, "1.3MB", "0.11ms"),
        (3, 0, "0.7MB", "0.53ms"),
        (1, 4, "2.1MB", "0.29ms"),
        (2, 4, "0.9MB", "1.07ms"),
    ]);
    let (ahead, at_host_send) = nics_untraced_and_traced(5, |traced| {
        format!(
            r#"
seed = 5
stop_time = "40ms"
[topology]
kind = "star"
hosts = 5
link = {{ rate = "1Gbps", delay = "1.37us" }}
[network]
host_delay = "2.3us"
queue = {{ capacity = "40pkt", aqm = {{ kind = "threshold", k = "11pkt" }} }}
[transport]
protocol = "dctcp"
{flows}
[trace]
queues = [{traced}]
"#
        )
    });
    let (a, h) = (&ahead.summary, &at_host_send.summary);
    // Almost all of the ~3,400 ACKs find their NIC idle.
    assert!(
        a.events + 3000 < h.events,
        "{} against {} events",
        a.events,
        h.events
    );
    let done = ahead
        .flows
        .f64("fct_s")
        .iter()
        .filter(|f| f.is_finite())
        .count();
    assert_eq!(done, 4);
}

/// A packet that will find its NIC still sending what was queued ahead of
/// it, a host delay after it is sent, joins the NIC's queue when sent,
/// without a `HostSend` event. Two flows leave each of three hosts, so their
/// drop-tail NIC queues (no AQM) fill: a 4-packet queue overflows, a
/// 500-packet one records its deepest queue below its capacity (the depth a
/// packet joining ahead finds is the one it would find a host delay later).
/// The runs stop while the NICs are busy.
#[test]
fn packets_joining_a_busy_nic_ahead_match_host_send_events() {
    let flows = flows_toml(&[
        (0, 3, "1.3MB", "0.11ms"),
        (0, 4, "0.7MB", "0.53ms"),
        (1, 5, "2.1MB", "0.29ms"),
        (1, 3, "0.9MB", "1.07ms"),
        (2, 4, "1.7MB", "0.71ms"),
        (2, 5, "3.1MB", "0.37ms"),
    ]);
    // What the NICs of `hosts` report in `column`, summed.
    let nic = |out: &Output, hosts: std::ops::Range<u32>, column: &str| -> u64 {
        hosts
            .map(|h| port_value(out, &format!("host{h}->sw0"), column) as u64)
            .sum()
    };
    for (capacity, overflows) in [("4pkt", true), ("500pkt", false)] {
        let (ahead, at_host_send) = nics_untraced_and_traced(6, |traced| {
            format!(
                r#"
seed = 9
stop_time = "23.7ms"
[topology]
kind = "star"
hosts = 6
link = {{ rate = "1Gbps", delay = "1.37us" }}
[network]
host_delay = "2.3us"
queue = {{ capacity = "30pkt" }}
nic_queue = {{ capacity = "{capacity}" }}
[transport]
protocol = "newreno"
host_queue_limit = 8
{flows}
[trace]
queues = [{traced}]
"#
            )
        });
        let (a, h) = (&ahead.summary, &at_host_send.summary);
        assert!(a.stopped_at_stop_time);
        assert_eq!(nic(&ahead, 0..3, "packets_dropped") > 0, overflows);
        let deepest = nic(&ahead, 0..1, "max_queue_packets");
        assert!(deepest >= 2 && (overflows || deepest < 500), "{deepest}");
        // Each ACK (from hosts 3 to 5) spares at most its event (committed
        // ahead to an idle NIC); most data segments queue behind others at
        // their NIC (it sends one each 12 us; a host delay is 2.3 us), and
        // at least half of them joined ahead, each sparing its event too.
        let acks = nic(&ahead, 3..6, "packets_sent");
        let data = nic(&ahead, 0..3, "packets_sent");
        assert!(
            a.events + acks + data / 2 < h.events,
            "{capacity}: {} against {} events, {acks} ACKs, {data} data packets",
            a.events,
            h.events
        );
    }
}
