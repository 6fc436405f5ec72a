//! The simulation: one deterministic event loop over the network.
//!
//! A packet's life: the application sends it at `sent`; after the host
//! processing delay it joins its NIC's queue. A port serializes one packet at a
//! time; the packet reaches the far end after serialization plus propagation
//! delay (store-and-forward: nothing is forwarded before its last bit arrives).
//! A switch adds its latency, picks an egress port by the forwarding policy and
//! offers the packet to that port's queue discipline, which may drop it. At the
//! destination host it is delivered after the host processing delay.
//!
//! Ports wake up only when they have a queue: a packet that finds its port idle
//! starts serializing at once, and a port with waiting packets schedules one
//! [`Event::PortFree`] for when the wire frees. The queue discipline chooses the
//! next packet at that moment. Before that, the port's AQM (if any) may mark
//! the packet CE or drop it, and a port in an outage drops everything.
//!
//! TCP flows and the applications that open them are wired in `flows.rs`;
//! packet captures in `capture.rs`; the output tables in `tables.rs`.

mod capture;
mod flows;
mod tables;

use crate::apps::{Incast, RoundRows, WorkloadSource};
use crate::engine::{Event, EventQueue};
use crate::forwarding::{mix, pair_hash, pick_hashed, pick_random, Policy};
use crate::network::Network;
use crate::packet::{Arena, Packet, Proto, CE, NONE, NOT_ECT};
use crate::pcap::Capture;
use crate::queue::{idle_slots, Aqm, Occupancy, Queued, Verdict};
use crate::records::{Output, Summary};
use crate::scenario::{Scenario, TransportSpec};
use crate::tcp::Seg;
use crate::topology::NodeKind;
use crate::traffic::{datagram_hash, Stream, PROBE_PORT};
use crate::units::Time;
use flows::{Flow, FlowTraceRows, Timer};
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;
use std::time::Instant;
use tables::{flow_table, port_table, probe_table, queue_table, round_table, trace_table};

/// Snapshot passed to the progress hook.
#[derive(Clone, Debug)]
pub struct Progress {
    pub sim_time_s: f64,
    pub stop_time_s: Option<f64>,
    pub events: u64,
    pub packet_hops: u64,
    pub wall_s: f64,
    pub packet_hops_per_s: f64,
}

/// The run was stopped by its progress hook.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Aborted;

/// A value derived from the scenario seed for one component (`component`,
/// `index`): the root of every random stream and per-seed hash salt.
fn derive(seed: u64, component: u64, index: u64) -> u64 {
    mix(mix(seed) ^ (component << 40) ^ index)
}

/// Random streams: one per component, derived from the scenario seed.
fn rng_for(seed: u64, component: u64, index: u64) -> Xoshiro256PlusPlus {
    Xoshiro256PlusPlus::seed_from_u64(derive(seed, component, index))
}

const RNG_STREAM: u64 = 1;
const RNG_SWITCH: u64 = 2;
const SALT_ECMP: u64 = 3;
const RNG_AQM: u64 = 4;
const RNG_WORKLOAD: u64 = 5;

/// Rows of `probes.parquet`, filled as packets are sent and received.
#[derive(Default)]
struct ProbeRows {
    flow: Vec<i64>,
    src: Vec<i64>,
    dst: Vec<i64>,
    size: Vec<i64>,
    sent: Vec<Time>,
    received: Vec<Option<Time>>,
    hops: Vec<i64>,
}

impl ProbeRows {
    fn push(&mut self, flow: u32, src: u32, dst: u32, size: u32, sent: Time) -> u32 {
        self.flow
            .push(if flow == NONE { -1 } else { i64::from(flow) });
        self.src.push(src.into());
        self.dst.push(dst.into());
        self.size.push(size.into());
        self.sent.push(sent);
        self.received.push(None);
        self.hops.push(-1);
        (self.sent.len() - 1) as u32
    }
}

#[derive(Default)]
struct QueueRows {
    time: Vec<f64>,
    port: Vec<u32>,
    packets: Vec<i64>,
    bytes: Vec<i64>,
}

#[derive(Default)]
struct Counters {
    events: u64,
    packet_hops: u64,
    injected: u64,
    delivered: u64,
    dropped: u64,
}

