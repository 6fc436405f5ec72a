//! The fixed benchmarks (`dcnsim bench`, `cargo bench -p dcnsim-core`,
//! `scripts/compare_builds.py`; described in docs/performance.md), each
//! written once here and built from shared tables: the fat-tree fabric, the
//! DCTCP queues and transport, and the web-search workload appear once. The
//! latency-difference study builds its scenarios from the flow-heavy one.

/// The fabric of the fat-tree benchmarks: k = 8, 10 Gbps, 1 us links, ECMP.
macro_rules! fat_tree_k8 {
    () => {
        r#"
[topology]
kind = "fat_tree"
k = 8
link = { rate = "10Gbps", delay = "1us" }

[forwarding]
policy = "ecmp"
"#
    };
}

/// DCTCP hosts and 1000-packet queues marking at K = 65 packets.
macro_rules! dctcp {
    () => {
        r#"
[network]
queue = { capacity = "1000pkt", aqm = { kind = "threshold", k = "65pkt" } }

[transport]
protocol = "dctcp"
min_rto = "1ms"
"#
    };
}

/// Flows of web-search sizes arriving as a Poisson process at 50% load from
/// every host to random hosts.
macro_rules! websearch_flows {
    () => {
        r#"
[[traffic.workloads]]
src = "all"
dst = "random"
cdf = "websearch"
load = 0.5
"#
    };
}

/// The datagram benchmark: the k = 8 fat-tree with Poisson datagram traffic
/// from every host to random hosts at 50% load, 20 ms.
const DATAGRAM: &str = concat!(
    r#"
name = "bench: k=8 fat-tree, 10Gbps, 50% Poisson datagrams, 20ms"
seed = 1
stop_time = "20ms"
"#,
    fat_tree_k8!(),
    r#"
[[traffic.streams]]
src = "all"
dst = "random"
load = 0.5
pattern = "poisson"
size = "1500B"
"#
);

/// The TCP benchmark: the same fat-tree with DCTCP flows arriving as a
/// Poisson process at 50% load with web-search sizes, K = 65 packets, 20 ms.
const TCP: &str = concat!(
    r#"
name = "bench: k=8 fat-tree, 10Gbps, DCTCP web-search flows at 50% load, 20ms"
seed = 1
stop_time = "20ms"
"#,
    fat_tree_k8!(),
    dctcp!(),
    websearch_flows!()
);

/// The pFabric benchmark: the same fat-tree and web-search flows at 50% load
/// with pFabric hosts and 24-packet pFabric switch ports (the paper's
/// reference buffer), 20 ms.
const PFABRIC: &str = concat!(
    r#"
name = "bench: k=8 fat-tree, 10Gbps, pFabric web-search flows at 50% load, 20ms"
seed = 1
stop_time = "20ms"
"#,
    fat_tree_k8!(),
    r#"
[network]
queue = { kind = "pfabric", capacity = "24pkt" }

[transport]
protocol = "pfabric"
"#,
    websearch_flows!()
);

/// Benchmark B1, the headline figure (issue 10): the TCP benchmark's fabric,
/// queues and workload (k = 8 fat-tree, 10 Gbps, 1 us links, 1000-packet
/// queues, DCTCP K = 65, web-search sizes, Poisson arrivals at 50% load
/// between random pairs, ECMP), run for 1 s with arrivals throughout, about
/// 600 M packet-hops (603 M measured; the issue estimated 300 M).
const B1: &str = concat!(
    r#"
name = "bench B1: k=8 fat-tree, 10Gbps, DCTCP web-search flows at 50% load, 1s"
seed = 1
stop_time = "1s"
"#,
    fat_tree_k8!(),
    dctcp!(),
    websearch_flows!()
);

/// The flow-heavy benchmark: the latency-difference seed's 3-tier tree (1
/// core, 2 aggregation switches, 8 ToRs of 16 hosts, 1 Gbps links of 0.2 us,
/// 2.5 us host delay, 150-packet drop-tail queues, NewReno) with its
/// all-to-all DeTail-style background at 50% load: the TCP scheme at 64:4:1
/// of `python/dcnsim/studies/latency_difference`, which builds its scenarios
/// from this one, without its test packets; 500 ms (quick: 50 ms, the
/// study's warm-up).
const FLOWHEAVY: &str = r#"
name = "bench: the first seed's 3-tier tree, NewReno, all-to-all DeTail-style flows at 50% load, 500ms"
seed = 1
stop_time = "500ms"

[topology]
kind = "tree3"
cores = 1
aggs = 2
tors = 8
hosts_per_tor = 16
link = { rate = "1Gbps", delay = "0.2us" }
tor_agg_link = { rate = "1Gbps" }
agg_core_link = { rate = "1Gbps" }

[network]
host_delay = "2.5us"
queue = { kind = "droptail", capacity = "150pkt" }

[forwarding]
policy = "ecmp"

[transport]
protocol = "newreno"

[[traffic.workloads]]
src = "all"
dst = "all"
cdf = "detail"
load = 0.5
"#;

/// The fixed benchmarks: name, scenario (TOML), and the stop time of a quick
/// run (`dcnsim bench --quick`).
pub const BENCH_SCENARIOS: [(&str, &str, &str); 5] = [
    ("datagram", DATAGRAM, "5ms"),
    ("tcp", TCP, "5ms"),
    ("pfabric", PFABRIC, "5ms"),
    ("b1", B1, "100ms"),
    ("flowheavy", FLOWHEAVY, "50ms"),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Scenario;

    /// Every benchmark is a valid scenario.
    #[test]
    fn benchmarks_are_valid() {
        for (name, text, _) in BENCH_SCENARIOS {
            Scenario::from_toml_str(text).unwrap_or_else(|e| panic!("{name}: {e}"));
        }
    }
}
