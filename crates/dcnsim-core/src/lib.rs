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
pub mod tcp;
pub mod topology;
pub mod traffic;
pub mod units;
pub mod workload;

pub use records::{Column, Output, Summary, Table};
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
        ("cdfs", workload::Cdf::NAMES.to_vec()),
    ]
}
pub use sim::{Aborted, Progress, Simulation};

/// Run a validated scenario. `hook` sees progress about every quarter second of
/// wall time and may abort the run by returning `false`.
pub fn run(sc: &Scenario, hook: &mut dyn FnMut(&Progress) -> bool) -> Result<Output, Aborted> {
    Simulation::new(sc).run(hook)
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

/// The TCP benchmark: the same fat-tree with DCTCP flows arriving as a
/// Poisson process at 50% load with web-search sizes, K = 65 packets, 20 ms.
pub const BENCH_TCP_SCENARIO: &str = r#"
name = "bench: k=8 fat-tree, 10Gbps, DCTCP web-search flows at 50% load, 20ms"
seed = 1
stop_time = "20ms"

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
"#;

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

/// The fixed benchmarks by name: `datagram`, `tcp` (DCTCP) and `pfabric`.
pub const BENCH_SCENARIOS: [(&str, &str); 3] = [
    ("datagram", BENCH_SCENARIO),
    ("tcp", BENCH_TCP_SCENARIO),
    ("pfabric", BENCH_PFABRIC_SCENARIO),
];
