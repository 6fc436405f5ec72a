//! Port stages: what a port does to a packet besides queueing it.
//!
//! A port is a short pipeline, in this order:
//! 1. **on enqueue** — stamp or rewrite the packet, knowing the buffer as it
//!    finds it, or drop it ([`Stage::on_enqueue`]; e.g. [`max_occupancy`],
//!    BOTCP's buffer-occupancy feedback; [`qjump`]'s policer);
//! 2. **AQM** — ECN marking or early drop in the queue's AQM domain
//!    (`crate::queue::aqm`, an axis with its own registry; kept inline in the
//!    port's first cache line, where the hot path reads it, rather than
//!    behind this trait);
//! 3. **discipline** — the queue itself (`queue/`);
//! 4. **shaper** — classes that may not start now, and when they may
//!    ([`Stage::held`], [`Stage::release_at`]; e.g. [`token_bucket`],
//!    [`qjump`]'s levels). The
//!    discipline skips held classes as it skips paused ones (802.1Qbb), and
//!    the port answers "not before T" through its usual wake-up
//!    ([`crate::engine::Event::PortFree`]).
//!
//! Stages are configured by `[[network.stages]]` entries (`kind`, `ports`
//! and the kind's own keys; docs/scenario.md) and built per port with the
//! context they need ([`PortContext`]). A port without stages pays one
//! flag test per packet. An on-enqueue stage keeps a scheduled FIFO port
//! scheduled: such a port knows its occupancy on arrival. A shaper holds
//! packets, so its port is event-driven; no stage makes any *other* port
//! event-driven.
//!
//! Add a stage by writing one file here that implements [`Stage`] and
//! adding one line to the `stages!` registry below. A Rust program can also
//! run its own stage at chosen ports, unregistered (`Simulation::plug_stage`,
//! [`PortStage::Plugged`]; see `tests/plugged.rs`).

pub mod max_occupancy;
pub mod qjump;
pub mod token_bucket;

use crate::error::{join_path, parse_at, ScenarioError};
use crate::packet::Hop;
pub use crate::queue::PortContext;
use crate::topology::{NodeKind, Topology};
use crate::units::{Rate, Time};
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::Value;
use std::fmt::Debug;

/// The port's buffer as an arriving packet finds it: packets and bytes
/// waiting, the one on the wire not counted (what tail drop and AQM see).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Found {
    pub packets: u64,
    pub bytes: u64,
}

/// What every port stage provides. Each hook has a do-nothing default; a
/// kind says which roles it plays with [`Stage::ON_ENQUEUE`] and
/// [`Stage::SHAPES`], so a port runs only the hooks its stages have.
pub trait Stage: Sized {
    /// The kind's own keys of a `[[network.stages]]` entry (besides `kind`
    /// and `ports`).
    type Spec: DeserializeOwned + Clone + Debug + PartialEq;

    /// Whether [`Stage::on_enqueue`] does something.
    const ON_ENQUEUE: bool = false;
    /// Whether the stage holds classes ([`Stage::held`]).
    const SHAPES: bool = false;
    /// Whether [`Stage::on_enqueue`] is [`Stage::stamp`]: it keeps no state,
    /// reads only the packet and the buffer as found, and never refuses.
    /// A port whose only guard such a stage is runs [`Stage::stamp`] inline
    /// instead of through its stage list (the port's fast path, declared
    /// here and named by the port only as a [`StageKind`]).
    const STATELESS: bool = false;

    /// Whether an entry of these keys holds classes (a kind that shapes only
    /// in some settings says which; by default [`Stage::SHAPES`]).
    fn shapes(_spec: &Self::Spec) -> bool {
        Self::SHAPES
    }

    /// Checks beyond the types; errors name the key under `path`.
    fn check(_spec: &Self::Spec, _path: &str) -> Result<(), ScenarioError> {
        Ok(())
    }

    /// Checks against the ports the entry runs at, `fastest` the fastest of
    /// their links; errors name the key under `path`.
    fn check_ports(_spec: &Self::Spec, _path: &str, _fastest: Rate) -> Result<(), ScenarioError> {
        Ok(())
    }

