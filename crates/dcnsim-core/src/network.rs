//! The runtime network: egress ports and routing tables built from a topology.
//!
//! Every full-duplex link becomes two egress ports, one at each end. A port
//! serializes one packet at a time at its rate (a packet-hop ends when the last
//! bit has crossed the link's propagation delay) and keeps the rest in its queue.
//! Routing tables ([`crate::routing`]) hold, for every switch and destination
//! host, all egress ports on a shortest path (by hop count); forwarding
//! policies pick among them.

use crate::error::{parse_at, ScenarioError};
use crate::packet::CLASSES;
use crate::queue::{Aqms, PortContext, Queue, QueueKind, QueueSpec};
use crate::routing::{Hops, Numbering, Routes};
use crate::stage::{Found, StageSpec, Stages};
use crate::topology::{NodeKind, Topology};
use crate::units::{Capacity, Rate, Time};
use serde::Deserialize;
use serde_json::Value;
use std::collections::VecDeque;

/// Bytes of ports beyond which they outgrow a core's second-level cache
/// (1 MB on the development machine's cores): on smaller fabrics what a
/// port points to stays cached and prefetching it only costs instructions
/// (docs/performance.md, item 17).
const LARGE_PORTS: usize = 1 << 20;

/// Host and switch delays and the queues at every port (`[network]`).
#[derive(Clone, Debug)]
pub struct NetworkSpec {
    pub host_delay: Time,
    pub switch_latency: Time,
    pub queue: QueueSpec,
    pub nic_queue: QueueSpec,
    /// Ports that drop everything for a while (`[[network.outages]]`).
    pub outages: Vec<OutageSpec>,
    /// Port stages (`[[network.stages]]`).
    pub stages: Vec<StageSpec>,
}

/// `[network]` as written: the queues and stages are validated apart, the
/// queues since their AQM's kind decides its keys
/// ([`QueueSpec::from_value`]), the stages since they name ports.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawNetwork {
    #[serde(default, deserialize_with = "crate::units::delay")]
    host_delay: Time,
    #[serde(default, deserialize_with = "crate::units::delay")]
    switch_latency: Time,
    queue: Option<Value>,
    nic_queue: Option<Value>,
    #[serde(default)]
    outages: Vec<OutageSpec>,
    stages: Option<Value>,
}

impl NetworkSpec {
    /// Validate `[network]` of a scenario whose topology is `topo`.
    pub fn from_value(value: Value, topo: &Topology) -> Result<NetworkSpec, ScenarioError> {
        let raw: RawNetwork = parse_at(value, "network")?;
        let stages = match raw.stages {
            None => Vec::new(),
            Some(Value::Array(list)) => list
                .into_iter()
                .enumerate()
                .map(|(i, s)| StageSpec::from_value(s, &format!("network.stages[{i}]"), topo))
                .collect::<Result<_, _>>()?,
            Some(_) => {
                return Err(ScenarioError::new(
                    "network.stages",
                    "expected a list of stages ([[network.stages]])",
                ))
            }
        };
        let queue = |q: Option<Value>, at: &str, default: fn() -> QueueSpec| {
            q.map_or_else(|| Ok(default()), |q| QueueSpec::from_value(q, at))
        };
        Ok(NetworkSpec {
            host_delay: raw.host_delay,
            switch_latency: raw.switch_latency,
            queue: queue(raw.queue, "network.queue", default_switch_queue)?,
            nic_queue: queue(raw.nic_queue, "network.nic_queue", default_nic_queue)?,
            outages: raw.outages,
            stages,
        })
    }
}

/// A port that drops every packet offered to it in `[start, stop)`.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct OutageSpec {
    pub port: String,
    pub start: Time,
    pub stop: Time,
}

fn default_switch_queue() -> QueueSpec {
    QueueSpec::new(QueueKind::Droptail, Capacity::Packets(1000))
}

fn default_nic_queue() -> QueueSpec {
    QueueSpec::new(QueueKind::Droptail, Capacity::Packets(1000))
}

