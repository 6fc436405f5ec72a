//! Equal-cost routing: every switch's next hops towards every destination
//! host, as a run of consecutive ports or a list ([`Hops`]).
//!
//! A network numbered as `topology/fat_tree.rs` builds a k-ary fat-tree, or
//! as `topology/leaf_spine.rs` builds a leaf-spine fabric, is routed by that
//! numbering ([`fat_tree::FatTreeRoutes`], [`leaf_spine::LeafSpineRoutes`]):
//! a switch's next hops follow from its index and the destination's, with no
//! table to read.
//! Every other network gets tables ([`Tables`]), compressed by last-hop
//! switch, which use no knowledge of the topology kind. Both give exactly
//! the ports of dense tables built by breadth-first search, in the same
//! order, so hashing over them picks the same port (tests below).
//!
//! Tables: a host has exactly one link (checked when the topology is built),
//! so every shortest path towards host `d` ends with the hop from its
//! attachment switch `a(d)` (its ToR, edge or leaf switch) to `d`. At every
//! switch other than `a(d)`, the shortest paths towards `d` are therefore
//! those towards `a(d)`, and every host below the same switch has the same
//! next hops there. The tables hold one row per switch and one column per
//! attachment switch (a *group* of destinations), each cell naming a
//! deduplicated next-hop list; the last hop is one port per destination. A
//! k = 32 fat-tree (1,280 switches, 512 edge switches) would need 2.6 MB of
//! cells where dense tables (node × destination host) need about 850 MB.
//!
//! The lists are exactly those of dense tables built by breadth-first search
//! from every destination host (never transiting another host): the same
//! ports in the same order (the switch's port order), so hashing over them
//! picks the same port.

mod fat_tree;
mod leaf_spine;

use crate::topology::{Link, Topology};

use std::collections::{HashMap, VecDeque};

/// The topology's port numbering ([`Topology::ports`]) as routing reads it,
/// and as the network is built from it: port `i` is `ports[i]`.
#[derive(Clone, Debug, Default)]
pub struct Numbering {
    /// Ports of node `n`: `node_ports[n]..node_ports[n + 1]`.
    pub node_ports: Vec<u32>,
    /// The node and the peer of each port, and the peer's port back.
    pub node: Vec<u32>,
    pub peer: Vec<u32>,
    pub reverse: Vec<u32>,
    /// Host index of each node (`u32::MAX` for switches).
    pub node_host: Vec<u32>,
    /// The NIC port of each host.
    pub host_port: Vec<u32>,
}

impl Numbering {
    /// The numbering of `topo`'s `ports` ([`Topology::ports`]).
    pub fn of(topo: &Topology, ports: &[(usize, usize, &Link)]) -> Numbering {
        let n = topo.nodes.len();
        let index: HashMap<(usize, usize), u32> = ports
            .iter()
            .enumerate()
            .map(|(i, &(a, b, _))| ((a, b), i as u32))
            .collect();
        let mut node_ports = Vec::with_capacity(n + 1);
        for (i, &(node, _, _)) in ports.iter().enumerate() {
            while node_ports.len() <= node {
                node_ports.push(i as u32);
            }
        }
        while node_ports.len() <= n {
            node_ports.push(ports.len() as u32);
        }
        let mut node_host = vec![u32::MAX; n];
        for (h, &node) in topo.hosts.iter().enumerate() {
            node_host[node] = h as u32;
        }
        let host_port = topo.hosts.iter().map(|&h| node_ports[h]).collect();
        Numbering {
            node: ports.iter().map(|&(a, _, _)| a as u32).collect(),
            peer: ports.iter().map(|&(_, b, _)| b as u32).collect(),
            reverse: ports.iter().map(|&(a, b, _)| index[&(b, a)]).collect(),
            node_ports,
            node_host,
            host_port,
        }
    }

    pub fn ports_of(&self, node: u32) -> std::ops::Range<u32> {
        self.node_ports[node as usize]..self.node_ports[node as usize + 1]
    }

    pub fn is_host(&self, node: u32) -> bool {
        self.node_host[node as usize] != u32::MAX
    }

    /// The node id of host `h`.
    pub fn host_node(&self, h: u32) -> u32 {
        self.node[self.host_port[h as usize] as usize]
    }
}