pub struct Simulation {
    net: Network,
    events: EventQueue,
    arena: Arena,
    streams: Vec<Stream>,
    flows: Vec<Flow>,
    transport: TransportSpec,
    workloads: Vec<WorkloadSource>,
    incasts: Vec<Incast>,
    /// Segments a TCP connection just emitted (reused buffer).
    segs: Vec<Seg>,
    /// Flows whose host queue drained while they were held back by it.
    resume: Vec<u32>,
    traced_flows: Vec<u32>,
    flow_trace: FlowTraceRows,
    rounds: RoundRows,
    captures: Vec<Capture>,
    capture_names: Vec<String>,
    /// Capture of each host's deliveries, if the host is captured.
    host_capture: Vec<Option<u32>>,
    probes: ProbeRows,
    queues: QueueRows,
    traced_ports: Vec<String>,
    /// `"node->peer"` of every port, by port index.
    port_names: Vec<String>,
    policy: Policy,
    switch_rng: Vec<Xoshiro256PlusPlus>,
    switch_salt: Vec<u64>,
    host_delay: Time,
    stop: Option<Time>,
    n: Counters,
    name: String,
    seed: u64,
}

impl Simulation {
    pub fn new(sc: &Scenario) -> Simulation {
        let mut net = Network::build(&sc.topology, &sc.network);
        let mut traced_ports = Vec::new();
        for name in &sc.trace.queues {
            let (a, b) = sc.topology.port_by_name(name).expect("validated port name");
            let p = net
                .ports_of(a as u32)
                .find(|&p| net.ports[p as usize].peer == b as u32)
                .expect("a named port exists");
            if net.ports[p as usize].trace.is_none() {
                net.ports[p as usize].trace = Some(traced_ports.len() as u32);
                traced_ports.push(name.trim().to_string());
            }
        }
        for o in &sc.network.outages {
            let (a, b) = sc
                .topology
                .port_by_name(&o.port)
                .expect("validated port name");
            let p = net
                .port_between(a as u32, b as u32)
                .expect("a named port exists");
            net.ports[p as usize].outages.push((o.start, o.stop));
        }
        for (i, port) in net.ports.iter_mut().enumerate() {
            let spec = match sc.topology.nodes[port.node as usize].kind {
                NodeKind::Host => &sc.network.nic_queue,
                NodeKind::Switch => &sc.network.queue,
            };
            port.aqm = spec
                .aqm
                .as_ref()
                .map(|a| Aqm::new(a, rng_for(sc.seed, RNG_AQM, i as u64)));
        }
        let hosts_n = sc.topology.host_count();
        let mut host_capture = vec![None; hosts_n];
        let mut capture_names = Vec::new();
        for name in &sc.trace.pcap {
            let c = capture_names.len() as u32;
            let name = name.trim();
            capture_names.push(name.to_string());
            if let Some((a, b)) = sc.topology.port_by_name(name) {
                let p = net
                    .port_between(a as u32, b as u32)
                    .expect("a named port exists");
                net.ports[p as usize].pcap.push(c);
            } else {
                let node = sc.topology.node_id(name).expect("validated host name");
                let h = net.node_host[node] as usize;
                host_capture[h] = Some(c);
                let nic = net.host_port[h] as usize;
                net.ports[nic].pcap.push(c);
            }
        }
        let nodes = net.node_host.len() as u64;
        let mut sim = Simulation {
            switch_rng: (0..nodes)
                .map(|i| rng_for(sc.seed, RNG_SWITCH, i))
                .collect(),
            switch_salt: (0..nodes)
                .map(|i| match sc.forwarding.policy {
                    Policy::Single => mix(i),
                    _ => derive(sc.seed, SALT_ECMP, i),
                })
                .collect(),
            port_names: net
                .ports
                .iter()
                .map(|p| {
                    let name = |n: u32| sc.topology.nodes[n as usize].name.as_str();
                    format!("{}->{}", name(p.node), name(p.peer))
                })
                .collect(),
            net,
            events: EventQueue::default(),
            arena: Arena::default(),
            streams: Vec::new(),
            flows: Vec::new(),
            transport: sc.transport.clone(),
            workloads: Vec::new(),
            incasts: Vec::new(),
            segs: Vec::new(),
            resume: Vec::new(),
            traced_flows: sc.trace.flows.clone(),
            flow_trace: FlowTraceRows::default(),
            rounds: RoundRows::default(),
            captures: (0..capture_names.len()).map(|_| Capture::new()).collect(),
            capture_names,
            host_capture,
            probes: ProbeRows::default(),
            queues: QueueRows::default(),
            traced_ports,
            policy: sc.forwarding.policy,
            host_delay: sc.network.host_delay,
            stop: sc.stop_time,
            n: Counters::default(),
            name: sc.name.clone(),
            seed: sc.seed,
        };
        let hosts = sc.topology.host_count() as u32;
        for p in &sc.traffic.probes {
            let dsts: Vec<u32> = match p.dst.host() {
                Some(d) => vec![d],
                None => (0..hosts).filter(|&d| d != p.src).collect(),
            };
            let interval = p.interval.unwrap_or(Time::ZERO);
            for (i, d) in dsts.into_iter().enumerate() {
                let sent = Time(p.time.0 + interval.0 * i as u64);
                let row = sim.probes.push(NONE, p.src, d, p.size.0 as u32, sent);
                sim.events
                    .schedule(sent + sim.host_delay, Event::ProbeSend(row));
            }
        }
        for (i, spec) in sc.traffic.streams.iter().enumerate() {
            let mut s = Stream::new(
                i as u32,
                spec.clone(),
                rng_for(sc.seed, RNG_STREAM, i as u64),
            );
            let first = s.first();
            if first < s.spec.stop {
                sim.events
                    .schedule(first + sim.host_delay, Event::StreamSend(i as u32));
            }
            sim.streams.push(s);
        }
        sim.start_applications(sc);
        sim
    }

