//! `elr`: equal-length routing, the latency-difference seed's scheme (§3.2).

use super::{At, ForwardingPolicy, Pick};
use crate::error::ScenarioError;
use crate::network::Network;
use crate::packet::{Hop, CLASSES};
use crate::routing::Hops;
use crate::topology::{NodeKind, Topology};
use serde::Deserialize;

/// `[forwarding]` keys of `elr`.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ElrSpec {
    /// The traffic classes routed by equal length; packets of other classes
    /// take a shortest path, as with `ecmp`. None: every class.
    #[serde(default)]
    pub elr_classes: Option<Vec<u8>>,
}

/// Every packet climbs to the top tier before it descends, so every host
/// pair sees the same hop count; among equal-length choices it hashes the
/// five-tuple like ECMP. Whether a packet has reached the top is kept in the
/// packet ([`Hop::climbed`]). Only packets of the classes in
/// `forwarding.elr_classes` climb: the seed routes its test packets by equal
/// length ("to manually let all the test packets cross the core switch");
/// the others take a shortest path, as with ECMP. A switch's state: its
/// ports up (towards a higher tier), and whether it is at the top.
pub struct Elr {
    up: Vec<u32>,
    top: bool,
    /// The classes that climb, one bit each.
    classes: u8,
}

impl ForwardingPolicy for Elr {
    type Spec = ElrSpec;

    fn new(spec: &ElrSpec, net: &Network, node: u32) -> Elr {
        let tier = |n: u32| net.tier[n as usize];
        let up = if net.is_host(node) {
            Vec::new()
        } else {
            let ports = net.ports_of(node);
            ports
                .filter(|&p| tier(net.ports[p as usize].peer) > tier(node))
                .collect()
        };
        Elr {
            up,
            top: tier(node) >= net.top_tier,
            classes: spec
                .elr_classes
                .as_ref()
                .map_or(u8::MAX, |cs| cs.iter().fold(0, |m, &c| m | (1 << c))),
        }
    }

    #[inline(always)]
    fn pick<'a>(&'a mut self, net: &'a Network, pkt: &mut Hop, at: &mut At<'_>) -> Pick<'a> {
        if self.top || self.classes & (1 << pkt.class) == 0 {
            pkt.climbed = true;
        }
        let hops = if pkt.climbed {
            net.next_hops(at.node, pkt.dst)
        } else {
            Hops::List(&self.up)
        };
        Pick::Hash(hops, pkt.hash)
    }

    /// Equal-length routing needs every switch's tier, and a way up from
    /// every switch below the top tier; its classes are 802.1Q's.
    fn check(spec: &ElrSpec, topo: &Topology) -> Result<(), ScenarioError> {
        if let Some(classes) = &spec.elr_classes {
            if let Some(c) = classes.iter().find(|&&c| usize::from(c) >= CLASSES) {
                return Err(ScenarioError::new(
                    "forwarding.elr_classes",
                    format!("a traffic class is 0 to 7 (802.1Q priority), got {c}"),
                ));
            }
        }
        let at = "forwarding.policy";
        if let Some(n) = topo
            .nodes
            .iter()
            .find(|n| n.kind == NodeKind::Switch && n.tier.is_none())
        {
            return Err(ScenarioError::new(at, format!(
                "elr needs the tier of every switch; switch \"{}\" has none (set tier in topology.nodes)",
                n.name
            )));
        }
        let top = topo.nodes.iter().filter_map(|n| n.tier).max().unwrap_or(0);
        let tier = |i: usize| topo.nodes[i].tier.unwrap_or(0);
        for (i, n) in topo.nodes.iter().enumerate() {
            let has_up = topo
                .links
                .iter()
                .any(|l| (l.a == i && tier(l.b) > tier(i)) || (l.b == i && tier(l.a) > tier(i)));
            if n.kind == NodeKind::Switch && tier(i) < top && !has_up {
                return Err(ScenarioError::new(at, format!(
                    "elr needs a link up from every switch below the top tier ({top}); switch \"{}\" (tier {}) has none",
                    n.name,
                    tier(i)
                )));
            }
        }
        Ok(())
    }
}