    fn new(spec: &Self::Spec, ctx: &PortContext) -> Self;

    /// What the run's summary reports of an entry (`stages`), built for a
    /// port of context `ctx`; nothing by default.
    fn report(_spec: &Self::Spec, _ctx: &PortContext) -> Option<Value> {
        None
    }

    /// `pkt` is offered to the port at `now`, which holds `found`; may
    /// rewrite it, or refuse it (`false`: the port drops it, a policer).
    /// A [`Stage::STATELESS`] kind's is its [`Stage::stamp`].
    fn on_enqueue(&mut self, pkt: &mut Hop, found: Found, _now: Time) -> bool {
        Self::stamp(pkt, found);
        true
    }

    /// What a [`Stage::STATELESS`] kind does to `pkt` offered to a port
    /// holding `found`, without an instance; nothing by default.
    fn stamp(_pkt: &mut Hop, _found: Found) {}

    /// Classes (bit c for class c) that may not start a packet at `now`.
    fn held(&self, _now: Time) -> u8 {
        0
    }

    /// The earliest time one of the classes in `held` may start again.
    fn release_at(&self, _held: u8) -> Time {
        Time(u64::MAX)
    }

    /// A packet of `class` and `size` bytes starts serializing at `start`.
    fn on_start(&mut self, _class: u8, _size: u32, _start: Time) {}
}

/// A [`Stage`]'s hooks behind a pointer: what a port calls of a stage a
/// Rust program plugged in (`Simulation::plug_stage`).
pub trait DynStage {
    fn on_enqueue(&mut self, pkt: &mut Hop, found: Found, now: Time) -> bool;
    fn held(&self, now: Time) -> u8;
    fn release_at(&self, held: u8) -> Time;
    fn on_start(&mut self, class: u8, size: u32, start: Time);
}

/// Any [`Stage`] as a [`DynStage`].
struct Dyn<S>(S);

impl<S: Stage> DynStage for Dyn<S> {
    fn on_enqueue(&mut self, pkt: &mut Hop, found: Found, now: Time) -> bool {
        self.0.on_enqueue(pkt, found, now)
    }

    fn held(&self, now: Time) -> u8 {
        self.0.held(now)
    }

    fn release_at(&self, held: u8) -> Time {
        self.0.release_at(held)
    }

    fn on_start(&mut self, class: u8, size: u32, start: Time) {
        self.0.on_start(class, size, start);
    }
}

/// A plugged-in stage ([`PortStage::Plugged`]).
pub struct Plugged(Box<dyn DynStage>);

impl Debug for Plugged {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Plugged")
    }
}

impl PortStage {
    /// `stage`, one a Rust program declares, at a port.
    pub fn plugged(stage: impl Stage + 'static) -> PortStage {
        PortStage::Plugged(Plugged(Box::new(Dyn(stage))))
    }
}

/// Which ports a `[[network.stages]]` entry applies to.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(
    untagged,
    expecting = "expected \"all\", \"switches\", \"nics\" or a list of ports \"node->peer\""
)]
pub enum PortSel {
    /// `"all"` ports, `"switches"` (switch egress ports) or `"nics"` (host
    /// NICs).
    Group(String),
    /// Ports by name, `"node->peer"`.
    Names(Vec<String>),
}

