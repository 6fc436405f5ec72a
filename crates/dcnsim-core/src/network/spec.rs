//! `[network]`: host stacks' and switch delays, the queues at every port, outages
//! and port stages, as a scenario writes them.

use crate::error::{parse_at, ScenarioError};
use crate::host_delay::HostDelay;
use crate::queue::{QueueKind, QueueSpec};
use crate::stage::StageSpec;
use crate::topology::Topology;
use crate::units::{Capacity, Time};
use serde::Deserialize;
use serde_json::Value;

/// Host and switch delays and the queues at every port (`[network]`).
#[derive(Clone, Debug)]
pub struct NetworkSpec {
    /// The host stacks' delay each way (`host_delay.rs`).
    pub host_delay: HostDelay,
    pub switch_latency: Time,
    pub queue: QueueSpec,
    pub nic_queue: QueueSpec,
    /// Ports that drop everything for a while (`[[network.outages]]`).
    pub outages: Vec<OutageSpec>,
    /// Port stages (`[[network.stages]]`).
    pub stages: Vec<StageSpec>,
}

/// `[network]` as written: the queues and stages are validated apart, the
/// queues since their AQM's kind decides its keys
/// ([`QueueSpec::from_value`]), the stages since they name ports.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawNetwork {
    host_delay: Option<Value>,
    #[serde(default, deserialize_with = "crate::units::delay")]
    switch_latency: Time,
    queue: Option<Value>,
    nic_queue: Option<Value>,
    #[serde(default)]
    outages: Vec<OutageSpec>,
    stages: Option<Value>,
}

impl NetworkSpec {
    /// Validate `[network]` of a scenario whose topology is `topo`.
    pub fn from_value(value: Value, topo: &Topology) -> Result<NetworkSpec, ScenarioError> {
        let raw: RawNetwork = parse_at(value, "network")?;
        let stages = match raw.stages {
            None => Vec::new(),
            Some(Value::Array(list)) => list
                .into_iter()
                .enumerate()
                .map(|(i, s)| StageSpec::from_value(s, &format!("network.stages[{i}]"), topo))
                .collect::<Result<_, _>>()?,
            Some(_) => {
                return Err(ScenarioError::new(
                    "network.stages",
                    "expected a list of stages ([[network.stages]])",
                ))
            }
        };
        let queue = |q: Option<Value>, at: &str, default: fn() -> QueueSpec| {
            q.map_or_else(|| Ok(default()), |q| QueueSpec::from_value(q, at))
        };
        let host_delay = match raw.host_delay {
            None => HostDelay::default(),
            Some(v) => HostDelay::from_value(&v, "network.host_delay")?,
        };
        Ok(NetworkSpec {
            host_delay,
            switch_latency: raw.switch_latency,
            queue: queue(raw.queue, "network.queue", default_switch_queue)?,
            nic_queue: queue(raw.nic_queue, "network.nic_queue", default_nic_queue)?,
            outages: raw.outages,
            stages,
        })
    }
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
    QueueSpec::new(QueueKind::Droptail, Capacity::Packets(1000))
}

fn default_nic_queue() -> QueueSpec {
    QueueSpec::new(QueueKind::Droptail, Capacity::Packets(1000))
}

impl Default for NetworkSpec {
    fn default() -> Self {
        NetworkSpec {
            host_delay: HostDelay::default(),
            switch_latency: Time::ZERO,
            queue: default_switch_queue(),
            nic_queue: default_nic_queue(),
            outages: Vec::new(),
            stages: Vec::new(),
        }
    }
}
