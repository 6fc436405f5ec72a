//! `[traffic]`: datagram probes and background streams.

use super::{join_path, parse_at, ScenarioError};
use crate::topology::Topology;
use crate::units::{Bytes, Rate, Time};
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
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTraffic {
    #[serde(default)]
    probes: Vec<Value>,
    #[serde(default)]
    streams: Vec<Value>,
}

/// All traffic of a scenario, validated against its topology.
#[derive(Clone, Debug, Default)]
pub struct TrafficSpec {
    pub probes: Vec<ProbeSpec>,
    pub streams: Vec<StreamSpec>,
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

impl TrafficSpec {
    pub(crate) fn from_value(
        value: Value,
        topo: &Topology,
        stop_time: Option<Time>,
    ) -> Result<TrafficSpec, ScenarioError> {
        let value = if value.is_null() {
            Value::Object(Default::default())
        } else {
            value
        };
        let raw: RawTraffic = parse_at(value, "traffic")?;
        let mut probes = Vec::new();
        for (i, v) in raw.probes.into_iter().enumerate() {
            let at = format!("traffic.probes[{i}]");
            let p: ProbeSpec = parse_at(v, &at)?;
            check_host(topo, join_path(&at, "src"), p.src)?;
            check_size(join_path(&at, "size"), p.size)?;
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
            let stop = match (s.stop, stop_time) {
                (Some(t), _) => t,
                (None, Some(t)) => t,
                (None, None) => return Err(ScenarioError::new(
                    join_path(&at, "stop"),
                    "required when the scenario has no stop_time (a stream never ends by itself)",
                )),
            };
            if stop <= s.start {
                return Err(ScenarioError::new(
                    join_path(&at, "stop"),
                    format!("stop ({stop}) must be after start ({})", s.start),
                ));
            }
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
                        if !(load > 0.0 && load <= 1.0) {
                            return Err(ScenarioError::new(
                                join_path(&at, "load"),
                                format!("load must be in (0, 1], got {load}"),
                            ));
                        }
                        let link = topo.host_link_rate(src);
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
                });
            }
        }
        Ok(TrafficSpec { probes, streams })
    }
}