/// Where a destination host hangs: its group (attachment switch), that
/// switch's node id (`u32::MAX` when the host's link goes to another host, so
/// no switch reaches it) and the switch's port down to it.
#[derive(Clone, Copy, Debug, Default)]
struct Dest {
    group: u32,
    attach: u32,
    last: u32,
}

/// The equal-cost next hops of a switch towards a destination host, in the
/// switch's port order: a run of consecutive ports (routes by numbering), or a
/// list from the tables.
#[derive(Clone, Copy, Debug)]
pub enum Hops<'a> {
    Run { first: u32, len: u32 },
    List(&'a [u32]),
}

impl Hops<'_> {
    #[inline(always)]
    pub fn len(&self) -> usize {
        match *self {
            Hops::Run { len, .. } => len as usize,
            Hops::List(list) => list.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The `i`-th next hop (`i < len`).
    #[inline(always)]
    pub fn get(&self, i: usize) -> u32 {
        match *self {
            Hops::Run { first, len } => {
                debug_assert!(i < len as usize);
                first + i as u32
            }
            Hops::List(list) => list[i],
        }
    }

    /// The ports, in order.
    pub fn to_vec(&self) -> Vec<u32> {
        (0..self.len()).map(|i| self.get(i)).collect()
    }
}

/// A network's routes: by a fat-tree's or a leaf-spine's numbering, or
/// tables. The variant is a byte of its own: left to the compiler, it hid
/// in the tables' vector capacity, and decoding it took six instructions
/// per routed hop (docs/performance.md, "BOTCP's cost").
#[derive(Debug)]
#[repr(u8)]
pub enum Routes {
    FatTree(fat_tree::FatTreeRoutes),
    LeafSpine(leaf_spine::LeafSpineRoutes),
    Tables(Tables),
}

impl Default for Routes {
    fn default() -> Routes {
        Routes::Tables(Tables::default())
    }
}

impl Routes {
    /// Routes of `topo` and its numbered `ports` ([`Topology::ports`],
    /// read as `num`): by its numbering when it is a fat-tree's or a
    /// leaf-spine's, else tables.
    pub fn build(num: &Numbering, topo: &Topology, ports: &[(usize, usize, &Link)]) -> Routes {
        Routes::by_numbering(topo, ports).unwrap_or_else(|| Routes::Tables(Tables::build(num)))
    }

    /// The routes of `topo` by its numbering, if it is a fat-tree's or a
    /// leaf-spine's (no tables to build or hold).
    pub fn by_numbering(topo: &Topology, ports: &[(usize, usize, &Link)]) -> Option<Routes> {
        fat_tree::FatTreeRoutes::of(topo, ports)
            .map(Routes::FatTree)
            .or_else(|| leaf_spine::LeafSpineRoutes::of(topo, ports).map(Routes::LeafSpine))
    }

    /// All egress ports of `node` on a shortest path to the host at node
    /// `dst` (none at a host).
    #[inline(always)]
    pub fn next_hops(&self, node: u32, dst: u32) -> Hops<'_> {
        match self {
            Routes::FatTree(routes) => routes.next_hops(node, dst),
            Routes::LeafSpine(routes) => routes.next_hops(node, dst),
            Routes::Tables(tables) => Hops::List(tables.next_hops(node, dst)),
        }
    }

    /// Whether the routes are tables too big to stay in the caches, so that
    /// [`Routes::prefetch`] pays.
    #[inline]
    pub fn outgrow_caches(&self) -> bool {
        match self {
            Routes::FatTree(_) | Routes::LeafSpine(_) => false,
            Routes::Tables(tables) => tables.outgrow_caches(),
        }
    }

    /// Start loading what [`Routes::next_hops`] reads for (`node`, `dst`).
    #[inline(always)]
    pub fn prefetch(&self, node: u32, dst: u32) {
        if let Routes::Tables(tables) = self {
            tables.prefetch(node, dst);
        }
    }

    /// Bytes the routes hold.
    #[cfg(test)]
    pub fn bytes(&self) -> usize {
        match self {
            Routes::FatTree(_) | Routes::LeafSpine(_) => 0,
            Routes::Tables(tables) => tables.bytes(),
        }
    }
}

