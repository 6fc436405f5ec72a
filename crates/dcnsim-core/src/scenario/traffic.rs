//! `[traffic]`: datagram probes and streams, TCP flows, Poisson flow arrivals
//! from empirical size distributions, and incast applications.

use super::{join_path, parse_at, Protocol, ScenarioError, TransportSpec};
use crate::topology::Topology;
use crate::units::{Bytes, Rate, Time};
use crate::workload::Cdf;
use serde::{Deserialize, Deserializer};
use serde_json::Value;

/// A host index, or a keyword standing for a set of hosts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostSel<const KW: u8> {
    Host(u32),
    Keyword,
}

const KW_ALL: u8 = 0;
const KW_RANDOM: u8 = 1;
const KEYWORDS: [&str; 2] = ["all", "random"];

impl<'de, const KW: u8> Deserialize<'de> for HostSel<KW> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let keyword = KEYWORDS[KW as usize];
        match Value::deserialize(d)? {
            Value::String(s) if s == keyword => Ok(HostSel::Keyword),
            Value::Number(n) => n
                .as_u64()
                .and_then(|n| u32::try_from(n).ok())
                .map(HostSel::Host)
                .ok_or_else(|| {
                    serde::de::Error::custom(format!("expected a host index ≥ 0, got {n}"))
                }),
            other => Err(serde::de::Error::custom(format!(
                "expected a host index or \"{keyword}\", got {other}"
            ))),
        }
    }
}

/// `src`/`dst` that may be a host or `"all"`.
pub type HostOrAll = HostSel<KW_ALL>;
/// `dst` that may be a host or `"random"` (a new random host per packet).
pub type HostOrRandom = HostSel<KW_RANDOM>;

impl<const KW: u8> HostSel<KW> {
    pub fn host(self) -> Option<u32> {
        match self {
            HostSel::Host(h) => Some(h),
            HostSel::Keyword => None,
        }
    }
}

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

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTraffic {
    #[serde(default)]
    probes: Vec<Value>,
    #[serde(default)]
    streams: Vec<Value>,
    #[serde(default)]
    flows: Vec<Value>,
    #[serde(default)]
    workloads: Vec<Value>,
    #[serde(default)]
    incast: Vec<Value>,
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

/// Flow sizes of a workload: an empirical CDF or one fixed size.
#[derive(Clone, Debug, PartialEq)]
pub enum SizeDist {
    Cdf(Cdf),
    Fixed(u64),
}

impl SizeDist {
    pub fn mean(&self) -> f64 {
        match self {
            SizeDist::Cdf(c) => c.mean(),
            SizeDist::Fixed(n) => *n as f64,
        }
    }
}

/// `[[traffic.workloads]]` as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawWorkload {
    src: HostOrAll,
    dst: Value,
    cdf: Option<String>,
    size: Option<Bytes>,
    load: f64,
    #[serde(default)]
    start: Time,
    stop: Option<Time>,
    deadline: Option<Time>,
    #[serde(default)]
    class: u8,
    protocol: Option<Protocol>,
}

/// Poisson flow arrivals at one source host: exponential gaps whose mean makes
/// the offered bytes (headers included) `load` of the host's link, sizes drawn
/// from `sizes`, each flow to a uniformly random other host or to `dst`.
///
/// `dst = "all"` is the first seed's all-to-all background: every host sends to
/// every other host. It is generated as one Poisson process per source with a
/// uniformly random destination, which is the same in distribution as one
/// process per (source, destination) pair at 1/(n−1) of the rate (a Poisson
/// process split at random gives independent Poisson processes).
#[derive(Clone, Debug, PartialEq)]
pub struct WorkloadSpec {
    pub src: u32,
    /// `None`: a random other host per flow.
    pub dst: Option<u32>,
    pub sizes: SizeDist,
    pub load: f64,
    /// Mean gap between flow arrivals.
    pub mean_gap: Time,
    pub start: Time,
    pub stop: Time,
    /// Relative deadline: each flow's deadline is its start plus this.
    pub deadline: Option<Time>,
    pub class: u8,
    pub protocol: Option<Protocol>,
}