impl Default for NetworkSpec {
    fn default() -> Self {
        NetworkSpec {
            host_delay: Time::ZERO,
            switch_latency: Time::ZERO,
            queue: default_switch_queue(),
            nic_queue: default_nic_queue(),
            outages: Vec::new(),
            stages: Vec::new(),
        }
    }
}

/// What a port's stages do on enqueue.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(u8)]
pub enum Stamps {
    /// Nothing: most ports.
    #[default]
    None,
    /// BOTCP's buffer-occupancy stamp (`stage::max_occupancy`) is the
    /// port's only guard (no other stage on enqueue, no outage): the port
    /// runs it inline. Through the out-of-line check and the port's stage
    /// list it cost some 60 instructions per stamped hop
    /// (docs/performance.md, "BOTCP's cost").
    Alone,
    /// The port's stages, run out of line through its list.
    Stages,
}

/// When a port's packets start serializing: at their arrival, committed
/// (a scheduled FIFO), or when the wire frees (event-driven). Kept in the
/// port's first line, so that an arrival at an idle event-driven port learns
/// there whether anything can hold its classes without reading
/// `pause_latest` and `shaped` two lines further on (a cache line per
/// arrival at a strict-priority switch port; docs/performance.md, "QJUMP's
/// cost").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(u8)]
pub enum Service {
    /// Event-driven, and nothing holds its classes: no shaper stage, and
    /// no PAUSE frame has reached it.
    #[default]
    Free,
    /// A FIFO port that commits packets to the wire on arrival, with no
    /// wake-up events ([`crate::queue::DropTail::commit`]); nothing pauses
    /// it.
    Scheduled,
    /// Event-driven, with a shaper stage or after a PAUSE frame: its
    /// classes may be held ([`Port::paused`], [`Port::held`]).
    Holding,
}

/// Laid out by hand (`repr(C)`, 64-byte lines): the first line holds what
/// serializing a packet and a scheduled FIFO port's AQM touch; the second
/// what its queue touches on every arrival (`queue/droptail.rs`: its queue
/// begins the second line); the rest is read off the hot path, or when an
/// arrival is queued (its depth record). A packet's hop through a scheduled
/// port so touches two adjacent lines (docs/performance.md, item 29).
#[repr(C, align(64))]
pub struct Port {
    /// When the packet on the wire (if any) has been fully serialized.
    pub busy_until: Time,
    /// From the last bit leaving this port to the packet being at the peer:
    /// propagation delay, plus the switch latency when the peer is a switch.
    pub arrive_after: Time,
    /// Packets and bytes put on the wire (counted when serialization starts).
    pub sent_packets: u64,
    pub sent_bytes: u64,
    /// ECN marking / early drop on arrival, one per AQM domain of the queue
    /// (none without AQM).
    pub aqm: Aqms,
    /// `rate` as whole picoseconds per byte, or 0 when it is not whole or
    /// does not fit 32 bits (below 1,863 bit/s).
    ps_per_byte: u32,
    pub peer: u32,
    /// The port of the peer back towards this port's node.
    pub reverse: u32,
    service: Service,
    /// Whether an arrival has more to pass than the AQM: `outages` has
    /// entries or a stage rewrites packets on enqueue (`stamps`). Read on
    /// every packet, so one test for both, kept on this line.
    guarded: bool,
    /// Whether `pcap` has entries: read on every packet, so kept on this
    /// line rather than read from the vector further down.
    captured: bool,
    /// What stages do on enqueue ([`Port::add_stamps`]); read by guarded
    /// arrivals only.
    stamps: Stamps,
    pub queue: Queue,
    /// The largest queue seen (packets, bytes), excluding the one on the wire.
    pub max_packets: u64,
    pub max_bytes: u64,
    /// Whether a stage holds classes (a shaper; such a port is
    /// event-driven, [`Port::shape`]).
    shaped: bool,
    /// The latest end of a pause of any class (so an unpaused port checks
    /// one time; never set on a scheduled port, [`Port::receive_pause`]).
    pause_latest: Time,
    pub node: u32,
    /// Index into the queue trace, when this port is traced.
    pub trace: Option<u32>,
    /// The earliest pending wake-up event of this port, if any.
    pub wake_at: Option<Time>,
    /// Windows `[start, stop)` during which the port drops every packet.
    outages: Vec<(Time, Time)>,
    /// MAC control frames (PAUSE) a switch agent sends out of this port:
    /// served before the queue and never paused.
    pub control: VecDeque<u32>,
    /// Captures recording what this port sends.
    pcap: Vec<u32>,
    /// The port's stages (`crate::stage`), in pipeline order.
    pub stages: Stages,
    pub drops: u64,
    pub rate: Rate,
    /// The buffer: its queue's capacity.
    pub buffer: Capacity,
    /// Link-level flow control received from the peer: until when each
    /// class is paused, and the counters of `ports.parquet`.
    pub pause: Box<Paused>,
}

