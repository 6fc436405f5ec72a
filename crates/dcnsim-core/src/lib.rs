//! # dcnsim-core
//!
//! A packet-level simulator of data center networks. The layers, bottom up:
//!
//! - [`units`]: integer time (picoseconds), rates and sizes, parsed exactly from
//!   the way people write them (`"10Gbps"`, `"0.2us"`, `"64KB"`).
//! - [`scenario`]: the user's description of a run, validated once; every
//!   error names the field path and the reason.
//! - [`topology`]: builders for star, three-tier tree, fat-tree, leaf-spine and
//!   custom topologies; [`network`] turns a topology into egress ports and
//!   [`routing`] into equal-cost routing tables.
//! - Mechanisms along independent axes: [`queue`] disciplines at ports,
//!   [`forwarding`] policies at switches, [`traffic`] sources at hosts.
//! - [`engine`]: the deterministic event queue; [`sim`]: the event loop that
//!   moves packets; [`records`]: the tables and summary a run produces.
//!
//! ```
//! use dcnsim_core::{run, Scenario};
//! let sc = Scenario::from_toml_str(r#"
//!     [topology]
//!     kind = "star"
//!     hosts = 2
//!     link = { rate = "1Gbps", delay = "1us" }
//!     [[traffic.probes]]
//!     src = 0
//!     dst = 1
//! "#).unwrap();
//! let out = run(&sc, &mut |_| true).unwrap();
//! // Two links, each 12 us of serialization plus 1 us of propagation.
//! assert_eq!(out.probes.f64("latency_s")[0], 26e-6);
//! ```

pub mod agent;
pub mod apps;
mod cache;
pub mod cc;
pub mod engine;
pub mod error;
pub mod forwarding;
pub mod network;
pub mod packet;
pub mod pcap;
pub mod queue;
pub mod records;
pub mod routing;
pub mod scenario;
pub mod sim;
pub mod stage;
pub mod tcp;
pub mod topology;
pub mod traffic;
pub mod units;
pub mod workload;

pub use records::{Column, Output, Sink, Summary, Table};
pub use scenario::{Scenario, ScenarioError};

/// What a scenario may name on each axis (`dcnsim list`), from the registries
/// themselves, so the list is never out of date.
pub fn names() -> Vec<(&'static str, Vec<&'static str>)> {
    use strum::VariantNames;
    vec![
        ("topologies", topology::KINDS.to_vec()),
        ("protocols", cc::Protocol::VARIANTS.to_vec()),
        ("queues", queue::QueueKind::VARIANTS.to_vec()),
        ("aqms", queue::AqmSpec::VARIANTS.to_vec()),
        ("policies", forwarding::Policy::VARIANTS.to_vec()),
        ("agents", agent::AgentKind::VARIANTS.to_vec()),
        ("stages", stage::StageKind::VARIANTS.to_vec()),
        ("cdfs", workload::Cdf::NAMES.to_vec()),
    ]
}
pub use sim::{Aborted, Progress, Simulation};

/// Run a validated scenario. `hook` sees progress about every quarter second of
/// wall time and may abort the run by returning `false`.
pub fn run(sc: &Scenario, hook: &mut dyn FnMut(&Progress) -> bool) -> Result<Output, Aborted> {
    Simulation::new(sc).run(hook)
}

/// Run a validated scenario, sending its recorded rows (probes, queue and flow
/// traces) to `sink` in chunks as it goes instead of holding them to the end.
pub fn run_streamed(
    sc: &Scenario,
    hook: &mut dyn FnMut(&Progress) -> bool,
    sink: Sink,
) -> Result<Output, Aborted> {
    Simulation::new(sc).run_streamed(hook, sink)
}

/// The fixed benchmark: a k=8 fat-tree of 10 Gbps, 1 us links with Poisson
/// datagram traffic from every host to random hosts at 50% load, 20 ms.
pub const BENCH_SCENARIO: &str = r#"
name = "bench: k=8 fat-tree, 10Gbps, 50% Poisson datagrams, 20ms"
seed = 1
stop_time = "20ms"

