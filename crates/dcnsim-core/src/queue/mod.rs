//! Queue disciplines at egress ports (switch ports and host NICs).
//!
//! A discipline is a container; the port owns time. The contract
//! ([`Discipline`]):
//! - it sees each packet's size, 802.1Q class, pFabric `prio` and flow key
//!   ([`Queued`]);
//! - `enqueue` admits the arrival, drops it, or evicts packets already queued:
//!   whatever it discards goes into `dropped`, and the simulation releases and
//!   counts each as a drop (so conservation holds);
//! - `dequeue(now, paused)` returns a packet, nothing, or "nothing before T"
//!   ([`Next`]); classes whose bit is set in `paused` (802.1Qbb PAUSE) must not
//!   be served. The port wakes itself at T;
//! - a packet that finds the port idle and the queue empty goes straight to the
//!   wire when [`Discipline::may_bypass`] allows it (every discipline here does
//!   unless its class is paused), so an idle port costs no event;
//! - AQM ([`aqm`]: ECN threshold, RED, WRED) runs on arrival over an *AQM
//!   domain* the discipline names: the whole queue for FIFO disciplines, the class's own
//!   queue for `priority`.
//!
//! A discipline's own keys live in its table of the queue
//! (`[network.queue.priority] class_limits = [...]`, [`Discipline::Spec`]),
//! and it is built knowing its port ([`PortContext`]: rate, buffer, the
//! network's host count and slowest host link).
//!
//! Add a discipline by writing one file here that implements [`Discipline`]
//! and adding one line to the `disciplines!` registry below. A Rust program
//! can also run its own discipline at chosen ports, unregistered
//! (`Simulation::plug_discipline`, [`Queue::Plugged`]; see
//! `tests/plugged.rs`).
//!
//! AQMs are an axis of their own ([`aqm`]), with their own registry.

pub mod aqm;
mod droptail;
mod pfabric;
mod priority;

pub use crate::error::NoKeys;
pub use aqm::{Aqm, AqmKind, AqmSpec, Aqms, Occupancy, PortAqm, RedProfile, Verdict};
pub use droptail::DropTail;
pub use pfabric::Pfabric;
pub use priority::Priority;

use crate::error::{join_path, parse_at, ScenarioError};
use crate::units::{Capacity, Rate, Time};
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::Value;
use std::fmt::Debug;

/// A waiting packet as a discipline sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Queued {
    /// Arena index.
    pub pkt: u32,
    /// Wire size in bytes.
    pub size: u32,
    /// 802.1Q priority code point, 0–7.
    pub class: u8,
    /// pFabric priority (smaller first).
    pub prio: u64,
    /// Flow key: the packet's five-tuple hash (one direction of a flow).
    pub flow: u64,
}

/// What a port's discipline offers when the wire frees.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    /// The packet to send (its arena index).
    Packet(u32),
    /// Nothing to send (the next arrival wakes the port).
    Empty,
    /// Nothing before this time (shapers, pacing): the port wakes itself then.
    NotBefore(Time),
}

/// What a port's discipline and stages are built with: the port and the
/// network around it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PortContext {
    /// The port's line rate.
    pub rate: Rate,
    /// The port's buffer (its queue's capacity).
    pub buffer: Capacity,
    /// Whether the port is a host's NIC.
    pub nic: bool,
    /// Hosts in the network.
    pub hosts: usize,
    /// The slowest host link's rate (QJUMP's R).
    pub slowest_host_link: Rate,
}

impl PortContext {
    /// A 10 Gbps switch port of `buffer` in a network of two hosts.
    #[cfg(test)]
    pub fn of_buffer(buffer: Capacity) -> PortContext {
        PortContext {
            rate: Rate(10_000_000_000),
            buffer,
            nic: false,
            hosts: 2,
            slowest_host_link: Rate(10_000_000_000),
        }
    }
}

/// A packet buffer that holds `amount` packets or bytes, checked on arrival.
pub fn fits(capacity: Capacity, packets: u64, bytes: u64, size: u32) -> bool {
    match capacity {
        Capacity::Packets(n) => packets < n,
        Capacity::Bytes(b) => bytes + u64::from(size) <= b,
    }
}

/// What every queue discipline provides. Dispatch is static: the registry
/// below makes [`Queue`] one closed enum with a `match` per call.
pub trait Discipline: Sized {
    /// The discipline's own keys, in its table of the queue
    /// (`[network.queue.<kind>]`); absent, their defaults.
    type Spec: DeserializeOwned + Clone + Debug + PartialEq + Default;

    /// Build from its validated keys, for the port `port`.
    fn new(spec: &Self::Spec, port: &PortContext) -> Self;

