//! The keys of the `pause` agent (`[[agents]] kind = "pause"`) and their
//! checks: thresholds bounded by what a switch holds, the pause and its
//! renewal by 802.3's quanta, the deadlock watch by a PFC watchdog's times
//! (docs/scenario.md, Bounds).

use super::super::ScenarioView;
use crate::app::keys::MAX_PACKET;
use crate::error::{join_path, ScenarioError};
use crate::packet::CLASSES;
use crate::topology::NodeKind;
use crate::units::{Capacity, Time};
use serde::Deserialize;

#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PauseSpec {
    /// Static threshold: pause the upstream neighbour when its ingress count
    /// exceeds this.
    pub xoff: Option<Capacity>,
    /// Resume it when the count is back at or below this (default: half of
    /// `xoff`, in the same unit).
    pub xon: Option<Capacity>,
    /// Dynamic threshold: α of T = α · (free shared buffer), in place of
    /// `xoff`.
    pub alpha: Option<f64>,
    /// The switch's shared buffer in bytes (with `alpha`).
    pub buffer: Option<Capacity>,
    /// With `alpha`: resume once the shared bytes are this far below T
    /// (default 3 KiB).
    pub resume_offset: Option<Capacity>,
    /// Buffer each count may take beyond its threshold; arrivals beyond it
    /// are dropped on ingress (default: no limit).
    pub headroom: Option<Capacity>,
    /// Pause time in quanta of 512 bit times (default 65535, the largest).
    #[serde(default = "max_quanta")]
    pub quanta: u16,
    /// Renew a pause this often while its count stays above XON (default:
    /// half the pause time at the port's rate); from one quantum at the
    /// fastest link to [`crate::units::MAX_DELAY`].
    #[serde(default, deserialize_with = "crate::units::optional_delay")]
    pub refresh: Option<Time>,
    /// 802.1Qbb: count and pause each class on its own (default: 802.3x, one
    /// count per ingress port and PAUSE for every class).
    #[serde(default)]
    pub per_class: bool,
    /// Write a row of `agent_rows` per PAUSE sent and ingress drop.
    #[serde(default)]
    pub trace: bool,
    /// End the run when a paused port with packets waiting sends nothing for
    /// this long.
    #[serde(default = "default_deadlock_after")]
    pub deadlock_after: Time,
}

/// Bits of one pause quantum (802.3 Annex 31B.3), also a PAUSE frame's size.
pub(super) const QUANTUM_BITS: u64 = 512;

fn max_quanta() -> u16 {
    u16::MAX
}

fn default_deadlock_after() -> Time {
    Time::from_us(10_000)
}

/// The longest `deadlock_after`: 5 s, the longest detection time SONiC's PFC
/// watchdog takes (sonic-utilities `pfcwd/main.py`, `start`: 100 to 5000
/// ms; Juniper's default is 200 ms). A stall longer than that is a
/// deadlock by any switch's reckoning.
const MAX_DEADLOCK_AFTER: Time = Time(5 * Time::PS_PER_S);

/// The smallest packet: IPv4 and UDP headers (28 B). A switch holding B
/// bytes holds at most B / 28 packets.
const MIN_PACKET: u64 = 28;

/// HPCC's `resume_offset` (switch-mmu.cc): 3 × 1024 bytes.
pub(super) const RESUME_OFFSET: u64 = 3 * 1024;

impl PauseSpec {
    pub(super) fn xon(&self, xoff: Capacity) -> Capacity {
        self.xon.unwrap_or(match xoff {
            Capacity::Packets(n) => Capacity::Packets(n / 2),
            Capacity::Bytes(b) => Capacity::Bytes(b / 2),
        })
    }
}

/// Ports of the switch with the most ports: the switch holding the most.
fn most_switch_ports(sc: &ScenarioView) -> u64 {
    let mut ports = vec![0u64; sc.topology.nodes.len()];
    for l in &sc.topology.links {
        ports[l.a] += 1;
        ports[l.b] += 1;
    }
    (0..ports.len())
        .filter(|&n| sc.topology.nodes[n].kind == NodeKind::Switch)
        .map(|n| ports[n])
        .max()
        .unwrap_or(0)
}