/// Routing tables, compressed by last-hop switch (see the module's doc).
#[derive(Debug, Default)]
pub struct Tables {
    /// Row of each node in `cells`; row 0 (every host) has only empty lists.
    row: Vec<u32>,
    /// The destination entry of each node (meaningful for hosts only).
    dest: Vec<Dest>,
    groups: usize,
    /// Next-hop list of (row, group): `cells[row * groups + group]`, the
    /// list's offset in `lists`.
    cells: Vec<u32>,
    /// Deduplicated lists, each its length then its ports (one read finds
    /// both); the list at offset 0 is empty (hosts, and switches that cannot
    /// reach a group).
    lists: Vec<u32>,
}

/// Tables of at least this many bytes of cells are prefetched ahead of the
/// packets that read them ([`Tables::outgrow_caches`]): half the 1 MiB
/// second-level cache of the development machine. Measured in
/// docs/performance.md: prefetching the cells of a k = 24 fat-tree (830 KB)
/// gained 6–14 %, those of a k = 8 one (10 KB, always cached) cost 8 %.
const LARGE_TABLES: usize = 512 * 1024;

impl Tables {
    /// The tables of numbered ports `net`: a breadth-first search over
    /// switches from every attachment switch.
    pub fn build(net: &Numbering) -> Tables {
        let n = net.node_host.len();
        let mut row = vec![0u32; n];
        let mut switches = Vec::new();
        for node in 0..n as u32 {
            if !net.is_host(node) {
                switches.push(node);
                row[node as usize] = switches.len() as u32;
            }
        }
        let mut group_of = vec![u32::MAX; n];
        let mut attach_nodes = Vec::new();
        let mut dest = vec![Dest::default(); n];
        for &nic in &net.host_port {
            let a = net.peer[nic as usize];
            if group_of[a as usize] == u32::MAX {
                group_of[a as usize] = attach_nodes.len() as u32;
                attach_nodes.push(a);
            }
            dest[net.node[nic as usize] as usize] = Dest {
                group: group_of[a as usize],
                attach: if net.is_host(a) { u32::MAX } else { a },
                last: net.reverse[nic as usize],
            };
        }
        let groups = attach_nodes.len();
        let mut routes = Tables {
            row,
            dest,
            groups,
            cells: vec![0; (switches.len() + 1) * groups],
            lists: vec![0],
        };
        // The links between switches, switch by switch in port order, as
        // (port, peer's row - 1): the searches read them sequentially.
        let mut adj_off = Vec::with_capacity(switches.len() + 1);
        let mut adj = Vec::new();
        for &u in &switches {
            adj_off.push(adj.len());
            for p in net.ports_of(u) {
                let v = net.peer[p as usize];
                if !net.is_host(v) {
                    adj.push((p, routes.row[v as usize] - 1));
                }
            }
        }
        adj_off.push(adj.len());
        let mut interned: HashMap<Box<[u32]>, u32> = HashMap::new();
        interned.insert(Box::new([]), 0);
        // The list each switch got last: most switches repeat it for the next
        // group (a fat-tree's edge switch always goes up), so few lists are hashed.
        let mut latest = vec![0u32; switches.len()];
        let mut dist = vec![u32::MAX; switches.len()];
        let mut frontier = VecDeque::new();
        let mut list = Vec::new();
        for (g, &a) in attach_nodes.iter().enumerate() {
            if net.is_host(a) {
                continue; // a pair of hosts joined directly: no switch reaches them
            }
            let source = routes.row[a as usize] as usize - 1;
            dist.fill(u32::MAX);
            dist[source] = 0;
            frontier.push_back(source);
            while let Some(u) = frontier.pop_front() {
                for &(_, v) in &adj[adj_off[u]..adj_off[u + 1]] {
                    if dist[v as usize] == u32::MAX {
                        dist[v as usize] = dist[u] + 1;
                        frontier.push_back(v as usize);
                    }
                }
            }
            for (u, &du) in dist.iter().enumerate() {
                if u == source || du == u32::MAX {
                    continue;
                }
                list.clear();
                list.extend(
                    adj[adj_off[u]..adj_off[u + 1]]
                        .iter()
                        .filter(|&&(_, v)| dist[v as usize].wrapping_add(1) == du)
                        .map(|&(p, _)| p),
                );
                let at = latest[u] as usize;
                if routes.lists[at + 1..at + 1 + routes.lists[at] as usize] != list[..] {
                    latest[u] = match interned.get(list.as_slice()) {
                        Some(&offset) => offset,
                        None => {
                            let offset = routes.lists.len() as u32;
                            routes.lists.push(list.len() as u32);
                            routes.lists.extend_from_slice(&list);
                            interned.insert(list.as_slice().into(), offset);
                            offset
                        }
                    };
                }
                routes.cells[(u + 1) * groups + g] = latest[u];
            }
        }
        routes
    }