    /// Checks of its keys beyond the types, for a queue of `capacity`;
    /// errors name the field under the queue's `path`.
    fn check(_spec: &Self::Spec, _capacity: Capacity, _path: &str) -> Result<(), ScenarioError> {
        Ok(())
    }

    /// Offer `q`; push the arena index of every discarded packet (the arrival
    /// or evicted ones) onto `dropped`.
    fn enqueue(&mut self, q: Queued, dropped: &mut Vec<u32>);

    /// The next packet to send now, unless none is eligible.
    fn dequeue(&mut self, now: Time, paused: u8) -> Next;

    /// Packets waiting (the one being serialized is not counted).
    fn packets(&self) -> u64;

    /// Bytes waiting.
    fn bytes(&self) -> u64;

    /// Number of AQM domains (each has its own AQM state), at most
    /// [`CLASSES`](crate::packet::CLASSES): [`Discipline::aqm_domain`]
    /// chooses one by class.
    fn aqm_domains(&self) -> usize {
        1
    }

    /// The AQM domain of `class` and the packets and bytes it holds.
    fn aqm_domain(&self, _class: u8) -> (usize, u64, u64) {
        (0, self.packets(), self.bytes())
    }

    /// Whether a packet of `class` that finds the port idle and this queue
    /// empty may start serializing without being queued. Asked only while
    /// some class is paused or held by a shaper: otherwise such a packet
    /// always goes straight to the wire (the data path's shortcut), so
    /// `enqueue` sees the packets that find the port busy or a queue.
    fn may_bypass(&self, class: u8, paused: u8) -> bool {
        paused & (1 << class) == 0
    }
}

/// A [`Discipline`] behind a pointer: what a port calls of a discipline a
/// Rust program plugged in (`Simulation::plug_discipline`).
pub trait DynDiscipline {
    fn enqueue(&mut self, q: Queued, dropped: &mut Vec<u32>);
    fn dequeue(&mut self, now: Time, paused: u8) -> Next;
    fn packets(&self) -> u64;
    fn bytes(&self) -> u64;
    fn aqm_domains(&self) -> usize;
    fn aqm_domain(&self, class: u8) -> (usize, u64, u64);
    fn may_bypass(&self, class: u8, paused: u8) -> bool;
}

/// Any [`Discipline`] as a [`DynDiscipline`].
struct Dyn<D>(D);

impl<D: Discipline> DynDiscipline for Dyn<D> {
    fn enqueue(&mut self, q: Queued, dropped: &mut Vec<u32>) {
        self.0.enqueue(q, dropped);
    }

    fn dequeue(&mut self, now: Time, paused: u8) -> Next {
        self.0.dequeue(now, paused)
    }

    fn packets(&self) -> u64 {
        self.0.packets()
    }

    fn bytes(&self) -> u64 {
        self.0.bytes()
    }

    fn aqm_domains(&self) -> usize {
        self.0.aqm_domains()
    }

    fn aqm_domain(&self, class: u8) -> (usize, u64, u64) {
        self.0.aqm_domain(class)
    }

    fn may_bypass(&self, class: u8, paused: u8) -> bool {
        self.0.may_bypass(class, paused)
    }
}

/// A plugged-in discipline ([`Queue::Plugged`]).
pub struct Plugged(Box<dyn DynDiscipline>);

impl Debug for Plugged {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Plugged")
    }
}

