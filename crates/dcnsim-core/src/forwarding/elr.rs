//! `elr`: equal-length routing, the latency-difference seed's scheme (§3.2).

use super::{ForwardingPolicy, Pick};
use crate::network::Network;
use crate::packet::Hop;
use crate::routing::Hops;
use crate::topology::{NodeKind, Topology};

/// Every packet climbs to the top tier before it descends, so every host
/// pair sees the same hop count; among equal-length choices it hashes the
/// five-tuple like ECMP. Whether a packet has reached the top is kept in the
/// packet ([`Hop::climbed`]). Only packets of the classes in
/// `forwarding.elr_classes` climb ([`Network::elr_classes`]): the seed routes
/// its test packets by equal length ("to manually let all the test packets
/// cross the core switch"); the others take a shortest path, as with ECMP.
pub struct Elr;

impl ForwardingPolicy for Elr {
    #[inline(always)]
    fn pick<'n>(net: &'n Network, node: u32, pkt: &mut Hop) -> Pick<'n> {
        if net.tier[node as usize] >= net.top_tier || net.elr_classes & (1 << pkt.class) == 0 {
            pkt.climbed = true;
        }
        let hops = if pkt.climbed {
            net.next_hops(node, pkt.dst)
        } else {
            Hops::List(net.up_ports(node))
        };
        Pick::Hash(hops, pkt.hash)
    }

    /// Equal-length routing needs every switch's tier, and a way up from
    /// every switch below the top tier.
    fn check(topo: &Topology) -> Result<(), String> {
        if let Some(n) = topo
            .nodes
            .iter()
            .find(|n| n.kind == NodeKind::Switch && n.tier.is_none())
        {
            return Err(format!(
                "elr needs the tier of every switch; switch \"{}\" has none (set tier in topology.nodes)",
                n.name
            ));
        }
        let top = topo.nodes.iter().filter_map(|n| n.tier).max().unwrap_or(0);
        let tier = |i: usize| topo.nodes[i].tier.unwrap_or(0);
        for (i, n) in topo.nodes.iter().enumerate() {
            let has_up = topo
                .links
                .iter()
                .any(|l| (l.a == i && tier(l.b) > tier(i)) || (l.b == i && tier(l.a) > tier(i)));
            if n.kind == NodeKind::Switch && tier(i) < top && !has_up {
                return Err(format!(
                    "elr needs a link up from every switch below the top tier ({top}); switch \"{}\" (tier {}) has none",
                    n.name,
                    tier(i)
                ));
            }
        }
        Ok(())
    }
}