[topology]
kind = "fat_tree"
k = 8
link = { rate = "10Gbps", delay = "1us" }

[forwarding]
policy = "ecmp"

[[traffic.streams]]
src = "all"
dst = "random"
load = 0.5
pattern = "poisson"
size = "1500B"
"#;

/// The fabric, queues, transport and workload of the TCP benchmark and B1
/// (their TOML tables; the name and stop time go before them).
macro_rules! dctcp_websearch {
    () => {
        r#"
[topology]
kind = "fat_tree"
k = 8
link = { rate = "10Gbps", delay = "1us" }

[network]
queue = { capacity = "1000pkt", aqm = { kind = "threshold", k = "65pkt" } }

[forwarding]
policy = "ecmp"

[transport]
protocol = "dctcp"
min_rto = "1ms"

[[traffic.workloads]]
src = "all"
dst = "random"
cdf = "websearch"
load = 0.5
"#
    };
}

/// The TCP benchmark: the same fat-tree with DCTCP flows arriving as a
/// Poisson process at 50% load with web-search sizes, K = 65 packets, 20 ms.
pub const BENCH_TCP_SCENARIO: &str = concat!(
    r#"
name = "bench: k=8 fat-tree, 10Gbps, DCTCP web-search flows at 50% load, 20ms"
seed = 1
stop_time = "20ms"
"#,
    dctcp_websearch!()
);

/// The pFabric benchmark: the same fat-tree and web-search flows at 50% load
/// with pFabric hosts and 24-packet pFabric switch ports (the paper's
/// reference buffer), 20 ms.
pub const BENCH_PFABRIC_SCENARIO: &str = r#"
name = "bench: k=8 fat-tree, 10Gbps, pFabric web-search flows at 50% load, 20ms"
seed = 1
stop_time = "20ms"

[topology]
kind = "fat_tree"
k = 8
link = { rate = "10Gbps", delay = "1us" }

[network]
queue = { kind = "pfabric", capacity = "24pkt" }

[forwarding]
policy = "ecmp"

[transport]
protocol = "pfabric"

[[traffic.workloads]]
src = "all"
dst = "random"
cdf = "websearch"
load = 0.5
"#;

/// Benchmark B1, the headline figure (issue 10): the TCP benchmark's fabric,
/// queues and workload (k = 8 fat-tree, 10 Gbps, 1 us links, 1000-packet
/// queues, DCTCP K = 65, web-search sizes, Poisson arrivals at 50% load
/// between random pairs, ECMP), run for 1 s with arrivals throughout, about
/// 600 M packet-hops (603 M measured; the issue estimated 300 M).
pub const BENCH_B1_SCENARIO: &str = concat!(
    r#"
name = "bench B1: k=8 fat-tree, 10Gbps, DCTCP web-search flows at 50% load, 1s"
seed = 1
stop_time = "1s"
"#,
    dctcp_websearch!()
);

/// The flow-heavy benchmark: the latency-difference seed's 3-tier tree (1
/// core, 2 aggregation switches, 8 ToRs of 16 hosts, 1 Gbps links of 0.2 us,
/// 2.5 us host delay, 150-packet drop-tail queues, NewReno) with its
/// all-to-all DeTail-style background at 50% load, as
/// `python/dcnsim/studies/latency_difference.py` builds it for the TCP scheme
/// at 64:4:1, without its test packets; 500 ms (quick: 50 ms, the study's
/// warm-up).
pub const BENCH_FLOWHEAVY_SCENARIO: &str = r#"
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

/// The fixed benchmarks: name, scenario, and the stop time of a quick run
/// (`dcnsim bench --quick`).
pub const BENCH_SCENARIOS: [(&str, &str, &str); 5] = [
    ("datagram", BENCH_SCENARIO, "5ms"),
    ("tcp", BENCH_TCP_SCENARIO, "5ms"),
    ("pfabric", BENCH_PFABRIC_SCENARIO, "5ms"),
    ("b1", BENCH_B1_SCENARIO, "100ms"),
    ("flowheavy", BENCH_FLOWHEAVY_SCENARIO, "50ms"),
];
