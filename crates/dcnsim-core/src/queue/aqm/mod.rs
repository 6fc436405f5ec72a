//! Active queue management: ECN marking and early drop at an egress port,
//! decided when a packet arrives, from the queue it finds in its AQM domain
//! (the whole queue, or its class's queue under `priority`).
//!
//! An AQM is one file here implementing [`Aqm`] (its own keys, how it is
//! built, its decision on arrival), registered by one line in the `aqms!`
//! registry below; its snake-case name is the `kind` of `aqm = { kind =
//! "...", … }` in a queue's table, whose other keys are the AQM's
//! ([`Aqm::Spec`]). Registered: [`threshold`] (DCTCP's K), [`red`] (RED and
//! WRED).
//!
//! A port keeps its AQM inline, in its first cache line ([`Aqms`], one
//! [`PortAqm`] of 16 bytes: an AQM whose state is larger boxes it, as RED
//! does); dispatch is a `match` on the closed enum [`PortAqm`] the registry
//! makes, with one more arm for an AQM a Rust program plugs in
//! (`Simulation::plug_aqm`, through [`DynAqm`]).

pub mod red;
pub mod threshold;

use crate::error::{join_path, parse_at, ScenarioError};
use crate::packet::CLASSES;
use crate::units::Time;
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::Value;
use std::fmt::Debug;
use strum::VariantNames;

pub use red::RedProfile;

/// What to do with an arriving packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Pass,
    /// Set CE (the packet is ECN-capable).
    Mark,
    Drop,
}

impl Verdict {
    /// RFC 3168 §5: a congestion signal marks an ECN-capable packet and
    /// drops any other.
    #[inline]
    pub fn signal(congested: bool, ecn_capable: bool) -> Verdict {
        match (congested, ecn_capable) {
            (false, _) => Verdict::Pass,
            (true, true) => Verdict::Mark,
            (true, false) => Verdict::Drop,
        }
    }
}

/// The queue an arriving packet finds.
#[derive(Clone, Copy, Debug)]
pub struct Occupancy {
    pub packets: u64,
    pub bytes: u64,
    /// Idle time since the port last went empty (zero when the port is busy).
    pub idle: Time,
    /// The time to transmit 1500 B at the port's rate: RED's idle decay counts
    /// idle time in these slots (computed only for the AQMs that read it,
    /// [`Aqm::DECAYS_WHEN_IDLE`]).
    pub slot: Time,
}

/// What every AQM provides. Dispatch is static: the registry below makes
/// [`PortAqm`] one closed enum with a `match` per call.
pub trait Aqm: Sized {
    /// The AQM's own keys (the `aqm` table without `kind`).
    type Spec: DeserializeOwned + Clone + Debug + PartialEq;

    /// Whether the decision reads [`Occupancy::idle`] and
    /// [`Occupancy::slot`]; otherwise the port leaves them zero (a plugged-in
    /// AQM is always given them).
    const DECAYS_WHEN_IDLE: bool = false;

    /// Whether the AQM keeps nothing between decisions but its keys (it
    /// draws no random numbers and averages nothing), so that one instance
    /// judges every AQM domain of a port: the domain then only chooses the
    /// occupancy the decision is given. A port of several domains keeps
    /// such an AQM inline ([`Aqms::One`]) instead of one per domain behind a
    /// pointer, a cache line fewer per arrival at a strict-priority port.
    const STATELESS: bool = false;

    /// Checks of its keys beyond the types; errors name the key under
    /// `path` (the `aqm` table's).
    fn check(_spec: &Self::Spec, _path: &str) -> Result<(), ScenarioError> {
        Ok(())
    }

    /// The queue at which the AQM holds a port that stays busy, in packets of
    /// `packet` bytes: where its congestion signal is certain (DCTCP's K,
    /// RED's `max`), or `None` if it has no such point (the queue then fills
    /// to its capacity). Only the memory estimate reads it
    /// (`scenario/memory.rs`).
    fn held_packets(_spec: &Self::Spec, _packet: u64) -> Option<u64> {
        None
    }

