//! Forwarding policies: how a switch picks one of the equal-cost next hops.
//!
//! A policy is one file here implementing [`ForwardingPolicy`], registered by
//! one line in the `policies!` registry below; its snake-case name is the
//! `forwarding.policy` users write, and the file's doc says what it models.
//!
//! A policy says, for a packet at a switch, how its port is picked
//! ([`Pick`]): by a hash among a set of ports, when the pick depends only on
//! the packet and the switch (the event loop then plans it a few events
//! before the packet arrives and prefetches the port, [`Forwarder::plan`]),
//! or by a random draw on arrival ([`Forwarder::egress`]). Dispatch is a
//! `match` on a closed enum the registry makes: forwarding runs at every
//! packet-hop. A Rust program can also forward by its own policy,
//! unregistered (`Simulation::plug_policy`, [`Forwarder::plug`]; see
//! `tests/plugged.rs`): one more arm of that `match`, called through a
//! pointer, so the registered policies pay no test for it.

pub mod ecmp;
pub mod elr;
pub mod rps;
pub mod single;

use crate::error::ScenarioError;
use crate::network::Network;
use crate::packet::{Hop, CLASSES, NONE};
use crate::routing::Hops;
use crate::topology::Topology;
use rand::Rng;
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::Deserialize;

/// `[forwarding]`: how switches choose among equal-cost next hops.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ForwardingSpec {
    #[serde(default)]
    pub policy: Policy,
    /// With `elr`: the traffic classes routed by equal length; packets of
    /// other classes take a shortest path as `ecmp` does. None: every class.
    #[serde(default)]
    pub elr_classes: Option<Vec<u8>>,
}

impl ForwardingSpec {
    /// Check that the topology gives the policy what it needs; the error
    /// names `forwarding.policy` (or `forwarding.elr_classes`).
    pub fn check(&self, topo: &Topology) -> Result<(), ScenarioError> {
        if let Some(classes) = &self.elr_classes {
            let at = "forwarding.elr_classes";
            if self.policy != Policy::Elr {
                return Err(ScenarioError::new(at, "only with policy = \"elr\""));
            }
            if let Some(c) = classes.iter().find(|&&c| usize::from(c) >= CLASSES) {
                return Err(ScenarioError::new(
                    at,
                    format!("a traffic class is 0 to 7 (802.1Q priority), got {c}"),
                ));
            }
        }
        self.policy
            .check(topo)
            .map_err(|m| ScenarioError::new("forwarding.policy", m))
    }

    /// The classes `elr` routes by equal length, one bit per class.
    pub fn elr_mask(&self) -> u8 {
        self.elr_classes
            .as_ref()
            .map_or(u8::MAX, |cs| cs.iter().fold(0, |m, &c| m | (1 << c)))
    }
}

/// How a policy picks the egress port of a packet at a switch.
pub enum Pick<'n> {
    /// One of these ports by this hash (salted per switch,
    /// [`ForwardingPolicy::salt`]): planned ahead of the arrival.
    Hash(Hops<'n>, u64),
    /// A uniform draw among the equal-cost next hops on arrival, from the
    /// switch's own random stream.
    Random,
}

/// What every forwarding policy provides. Dispatch is static: the registry
/// below makes [`Policy`] one closed enum with a `match` per call.
pub trait ForwardingPolicy {
    /// How `pkt`'s egress port at switch `node` is picked. It may record in
    /// the packet what later switches need (equal-length routing's climb).
    fn pick<'n>(net: &'n Network, node: u32, pkt: &mut Hop) -> Pick<'n>;

    /// The hash salt of switch `node`, given the one derived from the
    /// scenario seed for it (the default).
    fn salt(_node: u64, per_seed: u64) -> u64 {
        per_seed
    }

    /// What the policy needs of the topology, as a one-line reason.
    fn check(_topo: &Topology) -> Result<(), String> {
        Ok(())
    }
}

