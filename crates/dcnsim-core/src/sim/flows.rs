//! TCP flows in the simulation: opening them (listed flows, workload arrivals,
//! incast rounds), turning their segments into packets, their timers, and what
//! is recorded about them.

use super::{rng_for, Simulation, RNG_WORKLOAD};
use crate::apps::{Incast, Origin, WorkloadSource};
use crate::engine::Event;
use crate::forwarding::five_tuple_hash;
use crate::packet::{Packet, Proto, CE, ECT0, NONE, NOT_ECT};
use crate::scenario::{Protocol, Scenario};
use crate::tcp::{Arrival, Conn, Seg, HEADER};
use crate::units::Time;

/// IP protocol number of TCP and the well-known port flows connect to.
const TCP: u8 = 6;
pub const TCP_PORT: u16 = 5001;

/// The ephemeral source port of flow `id`.
pub fn tcp_sport(id: u32) -> u16 {
    1024 + (id % 64_512) as u16
}

pub struct Flow {
    pub conn: Conn,
    pub src: u32,
    pub dst: u32,
    pub class: u8,
    pub origin: Origin,
    /// Five-tuple hashes of the data and ACK directions.
    hash_fwd: u64,
    hash_rev: u64,
    pub drops: u64,
    /// Completion time on an empty network (see [`Simulation::ideal_fct`]).
    pub ideal: Time,
    traced: bool,
    /// Pending timer events (the earliest scheduled, if any).
    rto_event: Option<Time>,
    delack_event: Option<Time>,
}

/// A connection's timers.
#[derive(Clone, Copy, Debug)]
pub enum Timer {
    Rto,
    DelAck,
}

/// Rows of `flow_trace.parquet`.
#[derive(Default)]
pub struct FlowTraceRows {
    pub time: Vec<f64>,
    pub flow: Vec<i64>,
    pub cwnd: Vec<f64>,
    pub ssthresh: Vec<f64>,
    pub snd_una: Vec<i64>,
    pub snd_nxt: Vec<i64>,
    pub srtt: Vec<f64>,
    pub alpha: Vec<f64>,
}

/// What opens a flow.
pub struct NewFlow {
    pub src: u32,
    pub dst: u32,
    pub size: u64,
    pub start: Time,
    pub deadline: Option<Time>,
    pub class: u8,
    pub protocol: Option<Protocol>,
    pub origin: Origin,
}

