//! Routing on a k-ary fat-tree by its numbering, with no table.
//!
//! `topology/fat_tree.rs` numbers the k³/4 hosts first, then the k²/2 edge
//! switches (k/2 per pod), the k²/2 aggregation switches (k/2 per pod) and
//! the (k/2)² core switches, and gives every switch k ports in the order its
//! links were made: an edge switch's k/2 hosts then its pod's k/2 aggregation
//! switches; an aggregation switch's pod's k/2 edge switches then its k/2
//! core switches; a core switch's one aggregation switch in each pod, pod by
//! pod. On a shortest path towards host `h` (in pod `p`, below edge switch
//! `e`), an edge switch goes down to `h` if it is `e` and else up by any of
//! its uplinks; an aggregation switch goes down to `e` if it is in `p` and
//! else up; a core switch goes down into `p`. Each answer is a run of
//! consecutive ports, the same ports in the same order as the tables'
//! breadth-first search finds (tests in `routing.rs`), so hashing over it
//! picks the same port.
//!
//! Ports are numbered node by node, each node's in that order, so switch
//! `s` (counted from the first edge switch) has ports k³/4 + s·k onwards.
//!
//! A packet-hop so reads no memory for its route, where the tables cost
//! four dependent loads (the destination's group, the switch's row, the
//! cell and its list): at k = 24 the cells alone are 830 KB
//! (docs/performance.md).

use super::Hops;
use crate::topology::{Link, Topology};
use std::hint::select_unpredictable;
use strength_reduce::StrengthReducedU32;

#[derive(Clone, Copy, Debug)]
pub struct FatTreeRoutes {
    /// k³/4: the node id of the first edge switch, and the port id of its
    /// first port (every host has one port).
    hosts: u32,
    k: u32,
    /// k/2, with its reciprocal for the divisions by it.
    half: u32,
    by_half: StrengthReducedU32,
    /// k²/2: edge switches, and aggregation switches.
    edges: u32,
}

impl FatTreeRoutes {
    /// The routes of `topo` if it is numbered as a k-ary fat-tree (every
    /// node and every port checked), else `None`. `ports` are its ports in
    /// the order the network numbers them ([`Topology::ports`]).
    pub fn of(topo: &Topology, ports: &[(usize, usize, &Link)]) -> Option<FatTreeRoutes> {
        let hosts = u32::try_from(topo.hosts.len()).ok()?;
        let k = (2..=128u32).step_by(2).find(|k| k * k * k / 4 == hosts)?;
        let half = k / 2;
        let routes = FatTreeRoutes {
            hosts,
            k,
            half,
            by_half: StrengthReducedU32::new(half),
            edges: k * half,
        };
        let switches = 2 * routes.edges + half * half;
        if topo.nodes.len() != (hosts + switches) as usize
            || topo.hosts.iter().enumerate().any(|(h, &node)| h != node)
        {
            return None;
        }
        let expected = (0..hosts)
            .map(|h| (h, hosts + h / half))
            .chain((0..switches).flat_map(|s| (0..k).map(move |j| (hosts + s, routes.peer(s, j)))));
        let numbered = ports
            .iter()
            .map(|&(node, peer, _)| (node as u32, peer as u32));
        numbered.eq(expected).then_some(routes)
    }

    /// The node at the far end of port `j` of switch `s` (switches counted
    /// from the first edge switch), as the topology builder connects them.
    fn peer(&self, s: u32, j: u32) -> u32 {
        let (half, edges) = (self.half, self.edges);
        let (edge_base, agg_base, core_base) =
            (self.hosts, self.hosts + edges, self.hosts + 2 * edges);
        if s < edges {
            let pod = s / half;
            if j < half {
                s * half + j
            } else {
                agg_base + pod * half + (j - half)
            }
        } else if s < 2 * edges {
            let a = s - edges;
            if j < half {
                edge_base + a / half * half + j
            } else {
                core_base + a % half * half + (j - half)
            }
        } else {
            agg_base + j * half + (s - 2 * edges) / half
        }
    }

    /// The ports of `node` on a shortest path to host node `dst` (none at a
    /// host). Chosen without branches: the tier of the switch and whether
    /// the destination is below it vary from one packet-hop to the next,
    /// which a branch predictor cannot follow (docs/performance.md, item 26).
    #[inline(always)]
    pub fn next_hops(&self, node: u32, dst: u32) -> Hops<'static> {
        let (h_edge, h_port) = StrengthReducedU32::div_rem(dst, self.by_half);
        let (h_pod, h_edge_port) = StrengthReducedU32::div_rem(h_edge, self.by_half);
        let s = node.wrapping_sub(self.hosts);
        let (is_edge, is_core) = (s < self.edges, s >= 2 * self.edges);
        // Meaningful for aggregation switches only.
        let agg_pod = s.wrapping_sub(self.edges) / self.by_half;
        let below = select_unpredictable(is_edge, h_edge == s, is_core || h_pod == agg_pod);
        let down = select_unpredictable(
            is_edge,
            h_port,
            select_unpredictable(is_core, h_pod, h_edge_port),
        );
        let (offset, len) = select_unpredictable(below, (down, 1), (self.half, self.half));
        Hops::Run {
            first: self
                .hosts
                .wrapping_add(s.wrapping_mul(self.k))
                .wrapping_add(offset),
            len: select_unpredictable(node < self.hosts, 0, len),
        }
    }
}