/// The registry: `Variant(Type)`, one line per policy; the variant's
/// snake-case name is the `policy` users write.
macro_rules! policies {
    ($($(#[$attr:meta])* $variant:ident($ty:ty),)*) => {
        /// `forwarding.policy`: the registered policies.
        #[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq, strum::VariantNames)]
        #[serde(rename_all = "snake_case")]
        #[strum(serialize_all = "snake_case")]
        pub enum Policy { $($(#[$attr])* $variant,)* }

        /// What a [`Forwarder`] runs: a registered policy, or one a Rust
        /// program plugged in, flat, so that a hop dispatches on one tag.
        enum Running { $($variant,)* Plugged(Box<dyn DynPolicy>), }

        impl Running {
            fn registered(policy: Policy) -> Running {
                match policy { $(Policy::$variant => Running::$variant,)* }
            }

            /// [`Forwarder::plan`]: each registered policy's pick is fused
            /// with the hashing ([`take`]); a plugged one is planned out of
            /// line ([`plan_plugged`]).
            #[inline(always)]
            fn plan(&self, salt: &[u64], net: &Network, node: u32, pkt: &mut Hop) -> Option<u32> {
                match self {
                    $(Running::$variant => take(<$ty>::pick(net, node, pkt), salt, node, pkt),)*
                    Running::Plugged(plugged) => plan_plugged(plugged.as_ref(), salt, net, node, pkt),
                }
            }
        }

        impl Policy {
            fn salt(self, node: u64, per_seed: u64) -> u64 {
                match self { $(Policy::$variant => <$ty>::salt(node, per_seed),)* }
            }

            fn check(self, topo: &Topology) -> Result<(), String> {
                match self { $(Policy::$variant => <$ty>::check(topo),)* }
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
}

/// The forwarding state of every switch: the policy, a random stream per
/// switch (spraying) and a hash salt per switch.
pub struct Forwarder {
    running: Running,
    rng: Vec<Xoshiro256PlusPlus>,
    salt: Vec<u64>,
}

/// A [`ForwardingPolicy`] behind a pointer: what a switch calls of a policy a
/// Rust program plugged in (`Simulation::plug_policy`).
pub trait DynPolicy {
    fn pick<'n>(&self, net: &'n Network, node: u32, pkt: &mut Hop) -> Pick<'n>;
}

/// Any [`ForwardingPolicy`] as a [`DynPolicy`].
struct Dyn<P>(std::marker::PhantomData<fn() -> P>);

impl<P: ForwardingPolicy> DynPolicy for Dyn<P> {
    fn pick<'n>(&self, net: &'n Network, node: u32, pkt: &mut Hop) -> Pick<'n> {
        P::pick(net, node, pkt)
    }
}

impl Forwarder {
    /// The forwarding state of `nodes` nodes: node `i`'s random stream is
    /// `rng(i)`, its salt the policy's given `per_seed_salt(i)`.
    pub fn new(
        policy: Policy,
        nodes: u64,
        rng: impl Fn(u64) -> Xoshiro256PlusPlus,
        per_seed_salt: impl Fn(u64) -> u64,
    ) -> Forwarder {
        Forwarder {
            running: Running::registered(policy),
            rng: (0..nodes).map(rng).collect(),
            salt: (0..nodes)
                .map(|i| policy.salt(i, per_seed_salt(i)))
                .collect(),
        }
    }

    /// Forward by policy `P` instead, one a Rust program declares: each
    /// switch's salt is `P`'s given `per_seed_salt` of it.
    pub fn plug<P: ForwardingPolicy + 'static>(&mut self, per_seed_salt: impl Fn(u64) -> u64) {
        for (i, salt) in self.salt.iter_mut().enumerate() {
            *salt = P::salt(i as u64, per_seed_salt(i as u64));
        }
        self.running = Running::Plugged(Box::new(Dyn::<P>(std::marker::PhantomData)));
    }

    /// The egress port of switch `node` for packet `pkt`: the one
    /// [`Forwarder::plan`] decided, if it did.
    #[inline(always)]
    pub fn egress(&mut self, net: &Network, node: u32, pkt: &mut Hop) -> u32 {
        if pkt.route != NONE {
            return pkt.route;
        }
        match self.plan(net, node, pkt) {
            Some(port) => port,
            None => {
                let hops = net.next_hops(node, pkt.dst);
                hops.get(pick_random(&mut self.rng[node as usize], hops.len()))
            }
        }
    }

    /// Decide `pkt`'s egress port at `node` ahead of its arrival, when no
    /// random draw decides it ([`Pick::Random`]: `None`): a hashed pick
    /// depends only on the packet and the switch, so the event loop decides
    /// it a few events early, to prefetch the port, and keeps it in
    /// [`Hop::route`] for [`Forwarder::egress`].
    #[inline(always)]
    pub fn plan(&self, net: &Network, node: u32, pkt: &mut Hop) -> Option<u32> {
        self.running.plan(&self.salt, net, node, pkt)
    }
}

/// [`Forwarder::plan`] by a plugged-in policy: out of line, so that a
/// registered policy's pick stays fused with the hashing.
#[inline(never)]
fn plan_plugged(
    plugged: &dyn DynPolicy,
    salt: &[u64],
    net: &Network,
    node: u32,
    pkt: &mut Hop,
) -> Option<u32> {
    take(plugged.pick(net, node, pkt), salt, node, pkt)
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
    use crate::units::Time;
    use rand::SeedableRng;

    /// Every registered policy.
    fn policies() -> impl Iterator<Item = Policy> {
        use strum::VariantNames;
        Policy::VARIANTS
            .iter()
            .map(|name| serde_json::from_value(serde_json::json!(name)).unwrap())
    }

    /// A port planned ahead is the one `egress` picks without a plan, at
    /// every switch of a fat-tree for packets between several host pairs,
    /// for every registered policy that hashes (equal-length routing's climb
    /// included); one that plans nothing (spraying) draws one of the next
    /// hops on arrival.
    #[test]
    fn a_planned_port_is_the_egress_port() {
        let sc = Scenario::from_toml_str("[topology]\nkind = \"fat_tree\"\nk = 4").unwrap();
        let net = Network::build(&sc.topology, &sc.network);
        let nodes = net.tier.len() as u32;
        let mut planned_any = 0;
        for policy in policies() {
            let mut fwd =
                Forwarder::new(policy, nodes.into(), Xoshiro256PlusPlus::seed_from_u64, mix);
            for (src, dst) in [(0, 15), (3, 4), (7, 1)] {
                let (src, dst) = (net.host_node(src), net.host_node(dst));
                let hash = five_tuple_hash(src, dst, 1024, 80, 6);
                let mut unplanned = Packet::new(Kind::Tcp, src, dst, 1500, hash, Time::ZERO);
                let mut planned = unplanned;
                for node in (0..nodes).filter(|&n| !net.is_host(n)) {
                    let plan = fwd.plan(&net, node, &mut planned);
                    let port = fwd.egress(&net, node, &mut unplanned);
                    match plan {
                        None => {
                            let hops = net.next_hops(node, dst);
                            assert!((0..hops.len()).any(|i| hops.get(i) == port));
                        }
                        Some(plan) => {
                            planned_any += 1;
                            assert_eq!(plan, port, "{policy:?} at node {node}");
                            assert_eq!(fwd.egress(&net, node, &mut planned), port);
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
        let per_seed = |i: u64| i + 100;
        for policy in policies() {
            let fwd = Forwarder::new(policy, 3, Xoshiro256PlusPlus::seed_from_u64, per_seed);
            let want: Vec<u64> = match policy {
                Policy::Single => (0..3).map(mix).collect(),
                _ => (0..3).map(per_seed).collect(),
            };
            assert_eq!(fwd.salt, want, "{policy:?}");
        }
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