    /// All egress ports of `node` on a shortest path to the host at node `dst`.
    /// The cell is read even at `dst`'s attachment switch (its own group's
    /// cell names the empty list), and the answer picked without a branch:
    /// whether a packet is at its last switch is a coin toss to the CPU's
    /// branch predictor (docs/performance.md, item 26).
    #[inline(always)]
    pub fn next_hops(&self, node: u32, dst: u32) -> &[u32] {
        let d = &self.dest[dst as usize];
        let at = self.cells[self.cell(node, d)] as usize;
        let list = &self.lists[at + 1..at + 1 + self.lists[at] as usize];
        std::hint::select_unpredictable(node == d.attach, std::slice::from_ref(&d.last), list)
    }

    /// The index in `cells` of (`node`, the group of destination `d`).
    #[inline(always)]
    fn cell(&self, node: u32, d: &Dest) -> usize {
        self.row[node as usize] as usize * self.groups + d.group as usize
    }

    /// Whether the cells are too many to stay in the caches, so that
    /// [`Tables::prefetch`] pays.
    #[inline]
    pub fn outgrow_caches(&self) -> bool {
        4 * self.cells.len() >= LARGE_TABLES
    }

    /// Start loading the table cell [`Tables::next_hops`] reads for
    /// (`node`, `dst`): on a large fabric the tables outgrow the caches.
    #[inline(always)]
    pub fn prefetch(&self, node: u32, dst: u32) {
        let d = &self.dest[dst as usize];
        if node != d.attach {
            if let Some(cell) = self.cells.get(self.cell(node, d)) {
                crate::cache::prefetch(cell);
            }
        }
    }