    /// One AQM domain's state, drawing from its own random stream `rng`.
    fn new(spec: &Self::Spec, rng: Xoshiro256PlusPlus) -> Self;

    /// Decide for a packet of traffic class `class` that finds `occ`.
    fn on_arrival(&mut self, occ: Occupancy, ecn_capable: bool, class: u8) -> Verdict;
}

/// An [`Aqm`] behind a pointer: what a port calls of an AQM a Rust program
/// plugged in (`Simulation::plug_aqm`). Every [`Aqm`] is one.
pub trait DynAqm {
    fn on_arrival(&mut self, occ: Occupancy, ecn_capable: bool, class: u8) -> Verdict;
}

impl<A: Aqm> DynAqm for A {
    fn on_arrival(&mut self, occ: Occupancy, ecn_capable: bool, class: u8) -> Verdict {
        Aqm::on_arrival(self, occ, ecn_capable, class)
    }
}

/// A plugged-in AQM, behind one thin pointer so that a [`PortAqm`] stays
/// 16 bytes.
pub struct Plugged(Box<dyn DynAqm>);

impl Debug for Plugged {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Plugged")
    }
}

/// The registry: `Variant(Type)`, one line per AQM; the variant's
/// snake-case name is the `kind` users write.
macro_rules! aqms {
    ($($variant:ident($ty:ty),)*) => {
        /// `aqm.kind`: the registered AQMs.
        #[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq, strum::VariantNames)]
        #[serde(rename_all = "snake_case")]
        #[strum(serialize_all = "snake_case")]
        pub enum AqmKind { $($variant,)* }

        /// A queue's `aqm` table: a registered kind's keys, validated.
        #[derive(Clone, Debug, PartialEq)]
        pub enum AqmSpec { $($variant(<$ty as Aqm>::Spec),)* }

        impl AqmSpec {
            /// Whether the AQM is [`Aqm::STATELESS`].
            pub fn stateless(&self) -> bool {
                match self { $(AqmSpec::$variant(_) => <$ty>::STATELESS,)* }
            }

            /// [`Aqm::held_packets`].
            pub fn held_packets(&self, packet: u64) -> Option<u64> {
                match self { $(AqmSpec::$variant(s) => <$ty>::held_packets(s, packet),)* }
            }

            fn parse(kind: AqmKind, keys: Value, path: &str) -> Result<AqmSpec, ScenarioError> {
                Ok(match kind {
                    $(AqmKind::$variant => {
                        let spec = parse_at(keys, path)?;
                        <$ty>::check(&spec, path)?;
                        AqmSpec::$variant(spec)
                    })*
                })
            }
        }

        /// One AQM domain's state at a port: a registered AQM, or one a
        /// Rust program plugged in.
        #[derive(Debug)]
        pub enum PortAqm { $($variant($ty),)* Plugged(Box<Plugged>), }

        impl PortAqm {
            pub fn new(spec: &AqmSpec, rng: Xoshiro256PlusPlus) -> PortAqm {
                match spec { $(AqmSpec::$variant(s) => PortAqm::$variant(<$ty>::new(s, rng)),)* }
            }

            /// Whether the decision reads [`Occupancy::idle`] and
            /// [`Occupancy::slot`]; otherwise the caller may leave them zero.
            /// A plugged-in AQM is given them (a question of its kind only,
            /// answered without reaching its state).
            #[inline]
            pub fn decays_when_idle(&self) -> bool {
                match self {
                    $(PortAqm::$variant(_) => <$ty>::DECAYS_WHEN_IDLE,)*
                    PortAqm::Plugged(_) => true,
                }
            }

            /// Decide for a packet of traffic class `class` that finds `occ`.
            #[inline]
            pub fn on_arrival(&mut self, occ: Occupancy, ecn_capable: bool, class: u8) -> Verdict {
                match self {
                    $(PortAqm::$variant(a) => Aqm::on_arrival(a, occ, ecn_capable, class),)*
                    PortAqm::Plugged(a) => a.0.on_arrival(occ, ecn_capable, class),
                }
            }
        }
    };
}