/// What `ports` queues of `capacity` hold together, in `unit`'s unit.
/// Packets become bytes at the largest packet (65,535 B) and bytes packets
/// at the smallest (28 B), so a bound in the other unit never refuses what
/// some traffic could reach.
fn held_by(capacity: Capacity, ports: u64, unit: Capacity) -> Capacity {
    match (capacity, unit) {
        (Capacity::Packets(n), Capacity::Bytes(_)) => {
            Capacity::Bytes(ports.saturating_mul(n).saturating_mul(MAX_PACKET))
        }
        (Capacity::Bytes(b), Capacity::Packets(_)) => {
            Capacity::Packets(ports.saturating_mul(b) / MIN_PACKET)
        }
        (Capacity::Packets(n), _) => Capacity::Packets(ports.saturating_mul(n)),
        (Capacity::Bytes(b), _) => Capacity::Bytes(ports.saturating_mul(b)),
    }
}

/// The most a switch holds, in `unit`'s unit: the switch with the most
/// ports, each with its queue (`network.queue.capacity`) full and a packet
/// on the wire.
fn switch_holds(sc: &ScenarioView, unit: Capacity) -> Capacity {
    let ports = most_switch_ports(sc);
    let queued = held_by(sc.network.queue.capacity, ports, unit).amount();
    let sending = held_by(Capacity::Packets(1), ports, unit).amount();
    Capacity::of_unit(unit, queued.saturating_add(sending))
}

fn same_unit(a: Capacity, b: Capacity) -> bool {
    matches!(
        (a, b),
        (Capacity::Packets(_), Capacity::Packets(_)) | (Capacity::Bytes(_), Capacity::Bytes(_))
    )
}

fn bytes(spec: Option<Capacity>, path: &str, key: &str) -> Result<Option<u64>, ScenarioError> {
    match spec {
        None => Ok(None),
        Some(Capacity::Bytes(b)) => Ok(Some(b)),
        Some(c) => Err(ScenarioError::new(
            join_path(path, key),
            format!("must be in bytes with alpha (a dynamic threshold counts bytes), got {c}"),
        )),
    }
}
/// The keys' checks beyond their types; errors name the key under `path`.
pub(super) fn check(spec: &PauseSpec, path: &str, sc: &ScenarioView) -> Result<(), ScenarioError> {
    let at = |key: &str| join_path(path, key);
    if spec.quanta == 0 {
        return Err(ScenarioError::new(
            at("quanta"),
            "must be at least 1 (a PAUSE of 0 quanta only resumes)",
        ));
    }
    if let Some(refresh) = spec.refresh {
        // A PAUSE frame is 64 B, one quantum (512 bit times): renewing a
        // pause faster than the fastest link carries one is no refresh.
        let fastest = sc.topology.links.iter().map(|l| l.rate).max();
        let quantum = fastest.map_or(Time::ZERO, |r| r.serialization(QUANTUM_BITS / 8));
        if refresh < quantum.max(Time(1)) {
            return Err(ScenarioError::new(
                at("refresh"),
                format!(
                    "{refresh} is shorter than one pause quantum (512 bit times, \
                     {quantum} at the fastest link): PAUSE frames cannot be sent that often"
                ),
            ));
        }
    }
    if spec.deadlock_after == Time::ZERO {
        return Err(ScenarioError::new(at("deadlock_after"), "must be positive"));
    }
    if spec.deadlock_after > MAX_DEADLOCK_AFTER {
        return Err(ScenarioError::new(
            at("deadlock_after"),
            format!(
                "must be at most {MAX_DEADLOCK_AFTER} (5 s, the longest detection time of \
                 SONiC's PFC watchdog), got {}",
                spec.deadlock_after
            ),
        ));
    }
    match (spec.xoff, spec.alpha) {
        (None, None) => Err(ScenarioError::new(
            at("xoff"),
            "required (give xoff for a static threshold or alpha for a dynamic one)",
        )),
        (Some(_), Some(_)) => Err(ScenarioError::new(
            at("alpha"),
            "not with xoff (alpha sets a dynamic threshold, xoff a static one)",
        )),
        (Some(xoff), None) => check_static(spec, xoff, path, sc),
        (None, Some(alpha)) => check_dynamic(spec, alpha, path, sc).map(|_| ()),
    }
}