/// `[[traffic.incast]]` as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawIncast {
    aggregator: u32,
    workers: Value,
    sru: Option<Bytes>,
    total: Option<Bytes>,
    #[serde(default = "one")]
    rounds: u32,
    #[serde(default = "yes")]
    persistent: bool,
    #[serde(default)]
    start: Time,
    deadline: Option<Time>,
    #[serde(default)]
    class: u8,
    protocol: Option<Protocol>,
}

fn one() -> u32 {
    1
}

fn yes() -> bool {
    true
}

/// A barrier-synchronized incast application: each round the aggregator asks
/// every worker for `bytes_per_worker`; every worker answers at once over its
/// own TCP flow, and the next round starts when the last answer has arrived
/// (the incast seed §I–II). `total` splits one response across the workers
/// (the web-search variant), `sru` gives each worker a fixed share.
///
/// With `persistent` (the default) each worker keeps one connection for all
/// rounds, so its window and DCTCP's α carry over from round to round, as in
/// the ns-2 incast setups the seed follows (§II.B: windows shrink to about two
/// segments under high fan-in); otherwise every response opens a connection.
#[derive(Clone, Debug, PartialEq)]
pub struct IncastSpec {
    pub aggregator: u32,
    pub workers: Vec<u32>,
    pub bytes_per_worker: u64,
    pub rounds: u32,
    pub persistent: bool,
    pub start: Time,
    /// Relative deadline of each response, from its round's start.
    pub deadline: Option<Time>,
    pub class: u8,
    pub protocol: Option<Protocol>,
}

/// All traffic of a scenario, validated against its topology.
#[derive(Clone, Debug, Default)]
pub struct TrafficSpec {
    pub probes: Vec<ProbeSpec>,
    pub streams: Vec<StreamSpec>,
    pub flows: Vec<FlowSpec>,
    pub workloads: Vec<WorkloadSpec>,
    pub incast: Vec<IncastSpec>,
}

fn default_packet_size() -> Bytes {
    Bytes(1500)
}

/// Largest packet we model (a 64 KiB jumbo datagram is already generous).
const MAX_PACKET: u64 = 65_535;

fn check_host(topo: &Topology, path: String, host: u32) -> Result<(), ScenarioError> {
    let n = topo.host_count();
    if (host as usize) < n {
        Ok(())
    } else {
        Err(ScenarioError::new(
            path,
            format!(
                "host {host} out of range: the topology has {n} hosts (0..{})",
                n - 1
            ),
        ))
    }
}

/// An 802.1Q priority code point: 0 to 7.
fn check_class(at: &str, class: u8) -> Result<u8, ScenarioError> {
    if usize::from(class) < crate::packet::CLASSES {
        Ok(class)
    } else {
        Err(ScenarioError::new(
            join_path(at, "class"),
            format!("a traffic class is 0 to 7 (802.1Q priority), got {class}"),
        ))
    }
}

fn check_size(path: String, size: Bytes) -> Result<u32, ScenarioError> {
    if size.0 > MAX_PACKET {
        return Err(ScenarioError::new(
            path,
            format!(
                "packet size {} B exceeds the maximum of {MAX_PACKET} B",
                size.0
            ),
        ));
    }
    Ok(size.0 as u32)
}

fn check_load(path: String, load: f64) -> Result<(), ScenarioError> {
    if load > 0.0 && load <= 1.0 {
        Ok(())
    } else {
        Err(ScenarioError::new(
            path,
            format!("load must be in (0, 1], got {load}"),
        ))
    }
}

/// A stream or workload needs an end: its own `stop` or the scenario's.
fn end_of(
    at: &str,
    stop: Option<Time>,
    stop_time: Option<Time>,
    start: Time,
    what: &str,
) -> Result<Time, ScenarioError> {
    let stop = match (stop, stop_time) {
        (Some(t), _) | (None, Some(t)) => t,
        (None, None) => {
            return Err(ScenarioError::new(
                join_path(at, "stop"),
                format!(
                    "required when the scenario has no stop_time (a {what} never ends by itself)"
                ),
            ))
        }
    };
    if stop <= start {
        return Err(ScenarioError::new(
            join_path(at, "stop"),
            format!("stop ({stop}) must be after start ({start})"),
        ));
    }
    Ok(stop)
}

