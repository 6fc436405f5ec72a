//! The scenario: what a user writes, validated once at the boundary.
//!
//! A scenario arrives as a JSON value (the Python front parses TOML or takes a
//! `dict`; Rust callers may use [`Scenario::from_toml_str`]). It is turned into a
//! [`Scenario`] exactly once; every error names the path of the bad field and the
//! reason (`topology.k: fat-tree k must be even, got 5`). After that the rest of
//! the crate trusts it: the topology is built and connected, host indices are in
//! range, and every stream can end.

mod memory;
mod needs;
pub(crate) mod traffic;

pub use crate::agent::{AgentKind, AgentSpec, ScenarioView};
pub use crate::app::keys::{HostOrAll, HostOrRandom, HostSel};
pub use crate::app::AppSpec;
pub use crate::cc::Protocol;
pub use crate::error::{join_path, parse_at, ScenarioError};
pub use crate::forwarding::ForwardingSpec;
pub use crate::network::{NetworkSpec, OutageSpec};
pub use crate::queue::{AqmSpec, QueueKind, QueueSpec, RedProfile};
pub use crate::tcp::{PrioScheme, TransportSpec, MAX_MSS, MIN_MSS};
pub use traffic::{FlowSpec, Pattern, ProbeSpec, StreamSpec, TrafficSpec};

use crate::app::keys::check_starts_before;
use crate::topology::{built_by, Builder, NodeKind, Topology, TopologySpec};
use crate::units::{Capacity, Time};
use serde::Deserialize;
use serde_json::Value;

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
    /// The interval at which every port's packets and bytes are counted
    /// (`links.parquet`, `sim/links.rs`); none: not counted.
    #[serde(default)]
    pub links: Option<Time>,
}

/// The most rows `trace.links` may ask for when the run's length is known
/// (ports times intervals to `stop_time`): 10^8 rows, about 1 GB of
/// `links.parquet` (the rows stream out in chunks, so memory is not the
/// bound; a file larger than this is a finer interval than anyone plots).
pub const MAX_LINK_ROWS: u64 = 100_000_000;

/// `trace.links`: an interval after 0 that, over a run of known length,
/// asks for at most [`MAX_LINK_ROWS`] rows.
fn check_link_interval(
    interval: Option<Time>,
    stop: Option<Time>,
    topology: &Topology,
) -> Result<(), ScenarioError> {
    let Some(interval) = interval else {
        return Ok(());
    };
    if interval == Time::ZERO {
        return Err(ScenarioError::new(
            "trace.links",
            "an interval of 0 counts nothing: give a time after 0 (e.g. \"100us\"), or leave the key out",
        ));
    }
    let ports = 2 * topology.links.len() as u64;
    if let Some(stop) = stop {
        let rows = ports.saturating_mul(stop.0.div_ceil(interval.0));
        if rows > MAX_LINK_ROWS {
            return Err(ScenarioError::new(
                "trace.links",
                format!(
                    "{interval} over stop_time {stop} on {ports} ports is {rows} rows, more than {MAX_LINK_ROWS}: give a longer interval"
                ),
            ));
        }
    }
    Ok(())
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
    network: Value,
    #[serde(default)]
    forwarding: Value,
    #[serde(default)]
    transport: Value,
    #[serde(default)]
    traffic: Value,
    #[serde(default)]
    trace: TraceSpec,
    #[serde(default)]
    agents: Vec<Value>,
}

fn default_seed() -> u64 {
    1
}

/// A queue sized in bytes holds at least one full segment of the transport
/// (`mss` + `header`): a smaller one would drop every full-sized packet.
fn check_holds_a_segment(
    network: &NetworkSpec,
    transport: &TransportSpec,
) -> Result<(), ScenarioError> {
    let segment = transport.segment_bytes();
    for (queue, at) in [
        (&network.queue, "network.queue"),
        (&network.nic_queue, "network.nic_queue"),
    ] {
        if let Capacity::Bytes(b) = queue.capacity {
            if b < segment {
                return Err(ScenarioError::new(
                    join_path(at, "capacity"),
                    format!(
                        "{b} B holds no full packet: one segment is {segment} B (transport.mss {} B + header {} B)",
                        transport.mss.0, transport.header.0
                    ),
                ));
            }
        }
    }
    Ok(())
}

impl RawScenario {
    fn from_value(value: Value) -> Result<RawScenario, ScenarioError> {
        if !value.is_object() {
            return Err(ScenarioError::new("", "a scenario must be a table of keys"));
        }
        parse_at(value, "")
    }
}

/// What `trace.pcap` names: a host (what it sends and receives) or a port
/// (what it sends).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PcapTarget {
    Host(u32),
    Port(u32),
}

/// Names of the scenario resolved to indices by validation: the simulation
/// never looks a name up again.
#[derive(Clone, Debug, Default)]
pub struct Resolved {
    /// Port index of each `trace.queues` entry.
    pub traced_ports: Vec<u32>,
    /// Port index and window of each `network.outages` entry.
    pub outages: Vec<(u32, Time, Time)>,
    /// Each `trace.pcap` entry.
    pub pcap: Vec<PcapTarget>,
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
    /// Switch agents (`[[agents]]`), each with the switches it runs at.
    pub agents: Vec<AgentSpec>,
    pub resolved: Resolved,
}