/// The registry: `name: Variant(Type)`, one line per discipline; `name` is
/// the `kind` users write and the name of the discipline's table of keys.
macro_rules! disciplines {
    ($($(#[$attr:meta])* $name:ident: $variant:ident($ty:ty),)*) => {
        /// `kind` of a queue: the registered disciplines.
        #[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq, strum::VariantNames)]
        #[serde(rename_all = "snake_case")]
        #[strum(serialize_all = "snake_case")]
        pub enum QueueKind { $($(#[$attr])* $variant,)* }

        /// A queue discipline, its capacity and AQM (switch egress ports and
        /// host NICs), `[network.queue]` / `[network.nic_queue]`, and the
        /// discipline's own keys in its table (`[network.queue.priority]`).
        #[derive(Clone, Debug, Deserialize, PartialEq)]
        #[serde(deny_unknown_fields)]
        pub struct QueueSpec {
            #[serde(default)]
            pub kind: QueueKind,
            pub capacity: Capacity,
            /// ECN marking / early drop on arrival ([`Aqm`]), per AQM domain;
            /// validated apart, as its `kind` decides its keys
            /// ([`QueueSpec::from_value`]).
            #[serde(skip)]
            pub aqm: Option<AqmSpec>,
            /// The old place of `priority`'s class limits: an error naming
            /// the new one.
            #[serde(default)]
            class_limits: Option<Value>,
            $(
                #[serde(default)]
                pub $name: Option<<$ty as Discipline>::Spec>,
            )*
        }

        impl QueueSpec {
            /// A queue of `kind` holding `capacity`, without AQM, its
            /// discipline's keys at their defaults.
            pub fn new(kind: QueueKind, capacity: Capacity) -> QueueSpec {
                QueueSpec {
                    kind,
                    capacity,
                    aqm: None,
                    class_limits: None,
                    $($name: None,)*
                }
            }

            /// Validate the queue's table at `path` (e.g. `network.queue`).
            pub fn from_value(mut value: Value, path: &str) -> Result<QueueSpec, ScenarioError> {
                let aqm = value.as_object_mut().and_then(|t| t.remove("aqm"));
                let mut spec: QueueSpec = parse_at(value, path)?;
                spec.aqm = aqm
                    .map(|a| AqmSpec::from_value(a, &join_path(path, "aqm")))
                    .transpose()?;
                spec.check(path)?;
                Ok(spec)
            }

            /// Check the spec at `path` (e.g. `network.queue`).
            pub fn check(&self, path: &str) -> Result<(), ScenarioError> {
                if self.class_limits.is_some() {
                    return Err(ScenarioError::new(
                        join_path(path, "class_limits"),
                        format!("moved to {}", join_path(path, "priority.class_limits")),
                    ));
                }
                let kind = |k: QueueKind| format!("{k:?}").to_lowercase();
                $(
                    if self.$name.is_some() && self.kind != QueueKind::$variant {
                        return Err(ScenarioError::new(
                            join_path(path, stringify!($name)),
                            format!(
                                "keys of the {} discipline, but kind = \"{}\"",
                                stringify!($name),
                                kind(self.kind)
                            ),
                        ));
                    }
                )*
                match self.kind {
                    $(QueueKind::$variant => <$ty>::check(
                        &self.$name.clone().unwrap_or_default(),
                        self.capacity,
                        path,
                    ),)*
                }
            }
        }

        /// A port's queue: a registered discipline, or one a Rust program
        /// plugged in (`Plugged`, called through a pointer).
        #[derive(Debug)]
        pub enum Queue { $($variant($ty),)* Plugged(Plugged), }

        impl Queue {
            /// The discipline of `spec` for port `port`.
            pub fn new(spec: &QueueSpec, port: &PortContext) -> Queue {
                match spec.kind {
                    $(QueueKind::$variant => Queue::$variant(<$ty>::new(
                        &spec.$name.clone().unwrap_or_default(),
                        port,
                    )),)*
                }
            }

            #[inline]
            pub fn enqueue(&mut self, q: Queued, dropped: &mut Vec<u32>) {
                match self { $(Queue::$variant(d) => d.enqueue(q, dropped),)* Queue::Plugged(d) => d.0.enqueue(q, dropped), }
            }

            #[inline]
            pub fn dequeue(&mut self, now: Time, paused: u8) -> Next {
                match self { $(Queue::$variant(d) => d.dequeue(now, paused),)* Queue::Plugged(d) => d.0.dequeue(now, paused), }
            }

            #[inline]
            pub fn packets(&self) -> u64 {
                match self { $(Queue::$variant(d) => d.packets(),)* Queue::Plugged(d) => d.0.packets(), }
            }

            #[inline]
            pub fn bytes(&self) -> u64 {
                match self { $(Queue::$variant(d) => d.bytes(),)* Queue::Plugged(d) => d.0.bytes(), }
            }

            pub fn aqm_domains(&self) -> usize {
                match self { $(Queue::$variant(d) => d.aqm_domains(),)* Queue::Plugged(d) => d.0.aqm_domains(), }
            }

            #[inline]
            pub fn aqm_domain(&self, class: u8) -> (usize, u64, u64) {
                match self { $(Queue::$variant(d) => d.aqm_domain(class),)* Queue::Plugged(d) => d.0.aqm_domain(class), }
            }

            #[inline]
            pub fn may_bypass(&self, class: u8, paused: u8) -> bool {
                match self { $(Queue::$variant(d) => d.may_bypass(class, paused),)* Queue::Plugged(d) => d.0.may_bypass(class, paused), }
            }
        }
    };
}

disciplines! {
    #[default]
    droptail: Droptail(DropTail),
    pfabric: Pfabric(Pfabric),
    priority: Priority(Priority),
}

impl Queue {
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.packets() == 0
    }

    /// `discipline`, one a Rust program declares, as a port's queue.
    pub fn plugged(discipline: impl Discipline + 'static) -> Queue {
        Queue::Plugged(Plugged(Box::new(Dyn(discipline))))
    }
}
