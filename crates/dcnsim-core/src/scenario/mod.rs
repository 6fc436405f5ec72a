//! The scenario: what a user writes, validated once at the boundary.
//!
//! A scenario arrives as a JSON value (the Python front parses TOML or takes a
//! `dict`; Rust callers may use [`Scenario::from_toml_str`]). It is turned into a
//! [`Scenario`] exactly once; every error names the path of the bad field and the
//! reason (`topology.k: fat-tree k must be even, got 5`). After that the rest of
//! the crate trusts it: the topology is built and connected, host indices are in
//! range, and every stream can end.

mod error;
mod traffic;
mod transport;

pub use error::ScenarioError;
pub use traffic::{
    FlowSpec, HostOrAll, HostOrRandom, HostSel, IncastSpec, Pattern, ProbeSpec, SizeDist,
    StreamSpec, TrafficSpec, WorkloadSpec,
};
pub use transport::{Protocol, TransportSpec, MAX_MSS, MIN_MSS};

use crate::forwarding::Policy;
use crate::topology::{NodeKind, Topology, TopologySpec};
use crate::units::{Capacity, Time};
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::Value;

/// Deserialize `value` into `T`, reporting errors with their full field path
/// (`prefix` + the path inside `value`).
pub(crate) fn parse_at<T: DeserializeOwned>(
    value: Value,
    prefix: &str,
) -> Result<T, ScenarioError> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let inner = e.inner().to_string();
        let mut path = e.path().to_string();
        if path == "." {
            path.clear();
        }
        let mut path = join_path(prefix, &path);
        // serde says "unknown field `x`, expected one of ..." (the path already
        // names x) and "missing field `x`" (the path names x's parent).
        let msg = if let Some(rest) = inner.strip_prefix("unknown field `") {
            let expected = rest
                .split_once('`')
                .map_or("", |(_, e)| e.trim_start_matches(", "));
            format!("unknown key ({expected})")
        } else if let Some(rest) = inner.strip_prefix("missing field `") {
            path = join_path(&path, rest.trim_end_matches('`'));
            "required".to_string()
        } else {
            inner
        };
        ScenarioError::new(path, msg)
    })
}

pub(crate) fn join_path(a: &str, b: &str) -> String {
    match (a.is_empty(), b.is_empty()) {
        (true, _) => b.to_string(),
        (_, true) => a.to_string(),
        _ if b.starts_with('[') => format!("{a}{b}"),
        _ => format!("{a}.{b}"),
    }
}

/// A queue discipline and its capacity (switch egress ports and host NICs).
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct QueueSpec {
    #[serde(default)]
    pub kind: QueueKind,
    pub capacity: Capacity,
    /// ECN marking / early drop on arrival ([`crate::queue::Aqm`]).
    pub aqm: Option<AqmSpec>,
}

/// `aqm = { kind = "threshold", k = "20pkt" }`, `{ kind = "red", min, max,
/// max_p, weight }` or `{ kind = "wred", weight, profiles = [{ min, max,
/// max_p }, …] }` (one profile per traffic class).
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum AqmSpec {
    Threshold {
        k: Capacity,
    },
    Red {
        min: Capacity,
        max: Capacity,
        #[serde(default = "default_max_p")]
        max_p: f64,
        #[serde(default = "default_red_weight")]
        weight: f64,
    },
    Wred {
        #[serde(default = "default_red_weight")]
        weight: f64,
        profiles: Vec<RedProfile>,
    },
}

/// One RED marking curve: thresholds on the average queue and the marking
/// probability reached at `max`.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RedProfile {
    pub min: Capacity,
    pub max: Capacity,
    #[serde(default = "default_max_p")]
    pub max_p: f64,
}

/// Floyd & Jacobson's suggested w_q and max_p.
fn default_red_weight() -> f64 {
    0.002
}

fn default_max_p() -> f64 {
    0.1
}