macro_rules! stages {
    ($($variant:ident($ty:ty),)*) => {
        /// The stage kinds (`kind = "..."` of a `[[network.stages]]` entry).
        #[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq, strum::VariantNames)]
        #[serde(rename_all = "snake_case")]
        #[strum(serialize_all = "snake_case")]
        pub enum StageKind { $($variant,)* }

        impl StageKind {
            /// The kind's [`Stage::stamp`], run inline by a port whose only
            /// guard a [`Stage::STATELESS`] stage of this kind is.
            #[inline(always)]
            pub fn stamp(self, pkt: &mut Hop, found: Found) {
                match self { $(StageKind::$variant => <$ty>::stamp(pkt, found),)* }
            }
        }

        /// One kind's parameters.
        #[derive(Clone, Debug, PartialEq)]
        pub enum StageParams { $($variant(<$ty as Stage>::Spec),)* }

        /// A stage at one port: a registered kind, or one a Rust program
        /// plugged in (`Plugged`, called through a pointer).
        #[derive(Debug)]
        pub enum PortStage { $($variant($ty),)* Plugged(Plugged), }

        impl StageParams {
            fn parse(kind: StageKind, rest: Value, path: &str) -> Result<StageParams, ScenarioError> {
                Ok(match kind {
                    $(StageKind::$variant => {
                        let spec = parse_at(rest, path)?;
                        <$ty>::check(&spec, path)?;
                        StageParams::$variant(spec)
                    })*
                })
            }

            /// Checks against the selected ports' fastest link.
            fn check_ports(&self, path: &str, fastest: Rate) -> Result<(), ScenarioError> {
                match self { $(StageParams::$variant(s) => <$ty>::check_ports(s, path, fastest),)* }
            }

            /// A fresh stage for a port of context `ctx`.
            pub fn build(&self, ctx: &PortContext) -> PortStage {
                match self { $(StageParams::$variant(s) => PortStage::$variant(<$ty>::new(s, ctx)),)* }
            }

            /// What the summary reports of the entry, for a port of `ctx`.
            pub fn report(&self, ctx: &PortContext) -> Option<Value> {
                match self { $(StageParams::$variant(s) => <$ty>::report(s, ctx),)* }
            }

            /// Whether the kind rewrites packets on enqueue.
            pub fn on_enqueue(&self) -> bool {
                match self { $(StageParams::$variant(_) => <$ty>::ON_ENQUEUE,)* }
            }

            /// The kind, when its enqueue hook is a [`Stage::STATELESS`]
            /// stamp a port may run inline.
            pub fn stateless(&self) -> Option<StageKind> {
                match self { $(StageParams::$variant(_) => <$ty>::STATELESS.then_some(StageKind::$variant),)* }
            }

            /// The kind's name, as `kind` is written (`"max_occupancy"`).
            pub fn name(&self) -> &'static str {
                match self { $(StageParams::$variant(_) => <StageKind as strum::VariantNames>::VARIANTS[StageKind::$variant as usize],)* }
            }

            /// Whether the kind holds classes.
            pub fn shapes(&self) -> bool {
                match self { $(StageParams::$variant(s) => <$ty>::shapes(s),)* }
            }
        }

        impl PortStage {
            #[inline]
            fn on_enqueue(&mut self, pkt: &mut Hop, found: Found, now: Time) -> bool {
                match self { $(PortStage::$variant(s) => s.on_enqueue(pkt, found, now),)* PortStage::Plugged(s) => s.0.on_enqueue(pkt, found, now), }
            }

            fn held(&self, now: Time) -> u8 {
                match self { $(PortStage::$variant(s) => s.held(now),)* PortStage::Plugged(s) => s.0.held(now), }
            }

            fn release_at(&self, held: u8) -> Time {
                match self { $(PortStage::$variant(s) => s.release_at(held),)* PortStage::Plugged(s) => s.0.release_at(held), }
            }

            fn on_start(&mut self, class: u8, size: u32, start: Time) {
                match self { $(PortStage::$variant(s) => s.on_start(class, size, start),)* PortStage::Plugged(s) => s.0.on_start(class, size, start), }
            }
        }
    };
}

stages! {
    MaxOccupancy(max_occupancy::MaxOccupancy),
    TokenBucket(token_bucket::TokenBucket),
    Qjump(qjump::Qjump),
}

/// The stages of one port, in the order their entries are listed.
#[derive(Debug, Default)]
pub struct Stages(Vec<PortStage>);

impl Stages {
    pub fn push(&mut self, stage: PortStage) {
        self.0.push(stage);
    }

    /// Run every stage's enqueue hook on `pkt`, which finds `found` at
    /// `now`, until one refuses it (`false`: drop it). A port of one stage
    /// (QJUMP's NICs) calls it without the loop; a [`Stage::STATELESS`]
    /// stamp alone the port runs inline (`network::port::Stamps::Inline`).
    /// Inline in `run_stamps`, its one caller: out of line, the call cost
    /// each packet through QJUMP's NICs some 22 instructions
    /// (docs/performance.md).
    #[inline]
    pub fn on_enqueue(&mut self, pkt: &mut Hop, found: Found, now: Time) -> bool {
        match self.0.as_mut_slice() {
            [only] => only.on_enqueue(pkt, found, now),
            all => all.iter_mut().all(|s| s.on_enqueue(pkt, found, now)),
        }
    }

