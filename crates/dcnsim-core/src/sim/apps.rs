//! What sends at the hosts: probe packets and datagram streams (sent as
//! datagrams that carry their own size as pFabric priority: a one-packet
//! flow), listed TCP flows, and the applications (`crate::app`): their
//! instances, the timers they set, the flows and datagrams they send, the
//! callbacks that reach them and the operation rows they write.

use super::hosts::NewFlow;
use super::{app_rng, rng_for, Simulation, RNG_STREAM};
use crate::app::{Application, Context, Datagram, Delivered, Op, OpenFlow, Origin, KEYS};
use crate::engine::Event;
use crate::packet::{Kind, Packet, NONE};
use crate::scenario::Scenario;
use crate::tcp::Outcome;
use crate::traffic::{datagram_hash, Stream, APP_PORT, PROBE_PORT};
use crate::units::Time;

/// The applications of a run: their instances, pending timers and the rows
/// they wrote.
#[derive(Default)]
pub(super) struct Apps {
    slots: Vec<Slot>,
    /// Pending timers by [`Event::AppTimer`] index: the application and the
    /// token it set; indices of timers that fired, for reuse.
    timers: Vec<(u32, u64)>,
    free_timers: Vec<u32>,
    /// Rows of `ops.parquet`: the application's place and its row.
    pub ops: Vec<(u32, Op)>,
}

/// One application instance: itself (taken out while it is called back),
/// its kind's name and its index among the instances of its kind.
struct Slot {
    app: Option<Box<dyn Application>>,
    name: String,
    instance: u32,
}

impl Apps {
    pub fn len(&self) -> u32 {
        self.slots.len() as u32
    }

    /// The name and instance index of application `app`.
    pub fn label(&self, app: u32) -> (&str, u32) {
        let s = &self.slots[app as usize];
        (&s.name, s.instance)
    }
}

/// An application's view of the simulation during one of its callbacks.
struct Cx<'a> {
    sim: &'a mut Simulation,
    app: u32,
}

impl Context for Cx<'_> {
    fn now(&self) -> Time {
        self.sim.now()
    }

    fn hosts(&self) -> u32 {
        self.sim.net.host_port.len() as u32
    }

    fn open_flow(&mut self, f: OpenFlow) -> u32 {
        let hosts = self.hosts();
        assert!(
            f.src < hosts && f.dst < hosts && f.src != f.dst && f.size > 0,
            "open_flow: {} B from host {} to host {} (hosts 0..{hosts})",
            f.size,
            f.src,
            f.dst
        );
        let id = self.sim.open_flow(NewFlow {
            src: f.src,
            dst: f.dst,
            size: f.size,
            start: self.sim.now(),
            deadline: f.deadline,
            class: f.class,
            protocol: f.protocol,
            origin: Origin {
                app: self.app,
                op: f.op.unwrap_or(Origin::LISTED.op),
            },
        });
        if f.keep_open {
            let slot = self.sim.slot_of(id);
            self.sim.hosts.flows[slot as usize].conn.keep_open();
        }
        id
    }

    fn append(&mut self, flow: u32, bytes: u64, close: bool) {
        let slot = self.sim.slot_of(flow);
        self.sim
            .drive(slot, |conn, now, segs| conn.append(now, bytes, close, segs));
    }

    fn flow(&self, flow: u32) -> Outcome {
        self.sim.outcome(flow)
    }

    fn send_datagram(&mut self, d: Datagram) {
        let now = self.sim.now();
        let hash = datagram_hash(d.src, d.dst, self.app, APP_PORT);
        let mut pkt = self.sim.datagram(d.src, d.dst, d.size, d.class, hash, now);
        pkt.kind = Kind::AppDatagram;
        pkt.flow = self.app;
        pkt.record = d.tag;
        self.sim.send(pkt, true);
    }

    fn set_timer(&mut self, at: Time, token: u64) {
        let apps = &mut self.sim.apps;
        let i = match apps.free_timers.pop() {
            Some(i) => {
                apps.timers[i as usize] = (self.app, token);
                i
            }
            None => {
                apps.timers.push((self.app, token));
                apps.timers.len() as u32 - 1
            }
        };
        self.sim.events.schedule(at, Event::AppTimer(i));
    }

    fn write_op(&mut self, op: Op) {
        self.sim.apps.ops.push((self.app, op));
    }
}

impl Simulation {
    /// A datagram from host `src` to host `dst`.
    fn datagram(&self, src: u32, dst: u32, size: u32, class: u8, hash: u64, sent: Time) -> Packet {
        let mut pkt = Packet::new(
            Kind::Datagram,
            self.net.host_node(src),
            self.net.host_node(dst),
            size,
            hash,
            sent,
        );
        pkt.class = class;
        pkt.prio = u64::from(size);
        pkt
    }