aqms! {
    Threshold(threshold::Threshold),
    Red(red::Red),
    Wred(red::Wred),
}

impl PortAqm {
    /// `aqm`, an AQM a Rust program declares, as a port's.
    pub fn plugged(aqm: impl Aqm + 'static) -> PortAqm {
        PortAqm::Plugged(Box::new(Plugged(Box::new(aqm))))
    }
}

impl AqmSpec {
    /// Validate the `aqm` table at `path` (`network.queue.aqm`): its `kind`
    /// names a registered AQM, whose keys the rest of the table holds.
    pub fn from_value(value: Value, path: &str) -> Result<AqmSpec, ScenarioError> {
        /// Only to report a value that is not a table as the tables say it.
        #[derive(Deserialize)]
        struct Table {}
        let Value::Object(mut keys) = value else {
            return Err(parse_at::<Table>(value, path).err().expect("not a table"));
        };
        let Some(kind) = keys.remove("kind") else {
            return Err(ScenarioError::new(join_path(path, "kind"), "required"));
        };
        let kind: String = parse_at(kind, &join_path(path, "kind"))?;
        let Ok(known) = serde_json::from_value(Value::String(kind.clone())) else {
            return Err(ScenarioError::new(
                path,
                format!(
                    "unknown kind \"{kind}\" (expected one of {})",
                    AqmKind::VARIANTS.join(", ")
                ),
            ));
        };
        AqmSpec::parse(known, Value::Object(keys), path)
    }
}

/// A port's AQMs, one per AQM domain of its queue (none without AQM), or one
/// for all its domains when the AQM is [`Aqm::STATELESS`]. The
/// usual single domain is kept inline, so that an arrival reads it from
/// the port's lines, not from an allocation of its own (one cache line
/// fewer per packet-hop when the ports outgrow the caches). Several domains
/// (at most [`CLASSES`]: a queue chooses the domain by class) are one
/// allocation of [`CLASSES`] AQMs behind one thin pointer, so that an
/// arrival reaches its domain's state in one step (a boxed `Vec` took two:
/// its header, then its elements); 16 bytes either way.
#[derive(Debug, Default)]
pub enum Aqms {
    #[default]
    None,
    One(PortAqm),
    Many(Box<[PortAqm; CLASSES]>),
}

impl Aqms {
    /// The AQMs of a queue of `domains` AQM domains, domain `d`'s built by
    /// `make(d)`; a `stateless` AQM ([`Aqm::STATELESS`]) is built once, as
    /// domain 0's, and judges them all. Beyond one, [`CLASSES`] are built,
    /// those past `domains` never used.
    ///
    /// # Panics
    /// If `domains` is above [`CLASSES`] (a discipline's contract:
    /// `Discipline::aqm_domains`).
    pub fn new(domains: usize, stateless: bool, mut make: impl FnMut(u64) -> PortAqm) -> Aqms {
        assert!(
            domains <= CLASSES,
            "a queue has at most {CLASSES} AQM domains, got {domains}"
        );
        match if stateless { domains.min(1) } else { domains } {
            0 => Aqms::None,
            1 => Aqms::One(make(0)),
            _ => Aqms::Many(Box::new(std::array::from_fn(|d| make(d as u64)))),
        }
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        matches!(self, Aqms::None)
    }
}

impl std::ops::Index<usize> for Aqms {
    type Output = PortAqm;
    #[inline]
    fn index(&self, domain: usize) -> &PortAqm {
        match self {
            Aqms::None => panic!("AQM domain {domain} of a port without AQM"),
            Aqms::One(a) => a,
            Aqms::Many(all) => &all[domain],
        }
    }
}

