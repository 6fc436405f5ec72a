//! `[traffic]`: datagram probes and streams, TCP flows listed one by one, and
//! the applications' tables (`[[traffic.KEY]]`, one per kind of `app/`).

use super::{join_path, parse_at, Protocol, ScenarioError, TransportSpec};
use crate::app::keys::{
    check_bytes, check_class, check_host, check_load, check_size, check_starts_before, end_of,
    fits_clock, HostOrAll, HostOrRandom,
};
use crate::app::{AppSpec, Given, KEYS};
use crate::topology::Topology;
use crate::units::{Bytes, Rate, Time};
use serde::Deserialize;
use serde_json::Value;

/// One probe packet, or a train of them to every other host (`dst = "all"`).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProbeSpec {
    pub src: u32,
    pub dst: HostOrAll,
    #[serde(default = "default_packet_size")]
    pub size: Bytes,
    #[serde(default)]
    pub time: Time,
    pub interval: Option<Time>,
    /// 802.1Q priority code point of the probe packets, 0–7.
    #[serde(default)]
    pub class: u8,
}

/// A probe train of `probes` packets `interval` apart from `time`: its last
/// probe leaves before the run's `stop_time` (a later one is never sent)
/// and within the simulated clock.
fn check_train(
    at: &str,
    time: Time,
    interval: Time,
    probes: u64,
    stop_time: Option<Time>,
) -> Result<(), ScenarioError> {
    let steps = probes.saturating_sub(1);
    let err = |why: String| Err(ScenarioError::new(join_path(at, "interval"), why));
    if !fits_clock(time, steps, interval) {
        return err(format!(
            "{probes} probes {interval} apart from {time} run past the end of the simulated clock (2^64 ps, about 213 days)"
        ));
    }
    let last = Time(time.0 + steps * interval.0);
    match stop_time {
        Some(end) if last >= end => {
            let sent = (end.0 - time.0).div_ceil(interval.0.max(1));
            err(format!(
                "the train's last probe leaves at {last}, not before the run's stop_time ({end}): only {sent} of its {probes} probes would be sent"
            ))
        }
        _ => Ok(()),
    }
}

/// Gaps between the packets of a stream.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Pattern {
    #[default]
    Poisson,
    Constant,
}

/// A background datagram stream as written (`src = "all"` not yet expanded).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStream {
    src: HostOrAll,
    dst: HostOrRandom,
    rate: Option<Rate>,
    load: Option<f64>,
    #[serde(default)]
    pattern: Pattern,
    #[serde(default = "default_packet_size")]
    size: Bytes,
    #[serde(default)]
    start: Time,
    stop: Option<Time>,
    #[serde(default)]
    record: bool,
    #[serde(default)]
    class: u8,
    /// Allow a `rate` above the source host's link (its NIC queue then fills
    /// and drops): refused otherwise, as a slip of the unit.
    #[serde(default)]
    faster_than_link: bool,
}

/// One stream from one host: the unit that becomes a row of `flows.parquet`.
#[derive(Clone, Debug, PartialEq)]
pub struct StreamSpec {
    pub src: u32,
    /// `None`: a uniformly random other host for every packet.
    pub dst: Option<u32>,
    pub rate: Rate,
    pub pattern: Pattern,
    pub size: u32,
    pub start: Time,
    pub stop: Time,
    pub record: bool,
    /// 802.1Q priority code point of every packet, 0–7.
    pub class: u8,
}

/// `[traffic]`'s own tables (the applications' are taken out first).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTraffic {
    #[serde(default)]
    probes: Vec<Value>,
    #[serde(default)]
    streams: Vec<Value>,
    #[serde(default)]
    flows: Vec<Value>,
}

const OWN_KEYS: [&str; 3] = ["probes", "streams", "flows"];