/// A port's PAUSE state (802.3x / 802.1Qbb) and its counters: PAUSE frames
/// it sent and received, and the time each class (and any class) was paused.
/// A class is paused over `[since, until)`; a later PAUSE for it ends that
/// interval at its arrival (or earlier, if it had run out) and starts the
/// next, so the totals add up disjoint intervals.
#[derive(Clone, Debug, Default)]
pub struct Paused {
    /// Until when each class is paused (a PAUSE of 0 quanta: its arrival).
    pub until: [Time; CLASSES],
    since: [Time; CLASSES],
    total: [Time; CLASSES],
    /// The interval during which some class was paused.
    any_since: Time,
    any_total: Time,
    /// PAUSE frames sent out of this port, and received on it (from its peer).
    pub frames_sent: u64,
    pub frames_received: u64,
}

impl Paused {
    /// A PAUSE naming `classes` (bit c for class c) arrived at `now`: they are
    /// paused until `until` (`now` resumes them). Returns the latest end of a
    /// pause of any class.
    pub fn receive(&mut self, now: Time, classes: u8, until: Time) -> Time {
        self.frames_received += 1;
        let before = self.latest();
        for c in 0..CLASSES {
            if classes & (1 << c) != 0 {
                self.total[c] = self.total[c] + (self.until[c].min(now) - self.since[c]);
                self.since[c] = now;
                self.until[c] = until;
            }
        }
        let after = self.latest();
        if !(before > now && after > now) {
            self.any_total = self.any_total + (before.min(now) - self.any_since);
            self.any_since = now;
        }
        after
    }

    fn latest(&self) -> Time {
        self.until.iter().copied().max().unwrap_or(Time::ZERO)
    }

    /// Time paused up to `end`: with any class paused, and per class.
    pub fn paused_time(&self, end: Time) -> (Time, [Time; CLASSES]) {
        let open = |since: Time, until: Time| until.min(end).max(since) - since;
        let mut per = self.total;
        for (c, t) in per.iter_mut().enumerate() {
            *t = *t + open(self.since[c], self.until[c]);
        }
        (self.any_total + open(self.any_since, self.latest()), per)
    }
}

impl Port {
    /// Whether an outage drops what arrives at `now`.
    #[inline]
    pub fn is_down(&self, now: Time) -> bool {
        self.guarded && self.outages.iter().any(|&(a, b)| a <= now && now < b)
    }

    /// Start loading the lines of the port an arrival reads (see the
    /// layout above).
    #[inline(always)]
    pub fn prefetch(&self) {
        crate::cache::prefetch_bytes(self, Port::HOT_BYTES);
    }

    /// The port's first lines, which an arrival reads.
    const HOT_BYTES: usize = 128;

    /// Start loading what an arrival reads beyond the port itself (its
    /// AQM is inline, [`Aqms`]): on a scheduled FIFO, the oldest committed
    /// packet's entry.
    #[inline(always)]
    pub fn prefetch_queue(&self) {
        if let Queue::Droptail(fifo) = &self.queue {
            fifo.prefetch_head();
        }
    }

    /// Start loading the FIFO entry of the packet this port sends next
    /// when it wakes (an event-driven FIFO's head).
    #[inline(always)]
    pub fn prefetch_waiting(&self) {
        if let Queue::Droptail(fifo) = &self.queue {
            fifo.prefetch_waiting();
        }
    }