impl AqmSpec {
    fn check(&self, path: &str) -> Result<(), ScenarioError> {
        let err = |k: &str, m: String| Err(ScenarioError::new(join_path(path, k), m));
        let check_profile = |at: &str, p: &RedProfile| {
            let same_unit = matches!(
                (p.min, p.max),
                (Capacity::Packets(_), Capacity::Packets(_))
                    | (Capacity::Bytes(_), Capacity::Bytes(_))
            );
            if !same_unit {
                return err(
                    at,
                    "min and max must both be in packets or both in bytes".into(),
                );
            }
            if p.min.amount() >= p.max.amount() {
                return err(at, format!("min ({}) must be below max ({})", p.min, p.max));
            }
            if !(p.max_p > 0.0 && p.max_p <= 1.0) {
                return err(at, format!("max_p must be in (0, 1], got {}", p.max_p));
            }
            Ok(())
        };
        match self {
            AqmSpec::Threshold { .. } => Ok(()),
            AqmSpec::Red {
                min,
                max,
                max_p,
                weight,
            } => {
                check_weight(path, *weight)?;
                check_profile(
                    "",
                    &RedProfile {
                        min: *min,
                        max: *max,
                        max_p: *max_p,
                    },
                )
            }
            AqmSpec::Wred { weight, profiles } => {
                check_weight(path, *weight)?;
                if profiles.is_empty() {
                    return err("profiles", "needs at least one profile".into());
                }
                for (i, p) in profiles.iter().enumerate() {
                    check_profile(&format!("profiles[{i}]"), p)?;
                }
                Ok(())
            }
        }
    }
}

fn check_weight(path: &str, w: f64) -> Result<(), ScenarioError> {
    if w > 0.0 && w <= 1.0 {
        Ok(())
    } else {
        Err(ScenarioError::new(
            join_path(path, "weight"),
            format!("must be in (0, 1], got {w}"),
        ))
    }
}

#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum QueueKind {
    #[default]
    Droptail,
}

/// Host and switch delays and the queues at every port (`[network]`).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NetworkSpec {
    #[serde(default)]
    pub host_delay: Time,
    #[serde(default)]
    pub switch_latency: Time,
    #[serde(default = "default_switch_queue")]
    pub queue: QueueSpec,
    #[serde(default = "default_nic_queue")]
    pub nic_queue: QueueSpec,
    /// Ports that drop everything for a while (`[[network.outages]]`).
    #[serde(default)]
    pub outages: Vec<OutageSpec>,
}

/// A port that drops every packet offered to it in `[start, stop)`.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct OutageSpec {
    pub port: String,
    pub start: Time,
    pub stop: Time,
}

fn default_switch_queue() -> QueueSpec {
    QueueSpec {
        kind: QueueKind::Droptail,
        capacity: Capacity::Packets(1000),
        aqm: None,
    }
}

fn default_nic_queue() -> QueueSpec {
    QueueSpec {
        kind: QueueKind::Droptail,
        capacity: Capacity::Packets(1000),
        aqm: None,
    }
}

impl Default for NetworkSpec {
    fn default() -> Self {
        NetworkSpec {
            host_delay: Time::ZERO,
            switch_latency: Time::ZERO,
            queue: default_switch_queue(),
            nic_queue: default_nic_queue(),
            outages: Vec::new(),
        }
    }
}

/// `[forwarding]`: how switches choose among equal-cost next hops.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ForwardingSpec {
    #[serde(default)]
    pub policy: Policy,
}

/// `[trace]`: which time series and captures to record.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceSpec {
    /// Ports (`"node->peer"`) whose queue length is recorded at every change.
    #[serde(default)]
    pub queues: Vec<String>,
    /// TCP flows (by `flow_id`) whose cwnd and sequence numbers are recorded.
    #[serde(default)]
    pub flows: Vec<u32>,
    /// Hosts (by name, e.g. `"h3"`) or ports (`"node->peer"`) to capture as pcap.
    #[serde(default)]
    pub pcap: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScenario {
    #[serde(default)]
    name: String,
    #[serde(default = "default_seed")]
    seed: u64,
    stop_time: Option<Time>,
    topology: Value,
    #[serde(default)]
    network: NetworkSpec,
    #[serde(default)]
    forwarding: ForwardingSpec,
    #[serde(default)]
    transport: TransportSpec,
    #[serde(default)]
    traffic: Value,
    #[serde(default)]
    trace: TraceSpec,
}

fn default_seed() -> u64 {
    1
}

/// A validated scenario: its topology is built and every reference in it checked.
#[derive(Clone, Debug)]
pub struct Scenario {
    pub name: String,
    pub seed: u64,
    pub stop_time: Option<Time>,
    pub topology: Topology,
    pub network: NetworkSpec,
    pub forwarding: ForwardingSpec,
    pub transport: TransportSpec,
    pub traffic: TrafficSpec,
    pub trace: TraceSpec,
}