fn check_bytes(path: String, b: Bytes) -> Result<u64, ScenarioError> {
    if b.0 == 0 {
        return Err(ScenarioError::new(path, "must be at least 1 B"));
    }
    Ok(b.0)
}

/// `"random"`, `"all"` or a host index.
fn workload_dst(at: &str, v: &Value, topo: &Topology) -> Result<Option<u32>, ScenarioError> {
    let path = join_path(at, "dst");
    match v {
        Value::String(s) if s == "random" || s == "all" => Ok(None),
        Value::Number(n) => {
            let h = n
                .as_u64()
                .and_then(|n| u32::try_from(n).ok())
                .ok_or_else(|| {
                    ScenarioError::new(&path, format!("expected a host index ≥ 0, got {n}"))
                })?;
            check_host(topo, path, h)?;
            Ok(Some(h))
        }
        other => Err(ScenarioError::new(
            path,
            format!("expected a host index, \"random\" or \"all\", got {other}"),
        )),
    }
}

/// `"all"` (every host but the aggregator) or a list of host indices.
fn incast_workers(
    at: &str,
    v: &Value,
    aggregator: u32,
    topo: &Topology,
) -> Result<Vec<u32>, ScenarioError> {
    let path = join_path(at, "workers");
    let workers: Vec<u32> = match v {
        Value::String(s) if s == "all" => (0..topo.host_count() as u32)
            .filter(|&h| h != aggregator)
            .collect(),
        Value::Array(_) => parse_at(v.clone(), &path)?,
        other => {
            return Err(ScenarioError::new(
                path,
                format!("expected a list of host indices or \"all\", got {other}"),
            ))
        }
    };
    if workers.is_empty() {
        return Err(ScenarioError::new(path, "needs at least one worker"));
    }
    let mut seen = std::collections::HashSet::new();
    for (i, &w) in workers.iter().enumerate() {
        let p = format!("{path}[{i}]");
        check_host(topo, p.clone(), w)?;
        if w == aggregator {
            return Err(ScenarioError::new(p, format!("host {w} is the aggregator")));
        }
        if !seen.insert(w) {
            return Err(ScenarioError::new(p, format!("host {w} is listed twice")));
        }
    }
    Ok(workers)
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
    /// workloads or incast applications, whose flows are created as it runs).
    pub fn known_flow_count(&self) -> Option<usize> {
        (self.workloads.is_empty() && self.incast.is_empty()).then_some(self.flows.len())
    }

    pub(crate) fn from_value(
        value: Value,
        topo: &Topology,
        stop_time: Option<Time>,
        transport: &TransportSpec,
    ) -> Result<TrafficSpec, ScenarioError> {
        let value = if value.is_null() {
            Value::Object(Default::default())
        } else {
            value
        };
        let raw: RawTraffic = parse_at(value, "traffic")?;
        let nic_rates = topo.host_link_rates();
        let mut probes = Vec::new();
        for (i, v) in raw.probes.into_iter().enumerate() {
            let at = format!("traffic.probes[{i}]");
            let p: ProbeSpec = parse_at(v, &at)?;
            check_host(topo, join_path(&at, "src"), p.src)?;
            check_size(join_path(&at, "size"), p.size)?;
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
                    if p.interval.is_none() {
                        return Err(ScenarioError::new(
                            join_path(&at, "interval"),
                            "required when dst = \"all\" (the spacing of the train)",
                        ));
                    }
                }
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
                    (Some(r), None) => r,
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
        let mut workloads = Vec::new();
        for (i, v) in raw.workloads.into_iter().enumerate() {
            let at = format!("traffic.workloads[{i}]");
            let w: RawWorkload = parse_at(v, &at)?;
            check_load(join_path(&at, "load"), w.load)?;
            check_class(&at, w.class)?;
            let stop = end_of(&at, w.stop, stop_time, w.start, "workload")?;
            let dst = workload_dst(&at, &w.dst, topo)?;
            if dst.is_none() && topo.host_count() < 2 {
                return Err(ScenarioError::new(
                    join_path(&at, "dst"),
                    "needs at least two hosts",
                ));
            }
            let sizes = match (&w.cdf, w.size) {
                (Some(c), None) => SizeDist::Cdf(
                    Cdf::named_or_file(c)
                        .map_err(|m| ScenarioError::new(join_path(&at, "cdf"), m))?,
                ),
                (None, Some(b)) => SizeDist::Fixed(check_bytes(join_path(&at, "size"), b)?),
                _ => {
                    return Err(ScenarioError::new(
                        &at,
                        format!(
                            "give either cdf (one of {} or a file) or a fixed size, not both",
                            Cdf::NAMES.join(", ")
                        ),
                    ))
                }
            };
            if w.deadline == Some(Time::ZERO) {
                return Err(ScenarioError::new(
                    join_path(&at, "deadline"),
                    "a relative deadline must be after the flow's start",
                ));
            }
            let mss = transport.mss.0 as f64;
            let mean = sizes.mean();
            let wire_bits = 8.0 * (mean + 40.0 * (mean / mss).ceil().max(1.0));
            let sources: Vec<u32> = match w.src.host() {
                Some(h) => {
                    check_host(topo, join_path(&at, "src"), h)?;
                    if Some(h) == dst {
                        return Err(ScenarioError::new(
                            join_path(&at, "dst"),
                            format!("flows from host {h} to itself never cross the network"),
                        ));
                    }
                    vec![h]
                }
                None => (0..topo.host_count() as u32)
                    .filter(|&h| Some(h) != dst)
                    .collect(),
            };
            for src in sources {
                let rate = nic_rates[src as usize].bps() * w.load;
                let gap_s = wire_bits / rate;
                workloads.push(WorkloadSpec {
                    src,
                    dst,
                    sizes: sizes.clone(),
                    load: w.load,
                    mean_gap: Time((gap_s * Time::PS_PER_S as f64).round().max(1.0) as u64),
                    start: w.start,
                    stop,
                    deadline: w.deadline,
                    class: w.class,
                    protocol: w.protocol,
                });
            }
        }
        let mut incast = Vec::new();
        for (i, v) in raw.incast.into_iter().enumerate() {
            let at = format!("traffic.incast[{i}]");
            let c: RawIncast = parse_at(v, &at)?;
            check_host(topo, join_path(&at, "aggregator"), c.aggregator)?;
            check_class(&at, c.class)?;
            let workers = incast_workers(&at, &c.workers, c.aggregator, topo)?;
            let bytes_per_worker = match (c.sru, c.total) {
                (Some(b), None) => check_bytes(join_path(&at, "sru"), b)?,
                (None, Some(t)) => {
                    let each = t.0.div_ceil(workers.len() as u64);
                    check_bytes(join_path(&at, "total"), Bytes(each))?
                }
                _ => {
                    return Err(ScenarioError::new(
                        &at,
                        "give either sru (bytes per worker) or total (one response split across the workers)",
                    ))
                }
            };
            if c.rounds == 0 {
                return Err(ScenarioError::new(
                    join_path(&at, "rounds"),
                    "must be at least 1",
                ));
            }
            if c.deadline == Some(Time::ZERO) {
                return Err(ScenarioError::new(
                    join_path(&at, "deadline"),
                    "a relative deadline must be after the round's start",
                ));
            }
            incast.push(IncastSpec {
                aggregator: c.aggregator,
                workers,
                bytes_per_worker,
                rounds: c.rounds,
                persistent: c.persistent,
                start: c.start,
                deadline: c.deadline,
                class: c.class,
                protocol: c.protocol,
            });
        }
        Ok(TrafficSpec {
            probes,
            streams,
            flows,
            workloads,
            incast,
        })
    }
}