    /// The packet this port sends next when it wakes, if its queue is a
    /// FIFO holding one.
    #[inline(always)]
    pub fn first_waiting(&self) -> Option<u32> {
        match &self.queue {
            Queue::Droptail(fifo) => fifo.first_waiting(),
            _ => None,
        }
    }

    /// The AQM domain of `class` and the packets and bytes it holds; a
    /// scheduled FIFO's from its committed packets alone, so that an
    /// arrival reads only the port's first two lines.
    #[inline(always)]
    pub fn occupancy(&self, class: u8) -> (usize, u64, u64) {
        match &self.queue {
            Queue::Droptail(fifo) if self.scheduled() => {
                let (packets, bytes) = fifo.committed();
                (0, packets, bytes)
            }
            queue => queue.aqm_domain(class),
        }
    }

    /// The whole buffer as an arrival finds it: packets and bytes waiting
    /// (see [`Port::occupancy`]).
    #[inline]
    pub fn found(&self) -> Found {
        let (packets, bytes) = match &self.queue {
            Queue::Droptail(fifo) if self.scheduled() => fifo.committed(),
            queue => (queue.packets(), queue.bytes()),
        };
        Found { packets, bytes }
    }

    /// The whole buffer at `now`: packets and bytes not yet started. On a
    /// scheduled FIFO [`Port::found`] still counts the committed packets
    /// that started since the last arrival (the next one retires them), so
    /// a switch agent's arrival hook, which runs before that, reads this.
    pub fn queued_at(&self, now: Time) -> Found {
        match &self.queue {
            Queue::Droptail(fifo) if self.scheduled() => {
                let (packets, bytes) = fifo.unstarted_after(now);
                Found { packets, bytes }
            }
            _ => self.found(),
        }
    }

    /// Whether packets start serializing on arrival ([`Service::Scheduled`]).
    #[inline(always)]
    pub fn scheduled(&self) -> bool {
        self.service == Service::Scheduled
    }

    /// Whether nothing can hold the port's classes ([`Service::Free`]).
    #[inline(always)]
    pub fn free(&self) -> bool {
        self.service == Service::Free
    }

    /// Make the port scheduled (when `on`: a FIFO port that nothing
    /// observes, pauses or shapes, `Simulation::schedule_ports`) or
    /// event-driven.
    pub fn schedule(&mut self, on: bool) {
        self.service = if on {
            debug_assert!(!self.shaped && self.pause_latest == Time::ZERO);
            Service::Scheduled
        } else if self.shaped || self.pause.frames_received > 0 {
            Service::Holding
        } else {
            Service::Free
        };
    }

    /// A stage that holds classes (a shaper) runs here: the port is
    /// event-driven.
    pub fn shape(&mut self) {
        self.shaped = true;
        self.service = Service::Holding;
    }

    /// Whether a shaper stage runs here (see [`Port::shape`]); asked
    /// through the first line, so that a free port never reads `shaped`.
    #[inline(always)]
    pub fn shaped(&self) -> bool {
        !self.free() && self.shaped
    }

    /// A PAUSE naming `classes` arrived at `now`, pausing them until `until`
    /// ([`Paused::receive`]).
    pub fn receive_pause(&mut self, now: Time, classes: u8, until: Time) {
        debug_assert!(!self.scheduled(), "a paused port is event-driven");
        self.pause_latest = self.pause.receive(now, classes, until);
        self.service = Service::Holding;
    }

    /// Whether a class that is neither paused nor held at `now` may bypass
    /// the idle, empty port with nothing checked (every class may).
    #[inline(always)]
    pub fn holds_nothing(&self, now: Time) -> bool {
        self.free() || self.pause_latest <= now && !self.shaped
    }

    /// The classes a shaper stage holds at `now` (bit c for class c).
    #[inline]
    pub fn held(&self, now: Time) -> u8 {
        if self.shaped() {
            self.stages.held(now)
        } else {
            0
        }
    }

    /// Whether the queue is empty (see [`Port::occupancy`]).
    #[inline(always)]
    pub fn queue_empty(&self) -> bool {
        match &self.queue {
            Queue::Droptail(fifo) if self.scheduled() => fifo.committed().0 == 0,
            queue => queue.is_empty(),
        }
    }

