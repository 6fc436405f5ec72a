//! Applications: probe packets and datagram streams (sent as datagrams that
//! carry their own size as pFabric priority: a one-packet flow), and what
//! opens TCP flows: listed flows, Poisson workload arrivals, incast rounds.

use super::hosts::NewFlow;
use super::{rng_for, Simulation, RNG_STREAM, RNG_WORKLOAD};
use crate::apps::{Incast, Origin, WorkloadSource};
use crate::engine::Event;
use crate::packet::{Kind, Packet, NONE};
use crate::scenario::Scenario;
use crate::traffic::{datagram_hash, Stream, PROBE_PORT};
use crate::units::Time;

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
        let p = self.probes.to_send(row);
        let hash = datagram_hash(p.src, p.dst, row, PROBE_PORT);
        let mut pkt = self.datagram(p.src, p.dst, p.size, p.class, hash, p.sent);
        pkt.record = row;
        self.inject(pkt);
    }

    pub(super) fn stream_send(&mut self, id: u32, hosts: u32) {
        let s = &mut self.streams[id as usize];
        let sent = s.next;
        let (dst, hash) = s.destination(id, hosts);
        let (src, size, class, record) = (s.spec.src, s.spec.size, s.spec.class, s.spec.record);
        if s.advance() {
            let next = s.next;
            self.events
                .schedule(next + self.host_delay, Event::StreamSend(id));
        }
        let mut pkt = self.datagram(src, dst, size, class, hash, sent);
        pkt.flow = id;
        if record {
            pkt.record = self.probes.push(id, src, dst, size, class, sent);
        }
        self.inject(pkt);
    }

    /// Listed flows, workload sources and incast applications.
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
                    .probes
                    .push(NONE, p.src, d, p.size.0 as u32, p.class, sent);
                self.events
                    .schedule(sent + self.host_delay, Event::ProbeSend(row));
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
                    .schedule(first + self.host_delay, Event::StreamSend(i as u32));
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
                origin: Origin::Listed,
            });
        }
        for (i, w) in sc.traffic.workloads.iter().enumerate() {
            let src = WorkloadSource::new(w.clone(), rng_for(sc.seed, RNG_WORKLOAD, i as u64));
            if src.next < w.stop {
                self.events.schedule(src.next, Event::FlowArrival(i as u32));
            }
            self.workloads.push(src);
        }
        for (i, c) in sc.traffic.incast.iter().enumerate() {
            self.events.schedule(c.start, Event::RoundStart(i as u32));
            self.incasts.push(Incast {
                spec: c.clone(),
                round: 0,
                round_start: c.start,
                pending: 0,
                flows: Vec::new(),
                timeouts_before: 0,
            });
        }
    }

    pub(super) fn flow_arrival(&mut self, w: u32, hosts: u32) {
        let now = self.now();
        let src = &mut self.workloads[w as usize];
        let (draw, more) = src.arrive(hosts);
        let spec = &src.spec;
        let flow = NewFlow {
            src: spec.src,
            dst: draw.dst,
            size: draw.size,
            start: now,
            deadline: spec.deadline.map(|d| now + d),
            class: spec.class,
            protocol: spec.protocol,
            origin: Origin::Workload(w),
        };
        if more {
            let next = src.next;
            self.events.schedule(next, Event::FlowArrival(w));
        }
        self.open_flow(flow);
    }

    /// Every worker of incast application `a` starts its response now: on
    /// its persistent connection (opened in the first round) or a new one.
    pub(super) fn round_start(&mut self, a: u32) {
        let now = self.now();
        let app = &mut self.incasts[a as usize];
        app.round_start = now;
        app.pending = app.spec.workers.len() as u32;
        let spec = app.spec.clone();
        let (round, reuse) = (app.round, spec.persistent && app.round > 0);
        let last = round + 1 == spec.rounds;
        if reuse {
            let flows = app.flows.clone();
            self.incasts[a as usize].timeouts_before = self.incast_timeouts(a);
            for id in flows {
                self.drive(self.slot_of(id), |conn, now, segs| {
                    conn.append(now, spec.bytes_per_worker, last, segs)
                });
            }
            return;
        }
        let mut flows = Vec::with_capacity(spec.workers.len());
        for &w in &spec.workers {
            let id = self.open_flow(NewFlow {
                src: w,
                dst: spec.aggregator,
                size: spec.bytes_per_worker,
                start: now,
                deadline: spec.deadline.map(|d| now + d),
                class: spec.class,
                protocol: spec.protocol,
                origin: Origin::Incast { app: a, round },
            });
            if spec.persistent && !last {
                let slot = self.slot_of(id);
                self.flows[slot as usize].conn.keep_open();
            }
            flows.push(id);
        }
        let app = &mut self.incasts[a as usize];
        app.flows = flows;
        app.timeouts_before = 0;
    }

    /// Timeouts so far of the current round's connections of incast `a`
    /// (on persistent connections, of every round so far).
    fn incast_timeouts(&self, a: u32) -> u64 {
        let flows = &self.incasts[a as usize].flows;
        flows.iter().map(|&f| self.outcome(f).stats.timeouts).sum()
    }

    /// Flow `id`'s receiver has all its data.
    pub(super) fn flow_completed(&mut self, id: u32) {
        let Origin::Incast { app, .. } = self.records[id as usize].origin else {
            return;
        };
        let now = self.now();
        let inc = &mut self.incasts[app as usize];
        inc.pending -= 1;
        if inc.pending > 0 {
            return;
        }
        let timeouts = self.incast_timeouts(app) - self.incasts[app as usize].timeouts_before;
        let inc = &mut self.incasts[app as usize];
        let n = inc.spec.workers.len() as u32;
        let r = &mut self.rounds;
        r.app.push(app.into());
        r.round.push(inc.round.into());
        r.start.push(inc.round_start.as_secs_f64());
        r.end.push(now.as_secs_f64());
        r.bytes
            .push((inc.spec.bytes_per_worker * u64::from(n)) as i64);
        r.flows.push(n.into());
        r.timeouts.push(timeouts as i64);
        inc.round += 1;
        if inc.round < inc.spec.rounds {
            self.round_start(app);
        }
    }
}