/// The applications' tables of `[traffic]` (`value`), taken out of it; a key
/// neither `[traffic]`'s own nor an application's is an error naming those
/// there are.
fn take_app_tables(value: &mut Value) -> Result<serde_json::Map<String, Value>, ScenarioError> {
    let Value::Object(map) = value else {
        return Ok(Default::default());
    };
    if let Some(key) = map
        .keys()
        .find(|k| !OWN_KEYS.contains(&k.as_str()) && !KEYS.contains(&k.as_str()))
    {
        let known: Vec<String> = OWN_KEYS
            .iter()
            .chain(KEYS)
            .map(|k| format!("`{k}`"))
            .collect();
        return Err(ScenarioError::new(
            join_path("traffic", key),
            format!("unknown key (expected one of {})", known.join(", ")),
        ));
    }
    Ok(KEYS.iter().filter_map(|k| map.remove_entry(*k)).collect())
}

/// A TCP flow listed in the scenario (`[[traffic.flows]]`).
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FlowSpec {
    pub src: u32,
    pub dst: u32,
    /// Application bytes to transfer.
    pub size: Bytes,
    #[serde(default)]
    pub start: Time,
    /// Absolute time by which the flow should finish (used by D²TCP).
    pub deadline: Option<Time>,
    /// Traffic class carried by every packet (WRED profile, priority).
    #[serde(default)]
    pub class: u8,
    /// Overrides `transport.protocol` for this flow.
    pub protocol: Option<Protocol>,
}

/// All traffic of a scenario, validated against its topology.
#[derive(Clone, Debug, Default)]
pub struct TrafficSpec {
    pub probes: Vec<ProbeSpec>,
    pub streams: Vec<StreamSpec>,
    pub flows: Vec<FlowSpec>,
    /// Application instances, kinds in registry order.
    pub apps: Vec<AppSpec>,
}

fn default_packet_size() -> Bytes {
    Bytes(1500)
}

impl TrafficSpec {
    /// Probe packets sent among `hosts` hosts: an entry to "all" sends one
    /// to every other host.
    pub fn probe_packets(&self, hosts: u64) -> u64 {
        self.probes
            .iter()
            .map(|p| p.dst.host().map_or(hosts.saturating_sub(1), |_| 1))
            .sum()
    }

    /// How many flows the scenario has before it runs, when that is fixed (no
    /// applications, whose flows are created as it runs).
    pub fn known_flow_count(&self) -> Option<usize> {
        self.apps.is_empty().then_some(self.flows.len())
    }

    /// Whether some TCP flow runs `protocol`, `default` being
    /// `transport.protocol`.
    pub fn uses(&self, protocol: Protocol, default: Protocol) -> bool {
        let flows = self.flows.iter().map(|f| f.protocol);
        let apps = self.apps.iter().map(AppSpec::protocol);
        flows.chain(apps).any(|p| p.unwrap_or(default) == protocol)
    }

