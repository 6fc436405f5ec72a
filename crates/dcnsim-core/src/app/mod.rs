//! Applications: programs at the hosts that open TCP flows, send datagrams
//! and measure what they did, one row per operation in `ops.parquet`.
//!
//! An application is called back
//! - on **start**, when the simulation is built (time 0);
//! - on a **timer** it set ([`Context::set_timer`]);
//! - on the **completion** of a flow it opened (the receiver has every byte
//!   handed to the flow so far);
//! - on the **delivery** of a datagram it sent, at its destination host.
//!
//! Through its [`Context`] it opens TCP flows (any protocol, class, size,
//! hosts and deadline, kept open for more bytes if it wants), hands an open
//! flow more bytes, sends datagrams, reads a flow's counters and writes
//! operation rows ([`Op`]): the application, its instance, an operation id,
//! a host, start and end, bytes, an outcome and one free number. A new
//! application therefore needs no row type, binding or Python change.
//!
//! Add an application by writing one file here that implements
//! [`Application`] (the callbacks it needs) and [`App`] (its `[[traffic.KEY]]`
//! table, validated into one or more instances, what it costs in memory, and
//! how to build one), and adding one line to the `apps!` registry below
//! (new kinds go last: a kind's random streams are numbered by its place).
//! A Rust program may also attach its own [`Application`] with
//! `Simulation::attach_app`.

pub mod barrier;
pub mod incast;
pub mod keys;
pub mod periodic;
pub mod request_response;
pub mod shuffle;
pub mod web_search;
pub mod workload;

use crate::cc::Protocol;
use crate::error::{join_path, parse_at, ScenarioError};
use crate::tcp::{Outcome, TransportSpec};
use crate::topology::Topology;
use crate::units::Time;
use rand_xoshiro::Xoshiro256PlusPlus;
use serde_json::Value;
use std::fmt::Debug;

/// The callbacks of one application instance. Every one but `start` has a
/// do-nothing default.
pub trait Application {
    /// The simulation is built (time 0): set the first timers, open flows.
    fn start(&mut self, cx: &mut dyn Context);

    /// A timer set with [`Context::set_timer`] has come; `token` is the one
    /// it was set with.
    fn on_timer(&mut self, _cx: &mut dyn Context, _token: u64) {}

    /// Flow `flow` (an id [`Context::open_flow`] returned) completed: its
    /// receiver has every byte handed to it so far.
    fn on_flow_done(&mut self, _cx: &mut dyn Context, _flow: u32) {}

    /// A datagram this application sent reached its destination host (after
    /// the host's processing delay).
    fn on_datagram(&mut self, _cx: &mut dyn Context, _d: &Delivered) {}
}

/// What an application reaches the simulation through, during a callback.
pub trait Context {
    /// The current simulated time.
    fn now(&self) -> Time;

    /// The number of hosts (host indices are `0..hosts`).
    fn hosts(&self) -> u32;

    /// Open a TCP flow now; returns its flow id (`flow_id` in
    /// `flows.parquet`, `trace.flows`).
    fn open_flow(&mut self, flow: OpenFlow) -> u32;

    /// Hand `bytes` more to flow `flow`, opened with `keep_open` and not yet
    /// closed (a persistent connection's next response); `close` closes it
    /// after them.
    fn append(&mut self, flow: u32, bytes: u64, close: bool);

    /// What flow `flow` reports so far (sizes, times, retransmissions,
    /// timeouts).
    fn flow(&self, flow: u32) -> Outcome;

    /// Send a datagram now; it joins its host's NIC after the host delay.
    fn send_datagram(&mut self, d: Datagram);

    /// Call [`Application::on_timer`] with `token` at `at` (not before now).
    fn set_timer(&mut self, at: Time, token: u64);

    /// Write a row of `ops.parquet`.
    fn write_op(&mut self, op: Op);
}

/// A TCP flow an application opens.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OpenFlow {
    pub src: u32,
    pub dst: u32,
    /// Application bytes to transfer (at least 1).
    pub size: u64,
    /// Absolute deadline (D²TCP), reported in `deadline_s`.
    pub deadline: Option<Time>,
    /// 802.1Q priority code point of its packets, 0–7.
    pub class: u8,
    /// `None`: `transport.protocol`.
    pub protocol: Option<Protocol>,
    /// The operation the flow serves (`round` in `flows.parquet`).
    pub op: Option<u32>,
    /// Keep the connection open after `size` for [`Context::append`].
    pub keep_open: bool,
}

/// A datagram an application sends: `size` bytes on the wire, carrying
/// `tag` (the application's own meaning) to its destination.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Datagram {
    pub src: u32,
    pub dst: u32,
    pub size: u32,
    pub class: u8,
    pub tag: u32,
}

/// A datagram delivered: what was sent, when, and the links it crossed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Delivered {
    pub datagram: Datagram,
    pub sent: Time,
    pub hops: u32,
}

/// One row of `ops.parquet`, written by an application (its name and
/// instance are added).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Op {
    /// The operation's id (a round, a request, an iteration…).
    pub id: u64,
    /// The host the operation is about (a worker, a client…).
    pub host: u32,
    pub start: Time,
    /// `None`: unfinished.
    pub end: Option<Time>,
    pub bytes: u64,
    /// A word for how it ended (`"done"`, `"timeout"`, `"lost"`…).
    pub outcome: &'static str,
    /// One number of the application's choosing (documented with it).
    pub value: f64,
}

/// Who opened a flow: a listed flow ([`Origin::LISTED`]) or an application,
/// by its place among the simulation's applications, and the operation it
/// serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Origin {
    pub app: u32,
    pub op: u32,
}