    /// Classes some stage holds at `now`.
    pub fn held(&self, now: Time) -> u8 {
        self.0.iter().fold(0, |m, s| m | s.held(now))
    }

    /// When the first of the `held` classes may start again.
    pub fn release_at(&self, held: u8) -> Time {
        self.0
            .iter()
            .map(|s| s.release_at(held))
            .min()
            .unwrap_or(Time(u64::MAX))
    }

    /// A packet starts serializing: every stage hears of it.
    pub fn on_start(&mut self, class: u8, size: u32, start: Time) {
        for s in &mut self.0 {
            s.on_start(class, size, start);
        }
    }
}

/// A validated `[[network.stages]]` entry: its kind's parameters and the
/// ports it applies to (port indices, in order).
#[derive(Clone, Debug, PartialEq)]
pub struct StageSpec {
    pub params: StageParams,
    pub ports: Vec<u32>,
}

#[derive(Deserialize)]
struct Common {
    kind: StageKind,
    ports: PortSel,
}

impl StageSpec {
    /// Validate the `[[network.stages]]` entry at `path`.
    pub fn from_value(
        value: Value,
        path: &str,
        topo: &Topology,
    ) -> Result<StageSpec, ScenarioError> {
        let Value::Object(mut map) = value else {
            return Err(ScenarioError::new(path, "a stage must be a table of keys"));
        };
        let mut common = serde_json::Map::new();
        for key in ["kind", "ports"] {
            let Some(v) = map.remove(key) else {
                return Err(ScenarioError::new(
                    join_path(path, key),
                    "missing (every stage names its kind and the ports it runs at)",
                ));
            };
            common.insert(key.to_string(), v);
        }
        let common: Common = parse_at(Value::Object(common), path)?;
        let params = StageParams::parse(common.kind, Value::Object(map), path)?;
        let ports = resolve(&common.ports, &join_path(path, "ports"), topo)?;
        let numbered = topo.ports();
        let fastest = ports.iter().map(|&p| numbered[p as usize].2.rate);
        params.check_ports(path, fastest.max().unwrap_or(Rate(u64::MAX)))?;
        Ok(StageSpec { params, ports })
    }
}

fn resolve(sel: &PortSel, path: &str, topo: &Topology) -> Result<Vec<u32>, ScenarioError> {
    let numbered = topo.ports();
    let at_host = |i: usize| topo.nodes[numbered[i].0].kind == NodeKind::Host;
    let ports: Vec<u32> = match sel {
        PortSel::Group(g) => {
            let keep: fn(bool) -> bool = match g.as_str() {
                "all" => |_| true,
                "switches" => |host| !host,
                "nics" => |host| host,
                _ => {
                    return Err(ScenarioError::new(
                        path,
                        format!("\"{g}\" is not a port group: use \"all\", \"switches\", \"nics\" or a list of ports \"node->peer\""),
                    ))
                }
            };
            (0..numbered.len())
                .filter(|&i| keep(at_host(i)))
                .map(|i| i as u32)
                .collect()
        }
        PortSel::Names(names) => {
            let mut ports = Vec::with_capacity(names.len());
            for (i, name) in names.iter().enumerate() {
                let at = format!("{path}[{i}]");
                let Some(p) = topo.port_by_name(name) else {
                    return Err(ScenarioError::new(
                        at,
                        format!(
                            "no port named \"{name}\" (ports are named \"node->peer\", e.g. \"{}\")",
                            topo.example_port_name()
                        ),
                    ));
                };
                if ports.contains(&p) {
                    return Err(ScenarioError::new(
                        at,
                        format!("\"{name}\" is listed twice"),
                    ));
                }
                ports.push(p);
            }
            ports
        }
    };
    if ports.is_empty() {
        return Err(ScenarioError::new(path, "selects no port"));
    }
    Ok(ports)
}