impl Simulation {
    /// Listed flows, workload sources and incast applications.
    pub(super) fn start_applications(&mut self, sc: &Scenario) {
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

    pub(super) fn open_flow(&mut self, f: NewFlow) -> u32 {
        let id = self.flows.len() as u32;
        let protocol = f.protocol.unwrap_or(self.transport.protocol);
        let conn = Conn::new(f.size, f.start, f.deadline, protocol, &self.transport);
        let sport = tcp_sport(id);
        self.flows.push(Flow {
            ideal: self.ideal_fct(f.src, f.dst, f.size),
            conn,
            src: f.src,
            dst: f.dst,
            class: f.class,
            origin: f.origin,
            hash_fwd: five_tuple_hash(f.src, f.dst, sport, TCP_PORT, TCP),
            hash_rev: five_tuple_hash(f.dst, f.src, TCP_PORT, sport, TCP),
            drops: 0,
            traced: self.traced_flows.contains(&id),
            rto_event: None,
            delack_event: None,
        });
        self.events.schedule(f.start, Event::FlowStart(id));
        id
    }

    pub(super) fn flow_start(&mut self, id: u32) {
        self.drive(id, |conn, now, segs| conn.open(now, segs));
    }

    /// Let flow `id`'s connection act (`step` gets it, the time and the
    /// segment buffer), then send what it emitted and re-arm its timers.
    fn drive<R>(&mut self, id: u32, step: impl FnOnce(&mut Conn, Time, &mut Vec<Seg>) -> R) -> R {
        let now = self.now();
        let mut segs = std::mem::take(&mut self.segs);
        let result = step(&mut self.flows[id as usize].conn, now, &mut segs);
        self.segs = segs;
        self.flush(id);
        result
    }

    /// A TCP packet reached its destination host.
    pub(super) fn tcp_deliver(&mut self, pkt: &Packet) {
        let id = pkt.flow;
        let to_receiver = pkt.src == self.flows[id as usize].src;
        let a = Arrival {
            seg: Seg {
                to_receiver,
                seq: pkt.seq,
                ack: pkt.ack,
                flags: pkt.flags,
                payload: pkt.size - HEADER,
                ect: pkt.ecn != NOT_ECT,
                ts_echo: pkt.ts_echo,
            },
            sent: pkt.sent,
            ce: pkt.ecn == CE,
        };
        let completed = self.drive(id, |conn, now, segs| {
            if to_receiver {
                conn.on_receiver_arrival(now, &a, segs)
            } else {
                conn.on_sender_arrival(now, &a, segs);
                false
            }
        });
        if completed {
            self.flow_completed(id);
        }
    }

    /// Send what flow `id` emitted, (re)arm its timers and trace it.
    fn flush(&mut self, id: u32) {
        let now = self.now();
        let mut segs = std::mem::take(&mut self.segs);
        for seg in segs.drain(..) {
            let f = &self.flows[id as usize];
            let (src, dst, hash) = if seg.to_receiver {
                (f.src, f.dst, f.hash_fwd)
            } else {
                (f.dst, f.src, f.hash_rev)
            };
            let pkt = Packet {
                src,
                dst,
                size: HEADER + seg.payload,
                flow: id,
                record: NONE,
                next_node: 0,
                hops: 0,
                climbed: false,
                proto: Proto::Tcp,
                ecn: if seg.ect { ECT0 } else { NOT_ECT },
                class: f.class,
                flags: seg.flags,
                hash,
                sent: now,
                seq: seg.seq,
                ack: seg.ack,
                ts_echo: seg.ts_echo,
            };
            self.send(pkt);
        }
        self.segs = segs;
        self.sync_timers(id);
        let f = &self.flows[id as usize];
        if f.traced {
            let c = &f.conn;
            let r = &mut self.flow_trace;
            r.time.push(now.as_secs_f64());
            r.flow.push(id.into());
            r.cwnd.push(c.win.cwnd);
            r.ssthresh.push(c.win.ssthresh);
            r.snd_una.push(c.snd_una as i64);
            r.snd_nxt.push(c.snd_nxt as i64);
            r.srtt
                .push(c.srtt.map_or(f64::NAN, |s| s / Time::PS_PER_S as f64));
            r.alpha.push(c.alpha());
        }
    }

    /// Make sure a timer event is pending for each deadline the connection
    /// has (a pending event for a later time is kept: when it fires early it
    /// finds nothing to do and re-arms).
    fn sync_timers(&mut self, id: u32) {
        let f = &mut self.flows[id as usize];
        if let Some(t) = f.conn.rto_at {
            if f.rto_event.is_none_or(|e| e > t) {
                f.rto_event = Some(t);
                self.events.schedule(t, Event::Rto(id));
            }
        }
        if let Some(t) = f.conn.delack_at {
            if f.delack_event.is_none_or(|e| e > t) {
                f.delack_event = Some(t);
                self.events.schedule(t, Event::DelAck(id));
            }
        }
    }

    /// An application hands a packet to its host: it joins the NIC queue
    /// after the host processing delay.
    fn send(&mut self, pkt: Packet) {
        self.n.injected += 1;
        let src = pkt.src;
        let p = self.arena.alloc(pkt);
        if self.host_delay == Time::ZERO {
            self.enqueue(self.net.host_port[src as usize], p);
        } else {
            let at = self.now() + self.host_delay;
            self.events.schedule(at, Event::HostSend(p));
        }
    }

    /// Let flows held back by their host queue limit send again.
    pub(super) fn resume_flows(&mut self) {
        while let Some(id) = self.resume.pop() {
            self.drive(id, |conn, now, segs| conn.resume(now, segs));
        }
    }

    /// A timer event of flow `id`: expire the timer if its deadline has come,
    /// else re-arm it. Returns whether the timer expired.
    pub(super) fn timer_fired(&mut self, id: u32, timer: Timer) -> bool {
        let now = self.now();
        let f = &mut self.flows[id as usize];
        let (pending, deadline) = match timer {
            Timer::Rto => (&mut f.rto_event, f.conn.rto_at),
            Timer::DelAck => (&mut f.delack_event, f.conn.delack_at),
        };
        if *pending == Some(now) {
            *pending = None;
        }
        if deadline.is_none_or(|t| t > now) {
            self.sync_timers(id);
            return false;
        }
        self.drive(id, |conn, now, segs| match timer {
            Timer::Rto => conn.on_rto(now, segs),
            Timer::DelAck => conn.on_delack(segs),
        });
        true
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
            app.timeouts_before = flows
                .iter()
                .map(|&f| self.flows[f as usize].conn.stats.timeouts)
                .sum();
            for id in flows {
                self.drive(id, |conn, now, segs| {
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
                self.flows[id as usize].conn.keep_open();
            }
            flows.push(id);
        }
        let app = &mut self.incasts[a as usize];
        app.flows = flows;
        app.timeouts_before = 0;
    }

    /// Flow `id`'s receiver has all its data.
    fn flow_completed(&mut self, id: u32) {
        let Origin::Incast { app, .. } = self.flows[id as usize].origin else {
            return;
        };
        let now = self.now();
        let inc = &mut self.incasts[app as usize];
        inc.pending -= 1;
        if inc.pending > 0 {
            return;
        }
        let n = inc.spec.workers.len() as u32;
        let timeouts: u64 = inc
            .flows
            .iter()
            .map(|&f| self.flows[f as usize].conn.stats.timeouts)
            .sum::<u64>()
            - inc.timeouts_before;
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

    /// The completion time of `size` bytes from `src` to `dst` on an empty
    /// network with no window limit: the handshake's round trip (when on), every
    /// packet through the slowest link of the path back to back, the first
    /// packet's store-and-forward time over the other links, and the path's
    /// propagation, switch and host delays.
    pub(super) fn ideal_fct(&self, src: u32, dst: u32, size: u64) -> Time {
        let path = self.net.path(src, dst);
        let ports = || path.iter().map(|&p| &self.net.ports[p as usize]);
        let mss = self.transport.mss.0;
        let segments = size.div_ceil(mss).max(1);
        let wire = size + segments * u64::from(HEADER);
        let first = (size.min(mss) + u64::from(HEADER)) as u32;
        let slowest = ports().min_by_key(|p| p.rate).expect("a path has a port");
        let latency: Time = ports().map(|p| p.arrive_after).sum();
        let store_forward: Time = ports().map(|p| p.serialization(first)).sum();
        let body = slowest.rate.serialization(wire);
        let one_way = |bytes: u32| -> Time {
            ports().map(|p| p.serialization(bytes)).sum::<Time>() + latency + self.host_delay * 2
        };
        let handshake = if self.transport.handshake {
            one_way(HEADER) * 2
        } else {
            Time::ZERO
        };
        handshake
            + body
            + (store_forward - slowest.serialization(first))
            + latency
            + self.host_delay * 2
    }
}