    pub(super) fn probe_send(&mut self, row: u32) {
        let p = self.rec.probes.to_send(row);
        let hash = datagram_hash(p.src, p.dst, row, PROBE_PORT);
        let mut pkt = self.datagram(p.src, p.dst, p.size, p.class, hash, p.sent);
        pkt.record = row;
        self.app_send(pkt);
    }

    pub(super) fn stream_send(&mut self, id: u32, hosts: u32) {
        let s = &mut self.streams[id as usize];
        let sent = s.next;
        let (dst, hash) = s.destination(id, hosts);
        let (src, size, class, record) = (s.spec.src, s.spec.size, s.spec.class, s.spec.record);
        if s.advance() {
            let next = s.next;
            self.events
                .schedule(next + self.send_delay, Event::StreamSend(id));
        }
        let mut pkt = self.datagram(src, dst, size, class, hash, sent);
        pkt.flow = id;
        if record {
            pkt.record = self.rec.probes.push(id, src, dst, size, class, sent);
        }
        self.app_send(pkt);
    }

    /// Probes, streams, listed flows, and the scenario's applications, each
    /// started as it is added.
    pub(super) fn start_applications(&mut self, sc: &Scenario) {
        let hosts = sc.topology.host_count() as u32;
        for p in &sc.traffic.probes {
            let dsts: Vec<u32> = match p.dst.host() {
                Some(d) => vec![d],
                None => (0..hosts).filter(|&d| d != p.src).collect(),
            };
            let interval = p.interval.unwrap_or(Time::ZERO);
            for (i, d) in dsts.into_iter().enumerate() {
                let sent = Time(p.time.0 + interval.0 * i as u64);
                let row = self
                    .rec
                    .probes
                    .push(NONE, p.src, d, p.size.0 as u32, p.class, sent);
                self.events
                    .schedule(sent + self.send_delay, Event::ProbeSend(row));
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
                self.events
                    .schedule(first + self.send_delay, Event::StreamSend(i as u32));
            }
            self.streams.push(s);
        }
        for f in &sc.traffic.flows {
            self.open_flow(NewFlow {
                src: f.src,
                dst: f.dst,
                size: f.size.0,
                start: f.start,
                deadline: f.deadline,
                class: f.class,
                protocol: f.protocol,
                origin: Origin::LISTED,
            });
        }
        let mut instances = [0u32; KEYS.len()];
        for spec in &sc.traffic.apps {
            let kind = spec.kind();
            let instance = instances[kind];
            instances[kind] += 1;
            let rng = app_rng(sc.seed, kind, instance);
            self.add_app(spec.name().to_string(), instance, spec.build(rng));
        }
    }

    /// Add application `app` (instance `instance` of kind `name`) and start it.
    pub(super) fn add_app(&mut self, name: String, instance: u32, app: Box<dyn Application>) {
        self.apps.slots.push(Slot {
            app: Some(app),
            name,
            instance,
        });
        let a = self.apps.slots.len() as u32 - 1;
        self.call_app(a, |app, cx| app.start(cx));
    }

    /// Run `call` on application `app` with its context.
    fn call_app(&mut self, app: u32, call: impl FnOnce(&mut dyn Application, &mut dyn Context)) {
        let mut a = self.apps.slots[app as usize]
            .app
            .take()
            .expect("an application's callbacks do not nest");
        call(&mut *a, &mut Cx { sim: self, app });
        self.apps.slots[app as usize].app = Some(a);
    }

    /// Timer `i` of an application has come.
    pub(super) fn app_timer(&mut self, i: u32) {
        let (app, token) = self.apps.timers[i as usize];
        self.apps.free_timers.push(i);
        self.call_app(app, |a, cx| a.on_timer(cx, token));
    }

    /// Flow `id`'s receiver has all the data handed to it so far.
    pub(super) fn flow_completed(&mut self, id: u32) {
        if let Some(app) = self.hosts.records[id as usize].origin.app() {
            self.call_app(app, |a, cx| a.on_flow_done(cx, id));
        }
    }

    /// An application's datagram reached its destination host.
    #[cold]
    pub(super) fn app_datagram(&mut self, pkt: &Packet) {
        let host = |node: u32| self.net.node_host[node as usize];
        let d = Delivered {
            datagram: Datagram {
                src: host(pkt.src),
                dst: host(pkt.dst),
                size: pkt.size,
                class: pkt.class,
                tag: pkt.record,
            },
            sent: pkt.sent,
            hops: pkt.hops,
        };
        self.call_app(pkt.flow, |a, cx| a.on_datagram(cx, &d));
    }
}