impl Scenario {
    /// Validate a scenario given as a JSON value.
    pub fn from_value(value: Value) -> Result<Scenario, ScenarioError> {
        let mut raw = RawScenario::from_value(value)?;
        let topology = TopologySpec::from_value(raw.topology.take())?.build()?;
        Scenario::validate(raw, topology)
    }

    /// Validate a scenario whose `[topology]` table holds the keys of `B`
    /// (and no `kind`): a topology kind a Rust program declares, as a
    /// registered one is declared in `topology/`, without registering it.
    pub fn with_topology<B: Builder>(value: Value) -> Result<Scenario, ScenarioError> {
        let mut raw = RawScenario::from_value(value)?;
        let builder: B = parse_at(raw.topology.take(), "topology")?;
        Scenario::validate(raw, built_by(&builder)?)
    }

    /// The rest of the scenario, for `topology`.
    fn validate(raw: RawScenario, topology: Topology) -> Result<Scenario, ScenarioError> {
        if raw.stop_time == Some(Time::ZERO) {
            return Err(ScenarioError::new(
                "stop_time",
                "a run of zero length simulates nothing: give a time after 0 (or none: run until the traffic ends)",
            ));
        }
        let forwarding = ForwardingSpec::from_value(raw.forwarding, &topology)?;
        let network = match raw.network {
            Value::Null => NetworkSpec::default(),
            value => NetworkSpec::from_value(value, &topology)?,
        };
        let mut resolved = Resolved::default();
        for (i, o) in network.outages.iter().enumerate() {
            let at = format!("network.outages[{i}]");
            let Some(port) = topology.port_by_name(&o.port) else {
                return Err(ScenarioError::new(
                    join_path(&at, "port"),
                    format!(
                        "no port named \"{}\" (ports are named \"node->peer\", e.g. \"{}\")",
                        o.port,
                        topology.example_port_name()
                    ),
                ));
            };
            resolved.outages.push((port, o.start, o.stop));
            check_starts_before(&at, "start", o.start, raw.stop_time, "outage")?;
            if o.stop <= o.start {
                return Err(ScenarioError::new(
                    join_path(&at, "stop"),
                    format!("stop ({}) must be after start ({})", o.stop, o.start),
                ));
            }
        }
        let transport = TransportSpec::from_value(raw.transport)?;
        check_holds_a_segment(&network, &transport)?;
        let traffic = TrafficSpec::from_value(raw.traffic, &topology, raw.stop_time, &transport)?;
        needs::check(&traffic, &transport, &network, &topology)?;
        check_link_interval(raw.trace.links, raw.stop_time, &topology)?;
        for (i, port) in raw.trace.queues.iter().enumerate() {
            let Some(index) = topology.port_by_name(port) else {
                return Err(ScenarioError::new(
                    format!("trace.queues[{i}]"),
                    format!(
                        "no port named \"{port}\" (ports are named \"node->peer\", e.g. \"{}\")",
                        topology.example_port_name()
                    ),
                ));
            };
            if !resolved.traced_ports.contains(&index) {
                resolved.traced_ports.push(index);
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
            let host = topology
                .node_id(name.trim())
                .filter(|&n| topology.nodes[n].kind == NodeKind::Host)
                .and_then(|n| topology.hosts.iter().position(|&h| h == n));
            let target = match (host, topology.port_by_name(name)) {
                (Some(h), _) => Some(PcapTarget::Host(h as u32)),
                (None, Some(p)) => Some(PcapTarget::Port(p)),
                (None, None) => None,
            };
            if let Some(t) = target {
                resolved.pcap.push(t);
            } else {
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
        let view = ScenarioView {
            topology: &topology,
            network: &network,
            transport: &transport,
        };
        let agents = raw
            .agents
            .into_iter()
            .enumerate()
            .map(|(i, a)| AgentSpec::from_value(a, &format!("agents[{i}]"), &view))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Scenario {
            name: raw.name,
            seed: raw.seed,
            stop_time: raw.stop_time,
            topology,
            network,
            forwarding,
            transport,
            traffic,
            trace: raw.trace,
            agents,
            resolved,
        })
    }

    /// What the scenario contains, for `dcnsim validate`: its topology's size,
    /// its applications and its memory estimate (total and by term).
    pub fn describe(&self) -> Value {
        let hosts = self.topology.host_count();
        let switches = self.topology.nodes.len() - hosts;
        let t = &self.traffic;
        let memory = self.memory_estimate(None);
        let mut apps = serde_json::Map::new();
        for key in crate::app::KEYS {
            let n = t.apps.iter().filter(|a| a.key() == *key).count();
            apps.insert(key.to_string(), n.into());
        }
        let mut v = serde_json::json!({
            "hosts": hosts,
            "switches": switches,
            "links": self.topology.links.len(),
            "ports": 2 * self.topology.links.len(),
            "probe_packets": t.probe_packets(hosts as u64),
            "streams": t.streams.len(),
            "flows": t.flows.len(),
            "agents": self.agents.len(),
            "memory_bytes": memory.iter().map(|(_, b)| b).sum::<u64>(),
            "memory": memory,
            "stop_time_s": self.stop_time.map(Time::as_secs_f64),
        });
        // Instances of each application kind, by its table's key.
        v.as_object_mut().expect("an object").extend(apps);
        v
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