    /// Run to completion (or `stop_time`). `hook` is called about every quarter
    /// second of wall time; returning `false` aborts the run.
    pub fn run(mut self, hook: &mut dyn FnMut(&Progress) -> bool) -> Result<Output, Aborted> {
        let started = Instant::now();
        let mut last_report = 0.0;
        let mut stopped = false;
        // The last event that did something: a timer that fires after its
        // flow is done does not extend the run.
        let mut last_active = Time::ZERO;
        let hosts = self.net.host_port.len() as u32;
        while let Some((t, ev)) = self.events.pop() {
            if self.stop.is_some_and(|s| t > s) {
                stopped = true;
                break;
            }
            self.n.events += 1;
            let active = match ev {
                Event::Rto(f) => self.timer_fired(f, Timer::Rto),
                Event::DelAck(f) => self.timer_fired(f, Timer::DelAck),
                ev => {
                    self.dispatch(ev, hosts);
                    true
                }
            };
            if active {
                last_active = t;
            }
            if !self.resume.is_empty() {
                self.resume_flows();
            }
            if self.n.events & 0xffff == 0 {
                let wall = started.elapsed().as_secs_f64();
                if wall - last_report >= 0.25 {
                    last_report = wall;
                    if !hook(&self.progress(wall)) {
                        return Err(Aborted);
                    }
                }
            }
        }
        let end = match (stopped, self.stop) {
            (true, Some(s)) => s,
            _ => last_active,
        };
        Ok(self.finish(started.elapsed().as_secs_f64(), end, stopped))
    }

    /// Handle every event but the TCP timers.
    fn dispatch(&mut self, ev: Event, hosts: u32) {
        match ev {
            Event::Arrive(p) => self.arrive(p),
            Event::PortFree(port) => self.port_free(port),
            Event::Deliver(p) => self.deliver(p),
            Event::StreamSend(s) => self.stream_send(s, hosts),
            Event::ProbeSend(row) => self.probe_send(row),
            Event::HostSend(p) => {
                let src = self.arena.get(p).src;
                self.enqueue(self.net.host_port[src as usize], p);
            }
            Event::FlowStart(f) => self.flow_start(f),
            Event::FlowArrival(w) => self.flow_arrival(w, hosts),
            Event::RoundStart(a) => self.round_start(a),
            Event::Rto(_) | Event::DelAck(_) => unreachable!("timers are handled by the loop"),
        }
    }

    fn progress(&self, wall: f64) -> Progress {
        Progress {
            sim_time_s: self.events.now().as_secs_f64(),
            stop_time_s: self.stop.map(Time::as_secs_f64),
            events: self.n.events,
            packet_hops: self.n.packet_hops,
            wall_s: wall,
            packet_hops_per_s: self.n.packet_hops as f64 / wall.max(1e-9),
        }
    }

    fn now(&self) -> Time {
        self.events.now()
    }

    fn probe_send(&mut self, row: u32) {
        let r = row as usize;
        let (src, dst) = (self.probes.src[r] as u32, self.probes.dst[r] as u32);
        let hash = datagram_hash(src, dst, row, PROBE_PORT);
        let size = self.probes.size[r] as u32;
        self.inject(Packet::datagram(
            src,
            dst,
            size,
            NONE,
            row,
            hash,
            self.probes.sent[r],
        ));
    }

