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

pub use error::ScenarioError;
pub use traffic::{HostOrAll, HostOrRandom, HostSel, Pattern, ProbeSpec, StreamSpec, TrafficSpec};

use crate::forwarding::Policy;
use crate::topology::{Topology, TopologySpec};
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
}

fn default_switch_queue() -> QueueSpec {
    QueueSpec {
        kind: QueueKind::Droptail,
        capacity: Capacity::Packets(1000),
    }
}

fn default_nic_queue() -> QueueSpec {
    QueueSpec {
        kind: QueueKind::Droptail,
        capacity: Capacity::Packets(10_000),
    }
}

impl Default for NetworkSpec {
    fn default() -> Self {
        NetworkSpec {
            host_delay: Time::ZERO,
            switch_latency: Time::ZERO,
            queue: default_switch_queue(),
            nic_queue: default_nic_queue(),
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

/// `[trace]`: which time series to record.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceSpec {
    #[serde(default)]
    pub queues: Vec<String>,
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
        let traffic = TrafficSpec::from_value(raw.traffic, &topology, raw.stop_time)?;
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
        Ok(Scenario {
            name: raw.name,
            seed: raw.seed,
            stop_time: raw.stop_time,
            topology,
            network: raw.network,
            forwarding: raw.forwarding,
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
