//! The keys traffic sources share (`[traffic]`'s probes, streams and flows,
//! and every application's table): host indices or a keyword standing for a
//! set of hosts, traffic classes, sizes, loads and when a source stops. Each
//! check names the key and the reason.

use crate::error::{join_path, ScenarioError};
use crate::topology::Topology;
use crate::units::{Bytes, Time};
pub use crate::workload::check_bytes;
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

pub fn check_host(topo: &Topology, path: String, host: u32) -> Result<(), ScenarioError> {
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
pub fn check_class(at: &str, class: u8) -> Result<u8, ScenarioError> {
    if usize::from(class) < crate::packet::CLASSES {
        Ok(class)
    } else {
        Err(ScenarioError::new(
            join_path(at, "class"),
            format!("a traffic class is 0 to 7 (802.1Q priority), got {class}"),
        ))
    }
}

pub fn check_load(path: String, load: f64) -> Result<(), ScenarioError> {
    if load > 0.0 && load <= 1.0 {
        Ok(())
    } else {
        Err(ScenarioError::new(
            path,
            format!("load must be in (0, 1], got {load}"),
        ))
    }
}

/// A source that runs until stopped needs an end: its own `stop` or the
/// scenario's.
pub fn end_of(
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
    check_starts_before(at, "start", start, stop_time, what)?;
    if stop <= start {
        return Err(ScenarioError::new(
            join_path(at, "stop"),
            format!("stop ({stop}) must be after start ({start})"),
        ));
    }
    Ok(stop)
}

/// A source (or an outage) starting at or after the run's `stop_time`
/// would never act.
pub fn check_starts_before(
    at: &str,
    key: &str,
    start: Time,
    stop_time: Option<Time>,
    what: &str,
) -> Result<(), ScenarioError> {
    match stop_time {
        Some(end) if start >= end => Err(ScenarioError::new(
            join_path(at, key),
            format!("the {what} starts at {start}, not before the run's stop_time ({end}): the run ends before it begins"),
        )),
        _ => Ok(()),
    }
}

/// Whether `rounds` steps of `step` after `start` stay within the simulated
/// clock (picoseconds in 64 bits, about 213 days; [`crate::units::Time`]).
pub fn fits_clock(start: Time, rounds: u64, step: Time) -> bool {
    u128::from(start.0) + u128::from(rounds) * u128::from(step.0) <= u128::from(u64::MAX)
}

/// A wait between two rounds of a source (`think`, `gap`): the second round
/// must come before the source's `end` (its `stop`, or the run's
/// `stop_time`, named by `end`'s text), or the wait only ends it; without
/// an end, its `rounds` must fit the simulated clock.
pub fn check_wait(
    at: &str,
    key: &str,
    wait: Time,
    start: Time,
    end: Option<(Time, &str)>,
    rounds: u64,
    what: &str,
) -> Result<(), ScenarioError> {
    let err = |why: String| Err(ScenarioError::new(join_path(at, key), why));
    match end {
        Some((end, name)) if !fits_clock(start, 1, wait) || start + wait >= end => err(format!(
            "{wait} after the {what}'s start ({start}) is not before {name} ({end}): its second round would never come"
        )),
        None if !fits_clock(start, rounds, wait) => err(format!(
            "{rounds} rounds {wait} apart from {start} run past the end of the simulated clock (2^64 ps, about 213 days)"
        )),
        _ => Ok(()),
    }
}

/// An application of `rounds` rounds `gap` apart from `start` (barrier,
/// shuffle, web search): it starts before the run's `stop_time` and its
/// second round comes before it.
pub fn check_rounds(
    at: &str,
    start: Time,
    gap: Time,
    stop_time: Option<Time>,
    rounds: u32,
    what: &str,
) -> Result<(), ScenarioError> {
    check_starts_before(at, "start", start, stop_time, what)?;
    let end = stop_time.map(|t| (t, "the run's stop_time"));
    check_wait(at, "gap", gap, start, end, u64::from(rounds), what)
}

/// A count of `key` (rounds, queries, iterations, jobs…), at least one.
pub fn check_count(at: &str, key: &str, n: u32) -> Result<u32, ScenarioError> {
    if n == 0 {
        return Err(ScenarioError::new(join_path(at, key), "must be at least 1"));
    }
    Ok(n)
}

/// An `aggregator` and its `workers` (`"all"`: every other host): the hosts
/// of a fan-in application (incast, web search).
pub fn fan_in(
    at: &str,
    aggregator: u32,
    workers: &Value,
    topo: &Topology,
) -> Result<Vec<u32>, ScenarioError> {
    check_host(topo, join_path(at, "aggregator"), aggregator)?;
    host_list(
        &join_path(at, "workers"),
        workers,
        topo,
        "worker",
        Some((aggregator, "the aggregator")),
    )
}

/// A relative deadline (from a flow's or an operation's start) of zero.
pub fn check_relative_deadline(
    at: &str,
    deadline: Option<Time>,
    from: &str,
) -> Result<(), ScenarioError> {
    if deadline == Some(Time::ZERO) {
        return Err(ScenarioError::new(
            join_path(at, "deadline"),
            format!("a relative deadline must be after {from}"),
        ));
    }
    Ok(())
}

/// `"all"` (every host but `except`) or a list of distinct host indices, at
/// least one: the `what`s of an application (workers, clients…). `except`
/// is a host that may not be listed, and what it is.
pub fn host_list(
    path: &str,
    v: &Value,
    topo: &Topology,
    what: &str,
    except: Option<(u32, &str)>,
) -> Result<Vec<u32>, ScenarioError> {
    let skip = except.map(|(h, _)| h);
    let hosts: Vec<u32> = match v {
        Value::String(s) if s == "all" => (0..topo.host_count() as u32)
            .filter(|&h| Some(h) != skip)
            .collect(),
        Value::Array(_) => crate::error::parse_at(v.clone(), path)?,
        other => {
            return Err(ScenarioError::new(
                path,
                format!("expected a list of host indices or \"all\", got {other}"),
            ))
        }
    };
    if hosts.is_empty() {
        return Err(ScenarioError::new(
            path,
            format!("needs at least one {what}"),
        ));
    }
    let mut seen = std::collections::HashSet::new();
    for (i, &h) in hosts.iter().enumerate() {
        let p = format!("{path}[{i}]");
        check_host(topo, p.clone(), h)?;
        if let Some((x, name)) = except {
            if h == x {
                return Err(ScenarioError::new(p, format!("host {h} is {name}")));
            }
        }
        if !seen.insert(h) {
            return Err(ScenarioError::new(p, format!("host {h} is listed twice")));
        }
    }
    Ok(hosts)
}

/// Largest packet we model (a 64 KiB jumbo datagram is already generous).
pub const MAX_PACKET: u64 = 65_535;
/// Smallest datagram (probe or stream packet): its IPv4 (20 B) and UDP (8 B)
/// headers, RFC 791 and RFC 768.
const MIN_DATAGRAM: u64 = 28;

/// A datagram's size (a probe's, a stream's packets, an application's
/// message): from [`MIN_DATAGRAM`] to [`MAX_PACKET`] bytes.
pub fn check_size(path: String, size: Bytes) -> Result<u32, ScenarioError> {
    if size.0 > MAX_PACKET {
        return Err(ScenarioError::new(
            path,
            format!(
                "packet size {} B exceeds the maximum of {MAX_PACKET} B",
                size.0
            ),
        ));
    }
    if size.0 < MIN_DATAGRAM {
        return Err(ScenarioError::new(
            path,
            format!(
                "packet size {} B is smaller than its own headers: a datagram is at least {MIN_DATAGRAM} B (IPv4 20 B + UDP 8 B)",
                size.0
            ),
        ));
    }
    Ok(size.0 as u32)
}