    /// Drop every packet offered in `[start, stop)`.
    pub fn add_outage(&mut self, start: Time, stop: Time) {
        self.outages.push((start, stop));
        self.guarded = true;
        if self.stamps == Stamps::Alone {
            self.stamps = Stamps::Stages;
        }
    }

    /// A stage of this port rewrites packets on enqueue; `bof`: it is
    /// BOTCP's buffer-occupancy stamp (`max_occupancy`), which the port
    /// runs itself while it is the port's only guard ([`Stamps::Alone`]).
    pub fn add_stamps(&mut self, bof: bool) {
        self.guarded = true;
        self.stamps = if self.stamps == Stamps::None && bof && self.outages.is_empty() {
            Stamps::Alone
        } else {
            Stamps::Stages
        };
    }

    /// Whether a stage of this port rewrites packets on enqueue.
    pub fn stamps(&self) -> bool {
        self.stamps != Stamps::None
    }

    /// Whether BOTCP's stamp is the port's only guard ([`Stamps::Alone`]).
    #[inline(always)]
    pub fn stamp_alone(&self) -> bool {
        self.stamps == Stamps::Alone
    }

    /// Whether an arrival must pass an outage window or an on-enqueue stage
    /// ([`Port::is_down`], [`Port::stamps`]).
    #[inline(always)]
    pub fn guarded(&self) -> bool {
        self.guarded
    }

    /// Record what this port sends in capture `c`.
    pub fn add_capture(&mut self, c: u32) {
        self.pcap.push(c);
        self.captured = true;
    }

    /// The captures recording what this port sends.
    pub fn captures(&self) -> &[u32] {
        &self.pcap
    }

    /// Whether any capture records what this port sends.
    #[inline]
    pub fn captured(&self) -> bool {
        self.captured
    }

    /// The classes paused at `now` (bit c for class c).
    #[inline]
    pub fn paused(&self, now: Time) -> u8 {
        if self.free() || self.pause_latest <= now {
            return 0;
        }
        let mut mask = 0;
        for (c, &until) in self.pause.until.iter().enumerate() {
            if until > now {
                mask |= 1 << c;
            }
        }
        mask
    }

    /// Record the queue's depth if it is the deepest yet.
    #[inline]
    pub fn note_depth(&mut self) {
        self.note_depth_of(self.queue.packets(), self.queue.bytes());
    }

    /// Record a depth of `packets` packets and `bytes` bytes if it is the
    /// deepest yet (one the queue has, or will have when a packet that
    /// joined it ahead arrives).
    #[inline]
    pub fn note_depth_of(&mut self, packets: u64, bytes: u64) {
        self.max_packets = self.max_packets.max(packets);
        self.max_bytes = self.max_bytes.max(bytes);
    }

    /// Time to serialize `bytes` onto this port's link.
    #[inline]
    pub fn serialization(&self, bytes: u32) -> Time {
        if self.ps_per_byte != 0 {
            Time(u64::from(self.ps_per_byte) * u64::from(bytes))
        } else {
            self.rate.serialization(u64::from(bytes))
        }
    }
}