    fn stream_send(&mut self, id: u32, hosts: u32) {
        let s = &mut self.streams[id as usize];
        let sent = s.next;
        let (dst, hash) = s.destination(id, hosts);
        let (src, size, record) = (s.spec.src, s.spec.size, s.spec.record);
        if s.advance() {
            let next = s.next;
            self.events
                .schedule(next + self.host_delay, Event::StreamSend(id));
        }
        let record = if record {
            self.probes.push(id, src, dst, size, sent)
        } else {
            NONE
        };
        self.inject(Packet::datagram(src, dst, size, id, record, hash, sent));
    }

    /// A packet leaves the host's processing and joins its NIC queue.
    fn inject(&mut self, pkt: Packet) {
        self.n.injected += 1;
        let port = self.net.host_port[pkt.src as usize];
        let p = self.arena.alloc(pkt);
        self.enqueue(port, p);
    }

    fn arrive(&mut self, p: u32) {
        self.n.packet_hops += 1;
        let pkt = self.arena.get_mut(p);
        pkt.hops += 1;
        let node = pkt.next_node;
        if self.net.is_host(node) {
            debug_assert_eq!(self.net.node_host[node as usize], pkt.dst);
            if self.host_delay == Time::ZERO {
                self.deliver(p);
            } else {
                let at = self.now() + self.host_delay;
                self.events.schedule(at, Event::Deliver(p));
            }
            return;
        }
        let port = self.forward(node, p);
        self.enqueue(port, p);
    }

    /// The forwarding policy picks the egress port of switch `node`.
    #[inline]
    fn forward(&mut self, node: u32, p: u32) -> u32 {
        let net = &self.net;
        let pkt = self.arena.get_mut(p);
        let salt = self.switch_salt[node as usize];
        let mut hops = net.next_hops(node, pkt.dst);
        let hash = match self.policy {
            Policy::Single => pair_hash(pkt.src, pkt.dst),
            Policy::Ecmp => pkt.hash,
            Policy::Rps => {
                let i = pick_random(&mut self.switch_rng[node as usize], hops.len());
                return hops[i];
            }
            Policy::Elr => {
                if net.tier[node as usize] >= net.top_tier {
                    pkt.climbed = true;
                }
                if !pkt.climbed {
                    hops = net.up_ports(node);
                }
                pkt.hash
            }
        };
        if hops.len() == 1 {
            return hops[0];
        }
        hops[pick_hashed(hash, salt, hops.len())]
    }

    /// Offer packet `p` to `port`: start serializing if the port is idle,
    /// otherwise queue it (or drop it) and make sure the port will wake.
    fn enqueue(&mut self, port: u32, p: u32) {
        let now = self.now();
        let pt = &mut self.net.ports[port as usize];
        if !pt.outages.is_empty() && pt.is_down(now) {
            pt.drops += 1;
            self.drop_packet(p);
            return;
        }
        let occ = pt.aqm.is_some().then(|| {
            let idle = pt.queue.is_empty() && pt.busy_until < now;
            Occupancy {
                packets: pt.queue.packets(),
                bytes: pt.queue.bytes(),
                idle_slots: if idle {
                    idle_slots(now - pt.busy_until, pt.serialization(1500))
                } else {
                    0.0
                },
            }
        });
        if let (Some(occ), Some(aqm)) = (occ, pt.aqm.as_mut()) {
            let pkt = self.arena.get_mut(p);
            match aqm.on_arrival(occ, pkt.ecn != NOT_ECT, pkt.class) {
                Verdict::Pass => {}
                Verdict::Mark => pkt.ecn = CE,
                Verdict::Drop => {
                    pt.drops += 1;
                    self.drop_packet(p);
                    return;
                }
            }
        }
        let size = self.arena.get(p).size;
        if pt.busy_until <= now && pt.queue.is_empty() {
            self.transmit(port, p);
            return;
        }
        if !pt.queue.enqueue(Queued { pkt: p, size }) {
            pt.drops += 1;
            self.drop_packet(p);
            return;
        }
        pt.max_packets = pt.max_packets.max(pt.queue.packets());
        pt.max_bytes = pt.max_bytes.max(pt.queue.bytes());
        let wake = (!pt.wake_pending).then_some(pt.busy_until.max(now));
        pt.wake_pending = true;
        self.trace_queue(port);
        if let Some(t) = wake {
            self.events.schedule(t, Event::PortFree(port));
        }
    }

    fn port_free(&mut self, port: u32) {
        let pt = &mut self.net.ports[port as usize];
        pt.wake_pending = false;
        let Some(q) = pt.queue.dequeue() else { return };
        self.trace_queue(port);
        self.transmit(port, q.pkt);
        let pt = &mut self.net.ports[port as usize];
        if !pt.queue.is_empty() {
            pt.wake_pending = true;
            let t = pt.busy_until;
            self.events.schedule(t, Event::PortFree(port));
        }
    }

