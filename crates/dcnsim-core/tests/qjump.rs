//! QJUMP (`stage/qjump.rs`) against the seed's bound and its rate.
//!
//! The bound (seed `qjump.txt`, Equations 1–2): with every host limited to
//! one packet of size P per network epoch 2nP/R at the top level, an n-to-1
//! burst of one packet from each host drains within one epoch, however much
//! bulk traffic the lower levels carry (strict priority at every port: a
//! top-level packet waits behind at most the one lower packet on each
//! wire). A level of factor f lets each host send f packets per epoch and
//! assumes only n/f of them send to one destination at once; when all n
//! do, the funnel holds f·n packets and takes f·nP/R = f epochs / 2 to
//! drain: the worst latency grows linearly with f and passes one epoch.

mod common;
use common::run_toml;

const P: u64 = 1500;
/// 1500 B at 10 Gbps, in picoseconds.
const P_OVER_R_PS: u64 = 1_200_000;

/// Every host sends `burst` probes of P bytes at class 7 to host 0 at 2 ms,
/// while every host keeps two long class-0 NewReno flows (to its neighbour
/// and to host 0), so every host link and host 0's link are saturated. The
/// NICs run QJUMP with class 7 at factor `f` and class 0 at a factor large
/// enough not to limit it; every port is strict-priority, and class 0 may
/// hold at most half of a buffer, so class 7 always finds room (the bound
/// is about waiting, not about a buffer the bulk traffic filled).
fn burst(topology: &str, hosts: u32, f: f64, burst: u32) -> String {
    let mut s = format!(
        r#"
stop_time = "3ms"
{topology}
[network]
queue = {{ kind = "priority", capacity = "200pkt", priority = {{ class_limits = ["100pkt"] }} }}
nic_queue = {{ kind = "priority", capacity = "200pkt", priority = {{ class_limits = ["100pkt"] }} }}
[transport]
protocol = "newreno"
[[network.stages]]
kind = "qjump"
ports = "nics"
levels = [{{ class = 7, f = {f} }}, {{ class = 0, f = 100000 }}]
"#
    );
    for h in 0..hosts {
        for dst in [(h + 1) % hosts, 0] {
            if dst != h {
                s += &format!(
                    "[[traffic.flows]]\nsrc = {h}\ndst = {dst}\nsize = \"1GB\"\nclass = 0\n"
                );
            }
        }
        if h != 0 {
            for _ in 0..burst {
                s += &format!(
                    "[[traffic.probes]]\nsrc = {h}\ndst = 0\nsize = \"{P}B\"\ntime = \"2ms\"\nclass = 7\n"
                );
            }
        }
    }
    s
}

const FAT_TREE: &str = r#"[topology]
kind = "fat_tree"
k = 4
link = { rate = "10Gbps", delay = "100ns" }"#;

const LEAF_SPINE: &str = r#"[topology]
kind = "leaf_spine"
leaves = 3
spines = 2
hosts_per_leaf = 8
link = { rate = "10Gbps", delay = "100ns" }"#;

/// The worst probe latency (ps) of a burst, every probe delivered, and the
/// epoch the summary reports.
fn worst(topology: &str, hosts: u32, f: f64, n: u32) -> (u64, u64) {
    let out = run_toml(&burst(topology, hosts, f, n));
    let lat = out.probes.f64("latency_s");
    assert_eq!(lat.len() as u32, (hosts - 1) * n);
    assert!(lat.iter().all(|l| !l.is_nan()), "a probe was lost");
    let worst = lat.iter().fold(0.0f64, |m, &l| m.max(l));
    let epoch = out.summary.stages[0]["epoch_s"].as_f64().unwrap();
    // Bulk traffic ran at the same time: host 0's link is busy.
    assert!(out.summary.packets_delivered > 10 * u64::from(hosts) * 100);
    ((worst * 1e12).round() as u64, (epoch * 1e12).round() as u64)
}