    /// Bytes the tables hold.
    #[cfg(test)]
    pub fn bytes(&self) -> usize {
        4 * (self.row.len() + self.cells.len() + self.lists.len())
            + std::mem::size_of::<Dest>() * self.dest.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Scenario;

    /// The dense tables the compressed ones replace: a breadth-first search
    /// from every destination host (never transiting another host), then at
    /// every switch the ports to a neighbour one hop nearer, in port order.
    fn dense(net: &Numbering) -> Vec<Vec<Vec<u32>>> {
        let n = net.node_host.len();
        let hosts = net.host_port.len();
        let mut table = vec![vec![Vec::new(); hosts]; n];
        let mut dist = vec![u32::MAX; n];
        for d in 0..hosts as u32 {
            let dst = net.host_node(d);
            dist.fill(u32::MAX);
            dist[dst as usize] = 0;
            let mut frontier = VecDeque::from([dst]);
            while let Some(u) = frontier.pop_front() {
                if u != dst && net.is_host(u) {
                    continue;
                }
                for p in net.ports_of(u) {
                    let v = net.peer[p as usize] as usize;
                    if dist[v] == u32::MAX {
                        dist[v] = dist[u as usize] + 1;
                        frontier.push_back(v as u32);
                    }
                }
            }
            for u in 0..n as u32 {
                if net.is_host(u) || dist[u as usize] == u32::MAX {
                    continue;
                }
                for p in net.ports_of(u) {
                    let v = net.peer[p as usize];
                    let via_host = net.is_host(v) && v != dst;
                    if !via_host && dist[v as usize] + 1 == dist[u as usize] {
                        table[u as usize][d as usize].push(p);
                    }
                }
            }
        }
        table
    }

    fn numbering(topology: &str) -> (Numbering, Topology) {
        let sc = Scenario::from_toml_str(&format!("[topology]\n{topology}")).unwrap();
        (
            Numbering::of(&sc.topology, &sc.topology.ports()),
            sc.topology,
        )
    }

    /// Every (node, destination) of the routes the network gets, and of the
    /// compressed tables, against the dense tables: the same ports in the
    /// same order. Returns the numbering and its routes.
    fn assert_same_as_dense(topology: &str) -> (Numbering, Routes) {
        let (net, topo) = numbering(topology);
        let dense = dense(&net);
        let routes = Routes::build(&net, &topo, &topo.ports());
        let tables = Tables::build(&net);
        for (node, row) in dense.iter().enumerate() {
            for (d, hops) in row.iter().enumerate() {
                let dst = net.host_node(d as u32);
                let at = format!("{topology}: node {node}, destination host {d}");
                assert_eq!(routes.next_hops(node as u32, dst).to_vec(), *hops, "{at}");
                assert_eq!(tables.next_hops(node as u32, dst), hops.as_slice(), "{at}");
            }
        }
        (net, routes)
    }

    #[test]
    fn fat_trees_are_routed_by_their_numbering_as_by_dense_tables() {
        for k in [2, 4, 6, 8] {
            let (net, routes) = assert_same_as_dense(&format!("kind = \"fat_tree\"\nk = {k}"));
            assert!(matches!(routes, Routes::FatTree(_)), "k = {k}");
            assert_eq!(routes.bytes(), 0);
            // One group per edge switch (k^2/2), one row per switch (5k^2/4)
            // and the empty row of the hosts.
            let tables = Tables::build(&net);
            assert_eq!(tables.groups, k * k / 2);
            assert_eq!(tables.cells.len(), (5 * k * k / 4 + 1) * k * k / 2);
            // From host 0's edge switch to a host in another pod: all k/2
            // uplinks; from a core switch: the one port down into that pod.
            let edge0 = net.peer[net.host_port[0] as usize];
            let far = net.host_node((k * k * k / 4 - 1) as u32);
            assert_eq!(routes.next_hops(edge0, far).len(), k / 2);
            let peer = |node, port: usize| net.peer[routes.next_hops(node, far).get(port) as usize];
            let core = peer(peer(edge0, 0), 0);
            assert_eq!(routes.next_hops(core, far).len(), 1);
        }
    }

    /// A k = 2 fat-tree written as `edges`: in the builder's order it is
    /// routed by its numbering; with two links of an edge switch swapped (so
    /// its ports come in another order) it gets tables, and both match the
    /// dense tables.
    #[test]
    fn only_a_fat_trees_own_numbering_is_routed_without_tables() {
        let nodes = r#"nodes = [
  { name = "h0", kind = "host" }, { name = "h1", kind = "host" },
  { name = "e0", kind = "switch" }, { name = "e1", kind = "switch" },
  { name = "a0", kind = "switch" }, { name = "a1", kind = "switch" },
  { name = "c0", kind = "switch" },
]"#;
        let ordered = r#"links = [
  { a = "h0", b = "e0" }, { a = "h1", b = "e1" },
  { a = "e0", b = "a0" }, { a = "a0", b = "c0" },
  { a = "e1", b = "a1" }, { a = "a1", b = "c0" },
]"#;
        let swapped = r#"links = [
  { a = "e0", b = "a0" }, { a = "h0", b = "e0" }, { a = "h1", b = "e1" },
  { a = "a0", b = "c0" }, { a = "e1", b = "a1" }, { a = "a1", b = "c0" },
]"#;
        let (_, routes) = assert_same_as_dense(&format!("kind = \"edges\"\n{nodes}\n{ordered}"));
        assert!(matches!(routes, Routes::FatTree(_)));
        let (_, routes) = assert_same_as_dense(&format!("kind = \"edges\"\n{nodes}\n{swapped}"));
        assert!(matches!(routes, Routes::Tables(_)));
    }

    #[test]
    fn leaf_spines_are_routed_by_their_numbering_as_by_dense_tables() {
        // (leaves, spines, hosts per leaf): the BOTCP seed's fabric, odd and
        // degenerate ones (one leaf, one spine, one host per leaf).
        for (leaves, spines, per_leaf) in [
            (6, 6, 32),
            (3, 5, 1),
            (4, 3, 3),
            (5, 2, 7),
            (2, 1, 4),
            (1, 3, 2),
            (1, 1, 1),
        ] {
            let (net, routes) = assert_same_as_dense(&format!(
                "kind = \"leaf_spine\"\nleaves = {leaves}\nspines = {spines}\nhosts_per_leaf = {per_leaf}"
            ));
            let at = format!("{leaves} x {spines} x {per_leaf}");
            assert!(matches!(routes, Routes::LeafSpine(_)), "{at}");
            assert_eq!(routes.bytes(), 0);
            // From host 0's leaf to a host on the last leaf: every spine
            // (unless they share the leaf); from a spine: the one port down.
            let leaf0 = net.peer[net.host_port[0] as usize];
            let far = net.host_node((leaves * per_leaf - 1) as u32);
            let up = if leaves > 1 { spines } else { 1 };
            assert_eq!(routes.next_hops(leaf0, far).len(), up, "{at}");
            let spine = net.peer[net.node_ports[leaf0 as usize + 1] as usize - 1];
            assert_eq!(routes.next_hops(spine, far).len(), 1, "{at}");
        }
    }

    /// A leaf-spine of 2 leaves, 2 spines and a host per leaf written as
    /// `edges`: in the builder's order it is routed by its numbering; with a
    /// leaf's two uplinks made in the other order, with the spines numbered
    /// before the leaves, or with a link missing, it gets tables, and all
    /// match the dense tables.
    #[test]
    fn only_a_leaf_spines_own_numbering_is_routed_without_tables() {
        let hosts = r#"{ name = "h0", kind = "host" }, { name = "h1", kind = "host" }"#;
        let leaves = r#"{ name = "l0", kind = "switch" }, { name = "l1", kind = "switch" }"#;
        let spines = r#"{ name = "s0", kind = "switch" }, { name = "s1", kind = "switch" }"#;
        let down = r#"{ a = "h0", b = "l0" }, { a = "h1", b = "l1" }"#;
        let l0_up = r#"{ a = "l0", b = "s0" }, { a = "l0", b = "s1" }"#;
        let l0_up_swapped = r#"{ a = "l0", b = "s1" }, { a = "l0", b = "s0" }"#;
        let l1_up = r#"{ a = "l1", b = "s0" }, { a = "l1", b = "s1" }"#;
        let l1_up_missing = r#"{ a = "l1", b = "s0" }"#;
        let edges = |nodes: [&str; 3], links: [&str; 3]| {
            format!(
                "kind = \"edges\"\nnodes = [{}]\nlinks = [{}]",
                nodes.join(", "),
                links.join(", ")
            )
        };
        let (_, routes) =
            assert_same_as_dense(&edges([hosts, leaves, spines], [down, l0_up, l1_up]));
        assert!(matches!(routes, Routes::LeafSpine(_)));
        for topology in [
            edges([hosts, leaves, spines], [down, l0_up_swapped, l1_up]),
            edges([hosts, spines, leaves], [down, l0_up, l1_up]),
            edges([hosts, leaves, spines], [down, l0_up, l1_up_missing]),
        ] {
            let (_, routes) = assert_same_as_dense(&topology);
            assert!(matches!(routes, Routes::Tables(_)), "{topology}");
        }
    }

    #[test]
    fn three_tier_tree_star_and_edges_match_dense_tables() {
        for topology in ["kind = \"tree3\"", "kind = \"star\"\nhosts = 3"] {
            let (_, routes) = assert_same_as_dense(topology);
            assert!(matches!(routes, Routes::Tables(_)), "{topology}");
        }
        // Unequal paths, a host on a switch with no other host, a switch
        // cycle and a dead-end switch.
        assert_same_as_dense(
            r#"kind = "edges"
nodes = [
  { name = "h0", kind = "host" }, { name = "h1", kind = "host" },
  { name = "h2", kind = "host" }, { name = "h3", kind = "host" },
  { name = "s0", kind = "switch" }, { name = "s1", kind = "switch" },
  { name = "s2", kind = "switch" }, { name = "s3", kind = "switch" },
  { name = "s4", kind = "switch" },
]
links = [
  { a = "h0", b = "s0" }, { a = "h1", b = "s0" }, { a = "h2", b = "s1" },
  { a = "h3", b = "s3" }, { a = "s0", b = "s1" }, { a = "s1", b = "s2" },
  { a = "s2", b = "s0" }, { a = "s2", b = "s3" }, { a = "s3", b = "s1" },
  { a = "s4", b = "s3" },
]"#,
        );
        // Two hosts joined directly: no switch, no route.
        assert_same_as_dense(
            r#"kind = "edges"
nodes = [{ name = "h0", kind = "host" }, { name = "h1", kind = "host" }]
links = [{ a = "h0", b = "h1" }]"#,
        );
    }
}
