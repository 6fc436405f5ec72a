//! Routing on a two-tier leaf-spine fabric by its numbering, with no table.
//!
//! `topology/leaf_spine.rs` numbers the `leaves · m` hosts first (`m` per
//! leaf), then the leaves, then the spines, and gives every switch its ports
//! in the order its links were made: a leaf's `m` hosts then every spine, in
//! spine order; a spine's one link to every leaf, in leaf order. On a
//! shortest path towards host `h` (port `h mod m` of leaf `h / m`), a leaf
//! goes down to `h` if it is `h`'s leaf and else up by any spine (every
//! spine is two hops from `h`); a spine goes down to `h`'s leaf. Each answer
//! is a run of consecutive ports, the same ports in the same order as the
//! tables' breadth-first search finds (tests in `routing.rs`), so hashing
//! over it picks the same port.
//!
//! Ports are numbered node by node, so leaf `l` has ports
//! `hosts + l·(m + spines)` onwards and spine `s` has
//! `hosts + leaves·(m + spines) + s·leaves` onwards.
//!
//! A packet-hop so reads no memory for its route, where the tables cost
//! dependent loads (the destination's group, the switch's row, the cell and
//! its list) and, on the BOTCP fabric, about 0.3 first-level cache misses
//! per hop (docs/performance.md, "BOTCP's cost").

use super::Hops;
use crate::topology::{Link, Topology};
use std::hint::select_unpredictable;
use strength_reduce::StrengthReducedU32;

#[derive(Clone, Copy, Debug)]
pub struct LeafSpineRoutes {
    /// Hosts: the node id of the first leaf, and the port id of its first
    /// port (every host has one port).
    hosts: u32,
    leaves: u32,
    spines: u32,
    /// Hosts per leaf, with its reciprocal for the division by it.
    per_leaf: u32,
    by_per_leaf: StrengthReducedU32,
    /// Ports per leaf (`per_leaf + spines`).
    leaf_ports: u32,
    /// The port id of the first spine's first port less `leaves · leaves`,
    /// so that spine `s` (counted from the first leaf, so `s ≥ leaves`) has
    /// ports `spine_base + s·leaves` onwards (wrapping arithmetic).
    spine_base: u32,
}

impl LeafSpineRoutes {
    /// The routes of `topo` if it is numbered as a leaf-spine fabric (every
    /// node and every port checked), else `None`. `ports` are its ports in
    /// the order the network numbers them ([`Topology::ports`]).
    pub fn of(topo: &Topology, ports: &[(usize, usize, &Link)]) -> Option<LeafSpineRoutes> {
        let hosts = u32::try_from(topo.hosts.len()).ok()?;
        let nodes = u32::try_from(topo.nodes.len()).ok()?;
        u32::try_from(ports.len()).ok()?;
        // The last host hangs from the last leaf.
        let last_leaf = u32::try_from(ports.get(hosts.checked_sub(1)? as usize)?.1).ok()?;
        let leaves = last_leaf.checked_sub(hosts)? + 1;
        let spines = nodes.checked_sub(hosts + leaves)?;
        if spines == 0
            || !hosts.is_multiple_of(leaves)
            || ports.len() as u64 != 2 * (u64::from(hosts) + u64::from(leaves) * u64::from(spines))
            || topo.hosts.iter().enumerate().any(|(h, &node)| h != node)
        {
            return None;
        }
        let per_leaf = hosts / leaves;
        let routes = LeafSpineRoutes {
            hosts,
            leaves,
            spines,
            per_leaf,
            by_per_leaf: StrengthReducedU32::new(per_leaf),
            leaf_ports: per_leaf + spines,
            spine_base: (hosts + leaves * (per_leaf + spines))
                .wrapping_sub(leaves.wrapping_mul(leaves)),
        };
        let leaf_ports = (0..leaves)
            .flat_map(|l| (0..per_leaf + spines).map(move |j| (hosts + l, routes.leaf_peer(l, j))));
        let spine_ports =
            (0..spines).flat_map(|s| (0..leaves).map(move |l| (hosts + leaves + s, hosts + l)));
        let expected = (0..hosts)
            .map(|h| (h, hosts + h / per_leaf))
            .chain(leaf_ports)
            .chain(spine_ports);
        let numbered = ports
            .iter()
            .map(|&(node, peer, _)| (node as u32, peer as u32));
        numbered.eq(expected).then_some(routes)
    }

    /// The node at the far end of port `j` of leaf `l`, as the topology
    /// builder connects them.
    fn leaf_peer(&self, l: u32, j: u32) -> u32 {
        if j < self.per_leaf {
            l * self.per_leaf + j
        } else {
            self.hosts + self.leaves + (j - self.per_leaf)
        }
    }

    /// The ports of `node` on a shortest path to host node `dst` (none at a
    /// host). Chosen without branches: whether the switch is a leaf and
    /// whether the destination is below it vary from one packet-hop to the
    /// next, which a branch predictor cannot follow (docs/performance.md,
    /// item 26).
    #[inline(always)]
    pub fn next_hops(&self, node: u32, dst: u32) -> Hops<'static> {
        let (d_leaf, d_port) = StrengthReducedU32::div_rem(dst, self.by_per_leaf);
        // Switches counted from the first leaf.
        let s = node.wrapping_sub(self.hosts);
        let is_leaf = s < self.leaves;
        let below = d_leaf == s;
        let leaf_first = self
            .hosts
            .wrapping_add(s.wrapping_mul(self.leaf_ports))
            .wrapping_add(select_unpredictable(below, d_port, self.per_leaf));
        let spine_first = self
            .spine_base
            .wrapping_add(s.wrapping_mul(self.leaves))
            .wrapping_add(d_leaf);
        let len = select_unpredictable(is_leaf && !below, self.spines, 1);
        Hops::Run {
            first: select_unpredictable(is_leaf, leaf_first, spine_first),
            len: select_unpredictable(node < self.hosts, 0, len),
        }
    }
}