fn check_static(
    spec: &PauseSpec,
    xoff: Capacity,
    path: &str,
    sc: &ScenarioView,
) -> Result<(), ScenarioError> {
    let at = |key: &str| join_path(path, key);
    let dynamic_only = [
        ("buffer", spec.buffer.is_some()),
        ("resume_offset", spec.resume_offset.is_some()),
    ];
    if let Some((key, _)) = dynamic_only.into_iter().find(|&(_, given)| given) {
        return Err(ScenarioError::new(
            at(key),
            "only with alpha (a dynamic threshold); xoff sets a static one",
        ));
    }
    let holds = switch_holds(sc, xoff);
    if xoff.amount() >= holds.amount() {
        return Err(ScenarioError::new(
            at("xoff"),
            format!(
                "{xoff} is not below what the largest switch holds ({holds}: its ports' queues of \
                 network.queue.capacity = {} and a packet on each wire): no count could reach it, \
                 so no PAUSE would be sent",
                sc.network.queue.capacity
            ),
        ));
    }
    let xon = spec.xon(xoff);
    if !same_unit(xoff, xon) {
        return Err(ScenarioError::new(
            at("xon"),
            format!("must be in the unit of xoff ({xoff})"),
        ));
    }
    if xon.amount() >= xoff.amount() {
        return Err(ScenarioError::new(
            at("xon"),
            format!("must be below xoff ({xoff}), got {xon}"),
        ));
    }
    if let Some(headroom) = spec.headroom {
        if !same_unit(xoff, headroom) {
            return Err(ScenarioError::new(
                at("headroom"),
                format!("must be in the unit of xoff ({xoff})"),
            ));
        }
        let buffer = sc.network.queue.capacity;
        if headroom.amount() >= held_by(buffer, 1, headroom).amount() {
            return Err(ScenarioError::new(
                at("headroom"),
                format!(
                    "must be below the switch ports' buffer (network.queue.capacity = {buffer}), got {headroom}"
                ),
            ));
        }
    }
    Ok(())
}

fn check_dynamic(
    spec: &PauseSpec,
    alpha: f64,
    path: &str,
    sc: &ScenarioView,
) -> Result<(), ScenarioError> {
    let at = |key: &str| join_path(path, key);
    if !(alpha.is_finite() && alpha > 0.0) {
        return Err(ScenarioError::new(
            at("alpha"),
            format!("must be a positive number, got {alpha}"),
        ));
    }
    if spec.xon.is_some() {
        return Err(ScenarioError::new(
            at("xon"),
            "only with xoff; a dynamic threshold resumes at T − resume_offset",
        ));
    }
    let Some(buffer) = bytes(spec.buffer, path, "buffer")? else {
        return Err(ScenarioError::new(
            at("buffer"),
            "missing (alpha needs the switch's shared buffer, in bytes)",
        ));
    };
    // The shared buffer is where the switch's queues are held: more than
    // they hold together (the switch with the most ports) is memory no
    // packet takes, and T never falls.
    let holds = switch_holds(sc, Capacity::Bytes(0));
    if buffer > holds.amount() {
        return Err(ScenarioError::new(
            at("buffer"),
            format!(
                "{buffer}B is more than the largest switch's queues hold ({holds}: its ports' \
                 queues of network.queue.capacity = {} and a packet on each wire)",
                sc.network.queue.capacity
            ),
        ));
    }
    let most = most_switch_ports(sc);
    if let Some(offset) = bytes(spec.resume_offset, path, "resume_offset")? {
        if offset >= buffer {
            return Err(ScenarioError::new(
                at("resume_offset"),
                format!(
                    "must be below buffer ({buffer}B): it is a distance below the threshold within \
                     the shared buffer, got {offset}B"
                ),
            ));
        }
    }
    if let Some(headroom) = bytes(spec.headroom, path, "headroom")? {
        // The switch with the most ports reserves the most headroom.
        let classes = if spec.per_class { CLASSES as u64 } else { 1 };
        let reserved = headroom * most * classes;
        if reserved >= buffer {
            return Err(ScenarioError::new(
                at("headroom"),
                format!(
                    "{most} ports × {classes} classes × {headroom}B = {reserved}B reserved is not below buffer ({buffer}B)"
                ),
            ));
        }
    }
    Ok(())
}
