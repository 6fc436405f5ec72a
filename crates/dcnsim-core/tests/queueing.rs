//! Queueing against closed forms and the drop-tail invariants.

mod common;
use common::{port_sent, run_toml, star_overload};

/// A Poisson stream of fixed 1500 B packets into one 1 Gbps NIC is an M/D/1
/// queue: mean wait ρ / (2μ(1 − ρ)) with μ = 1e9 / 12000 packets per second.
fn md1_mean_wait(load: f64, seed: u64) -> (f64, f64) {
    let packets = 1_000_000.0;
    let mu = 1e9 / 12_000.0;
    let stop_s = packets / (load * mu);
    let out = run_toml(&format!(
        r#"
seed = {seed}
[topology]
kind = "star"
hosts = 2
link = {{ rate = "1Gbps", delay = "1us" }}
[[traffic.streams]]
src = 0
dst = 1
load = {load}
size = "1500B"
stop = "{stop_ms}ms"
"#,
        stop_ms = (stop_s * 1e3).round()
    ));
    let f = &out.flows;
    assert_eq!(f.i64("drops")[0], 0);
    // Zero-load latency: two links of 12 us + 1 us; the switch port towards
    // host 1 never queues (it is fed by a link of the same rate).
    let wait = f.f64("mean_latency_s")[0] - 26e-6;
    (wait, load / (2.0 * mu * (1.0 - load)))
}

#[test]
fn md1_mean_wait_at_half_load() {
    let (got, want) = md1_mean_wait(0.5, 1);
    assert!(
        (got / want - 1.0).abs() < 0.03,
        "wait {got} vs M/D/1 {want}"
    );
}

#[test]
fn md1_mean_wait_at_eight_tenths_load() {
    let (got, want) = md1_mean_wait(0.8, 2);
    assert!(
        (got / want - 1.0).abs() < 0.03,
        "wait {got} vs M/D/1 {want}"
    );
}

#[test]
fn overloaded_droptail_port_holds_its_capacity_and_counts_drops() {
    let out = star_overload("50pkt", "queues = [\"sw0->host3\"]");
    let q = &out.queues;
    assert!(q.rows() > 1000);
    let max = q.i64("packets").iter().copied().max().unwrap();
    assert_eq!(max, 50, "a 1.8x overloaded port fills its 50-packet buffer");
    let drops: i64 = out.flows.i64("drops").iter().sum();
    assert!(drops > 0);
    assert_eq!(drops as u64, out.summary.packets_dropped);
    // Offered 1.8 Gbps into 1 Gbps: the port sends at line rate and drops the
    // rest (about 44% of what it is offered).
    let sent = port_sent(&out, "sw0->host3") as f64;
    assert!(
        (sent * 12e-6 / 20e-3 - 1.0).abs() < 0.01,
        "utilization {}",
        sent * 12e-6 / 20e-3
    );
    let offered = out.flows.i64("packets_sent").iter().sum::<i64>() as f64;
    assert!((drops as f64 / offered - 0.8 / 1.8).abs() < 0.02);
}

#[test]
fn byte_capacity_bounds_the_queue_in_bytes() {
    let out = star_overload("64KB", "queues = [\"sw0->host3\"]");
    let max_bytes = out.queues.i64("bytes").iter().copied().max().unwrap();
    assert!(
        max_bytes <= 64_000 && max_bytes > 64_000 - 1500,
        "{max_bytes}"
    );
    assert!(out.summary.packets_dropped > 0);
}

#[test]
fn same_seed_same_tables_other_seed_other_tables() {
    let text = |seed: u64| {
        format!(
            r#"
seed = {seed}
stop_time = "2ms"
[topology]
kind = "fat_tree"
k = 4
[forwarding]
policy = "rps"
[trace]
queues = ["edge7->host15"]
[[traffic.streams]]
src = "all"
dst = "random"
load = 0.7
record = true
"#
        )
    };
    let a = run_toml(&text(5));
    let b = run_toml(&text(5));
    let c = run_toml(&text(6));
    assert!(a.probes.rows() > 1000 && a.queues.rows() > 100);
    assert!(a.probes == b.probes, "probes differ between identical runs");
    assert!(a.flows == b.flows, "flows differ between identical runs");
    assert!(
        a.queues == b.queues,
        "queue traces differ between identical runs"
    );
    assert!(
        a.ports == b.ports,
        "port counters differ between identical runs"
    );
    assert!(a.probes != c.probes, "another seed gave the same probes");
}

/// A FIFO port commits packets to the wire on arrival (no wake-up events)
/// unless something may hold them, such as a queue trace. Both ways serve the
/// same packets at the same times, so where no two events share a
/// picosecond (independent Poisson sources) every table is identical,
/// tail drops included. (Where events tie, a committed packet's arrival is
/// ordered by when it was committed rather than when it started: one
/// convention for simultaneous events against another.)
#[test]
fn scheduled_ports_serve_as_event_driven_ones() {
    let run = |traced: &str| {
        run_toml(&format!(
            r#"
seed = 3
stop_time = "30ms"
[topology]
kind = "star"
hosts = 5
link = {{ rate = "1Gbps", delay = "1us" }}
[network]
queue = {{ capacity = "20pkt", aqm = {{ kind = "threshold", k = "8pkt" }} }}
nic_queue = {{ capacity = "30pkt" }}
[[traffic.streams]]
src = 0
dst = 4
load = 0.26
[[traffic.streams]]
src = 1
dst = 4
load = 0.26
[[traffic.streams]]
src = 2
dst = 4
load = 0.26
[[traffic.streams]]
src = 3
dst = 4
load = 0.26
[trace]
queues = [{traced}]
"#
        ))
    };
    let all = (0..5)
        .flat_map(|h| [format!("\"host{h}->sw0\""), format!("\"sw0->host{h}\"")])
        .collect::<Vec<_>>()
        .join(", ");
    let (scheduled, event_driven) = (run(""), run(&all));
    assert!(event_driven.queues.rows() > 1000);
    // The same packets, with no wake-up event for any queued one.
    let (s, e) = (&scheduled.summary, &event_driven.summary);
    assert_eq!(s.packet_hops, e.packet_hops);
    assert!(
        s.events < e.events * 3 / 4,
        "{} against {} events",
        s.events,
        e.events
    );
    assert_eq!(scheduled.flows, event_driven.flows);
    assert_eq!(scheduled.ports, event_driven.ports);
    let drops: i64 = scheduled.ports.i64("packets_dropped").iter().sum();
    let deepest = scheduled
        .ports
        .i64("max_queue_packets")
        .iter()
        .max()
        .copied();
    assert!(
        drops > 0 && deepest == Some(20),
        "{drops} drops, max queue {deepest:?}"
    );
}