impl Scenario {
    /// Validate a scenario given as a JSON value.
    pub fn from_value(value: Value) -> Result<Scenario, ScenarioError> {
        if !value.is_object() {
            return Err(ScenarioError::new("", "a scenario must be a table of keys"));
        }
        let raw: RawScenario = parse_at(value, "")?;
        let spec = TopologySpec::from_value(raw.topology)?;
        let topology = spec.build()?;
        if raw.forwarding.policy == Policy::Elr {
            topology
                .check_tiers()
                .map_err(|m| ScenarioError::new("forwarding.policy", m))?;
        }
        for (queue, at) in [
            (&raw.network.queue, "network.queue"),
            (&raw.network.nic_queue, "network.nic_queue"),
        ] {
            if let Some(aqm) = &queue.aqm {
                aqm.check(&join_path(at, "aqm"))?;
            }
        }
        for (i, o) in raw.network.outages.iter().enumerate() {
            let at = format!("network.outages[{i}]");
            if topology.port_by_name(&o.port).is_none() {
                return Err(ScenarioError::new(
                    join_path(&at, "port"),
                    format!(
                        "no port named \"{}\" (ports are named \"node->peer\", e.g. \"{}\")",
                        o.port,
                        topology.example_port_name()
                    ),
                ));
            }
            if o.stop <= o.start {
                return Err(ScenarioError::new(
                    join_path(&at, "stop"),
                    format!("stop ({}) must be after start ({})", o.stop, o.start),
                ));
            }
        }
        raw.transport
            .check()
            .map_err(|(k, m)| ScenarioError::new(join_path("transport", &k), m))?;
        let traffic =
            TrafficSpec::from_value(raw.traffic, &topology, raw.stop_time, &raw.transport)?;
        for (i, port) in raw.trace.queues.iter().enumerate() {
            if topology.port_by_name(port).is_none() {
                return Err(ScenarioError::new(
                    format!("trace.queues[{i}]"),
                    format!(
                        "no port named \"{port}\" (ports are named \"node->peer\", e.g. \"{}\")",
                        topology.example_port_name()
                    ),
                ));
            }
        }
        let flows = traffic.known_flow_count();
        for (i, &f) in raw.trace.flows.iter().enumerate() {
            if let Some(n) = flows.filter(|&n| f as usize >= n) {
                let have = match n {
                    0 => "the scenario has no TCP flows".to_string(),
                    n => format!("TCP flows are numbered 0 to {}", n - 1),
                };
                return Err(ScenarioError::new(
                    format!("trace.flows[{i}]"),
                    format!("no flow {f}: {have}"),
                ));
            }
        }
        for (i, name) in raw.trace.pcap.iter().enumerate() {
            if raw.trace.pcap[..i].iter().any(|n| n.trim() == name.trim()) {
                return Err(ScenarioError::new(
                    format!("trace.pcap[{i}]"),
                    format!("\"{name}\" is listed twice"),
                ));
            }
            let is_host = topology
                .node_id(name.trim())
                .is_some_and(|n| topology.nodes[n].kind == NodeKind::Host);
            if !is_host && topology.port_by_name(name).is_none() {
                return Err(ScenarioError::new(
                    format!("trace.pcap[{i}]"),
                    format!(
                        "no host or port named \"{name}\" (a host name such as \"{}\" or a port \"node->peer\" such as \"{}\")",
                        topology.nodes[topology.hosts[0]].name,
                        topology.example_port_name()
                    ),
                ));
            }
        }
        Ok(Scenario {
            name: raw.name,
            seed: raw.seed,
            stop_time: raw.stop_time,
            topology,
            network: raw.network,
            forwarding: raw.forwarding,
            transport: raw.transport,
            traffic,
            trace: raw.trace,
        })
    }

    /// Validate a scenario given as JSON text.
    pub fn from_json_str(text: &str) -> Result<Scenario, ScenarioError> {
        let value: Value = serde_json::from_str(text)
            .map_err(|e| ScenarioError::new("", format!("invalid JSON: {e}")))?;
        Scenario::from_value(value)
    }

    /// Validate a scenario given as TOML text.
    pub fn from_toml_str(text: &str) -> Result<Scenario, ScenarioError> {
        let value: Value = toml::from_str(text)
            .map_err(|e| ScenarioError::new("", format!("invalid TOML: {}", e.message())))?;
        Scenario::from_value(value)
    }
}