impl std::ops::IndexMut<usize> for Aqms {
    #[inline]
    fn index_mut(&mut self, domain: usize) -> &mut PortAqm {
        match self {
            Aqms::None => panic!("AQM domain {domain} of a port without AQM"),
            Aqms::One(a) => a,
            Aqms::Many(all) => &mut all[domain],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse_err(aqm: Value) -> String {
        AqmSpec::from_value(aqm, "network.queue.aqm")
            .unwrap_err()
            .to_string()
    }

    /// A port keeps its AQM in its first cache line: every registered AQM
    /// and a plugged one fit 16 bytes, as do a port's AQMs.
    #[test]
    fn an_aqm_takes_16_bytes() {
        assert_eq!(std::mem::size_of::<PortAqm>(), 16);
        assert_eq!(std::mem::size_of::<Aqms>(), 16);
    }

    /// A stateless AQM (DCTCP's threshold) is kept once, inline, for all
    /// of a strict-priority port's eight domains, each domain's decision
    /// still made on the occupancy it is given; one with state (RED's
    /// average) is kept per domain.
    #[test]
    fn a_stateless_aqm_is_kept_once_for_every_domain() {
        use rand::SeedableRng;
        let threshold = AqmSpec::from_value(
            json!({"kind": "threshold", "k": "2pkt"}),
            "network.queue.aqm",
        )
        .unwrap();
        let red = AqmSpec::from_value(
            json!({"kind": "red", "min": "1pkt", "max": "2pkt"}),
            "network.queue.aqm",
        )
        .unwrap();
        assert!(threshold.stateless() && !red.stateless());
        let mut built = 0;
        let mut aqms = Aqms::new(CLASSES, threshold.stateless(), |d| {
            built += 1;
            PortAqm::new(&threshold, Xoshiro256PlusPlus::seed_from_u64(d))
        });
        assert_eq!(built, 1);
        assert!(matches!(aqms, Aqms::One(PortAqm::Threshold(_))));
        let occ = |packets| Occupancy {
            packets,
            bytes: packets * 1500,
            idle: Time::ZERO,
            slot: Time::ZERO,
        };
        for class in 0..CLASSES as u8 {
            let d = usize::from(class);
            assert_eq!(aqms[d].on_arrival(occ(1), true, class), Verdict::Pass);
            assert_eq!(aqms[d].on_arrival(occ(2), true, class), Verdict::Mark);
        }
        let aqms = Aqms::new(CLASSES, red.stateless(), |d| {
            PortAqm::new(&red, Xoshiro256PlusPlus::seed_from_u64(d))
        });
        assert!(matches!(aqms, Aqms::Many(_)));
        assert!(matches!(
            Aqms::new(1, false, |_| PortAqm::new(
                &red,
                Xoshiro256PlusPlus::seed_from_u64(0)
            )),
            Aqms::One(_)
        ));
    }

    /// Errors name the bad key with its full path, also inside `profiles`.
    #[test]
    fn bad_aqm_keys_are_named_with_their_path() {
        assert_eq!(
            parse_err(json!({"kind": "threshold", "k": "20pkt", "kk": 1})),
            "network.queue.aqm.kk: unknown key (expected `k`)"
        );
        assert!(parse_err(json!({"kind": "threshold", "k": "1ms"}))
            .starts_with("network.queue.aqm.k: unknown unit \"ms\""));
        let e = parse_err(json!({"kind": "wred", "profiles": [
            {"min": "1pkt", "max": "2pkt"}, {"min": "1pkt", "max": "2pkt", "maxp": 0.1}]}));
        assert!(
            e.starts_with("network.queue.aqm.profiles[1].maxp: unknown key"),
            "{e}"
        );
        assert_eq!(
            parse_err(json!({"kind": "threshold", "k": "2pkt", "max_p": 0.5})),
            "network.queue.aqm.max_p: unknown key (expected `k`)"
        );
        assert_eq!(
            parse_err(json!({"kind": "red", "max": "2pkt"})),
            "network.queue.aqm.min: required"
        );
        assert_eq!(
            parse_err(json!({"k": "2pkt"})),
            "network.queue.aqm.kind: required"
        );
        assert_eq!(
            parse_err(json!({"kind": "codel"})),
            "network.queue.aqm: unknown kind \"codel\" (expected one of threshold, red, wred)"
        );
        assert_eq!(
            parse_err(json!(["threshold", "2pkt"])),
            "network.queue.aqm: invalid type: list, expected a table"
        );
    }
}
