//! Forwarding policies: how a switch picks one of the equal-cost next hops.
//!
//! A policy is one file here implementing [`ForwardingPolicy`], registered by
//! one line in the `policies!` registry below; its snake-case name is the
//! `forwarding.policy` users write, its keys ([`ForwardingPolicy::Spec`])
//! sit beside `policy` in `[forwarding]`, and the file's doc says what it
//! models. Every switch keeps a state of the policy's own
//! ([`ForwardingPolicy::new`]: ELR's ports up, LetFlow's flowlet table,
//! DRILL's remembered ports), which its pick may change.
//!
//! A policy says, for a packet at a switch, how its port is picked
//! ([`Pick`]): by a hash among a set of ports, a random draw among the
//! equal-cost next hops, or a port it chose itself. A *planned* policy's
//! pick depends only on the packet and the switch (ECMP's hash): the event
//! loop then makes it a few events before the packet arrives and prefetches
//! the port ([`Forwarder::plan`]); any other picks on arrival
//! ([`Forwarder::egress`]). Dispatch is a `match` on a closed enum the
//! registry makes: forwarding runs at every packet-hop. A Rust program can
//! also forward by its own policy, unregistered (`Simulation::plug_policy`,
//! [`Forwarder::plug`]; see `tests/plugged.rs`): one more arm of that
//! `match`, called through a pointer, so the registered policies pay no
//! test for it.

pub mod drill;
pub mod ecmp;
pub mod elr;
pub mod letflow;
pub mod rps;
pub mod single;

pub use crate::error::NoKeys;

use crate::error::{parse_at, ScenarioError};
use crate::network::Network;
use crate::packet::{Hop, NONE};
use crate::routing::Hops;
use crate::topology::Topology;
use crate::units::Time;
use rand::Rng;
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::{Map, Value};
use std::fmt::Debug;

/// How a policy picks the egress port of a packet at a switch.
pub enum Pick<'a> {
    /// One of these ports by this hash (salted per switch,
    /// [`ForwardingPolicy::salt`]).
    Hash(Hops<'a>, u64),
    /// A uniform draw among the equal-cost next hops, from the switch's own
    /// random stream.
    Random,
    /// This port, which the policy chose.
    Port(u32),
}

/// Where and when a policy picks: the switch, the time, and the switch's
/// random stream.
pub struct At<'r> {
    pub node: u32,
    pub now: Time,
    rngs: &'r mut [Xoshiro256PlusPlus],
}

impl At<'_> {
    /// The switch's random stream.
    #[inline]
    pub fn rng(&mut self) -> &mut Xoshiro256PlusPlus {
        &mut self.rngs[self.node as usize]
    }
}

/// What every forwarding policy provides. Dispatch is static: the registry
/// below makes [`Policy`] one closed enum with a `match` per call.
pub trait ForwardingPolicy: Sized {
    /// Its keys, beside `policy` in `[forwarding]` ([`NoKeys`] for none).
    type Spec: DeserializeOwned + Clone + Debug + Default + PartialEq;

    /// Whether its pick depends only on the packet and the switch, never on
    /// the time, the queues, a random draw or what it remembers: it is then
    /// made ahead of the packet's arrival ([`Forwarder::plan`]).
    const PLANNED: bool = true;

    /// Its state at switch `node` of `net`.
    fn new(spec: &Self::Spec, net: &Network, node: u32) -> Self;

    /// How `pkt`'s egress port at switch `at.node` is picked. It may record
    /// in the packet what later switches need (equal-length routing's
    /// climb).
    fn pick<'a>(&'a mut self, net: &'a Network, pkt: &mut Hop, at: &mut At<'_>) -> Pick<'a>;

    /// The hash salt of switch `node`, given the one derived from the
    /// scenario seed for it (the default).
    fn salt(_node: u64, per_seed: u64) -> u64 {
        per_seed
    }

    /// What the policy needs of its keys and of the topology; the error
    /// names the key (`forwarding.policy` for the topology).
    fn check(_spec: &Self::Spec, _topo: &Topology) -> Result<(), ScenarioError> {
        Ok(())
    }
}