    pub(crate) fn from_value(
        value: Value,
        topo: &Topology,
        stop_time: Option<Time>,
        transport: &TransportSpec,
    ) -> Result<TrafficSpec, ScenarioError> {
        let mut value = if value.is_null() {
            Value::Object(Default::default())
        } else {
            value
        };
        let app_tables = take_app_tables(&mut value)?;
        let raw: RawTraffic = parse_at(value, "traffic")?;
        let nic_rates = topo.host_link_rates();
        let mut probes = Vec::new();
        for (i, v) in raw.probes.into_iter().enumerate() {
            let at = format!("traffic.probes[{i}]");
            let p: ProbeSpec = parse_at(v, &at)?;
            check_host(topo, join_path(&at, "src"), p.src)?;
            check_size(join_path(&at, "size"), p.size)?;
            check_starts_before(&at, "time", p.time, stop_time, "probe")?;
            check_class(&at, p.class)?;
            match p.dst.host() {
                Some(d) => {
                    check_host(topo, join_path(&at, "dst"), d)?;
                    if d == p.src {
                        return Err(ScenarioError::new(
                            join_path(&at, "dst"),
                            format!("a probe from host {d} to itself never crosses the network"),
                        ));
                    }
                }
                None => {
                    let Some(interval) = p.interval else {
                        return Err(ScenarioError::new(
                            join_path(&at, "interval"),
                            "required when dst = \"all\" (the spacing of the train)",
                        ));
                    };
                    check_train(
                        &at,
                        p.time,
                        interval,
                        topo.host_count() as u64 - 1,
                        stop_time,
                    )?;
                }
            }
            if p.dst.host().is_some() && p.interval.is_some() {
                return Err(ScenarioError::new(
                    join_path(&at, "interval"),
                    "only with dst = \"all\" (it spaces a train; a probe to one host is one packet)",
                ));
            }
            probes.push(p);
        }
        let mut streams = Vec::new();
        for (i, v) in raw.streams.into_iter().enumerate() {
            let at = format!("traffic.streams[{i}]");
            let s: RawStream = parse_at(v, &at)?;
            let size = check_size(join_path(&at, "size"), s.size)?;
            check_class(&at, s.class)?;
            let stop = end_of(&at, s.stop, stop_time, s.start, "stream")?;
            if let Some(d) = s.dst.host() {
                check_host(topo, join_path(&at, "dst"), d)?;
            }
            if topo.host_count() < 2 && s.dst.host().is_none() {
                return Err(ScenarioError::new(
                    join_path(&at, "dst"),
                    "\"random\" needs at least two hosts",
                ));
            }
            let sources: Vec<u32> = match s.src.host() {
                Some(h) => {
                    check_host(topo, join_path(&at, "src"), h)?;
                    if Some(h) == s.dst.host() {
                        return Err(ScenarioError::new(
                            join_path(&at, "dst"),
                            format!("a stream from host {h} to itself never crosses the network"),
                        ));
                    }
                    vec![h]
                }
                None => (0..topo.host_count() as u32)
                    .filter(|&h| Some(h) != s.dst.host())
                    .collect(),
            };
            for src in sources {
                let rate = match (s.rate, s.load) {
                    (Some(r), None) => {
                        let link = nic_rates[src as usize];
                        if r > link && !s.faster_than_link {
                            return Err(ScenarioError::new(
                                join_path(&at, "rate"),
                                format!(
                                    "{} bps is faster than host {src}'s link ({} bps); set faster_than_link = true to send it anyway",
                                    r.0, link.0
                                ),
                            ));
                        }
                        r
                    }
                    (None, Some(load)) => {
                        check_load(join_path(&at, "load"), load)?;
                        let link = nic_rates[src as usize];
                        Rate(((link.0 as f64) * load).round().max(1.0) as u64)
                    }
                    (Some(_), Some(_)) => {
                        return Err(ScenarioError::new(
                            &at,
                            "give either rate or load, not both",
                        ))
                    }
                    (None, None) => {
                        return Err(ScenarioError::new(
                            &at,
                            "needs a rate (\"1Gbps\") or a load (0.5)",
                        ))
                    }
                };
                streams.push(StreamSpec {
                    src,
                    dst: s.dst.host(),
                    rate,
                    pattern: s.pattern,
                    size,
                    start: s.start,
                    stop,
                    record: s.record,
                    class: s.class,
                });
            }
        }
        let mut flows = Vec::new();
        for (i, v) in raw.flows.into_iter().enumerate() {
            let at = format!("traffic.flows[{i}]");
            let f: FlowSpec = parse_at(v, &at)?;
            check_host(topo, join_path(&at, "src"), f.src)?;
            check_host(topo, join_path(&at, "dst"), f.dst)?;
            if f.src == f.dst {
                return Err(ScenarioError::new(
                    join_path(&at, "dst"),
                    format!(
                        "a flow from host {} to itself never crosses the network",
                        f.dst
                    ),
                ));
            }
            check_bytes(join_path(&at, "size"), f.size)?;
            check_class(&at, f.class)?;
            check_starts_before(&at, "start", f.start, stop_time, "flow")?;
            if let Some(d) = f.deadline {
                if d <= f.start {
                    return Err(ScenarioError::new(
                        join_path(&at, "deadline"),
                        format!(
                            "deadline ({d}) must be after the flow's start ({})",
                            f.start
                        ),
                    ));
                }
            }
            flows.push(f);
        }
        let given = Given {
            topology: topo,
            transport,
            stop_time,
        };
        let apps = AppSpec::parse_all(app_tables, &given)?;
        Ok(TrafficSpec {
            probes,
            streams,
            flows,
            apps,
        })
    }
}
