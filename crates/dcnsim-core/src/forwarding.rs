//! Forwarding policies: how a switch picks one of the equal-cost next hops.
//!
//! - [`Policy::Single`]: one fixed path per source–destination pair, the same
//!   for every seed (a hash of the pair only, salted per switch).
//! - [`Policy::Ecmp`]: per-flow hash of the five-tuple, salted per switch and
//!   per seed, so every packet of a flow takes one path.
//! - [`Policy::Rps`]: random packet spraying, the spraying seed's scheme (§2):
//!   every switch draws a uniformly random equal-cost next hop for every packet.
//! - [`Policy::Elr`]: equal-length routing, the first seed's scheme (§3.2):
//!   every packet climbs to the top tier before it descends, so every host pair
//!   sees the same hop count; among equal-length choices it hashes like ECMP.
//!
//! Add a policy by adding a variant to [`Policy`] and its arm in
//! [`Forwarder::plan`], when its pick depends only on the packet and the
//! switch (the event loop then plans it a few events ahead and prefetches
//! the port), or in [`Forwarder::egress`], when it draws at random or reads
//! state at arrival (`plan` returns `None` for it, as for spraying).

use crate::network::Network;
use crate::packet::{Hop, NONE};
use crate::routing::Hops;
use rand::Rng;
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::Deserialize;

/// `[forwarding]`: how switches choose among equal-cost next hops.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ForwardingSpec {
    #[serde(default)]
    pub policy: Policy,
}

#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq, strum::VariantNames)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum Policy {
    Single,
    #[default]
    Ecmp,
    Rps,
    Elr,
}

/// The forwarding state of every switch: the policy, a random stream per
/// switch (spraying) and a hash salt per switch.
pub struct Forwarder {
    pub policy: Policy,
    pub rng: Vec<Xoshiro256PlusPlus>,
    pub salt: Vec<u64>,
}

impl Forwarder {
    /// The egress port of switch `node` for packet `pkt`: the one
    /// [`Forwarder::plan`] decided, if it did.
    #[inline(always)]
    pub fn egress(&mut self, net: &Network, node: u32, pkt: &mut Hop) -> u32 {
        if pkt.route != NONE {
            return pkt.route;
        }
        if self.policy == Policy::Rps {
            let hops = net.next_hops(node, pkt.dst);
            return hops.get(pick_random(&mut self.rng[node as usize], hops.len()));
        }
        self.plan(net, node, pkt)
            .expect("every policy but spraying picks by hash")
    }

    /// Decide `pkt`'s egress port at `node` ahead of its arrival, when no
    /// random draw decides it (`None` under spraying): a hashed pick depends
    /// only on the packet and the switch, so the event loop decides it a
    /// few events early, to prefetch the port, and keeps it in
    /// [`Hop::route`] for [`Forwarder::egress`].
    #[inline(always)]
    pub fn plan(&self, net: &Network, node: u32, pkt: &mut Hop) -> Option<u32> {
        let (hops, hash) = match self.policy {
            Policy::Rps => return None,
            Policy::Single => (net.next_hops(node, pkt.dst), pair_hash(pkt.src, pkt.dst)),
            Policy::Ecmp => (net.next_hops(node, pkt.dst), pkt.hash),
            Policy::Elr => {
                if net.tier[node as usize] >= net.top_tier {
                    pkt.climbed = true;
                }
                let hops = if pkt.climbed {
                    net.next_hops(node, pkt.dst)
                } else {
                    Hops::List(net.up_ports(node))
                };
                (hops, pkt.hash)
            }
        };
        // Hashed even onto a single next hop (the pick is then 0): a branch
        // on the list's length, one port or several in a random mix of a
        // packet's hops, was mispredicted about once in three hops
        // (docs/performance.md, item 26).
        let port = hops.get(pick_hashed(hash, self.salt[node as usize], hops.len()));
        pkt.route = port;
        Some(port)
    }
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

    /// A port planned ahead is the one `egress` picks without a plan, at
    /// every switch of a fat-tree for packets between several host pairs,
    /// for every policy that hashes (equal-length routing's climb
    /// included); spraying plans nothing.
    #[test]
    fn a_planned_port_is_the_egress_port() {
        let sc = Scenario::from_toml_str("[topology]\nkind = \"fat_tree\"\nk = 4").unwrap();
        let net = Network::build(&sc.topology, &sc.network);
        let nodes = net.tier.len() as u32;
        for policy in [Policy::Single, Policy::Ecmp, Policy::Elr, Policy::Rps] {
            let mut fwd = Forwarder {
                policy,
                rng: (0..nodes)
                    .map(|n| Xoshiro256PlusPlus::seed_from_u64(n.into()))
                    .collect(),
                salt: (0..nodes).map(|n| mix(n.into())).collect(),
            };
            for (src, dst) in [(0, 15), (3, 4), (7, 1)] {
                let (src, dst) = (net.host_node(src), net.host_node(dst));
                let hash = five_tuple_hash(src, dst, 1024, 80, 6);
                let mut unplanned = Packet::new(Kind::Tcp, src, dst, 1500, hash, Time::ZERO);
                let mut planned = unplanned;
                for node in (0..nodes).filter(|&n| !net.is_host(n)) {
                    let plan = fwd.plan(&net, node, &mut planned);
                    let port = fwd.egress(&net, node, &mut unplanned);
                    match policy {
                        Policy::Rps => assert_eq!(plan, None),
                        _ => {
                            assert_eq!(plan, Some(port), "{policy:?} at node {node}");
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