impl Origin {
    /// Listed in `[[traffic.flows]]`.
    pub const LISTED: Origin = Origin {
        app: u32::MAX,
        op: u32::MAX,
    };

    pub fn app(self) -> Option<u32> {
        (self.app != u32::MAX).then_some(self.app)
    }

    pub fn op(self) -> Option<u32> {
        (self.op != u32::MAX).then_some(self.op)
    }
}

/// What an application's table is validated against.
pub struct Given<'a> {
    pub topology: &'a Topology,
    pub transport: &'a TransportSpec,
    pub stop_time: Option<Time>,
}

/// What one application instance costs in memory, for the scenario's
/// estimate: the flows it opens and the rows it writes over the run, the
/// flows it holds open at once (`None`: all of them, the upper side) and
/// the sources it keeps busy, each with a bottleneck queue of packets in
/// flight (`crate::scenario::memory`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Load {
    pub flows: f64,
    pub ops: f64,
    pub open: Option<f64>,
    pub busy: f64,
}

/// An application kind of the registry.
pub trait App: Application + Sized + 'static {
    /// Its table: `[[traffic.KEY]]`.
    const KEY: &'static str;
    /// Its name in `ops.parquet` (`application`) and `flows.parquet`
    /// (`origin`).
    const NAME: &'static str;
    /// One instance's settings, validated.
    type Spec: Clone + Debug + PartialEq;

    /// Validate the entry at `path` (`traffic.KEY[i]`) into the instances it
    /// stands for (one per source host of `src = "all"`, say).
    fn parse(value: Value, path: &str, given: &Given) -> Result<Vec<Self::Spec>, ScenarioError>;

    /// What an instance costs over the run.
    fn load(spec: &Self::Spec) -> Load;

    /// An instance, with its own random stream.
    fn new(spec: &Self::Spec, rng: Xoshiro256PlusPlus) -> Self;
}

macro_rules! apps {
    ($($variant:ident($ty:ty),)*) => {
        /// One application instance's settings, of its kind, and the
        /// protocol its flows run: its entry's `protocol` key, read here
        /// once for every kind (`None`: `transport.protocol`; a kind without
        /// flows has no such key).
        #[derive(Clone, Debug, PartialEq)]
        pub enum AppSpec { $($variant(<$ty as App>::Spec, Option<Protocol>),)* }

        /// The `[[traffic.KEY]]` tables of the registered kinds, in registry
        /// order.
        pub const KEYS: &[&str] = &[$(<$ty as App>::KEY,)*];

        impl AppSpec {
            /// The instances of the entry at `path` of table `key` (one of
            /// [`KEYS`]).
            fn parse_kind(key: &str, value: Value, path: &str, given: &Given)
                -> Result<Vec<AppSpec>, ScenarioError> {
                // The kind's own parse has checked the key, if it has one.
                let protocol = value
                    .get("protocol")
                    .and_then(|p| serde_json::from_value::<Protocol>(p.clone()).ok());
                $(if key == <$ty as App>::KEY {
                    return Ok(<$ty>::parse(value, path, given)?
                        .into_iter().map(|s| AppSpec::$variant(s, protocol)).collect());
                })*
                unreachable!("{key} is a registered key")
            }

            /// Its kind's name (`ops.parquet` `application`, `flows.parquet`
            /// `origin`).
            pub fn name(&self) -> &'static str {
                match self { $(AppSpec::$variant(..) => <$ty as App>::NAME,)* }
            }

            /// Its kind's table (`[[traffic.KEY]]`).
            pub fn key(&self) -> &'static str {
                match self { $(AppSpec::$variant(..) => <$ty as App>::KEY,)* }
            }

            /// Its kind's place in the registry.
            pub fn kind(&self) -> usize {
                let mut i = 0;
                $(if let AppSpec::$variant(..) = self { return i; } i += 1;)*
                unreachable!("{i} kinds")
            }

            pub fn load(&self) -> Load {
                match self { $(AppSpec::$variant(s, _) => <$ty>::load(s),)* }
            }

            /// The protocol its flows run (`None`: `transport.protocol`),
            /// for the checks a protocol needs of the rest of the scenario
            /// (`crate::cc::Need`).
            pub fn protocol(&self) -> Option<Protocol> {
                match self { $(AppSpec::$variant(_, p) => *p,)* }
            }

            /// A fresh instance.
            pub fn build(&self, rng: Xoshiro256PlusPlus) -> Box<dyn Application> {
                match self { $(AppSpec::$variant(s, _) => Box::new(<$ty>::new(s, rng)),)* }
            }
        }
    };
}

apps! {
    Workload(workload::Workload),
    Incast(incast::Incast),
    Periodic(periodic::Periodic),
    RequestResponse(request_response::RequestResponse),
    Barrier(barrier::Barrier),
    Shuffle(shuffle::Shuffle),
    WebSearch(web_search::WebSearch),
}

impl AppSpec {
    /// The instances of every application table of `[traffic]` (`tables`:
    /// key → list of entries), kinds in registry order, entries in the order
    /// written.
    pub fn parse_all(
        mut tables: serde_json::Map<String, Value>,
        given: &Given,
    ) -> Result<Vec<AppSpec>, ScenarioError> {
        let mut apps = Vec::new();
        for key in KEYS {
            let Some(entries) = tables.remove(*key) else {
                continue;
            };
            let at = join_path("traffic", key);
            let entries: Vec<Value> = parse_at(entries, &at)?;
            for (i, v) in entries.into_iter().enumerate() {
                apps.extend(AppSpec::parse_kind(key, v, &format!("{at}[{i}]"), given)?);
            }
        }
        Ok(apps)
    }
}