    /// Serialize packet `p` onto `port`'s link, starting now.
    fn transmit(&mut self, port: u32, p: u32) {
        let now = self.now();
        let pt = &mut self.net.ports[port as usize];
        let pkt = self.arena.get_mut(p);
        let done = now + pt.serialization(pkt.size);
        pt.busy_until = done;
        pt.sent_packets += 1;
        pt.sent_bytes += u64::from(pkt.size);
        pkt.next_node = pt.peer;
        let at = done + pt.arrive_after;
        let (leaves_host, flow) = (pkt.proto == Proto::Tcp && pkt.hops == 0, pkt.flow);
        self.events.schedule(at, Event::Arrive(p));
        if leaves_host {
            self.left_host(flow, p);
        }
        if !self.net.ports[port as usize].pcap.is_empty() {
            self.capture_port(port, p);
        }
    }

    /// A TCP packet left its source host (on the wire, or dropped at the NIC).
    fn left_host(&mut self, flow: u32, p: u32) {
        let f = &mut self.flows[flow as usize];
        if self.arena.get(p).src == f.src && f.conn.left_host() {
            self.resume.push(flow);
        }
    }

    fn drop_packet(&mut self, p: u32) {
        self.n.dropped += 1;
        let pkt = *self.arena.get(p);
        if pkt.proto == Proto::Tcp && pkt.hops == 0 {
            self.left_host(pkt.flow, p);
        }
        match pkt.proto {
            Proto::Tcp => self.flows[pkt.flow as usize].drops += 1,
            Proto::Udp if pkt.flow != NONE => self.streams[pkt.flow as usize].dropped += 1,
            Proto::Udp => {}
        }
        self.arena.release(p);
    }

    fn deliver(&mut self, p: u32) {
        self.n.delivered += 1;
        let now = self.now();
        let pkt = *self.arena.get(p);
        if let Some(c) = self.host_capture[pkt.dst as usize] {
            self.capture(c, &pkt);
        }
        if pkt.proto == Proto::Tcp {
            self.arena.release(p);
            self.tcp_deliver(&pkt);
            return;
        }
        if pkt.record != NONE {
            self.probes.received[pkt.record as usize] = Some(now);
            self.probes.hops[pkt.record as usize] = i64::from(pkt.hops);
        }
        if pkt.flow != NONE {
            let s = &mut self.streams[pkt.flow as usize];
            s.delivered += 1;
            s.bytes_delivered += u64::from(pkt.size);
            s.latency_sum_ps += u128::from((now - pkt.sent).0);
        }
        self.arena.release(p);
    }

    fn trace_queue(&mut self, port: u32) {
        let pt = &self.net.ports[port as usize];
        if let Some(i) = pt.trace {
            self.queues.time.push(self.events.now().as_secs_f64());
            self.queues.port.push(i);
            self.queues.packets.push(pt.queue.packets() as i64);
            self.queues.bytes.push(pt.queue.bytes() as i64);
        }
    }

    fn finish(self, wall: f64, end: Time, stopped: bool) -> Output {
        let in_flight = self.arena.live();
        debug_assert_eq!(
            self.n.injected,
            self.n.delivered + self.n.dropped + in_flight,
            "packet conservation violated"
        );
        let summary = Summary {
            name: self.name,
            seed: self.seed,
            version: env!("CARGO_PKG_VERSION"),
            events: self.n.events,
            packet_hops: self.n.packet_hops,
            packets_injected: self.n.injected,
            packets_delivered: self.n.delivered,
            packets_dropped: self.n.dropped,
            packets_in_flight: in_flight,
            sim_time_s: end.as_secs_f64(),
            wall_s: wall,
            packet_hops_per_s: self.n.packet_hops as f64 / wall.max(1e-9),
            stopped_at_stop_time: stopped,
        };
        Output {
            summary,
            flows: flow_table(&self.streams, &self.flows),
            probes: probe_table(self.probes),
            queues: queue_table(self.queues, &self.traced_ports),
            ports: port_table(&self.net, &self.port_names),
            rounds: round_table(self.rounds),
            flow_trace: trace_table(self.flow_trace),
            pcaps: self
                .capture_names
                .into_iter()
                .zip(self.captures)
                .map(|(n, c)| (n, c.into_bytes()))
                .collect(),
        }
    }
}