/// The registry: `Variant(Type)`, one line per policy; the variant's
/// snake-case name is the `policy` users write.
macro_rules! policies {
    ($($(#[$attr:meta])* $variant:ident($ty:ty),)*) => {
        /// `forwarding.policy`: the registered policies.
        #[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq, strum::VariantNames, strum::IntoStaticStr)]
        #[serde(rename_all = "snake_case")]
        #[strum(serialize_all = "snake_case")]
        pub enum Policy { $($(#[$attr])* $variant,)* }

        /// A policy's keys.
        #[derive(Clone, Debug, PartialEq)]
        pub enum PolicyKeys { $($variant(<$ty as ForwardingPolicy>::Spec),)* }

        /// What a [`Forwarder`] runs: a registered policy's state per node,
        /// or that of one a Rust program plugged in, flat, so that a hop
        /// dispatches on one tag.
        enum Running { $($variant(Vec<$ty>),)* Plugged(Vec<Box<dyn DynPolicy>>), }

        impl PolicyKeys {
            /// `policy`'s keys from `keys`, the rest of `[forwarding]`.
            fn parse(policy: Policy, keys: Map<String, Value>) -> Result<PolicyKeys, ScenarioError> {
                for (key, value) in &keys {
                    if let Some(owner) = owner(key, value).filter(|&o| o != policy) {
                        let owner: &str = owner.into();
                        return Err(ScenarioError::new(
                            format!("forwarding.{key}"),
                            format!("only with policy = \"{owner}\""),
                        ));
                    }
                }
                if let Some(key) = keys.keys().find(|k| owner(k, &keys[k.as_str()]).is_none()) {
                    return Err(ScenarioError::new(format!("forwarding.{key}"), unknown_key(key)));
                }
                Ok(match policy {
                    $(Policy::$variant => PolicyKeys::$variant(parse_at(Value::Object(keys), "forwarding")?),)*
                })
            }

            fn policy(&self) -> Policy {
                match self { $(PolicyKeys::$variant(_) => Policy::$variant,)* }
            }

            fn check(&self, topo: &Topology) -> Result<(), ScenarioError> {
                match self { $(PolicyKeys::$variant(k) => <$ty>::check(k, topo),)* }
            }

            fn running(&self, net: &Network) -> Running {
                let nodes = 0..net.node_host.len() as u32;
                match self {
                    $(PolicyKeys::$variant(k) => Running::$variant(nodes.map(|n| <$ty>::new(k, net, n)).collect()),)*
                }
            }
        }

        /// The registered policy whose keys include `key` (with a value of
        /// its type or not), if one does.
        fn owner(key: &str, value: &Value) -> Option<Policy> {
            let alone = || Value::Object(Map::from_iter([(key.to_string(), value.clone())]));
            let unknown = |e: &ScenarioError| e.reason.starts_with("unknown key");
            $(
                if parse_at::<<$ty as ForwardingPolicy>::Spec>(alone(), "").as_ref().err().is_none_or(|e| !unknown(e)) {
                    return Some(Policy::$variant);
                }
            )*
            None
        }

        /// Why `key` is no key of `[forwarding]`: the keys there are, as
        /// each policy's keys say when refusing it.
        fn unknown_key(key: &str) -> String {
            let alone = Value::Object(Map::from_iter([(key.to_string(), Value::Null)]));
            let mut known = vec!["`policy`".to_string()];
            $(
                if let Err(e) = parse_at::<<$ty as ForwardingPolicy>::Spec>(alone.clone(), "") {
                    let listed = e.reason.strip_prefix("unknown key (expected ").and_then(|r| r.strip_suffix(')'));
                    known.extend(listed.map(|l| l.trim_start_matches("one of ").replace(" or ", ", ")));
                }
            )*
            format!("unknown key (expected {})", known.join(", "))
        }

        impl Policy {
            fn salt(self, node: u64, per_seed: u64) -> u64 {
                match self { $(Policy::$variant => <$ty>::salt(node, per_seed),)* }
            }
        }

        impl Forwarder {
            /// [`Forwarder::plan`]: a planned policy's pick fused with the
            /// hashing ([`take`]); a plugged one's out of line.
            #[inline(always)]
            pub fn plan(&mut self, net: &Network, node: u32, pkt: &mut Hop, now: Time) -> Option<u32> {
                let mut at = At { node, now, rngs: &mut self.rng };
                match &mut self.running {
                    $(Running::$variant(s) => {
                        if <$ty>::PLANNED {
                            take(ForwardingPolicy::pick(&mut s[node as usize], net, pkt, &mut at), &self.salt, node, pkt)
                        } else {
                            None
                        }
                    })*
                    Running::Plugged(s) => plan_plugged(s[node as usize].as_mut(), &self.salt, net, pkt, &mut at),
                }
            }

            /// The port `pkt` leaves switch `node` by, picked now.
            #[inline(always)]
            fn decide(&mut self, net: &Network, node: u32, pkt: &mut Hop, now: Time) -> u32 {
                let mut at = At { node, now, rngs: &mut self.rng };
                let pick = match &mut self.running {
                    $(Running::$variant(s) => ForwardingPolicy::pick(&mut s[node as usize], net, pkt, &mut at),)*
                    Running::Plugged(s) => s[node as usize].pick(net, pkt, &mut at),
                };
                match pick {
                    Pick::Port(port) => port,
                    Pick::Random => {
                        let hops = net.next_hops(node, pkt.dst);
                        hops.get(pick_random(at.rng(), hops.len()))
                    }
                    hashed => take(hashed, &self.salt, node, pkt).expect("a hashed pick"),
                }
            }
        }
    };
}

policies! {
    Single(single::Single),
    #[default]
    Ecmp(ecmp::Ecmp),
    Rps(rps::Rps),
    Elr(elr::Elr),
    Letflow(letflow::Letflow),
    Drill(drill::Drill),
}

/// `[forwarding]`: how switches choose among equal-cost next hops.
#[derive(Clone, Debug, PartialEq)]
pub struct ForwardingSpec {
    /// The policy and its keys.
    pub keys: PolicyKeys,
}

impl Default for ForwardingSpec {
    fn default() -> Self {
        ForwardingSpec {
            keys: PolicyKeys::Ecmp(NoKeys {}),
        }
    }
}

impl ForwardingSpec {
    /// Validate `[forwarding]` (`policy` and the policy's keys) and what the
    /// policy needs of topology `topo`.
    pub fn from_value(value: Value, topo: &Topology) -> Result<ForwardingSpec, ScenarioError> {
        let mut keys = match value {
            Value::Null => Map::new(),
            Value::Object(m) => m,
            _ => return Err(ScenarioError::new("forwarding", "expected a table of keys")),
        };
        let policy = match keys.remove("policy") {
            None => Policy::default(),
            Some(p) => parse_at(p, "forwarding.policy")?,
        };
        let spec = ForwardingSpec {
            keys: PolicyKeys::parse(policy, keys)?,
        };
        spec.keys.check(topo)?;
        Ok(spec)
    }

    /// The policy.
    pub fn policy(&self) -> Policy {
        self.keys.policy()
    }
}

/// The forwarding state of every switch: the policy's, a random stream per
/// switch and a hash salt per switch.
pub struct Forwarder {
    running: Running,
    rng: Vec<Xoshiro256PlusPlus>,
    salt: Vec<u64>,
}

/// A [`ForwardingPolicy`] behind a pointer: what a switch calls of a policy a
/// Rust program plugged in (`Simulation::plug_policy`).
pub trait DynPolicy {
    fn pick<'a>(&'a mut self, net: &'a Network, pkt: &mut Hop, at: &mut At<'_>) -> Pick<'a>;
    fn planned(&self) -> bool;
}

impl<P: ForwardingPolicy> DynPolicy for P {
    fn pick<'a>(&'a mut self, net: &'a Network, pkt: &mut Hop, at: &mut At<'_>) -> Pick<'a> {
        ForwardingPolicy::pick(self, net, pkt, at)
    }

    fn planned(&self) -> bool {
        P::PLANNED
    }
}

impl Forwarder {
    /// The forwarding state of `net`'s nodes by `spec`: node `i`'s random
    /// stream is `rng(i)`, its salt the policy's given `per_seed_salt(i)`.
    pub fn new(
        spec: &ForwardingSpec,
        net: &Network,
        rng: impl Fn(u64) -> Xoshiro256PlusPlus,
        per_seed_salt: impl Fn(u64) -> u64,
    ) -> Forwarder {
        let nodes = net.node_host.len() as u64;
        let policy = spec.policy();
        Forwarder {
            running: spec.keys.running(net),
            rng: (0..nodes).map(rng).collect(),
            salt: (0..nodes)
                .map(|i| policy.salt(i, per_seed_salt(i)))
                .collect(),
        }
    }

    /// Forward by policy `P` with keys `spec` instead, one a Rust program
    /// declares: each switch's salt is `P`'s given `per_seed_salt` of it.
    pub fn plug<P: ForwardingPolicy + 'static>(
        &mut self,
        spec: &P::Spec,
        net: &Network,
        per_seed_salt: impl Fn(u64) -> u64,
    ) {
        for (i, salt) in self.salt.iter_mut().enumerate() {
            *salt = P::salt(i as u64, per_seed_salt(i as u64));
        }
        let nodes = 0..net.node_host.len() as u32;
        let states = nodes.map(|n| Box::new(P::new(spec, net, n)) as Box<dyn DynPolicy>);
        self.running = Running::Plugged(states.collect());
    }

    /// The egress port of switch `node` for packet `pkt` arriving at
    /// `now`: the one [`Forwarder::plan`] decided, if it did.
    #[inline(always)]
    pub fn egress(&mut self, net: &Network, node: u32, pkt: &mut Hop, now: Time) -> u32 {
        if pkt.route != NONE {
            return pkt.route;
        }
        self.decide(net, node, pkt, now)
    }
}

/// [`Forwarder::plan`] by a plugged-in policy: out of line, so that a
/// registered policy's pick stays fused with the hashing.
#[inline(never)]
fn plan_plugged(
    plugged: &mut dyn DynPolicy,
    salt: &[u64],
    net: &Network,
    pkt: &mut Hop,
    at: &mut At<'_>,
) -> Option<u32> {
    if !plugged.planned() {
        return None;
    }
    let node = at.node;
    take(plugged.pick(net, pkt, at), salt, node, pkt)
}

/// The port `pick` gives `pkt` at `node` (whose hash salt is `salt[node]`),
/// kept in [`Hop::route`], if it is a hashed one.
#[inline(always)]
fn take(pick: Pick<'_>, salt: &[u64], node: u32, pkt: &mut Hop) -> Option<u32> {
    let Pick::Hash(hops, hash) = pick else {
        return None;
    };
    // Hashed even onto a single next hop (the pick is then 0): a branch
    // on the list's length, one port or several in a random mix of a
    // packet's hops, was mispredicted about once in three hops
    // (docs/performance.md, item 26).
    let port = hops.get(pick_hashed(hash, salt[node as usize], hops.len()));
    pkt.route = port;
    Some(port)
}

/// A 64-bit mixing function (the splitmix64 finalizer): a fixed, portable hash.
#[inline]
pub fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// The five-tuple hash of a flow.
pub fn five_tuple_hash(src: u32, dst: u32, sport: u16, dport: u16, proto: u8) -> u64 {
    let ports = (u64::from(sport) << 16) | u64::from(dport);
    mix(mix((u64::from(src) << 32) | u64::from(dst)) ^ (ports << 8 | u64::from(proto)))
}

/// The hash `single` uses: the host pair only.
#[inline]
pub fn pair_hash(src: u32, dst: u32) -> u64 {
    mix((u64::from(src) << 32) | u64::from(dst))
}

/// Pick among `n` choices with a hash, salted per switch.
#[inline]
pub fn pick_hashed(hash: u64, salt: u64, n: usize) -> usize {
    // Multiply-shift maps the mixed hash evenly onto 0..n.
    ((u128::from(mix(hash ^ salt)) * n as u128) >> 64) as usize
}

/// Pick uniformly at random among `n` choices.
#[inline]
pub fn pick_random(rng: &mut Xoshiro256PlusPlus, n: usize) -> usize {
    rng.random_range(0..n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{Kind, Packet};
    use crate::scenario::Scenario;
    use rand::SeedableRng;

    /// Every registered policy.
    fn policies() -> impl Iterator<Item = Policy> {
        use strum::VariantNames;
        Policy::VARIANTS
            .iter()
            .map(|name| serde_json::from_value(serde_json::json!(name)).unwrap())
    }

    /// The forwarding state of `spec`'s policy over `net`, seeded as
    /// tests do.
    fn forwarder(policy: Policy, net: &Network) -> Forwarder {
        let sc = Scenario::from_toml_str(&format!(
            "[topology]\nkind = \"fat_tree\"\nk = 4\n[forwarding]\npolicy = \"{}\"",
            <&str>::from(policy)
        ))
        .unwrap();
        Forwarder::new(&sc.forwarding, net, Xoshiro256PlusPlus::seed_from_u64, mix)
    }

    /// A port planned ahead is the one `egress` picks without a plan, at
    /// every switch of a fat-tree for packets between several host pairs,
    /// for every registered policy that plans (equal-length routing's climb
    /// included); one that plans nothing (spraying, flowlets, DRILL) picks
    /// one of the next hops on arrival.
    #[test]
    fn a_planned_port_is_the_egress_port() {
        let sc = Scenario::from_toml_str("[topology]\nkind = \"fat_tree\"\nk = 4").unwrap();
        let net = Network::build(&sc.topology, &sc.network);
        let nodes = net.tier.len() as u32;
        let mut planned_any = 0;
        let now = Time::ZERO;
        for policy in policies() {
            let mut fwd = forwarder(policy, &net);
            for (src, dst) in [(0, 15), (3, 4), (7, 1)] {
                let (src, dst) = (net.host_node(src), net.host_node(dst));
                let hash = five_tuple_hash(src, dst, 1024, 80, 6);
                let mut unplanned = Packet::new(Kind::Tcp, src, dst, 1500, hash, Time::ZERO);
                let mut planned = unplanned;
                for node in (0..nodes).filter(|&n| !net.is_host(n)) {
                    let plan = fwd.plan(&net, node, &mut planned, now);
                    let port = fwd.egress(&net, node, &mut unplanned, now);
                    match plan {
                        None => {
                            let hops = net.next_hops(node, dst);
                            assert!((0..hops.len()).any(|i| hops.get(i) == port));
                        }
                        Some(plan) => {
                            planned_any += 1;
                            assert_eq!(plan, port, "{policy:?} at node {node}");
                            assert_eq!(fwd.egress(&net, node, &mut planned, now), port);
                            assert_eq!(planned.climbed, unplanned.climbed);
                        }
                    }
                    // As transmitting them onto the next link would.
                    planned.route = NONE;
                    unplanned.route = NONE;
                }
            }
        }
        assert!(planned_any > 0);
    }

    /// `single` ignores the seed: its salt is the switch's own; the others
    /// take the one derived from the seed.
    #[test]
    fn salts_per_policy() {
        let sc = Scenario::from_toml_str("[topology]\nkind = \"fat_tree\"\nk = 4").unwrap();
        let net = Network::build(&sc.topology, &sc.network);
        let per_seed = |i: u64| i + 100;
        let nodes = net.tier.len() as u64;
        for policy in policies() {
            let spec = ForwardingSpec {
                keys: PolicyKeys::parse(policy, Map::new()).unwrap(),
            };
            let fwd = Forwarder::new(&spec, &net, Xoshiro256PlusPlus::seed_from_u64, per_seed);
            let want: Vec<u64> = match policy {
                Policy::Single => (0..nodes).map(mix).collect(),
                _ => (0..nodes).map(per_seed).collect(),
            };
            assert_eq!(fwd.salt, want, "{policy:?}");
        }
    }

    /// A policy's keys sit beside `policy`; another policy's key is refused,
    /// naming the policy it belongs to, and an unknown key as unknown.
    #[test]
    fn a_policys_keys_belong_to_it() {
        let topo = "[topology]\nkind = \"fat_tree\"\nk = 4\n[forwarding]\n";
        let spec = |text: &str| Scenario::from_toml_str(&format!("{topo}{text}"));
        let drill = spec("policy = \"drill\"\nd = 3").unwrap().forwarding;
        assert_eq!(
            drill.keys,
            PolicyKeys::Drill(drill::DrillSpec { d: 3, m: 1 })
        );
        let e = spec("policy = \"ecmp\"\nflowlet_gap = \"100us\"").unwrap_err();
        assert_eq!(
            e.to_string(),
            "forwarding.flowlet_gap: only with policy = \"letflow\""
        );
        let e = spec("policy = \"letflow\"\nm = 2").unwrap_err();
        assert_eq!(e.to_string(), "forwarding.m: only with policy = \"drill\"");
        let e = spec("policy = \"drill\"\nq = 2").unwrap_err();
        assert_eq!(
            e.to_string(),
            "forwarding.q: unknown key (expected `policy`, `elr_classes`, `flowlet_gap`, `d`, `m`)"
        );
        let e = spec("policy = \"drill\"\nd = 0").unwrap_err();
        assert_eq!(e.path, "forwarding.d");
        let e = spec("policy = \"letflow\"\nflowlet_gap = \"0us\"").unwrap_err();
        assert_eq!(e.path, "forwarding.flowlet_gap");
    }

    /// Equal-length routing refuses a switch without a tier, naming it.
    #[test]
    fn elr_needs_every_tier() {
        let e = Scenario::from_toml_str(
            r#"[topology]
kind = "edges"
nodes = [{name = "a", kind = "host"}, {name = "b", kind = "host"}, {name = "s", kind = "switch"}]
links = [{a = "a", b = "s"}, {a = "b", b = "s"}]
[forwarding]
policy = "elr""#,
        )
        .unwrap_err();
        assert_eq!(e.path, "forwarding.policy");
        assert!(e.reason.contains("switch \"s\" has none"), "{e}");
    }

    #[test]
    fn hashed_picks_are_spread_and_stable() {
        let mut counts = [0u32; 4];
        for flow in 0..40_000u16 {
            let h = five_tuple_hash(0, 15, flow, 80, 17);
            let i = pick_hashed(h, 7, 4);
            assert_eq!(i, pick_hashed(h, 7, 4));
            // `plan` hashes onto a single next hop too, relying on this.
            assert_eq!(pick_hashed(h, 7, 1), 0);
            counts[i] += 1;
        }
        for c in counts {
            assert!((9_500..10_500).contains(&c), "{counts:?}");
        }
    }
}