pub struct Network {
    pub ports: Vec<Port>,
    /// Ports of node `n`: `node_ports[n]..node_ports[n + 1]`.
    node_ports: Vec<u32>,
    /// Host index of each node (`u32::MAX` for switches).
    pub node_host: Vec<u32>,
    /// Tier of each node (0 for hosts).
    pub tier: Vec<u32>,
    pub top_tier: u32,
    /// The traffic classes equal-length routing applies to, one bit each
    /// (`forwarding.elr_classes`; all by default).
    pub elr_classes: u8,
    /// The NIC port of host `h`.
    pub host_port: Vec<u32>,
    /// The node id of each host (dense, so the hot path reads no port for it).
    host_nodes: Vec<u32>,
    /// Equal-cost next hops of (node, destination host).
    routes: Routes,
    /// Ports of each switch towards a higher tier (equal-length routing).
    up_off: Vec<u32>,
    up_ports: Vec<u32>,
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
            ports.push(Port {
                node: node as u32,
                peer: peer as u32,
                rate: l.rate,
                arrive_after,
                ps_per_byte: l
                    .rate
                    .exact_ps_per_byte()
                    .and_then(|ps| u32::try_from(ps).ok())
                    .unwrap_or(0),
                reverse: num.reverse[i],
                queue: Queue::new(queue, &ctx),
                buffer: queue.capacity,
                aqm: Aqms::None,
                pause: Box::default(),
                pause_latest: Time::ZERO,
                service: Service::Free,
                control: VecDeque::new(),
                guarded: false,
                outages: Vec::new(),
                captured: false,
                pcap: Vec::new(),
                stamps: Stamps::None,
                shaped: false,
                stages: Stages::default(),
                busy_until: Time::ZERO,
                wake_at: None,
                trace: None,
                drops: 0,
                sent_packets: 0,
                sent_bytes: 0,
                max_packets: 0,
                max_bytes: 0,
            });
        }
        let tier: Vec<u32> = topo.nodes.iter().map(|nd| nd.tier.unwrap_or(1)).collect();
        let top_tier = tier.iter().copied().max().unwrap_or(0);
        let routes = Routes::build(&num, topo, &numbered);
        let mut net = Network {
            ports,
            host_nodes: topo.hosts.iter().map(|&h| h as u32).collect(),
            node_ports: num.node_ports,
            node_host: num.node_host,
            tier,
            top_tier,
            elr_classes: u8::MAX,
            host_port: num.host_port,
            routes,
            up_off: Vec::new(),
            up_ports: Vec::new(),
        };
        net.build_up_ports();
        net
    }

    pub fn ports_of(&self, node: u32) -> std::ops::Range<u32> {
        self.node_ports[node as usize]..self.node_ports[node as usize + 1]
    }

    pub fn is_host(&self, node: u32) -> bool {
        self.node_host[node as usize] != u32::MAX
    }

    fn build_up_ports(&mut self) {
        for node in 0..self.node_host.len() as u32 {
            self.up_off.push(self.up_ports.len() as u32);
            for p in self.ports_of(node) {
                let peer = self.ports[p as usize].peer;
                if !self.is_host(node) && self.tier[peer as usize] > self.tier[node as usize] {
                    self.up_ports.push(p);
                }
            }
        }
        self.up_off.push(self.up_ports.len() as u32);
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

    /// Ports of `node` towards a higher tier.
    #[inline]
    pub fn up_ports(&self, node: u32) -> &[u32] {
        let i = node as usize;
        &self.up_ports[self.up_off[i] as usize..self.up_off[i + 1] as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::DropTail;
    use crate::scenario::Scenario;
    use std::mem::{offset_of, size_of};

    /// The layout the hot path and [`Port::prefetch`] rely on: what
    /// serializing and the AQM touch in the first line, a scheduled FIFO's
    /// queue fields in the second.
    #[test]
    fn an_arrival_reads_the_first_two_lines_of_a_port() {
        let sc = Scenario::from_toml_str(
            "[topology]\nkind = \"fat_tree\"\nk = 4\nlink = { rate = \"10Gbps\", delay = \"1us\" }\n\
             [network]\nqueue = { capacity = \"100pkt\", aqm = { kind = \"threshold\", k = \"65pkt\" } }\n",
        )
        .unwrap();
        let net = Network::build(&sc.topology, &sc.network);
        let pt = &net.ports[0];
        assert_eq!(std::mem::align_of::<Port>(), 64);
        let end = |offset: usize, size: usize| offset + size;
        assert!(end(offset_of!(Port, aqm), size_of::<Aqms>()) <= 64);
        assert!(end(offset_of!(Port, captured), 1) <= 64);
        assert_eq!(offset_of!(Port, queue), 64);
        let Queue::Droptail(fifo) = &pt.queue else {
            panic!("a FIFO port")
        };
        let fifo_at = std::ptr::from_ref(fifo) as usize - std::ptr::from_ref(pt) as usize;
        assert!(end(fifo_at, DropTail::HOT_END) <= Port::HOT_BYTES);
        assert_eq!(Port::HOT_BYTES, 128);
    }
}