#[test]
fn the_top_level_waits_at_most_one_epoch_on_two_topologies() {
    for (topo, n) in [(FAT_TREE, 16), (LEAF_SPINE, 24)] {
        let (worst, epoch) = worst(topo, n, 1.0, 1);
        assert_eq!(epoch, 2 * u64::from(n) * P_OVER_R_PS);
        assert!(
            worst <= epoch,
            "{n} hosts: worst {worst} ps > epoch {epoch} ps"
        );
        // The n − 1 packets crossed host 0's link one after another.
        assert!(worst >= u64::from(n - 1) * P_OVER_R_PS, "worst {worst} ps");
    }
}

#[test]
fn with_f_above_one_the_worst_latency_grows_with_f() {
    let n = 16u64;
    let mut last = 0;
    for f in [2u32, 4] {
        let (worst, epoch) = worst(FAT_TREE, 16, f64::from(f), f);
        let f = u64::from(f);
        // All f(n − 1) packets cross host 0's link one after another ...
        assert!(worst >= f * (n - 1) * P_OVER_R_PS, "f = {f}: {worst} ps");
        // ... and the funnel drains within f·nP/R plus the path (at most
        // what one epoch allows the top level beyond its nP/R).
        assert!(worst <= (f + 1) * epoch / 2, "f = {f}: {worst} ps");
        assert!(worst > last);
        last = worst;
    }
    // At f = 4 the burst overflows the guess n/f and waits beyond an epoch.
    assert!(last > 2 * n * P_OVER_R_PS, "{last} ps");
}

/// A 4 Gbps constant stream of P-byte packets (one every 3 us) at class 7
/// with f = 3 between two of 16 hosts on a star: epoch 38.4 us.
fn stream(overflow: &str) -> f64 {
    let out = run_toml(&format!(
        r#"
stop_time = "20ms"
[topology]
kind = "star"
hosts = 16
link = {{ rate = "10Gbps", delay = "1us" }}
[[network.stages]]
kind = "qjump"
ports = "nics"
overflow = "{overflow}"
levels = [{{ class = 7, f = 3 }}]
[[traffic.streams]]
src = 1
dst = 2
rate = "4Gbps"
pattern = "constant"
size = "{P}B"
class = 7
record = true
"#
    ));
    // Delivered packets in [5 ms, 15 ms) per second, in bits.
    let rx = out.probes.f64("received_s");
    let n = rx.iter().filter(|&&t| (0.005..0.015).contains(&t)).count();
    n as f64 * (P * 8) as f64 / 0.01
}

#[test]
fn a_level_runs_at_f_packets_per_epoch() {
    // Held: the queue is never empty, each epoch starts as the last ends:
    // 3 · 1500 B per 38.4 us = 0.9375 Gbps.
    let rate = stream("hold");
    assert!((rate / 0.9375e9 - 1.0).abs() < 0.01, "hold: {rate} bps");
    // Dropped: an epoch starts with the first packet after the last ended,
    // packets come every 3 us, so an epoch starts every ⌈38.4/3⌉ · 3 = 39 us.
    let rate = stream("drop");
    let expected = 3.0 * 1500.0 * 8.0 / 39e-6;
    assert!((rate / expected - 1.0).abs() < 0.01, "drop: {rate} bps");
}

#[test]
fn bad_levels_name_the_field() {
    let err = |levels: &str| {
        common::error_of(&format!(
            r#"
[topology]
kind = "star"
hosts = 2
[[network.stages]]
kind = "qjump"
ports = "nics"
levels = {levels}
"#
        ))
    };
    assert_eq!(
        err("[{ class = 7, f = 0.5 }]"),
        "network.stages[0].levels[0].f: a throughput factor is at least 1, got 0.5"
    );
    assert_eq!(
        err("[{ class = 8, f = 1 }]"),
        "network.stages[0].levels[0].class: 802.1Q classes are 0 to 7, got 8"
    );
    let nine = (0..9)
        .map(|c| format!("{{ class = {}, f = 1 }}", c % 8))
        .collect::<Vec<_>>()
        .join(", ");
    assert_eq!(
        err(&format!("[{nine}]")),
        "network.stages[0].levels: at most 8 levels (one per 802.1Q class), got 9"
    );
}
