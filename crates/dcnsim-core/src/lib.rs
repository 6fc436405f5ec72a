//! # dcnsim-core
//!
//! A packet-level simulator of data center networks. The layers, bottom up:
//!
//! - [`units`]: integer time (picoseconds), rates and sizes, parsed exactly from
//!   the way people write them (`"10Gbps"`, `"0.2us"`, `"64KB"`).
//! - [`scenario`]: the user's description of a run, validated once; every
//!   error names the field path and the reason.
//! - [`topology`]: one builder per kind of topology (fat-tree, three-tier
//!   tree, leaf-spine, custom, …); [`network`] turns a topology into egress
//!   ports and [`routing`] into equal-cost routing tables.
//! - Mechanisms along independent axes: [`queue`] disciplines at ports,
//!   [`forwarding`] policies at switches, [`traffic`] sources and [`app`]
//!   applications at hosts.
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
pub mod app;
pub mod bench;
mod cache;
pub mod cc;
mod cgroup;
pub mod engine;
pub mod error;
pub mod forwarding;
pub mod host_delay;
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

pub use bench::BENCH_SCENARIOS;
pub use records::{Column, LatencyStats, Output, Sink, Summary, Table};
pub use scenario::{Scenario, ScenarioError};

/// What a scenario may name on each axis (`dcnsim list`), from the registries
/// themselves, so the list is never out of date.
pub fn names() -> Vec<(&'static str, Vec<&'static str>)> {
    use strum::VariantNames;
    vec![
        ("topologies", topology::TopologyKind::VARIANTS.to_vec()),
        ("protocols", cc::Protocol::VARIANTS.to_vec()),
        ("queues", queue::QueueKind::VARIANTS.to_vec()),
        ("aqms", queue::AqmKind::VARIANTS.to_vec()),
        ("policies", forwarding::Policy::VARIANTS.to_vec()),
        ("agents", agent::AgentKind::VARIANTS.to_vec()),
        ("applications", app::KEYS.to_vec()),
        ("stages", stage::StageKind::VARIANTS.to_vec()),
        ("cdfs", workload::Cdf::NAMES.to_vec()),
    ]
}
pub use sim::{Aborted, Progress, Simulation};

/// What the memory limits of this process's cgroups (v1 or v2, and their
/// ancestors) leave, in bytes, with `/proc` and `/sys` under `root` (`/` but
/// in tests); `None` without a limit ([`cgroup::Watch::left`]).
pub fn cgroup_left(root: &std::path::Path) -> Option<u64> {
    cgroup::Watch::at(root).left()
}

/// Run a validated scenario. `hook` sees progress about every quarter second of
/// wall time and may abort the run by returning `false`.
pub fn run(sc: &Scenario, hook: &mut dyn FnMut(&Progress) -> bool) -> Result<Output, Aborted> {
    built(sc)?.run(hook)
}

/// Run a validated scenario, sending its recorded rows (probes, queue and flow
/// traces) to `sink` in chunks as it goes instead of holding them to the end.
pub fn run_streamed(
    sc: &Scenario,
    hook: &mut dyn FnMut(&Progress) -> bool,
    sink: Sink,
) -> Result<Output, Aborted> {
    built(sc)?.run_streamed(hook, sink)
}

/// The simulation of `sc`, or the run ended at time 0 by a large table's
/// growth the process refused while it was built ([`cache::Refusal`]).
fn built(sc: &Scenario) -> Result<Simulation, Aborted> {
    cache::catching(|| Simulation::new(sc)).map_err(|r| Aborted::refused(r, units::Time::ZERO))
}
