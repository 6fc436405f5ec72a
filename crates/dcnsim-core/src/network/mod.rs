//! The runtime network: egress ports and routing tables built from a topology.
//!
//! Every full-duplex link becomes two egress ports ([`port`]), one at each
//! end. Routing tables ([`crate::routing`]) hold, for every switch and
//! destination host, all egress ports on a shortest path (by hop count);
//! forwarding policies pick among them. `[network]` is [`spec`].

pub mod port;
pub mod spec;

pub use port::{Offered, Paused, Port, Wake};
pub use spec::{NetworkSpec, OutageSpec};

use crate::queue::PortContext;
use crate::routing::{Hops, Numbering, Routes};
use crate::topology::{NodeKind, Topology};
use crate::units::Rate;

/// Bytes of ports beyond which they outgrow a core's second-level cache
/// (1 MB on the development machine's cores): on smaller fabrics what a
/// port points to stays cached and prefetching it only costs instructions
/// (docs/performance.md, item 17).
const LARGE_PORTS: usize = 1 << 20;

pub struct Network {
    pub ports: Vec<Port>,
    /// Ports of node `n`: `node_ports[n]..node_ports[n + 1]`.
    node_ports: Vec<u32>,
    /// Host index of each node (`u32::MAX` for switches).
    pub node_host: Vec<u32>,
    /// Tier of each node (0 for hosts).
    pub tier: Vec<u32>,
    pub top_tier: u32,
    /// The NIC port of host `h`.
    pub host_port: Vec<u32>,
    /// The node id of each host (dense, so the hot path reads no port for it).
    host_nodes: Vec<u32>,
    /// Equal-cost next hops of (node, destination host).
    routes: Routes,
    /// The rate of the slowest host's NIC: its link's.
    slowest_host_link: Rate,
}

impl Network {
    pub fn build(topo: &Topology, spec: &NetworkSpec) -> Network {
        let numbered = topo.ports();
        let num = Numbering::of(topo, &numbered);
        let hosts = topo.host_count();
        let slowest_host_link = topo.host_link_rates().into_iter().min().unwrap_or(Rate(0));
        let mut ports = Vec::with_capacity(numbered.len());
        crate::cache::advise_huge_pages(&ports);
        for (i, &(node, peer, l)) in numbered.iter().enumerate() {
            let nic = topo.nodes[node].kind == NodeKind::Host;
            let queue = if nic { &spec.nic_queue } else { &spec.queue };
            let ctx = PortContext {
                rate: l.rate,
                buffer: queue.capacity,
                nic,
                hosts,
                slowest_host_link,
            };
            let arrive_after = match topo.nodes[peer].kind {
                NodeKind::Host => l.delay,
                NodeKind::Switch => l.delay + spec.switch_latency,
            };
            let (node, peer) = (node as u32, peer as u32);
            ports.push(Port::new(
                &ctx,
                queue,
                node,
                peer,
                num.reverse[i],
                arrive_after,
            ));
        }
        let tier: Vec<u32> = topo.nodes.iter().map(|nd| nd.tier.unwrap_or(1)).collect();
        let top_tier = tier.iter().copied().max().unwrap_or(0);
        let routes = Routes::build(&num, topo, &numbered);
        Network {
            ports,
            host_nodes: topo.hosts.iter().map(|&h| h as u32).collect(),
            node_ports: num.node_ports,
            node_host: num.node_host,
            tier,
            top_tier,
            host_port: num.host_port,
            routes,
            slowest_host_link,
        }
    }

    /// What a discipline or stage at `port` is built with.
    pub fn port_context(&self, port: u32) -> PortContext {
        let pt = &self.ports[port as usize];
        PortContext {
            rate: pt.rate,
            buffer: pt.buffer,
            nic: self.is_host(pt.node),
            hosts: self.host_port.len(),
            slowest_host_link: self.slowest_host_link,
        }
    }

    pub fn ports_of(&self, node: u32) -> std::ops::Range<u32> {
        self.node_ports[node as usize]..self.node_ports[node as usize + 1]
    }

    pub fn is_host(&self, node: u32) -> bool {
        self.node_host[node as usize] != u32::MAX
    }

    /// All egress ports of `node` on a shortest path to the host at node `dst`.
    #[inline(always)]
    pub fn next_hops(&self, node: u32, dst: u32) -> Hops<'_> {
        self.routes.next_hops(node, dst)
    }

    /// Whether the ports are too many to stay in the caches, so that
    /// prefetching what they point to ([`Port::prefetch_queue`]) pays.
    #[inline]
    pub fn ports_outgrow_caches(&self) -> bool {
        self.ports.len() * std::mem::size_of::<Port>() >= LARGE_PORTS
    }

    /// Whether the routing tables outgrow the caches (see
    /// [`Network::prefetch_next_hops`]).
    #[inline]
    pub fn routes_outgrow_caches(&self) -> bool {
        self.routes.outgrow_caches()
    }

    /// Start loading what [`Network::next_hops`] will read for (`node`, `dst`).
    #[inline(always)]
    pub fn prefetch_next_hops(&self, node: u32, dst: u32) {
        self.routes.prefetch(node, dst);
    }

    /// Bytes the routing tables hold.
    #[cfg(test)]
    pub fn route_bytes(&self) -> usize {
        self.routes.bytes()
    }

    /// The port of node `a` towards node `b`.
    pub fn port_between(&self, a: u32, b: u32) -> Option<u32> {
        self.ports_of(a).find(|&p| self.ports[p as usize].peer == b)
    }

    /// The node id of host `h`.
    #[inline]
    pub fn host_node(&self, h: u32) -> u32 {
        self.host_nodes[h as usize]
    }

    /// One shortest path from host `src` to host `dst` (the first equal-cost
    /// choice at every switch), as egress ports.
    pub fn path(&self, src: u32, dst: u32) -> Vec<u32> {
        let dst = self.host_node(dst);
        let mut port = self.host_port[src as usize];
        let mut path = vec![port];
        loop {
            let node = self.ports[port as usize].peer;
            if self.is_host(node) {
                return path;
            }
            port = self.next_hops(node, dst).get(0);
            path.push(port);
        }
    }
}
