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
//! next packet at that moment.

use crate::engine::{Event, EventQueue};
use crate::forwarding::{mix, pair_hash, pick_hashed, pick_random, Policy};
use crate::network::Network;
use crate::packet::{Arena, Packet, NONE};
use crate::queue::Queued;
use crate::records::{Column, Output, Summary, Table};
use crate::scenario::Scenario;
use crate::traffic::{datagram_hash, Stream, PROBE_PORT};
use crate::units::Time;
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;
use std::time::Instant;

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
        sim
    }

    /// Run to completion (or `stop_time`). `hook` is called about every quarter
    /// second of wall time; returning `false` aborts the run.
    pub fn run(mut self, hook: &mut dyn FnMut(&Progress) -> bool) -> Result<Output, Aborted> {
        let started = Instant::now();
        let mut last_report = 0.0;
        let mut stopped = false;
        let hosts = self.net.host_port.len() as u32;
        while let Some((t, ev)) = self.events.pop() {
            if self.stop.is_some_and(|s| t > s) {
                stopped = true;
                break;
            }
            self.n.events += 1;
            match ev {
                Event::Arrive(p) => self.arrive(p),
                Event::PortFree(port) => self.port_free(port),
                Event::Deliver(p) => self.deliver(p),
                Event::StreamSend(s) => self.stream_send(s, hosts),
                Event::ProbeSend(row) => self.probe_send(row),
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
            _ => self.events.now(),
        };
        Ok(self.finish(started.elapsed().as_secs_f64(), end, stopped))
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
        self.inject(Packet {
            src,
            dst,
            size: self.probes.size[r] as u32,
            flow: NONE,
            record: row,
            next_node: 0,
            hops: 0,
            climbed: false,
            hash,
            sent: self.probes.sent[r],
        });
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
        self.inject(Packet {
            src,
            dst,
            size,
            flow: id,
            record,
            next_node: 0,
            hops: 0,
            climbed: false,
            hash,
            sent,
        });
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
        let size = self.arena.get(p).size;
        let pt = &mut self.net.ports[port as usize];
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
        self.events.schedule(at, Event::Arrive(p));
    }

    fn drop_packet(&mut self, p: u32) {
        self.n.dropped += 1;
        let pkt = *self.arena.get(p);
        if pkt.flow != NONE {
            self.streams[pkt.flow as usize].dropped += 1;
        }
        self.arena.release(p);
    }

    fn deliver(&mut self, p: u32) {
        self.n.delivered += 1;
        let now = self.now();
        let pkt = *self.arena.get(p);
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
            flows: flow_table(&self.streams),
            probes: probe_table(self.probes),
            queues: queue_table(self.queues, &self.traced_ports),
            ports: port_table(&self.net, &self.port_names),
        }
    }
}

fn secs(t: Time) -> f64 {
    t.as_secs_f64()
}

fn flow_table(streams: &[Stream]) -> Table {
    let col_f = |f: &dyn Fn(&Stream) -> f64| Column::F64(streams.iter().map(f).collect());
    let col_i = |f: &dyn Fn(&Stream) -> i64| Column::I64(streams.iter().map(f).collect());
    let mut t = Table::default();
    t.push("flow_id", Column::I64((0..streams.len() as i64).collect()));
    t.push(
        "kind",
        Column::Str(vec!["stream".to_string(); streams.len()]),
    );
    t.push("src", col_i(&|s| s.spec.src.into()));
    t.push("dst", col_i(&|s| s.spec.dst.map_or(-1, i64::from)));
    t.push(
        "size_bytes",
        col_i(&|s| (s.sent * u64::from(s.spec.size)) as i64),
    );
    t.push("start_s", col_f(&|s| secs(s.spec.start)));
    t.push("end_s", col_f(&|s| secs(s.spec.stop)));
    t.push("fct_s", col_f(&|_| f64::NAN));
    t.push("packets_sent", col_i(&|s| s.sent as i64));
    t.push("packets_delivered", col_i(&|s| s.delivered as i64));
    t.push("packets_dropped", col_i(&|s| s.dropped as i64));
    t.push("bytes_delivered", col_i(&|s| s.bytes_delivered as i64));
    t.push(
        "mean_latency_s",
        col_f(&|s| match s.delivered {
            0 => f64::NAN,
            n => s.latency_sum_ps as f64 / n as f64 / Time::PS_PER_S as f64,
        }),
    );
    t
}

fn probe_table(rows: ProbeRows) -> Table {
    let n = rows.sent.len();
    let received: Vec<f64> = rows
        .received
        .iter()
        .map(|r| r.map_or(f64::NAN, secs))
        .collect();
    let latency: Vec<f64> = rows
        .received
        .iter()
        .zip(&rows.sent)
        .map(|(r, &s)| r.map_or(f64::NAN, |r| secs(r - s)))
        .collect();
    let mut t = Table::default();
    t.push("probe_id", Column::I64((0..n as i64).collect()));
    t.push("flow_id", Column::I64(rows.flow));
    t.push("src", Column::I64(rows.src));
    t.push("dst", Column::I64(rows.dst));
    t.push("size_bytes", Column::I64(rows.size));
    t.push(
        "sent_s",
        Column::F64(rows.sent.iter().map(|&s| secs(s)).collect()),
    );
    t.push("received_s", Column::F64(received));
    t.push("latency_s", Column::F64(latency));
    t.push("hops", Column::I64(rows.hops));
    t
}

fn port_table(net: &Network, names: &[String]) -> Table {
    let ports = &net.ports;
    let col = |f: &dyn Fn(&crate::network::Port) -> u64| {
        Column::I64(ports.iter().map(|p| f(p) as i64).collect())
    };
    let mut t = Table::default();
    t.push("port", Column::Str(names.to_vec()));
    t.push("rate_bps", col(&|p| p.rate.0));
    t.push("packets_sent", col(&|p| p.sent_packets));
    t.push("bytes_sent", col(&|p| p.sent_bytes));
    t.push("packets_dropped", col(&|p| p.drops));
    t.push("max_queue_packets", col(&|p| p.max_packets));
    t.push("max_queue_bytes", col(&|p| p.max_bytes));
    t
}

fn queue_table(rows: QueueRows, names: &[String]) -> Table {
    let mut t = Table::default();
    t.push("time_s", Column::F64(rows.time));
    t.push(
        "port",
        Column::Str(
            rows.port
                .iter()
                .map(|&i| names[i as usize].clone())
                .collect(),
        ),
    );
    t.push("packets", Column::I64(rows.packets));
    t.push("bytes", Column::I64(rows.bytes));
    t
}
