//! The TCP host stacks: connections opened by applications, their segments
//! turned into packets (one header, [`crate::packet::TcpHeader`]), their
//! one timer event ([`Event::ConnTimer`] for [`Conn::next_deadline`]), ICMP
//! next-hop MTU messages reaching a sender, and what is recorded about each
//! flow.

use super::Simulation;
use crate::app::Origin;
use crate::cc::{Flags, Protocol};
use crate::engine::Event;
use crate::forwarding::five_tuple_hash;
use crate::packet::{Kind, Packet, CE, ECT0, NOT_ECT};
use crate::tcp::{Arrival, Conn, MakeController, Outcome, Params, Seg, TransportSpec, MIN_MSS};
use crate::units::{Rate, Time};
use std::sync::Arc;

/// The TCP host stacks, owned here: the live connections and their slots,
/// every flow's record, the shared connection parameters, and what hosts
/// hold back for their NICs.
pub(super) struct Hosts {
    /// Live TCP connections, by slot (see [`Flow`]).
    pub(super) flows: Vec<Flow>,
    /// Slots of `flows` let go, for the next flows opened.
    pub(super) free_slots: Vec<u32>,
    /// Slots whose connections may be let go when the next flow opens.
    pub(super) ending: Vec<u32>,
    /// Every TCP flow opened, by flow id.
    pub(super) records: Vec<FlowRecord>,
    pub(super) transport: TransportSpec,
    /// Segments a TCP connection just emitted (reused buffer).
    pub(super) segs: Vec<Seg>,
    /// The connection parameters of each protocol flows have used, shared
    /// by its connections.
    pub(super) params: Vec<(Protocol, Arc<Params>)>,
    /// Flows whose host queue drained while they were held back by it.
    pub(super) resume: Vec<u32>,
    /// Per host: packets it sent that wait for a [`Event::HostSend`], and
    /// whether its NIC may take TCP packets a host delay ahead, when sent
    /// (see `schedule_ports` and `Simulation::send`).
    pub(super) host_sends: Vec<u32>,
    pub(super) nic_ahead: Vec<bool>,
}

impl Hosts {
    /// The `flow_id` of the flow whose live connection is slot `slot`, if
    /// any (a slot let go, or reused by a later flow, names none of its
    /// earlier flows).
    pub(super) fn live(&self, slot: u32) -> Option<u32> {
        let id = self.flows.get(slot as usize)?.id;
        matches!(self.records[id as usize].kept, Kept::Live(s) if s == slot).then_some(id)
    }
}

/// IP protocol number of TCP and the well-known port flows connect to.
const TCP: u8 = 6;
pub const TCP_PORT: u16 = 5001;

/// The ephemeral source port of flow `id`.
pub fn tcp_sport(id: u32) -> u16 {
    1024 + (id % 64_512) as u16
}

/// What is kept of every TCP flow opened, for the flow table: one per flow
/// for the whole run, its `flow_id` its index.
pub struct FlowRecord {
    /// Source and destination hosts.
    pub src: u32,
    pub dst: u32,
    pub class: u8,
    pub origin: Origin,
    /// Completion time on an empty network (see [`Simulation::ideal_fct`]).
    pub ideal: Time,
    pub drops: u64,
    pub kept: Kept,
}

/// Where a flow's connection is.
pub enum Kept {
    /// In this slot of the live connections.
    Live(u32),
    /// Let go; what it reported.
    Ended(Outcome),
}

/// A live TCP connection: from its opening until both ends are done, no
/// packet of it is left in the network and no timer event of it is
/// pending. Its slot is then given to the next flow opened, so the memory
/// of connections follows the flows open at once, not every flow of the
/// run. Events and packets name a connection by its slot.
pub struct Flow {
    pub conn: Conn,
    /// The flow's record (its `flow_id`).
    pub id: u32,
    /// Node ids of the source and destination hosts.
    pub src_node: u32,
    pub(super) dst_node: u32,
    class: u8,
    /// Five-tuple hashes of the data and ACK directions.
    hash_fwd: u64,
    hash_rev: u64,
    traced: bool,
    /// Packets naming this connection in the network (sent, or emitted by
    /// switches, and neither delivered nor dropped).
    pub in_network: u32,
    /// The pending timer event (the earliest scheduled, if any).
    timer_event: Option<Time>,
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
    /// Run the flows of `protocol` with controllers `make` makes instead of
    /// the registered one, asking `flags` of the TCP machine (ECN, the echo,
    /// fast retransmit, the in-band option): a controller a Rust program declares, as
    /// [`Simulation::attach_agent`] attaches a switch agent. Call it before
    /// [`Simulation::run`]: the connections of flows the scenario lists,
    /// made already, are made again with it.
    pub fn plug_controller(&mut self, protocol: Protocol, flags: Flags, make: MakeController) {
        let params = Params::plugged(make, flags, &self.hosts.transport);
        self.hosts.params.retain(|(p, _)| *p != protocol);
        self.hosts.params.push((protocol, params.clone()));
        for f in self
            .hosts
            .flows
            .iter_mut()
            .filter(|f| f.conn.protocol == protocol)
        {
            let c = &f.conn;
            f.conn = Conn::new(
                c.size,
                c.start,
                c.deadline,
                protocol,
                &self.hosts.transport,
                params.clone(),
            );
        }
    }

    /// Open a flow; returns its id (its record's index).
    pub(super) fn open_flow(&mut self, f: NewFlow) -> u32 {
        self.let_go();
        let id = self.hosts.records.len() as u32;
        let protocol = f.protocol.unwrap_or(self.hosts.transport.protocol);
        let sport = tcp_sport(id);
        let params = match self.hosts.params.iter().find(|(p, _)| *p == protocol) {
            Some((_, params)) => params.clone(),
            None => {
                let params = Params::new(protocol, &self.hosts.transport);
                self.hosts.params.push((protocol, params.clone()));
                params
            }
        };
        let flow = Flow {
            conn: Conn::new(
                f.size,
                f.start,
                f.deadline,
                protocol,
                &self.hosts.transport,
                params,
            ),
            id,
            src_node: self.net.host_node(f.src),
            dst_node: self.net.host_node(f.dst),
            class: f.class,
            hash_fwd: five_tuple_hash(f.src, f.dst, sport, TCP_PORT, TCP),
            hash_rev: five_tuple_hash(f.dst, f.src, TCP_PORT, sport, TCP),
            traced: self.rec.traced_flows.contains(&id),
            in_network: 0,
            timer_event: None,
        };
        let slot = match self.hosts.free_slots.pop() {
            Some(slot) => {
                self.hosts.flows[slot as usize] = flow;
                slot
            }
            None => {
                crate::cache::push_advised(&mut self.hosts.flows, flow);
                self.hosts.flows.len() as u32 - 1
            }
        };
        self.hosts.records.push(FlowRecord {
            src: f.src,
            dst: f.dst,
            class: f.class,
            origin: f.origin,
            ideal: self.ideal_fct(f.src, f.dst, f.size),
            drops: 0,
            kept: Kept::Live(slot),
        });
        self.events.schedule(f.start, Event::FlowStart(slot));
        id
    }

    /// The live connection of flow `id` (an application that still drives
    /// it keeps it open).
    pub(super) fn slot_of(&self, id: u32) -> u32 {
        match self.hosts.records[id as usize].kept {
            Kept::Live(slot) => slot,
            Kept::Ended(_) => unreachable!("flow {id} is driven after it ended"),
        }
    }

    /// What flow `id` reports, live or ended.
    pub(super) fn outcome(&self, id: u32) -> Outcome {
        match self.hosts.records[id as usize].kept {
            Kept::Live(slot) => self.hosts.flows[slot as usize].conn.outcome(),
            Kept::Ended(o) => o,
        }
    }

    /// A packet naming connection `slot` (a segment, an ICMP message, a copy a
    /// switch emitted) was delivered or dropped.
    #[inline]
    pub(super) fn left_network(&mut self, slot: u32) {
        let f = &mut self.hosts.flows[slot as usize];
        debug_assert!(f.in_network > 0, "a packet of a connection let go");
        f.in_network -= 1;
    }

    /// Once both ends of connection `slot` are done, no packet of it is in
    /// the network and no timer event of it pending, its slot may be let go:
    /// called when the last of these may have become true (after a packet
    /// naming it was delivered or dropped, after a timer event of it); the
    /// rest is checked when the next flow opens ([`Simulation::let_go`]).
    #[inline]
    pub(super) fn maybe_ending(&mut self, slot: u32) {
        let f = &self.hosts.flows[slot as usize];
        if f.in_network == 0 && f.conn.is_done() {
            self.hosts.ending.push(slot);
        }
    }

    /// Let go of the connections whose ends are done, with no packet in the
    /// network, no timer event pending and no wake-up due (a slot waiting in
    /// `resume` is driven once more when the current event ends): their
    /// records keep what they reported and their slots go to the flows
    /// opened from now on. Called when a flow opens, so the loop pays
    /// nothing per event for it.
    fn let_go(&mut self) {
        let mut ending = std::mem::take(&mut self.hosts.ending);
        ending.retain(|&slot| {
            if self.hosts.resume.contains(&slot) {
                return true;
            }
            let live = self.hosts.live(slot).is_some();
            let f = &self.hosts.flows[slot as usize];
            let record = &mut self.hosts.records[f.id as usize];
            let idle = f.timer_event.is_none();
            if live && idle && f.in_network == 0 && f.conn.is_done() {
                record.kept = Kept::Ended(f.conn.outcome());
                self.hosts.free_slots.push(slot);
            }
            false
        });
        self.hosts.ending = ending;
    }

    pub(super) fn flow_start(&mut self, id: u32) {
        self.drive(id, |conn, now, segs| conn.open(now, segs));
    }

    /// Let flow `id`'s connection act (`step` gets it, the time and the
    /// segment buffer), then send what it emitted and re-arm its timers.
    pub(super) fn drive<R>(
        &mut self,
        id: u32,
        step: impl FnOnce(&mut Conn, Time, &mut Vec<Seg>) -> R,
    ) -> R {
        let now = self.now();
        let mut segs = std::mem::take(&mut self.hosts.segs);
        let result = step(&mut self.hosts.flows[id as usize].conn, now, &mut segs);
        self.hosts.segs = segs;
        self.flush(id);
        result
    }

    /// A TCP packet reached its destination host.
    pub(super) fn tcp_deliver(&mut self, pkt: &Packet) {
        let id = pkt.flow;
        let to_receiver = pkt.src == self.hosts.flows[id as usize].src_node;
        let a = Arrival {
            seg: Seg {
                to_receiver,
                hdr: pkt.tcp,
                payload: pkt.size
                    - self.hosts.flows[id as usize].conn.header()
                    - pkt.option_bytes()
                    - pkt.tcp.sack.option_bytes(),
                ect: pkt.ecn != NOT_ECT,
                prio: pkt.prio,
                option: None,
            },
            sent: pkt.sent,
            ce: pkt.ecn == CE,
            option: pkt.option,
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
            self.flow_completed(self.hosts.flows[id as usize].id);
        }
    }

    /// Send what flow `id` emitted, (re)arm its timers and trace it.
    fn flush(&mut self, id: u32) {
        let now = self.now();
        let mut segs = std::mem::take(&mut self.hosts.segs);
        // By reference: moving each segment out copied its 88 bytes.
        for seg in &segs {
            let f = &self.hosts.flows[id as usize];
            let (src, dst, hash) = if seg.to_receiver {
                (f.src_node, f.dst_node, f.hash_fwd)
            } else {
                (f.dst_node, f.src_node, f.hash_rev)
            };
            let size = f.conn.header() + seg.hdr.sack.option_bytes() + seg.payload;
            let mut pkt = Packet::new(Kind::Tcp, src, dst, size, hash, now);
            pkt.flow = id;
            pkt.ecn = if seg.ect { ECT0 } else { NOT_ECT };
            pkt.class = f.class;
            pkt.prio = seg.prio;
            pkt.tcp = seg.hdr;
            if let Some(value) = seg.option {
                pkt.set_option(value);
            }
            self.hosts.flows[id as usize].in_network += 1;
            self.send(pkt, !seg.to_receiver);
        }
        segs.clear();
        self.hosts.segs = segs;
        self.sync_timer(id);
        let f = &self.hosts.flows[id as usize];
        if f.traced {
            let c = &f.conn;
            let r = &mut self.rec.flow_trace;
            r.time.push(now.as_secs_f64());
            r.flow.push(f.id.into());
            r.cwnd.push(c.win.cwnd);
            r.ssthresh.push(c.win.ssthresh);
            r.snd_una.push(c.snd_una as i64);
            r.snd_nxt.push(c.snd_nxt as i64);
            r.srtt
                .push(c.srtt.map_or(f64::NAN, |s| s / Time::PS_PER_S as f64));
            r.alpha.push(c.alpha());
        }
    }

    /// Make sure a timer event is pending for the connection's deadline (a
    /// pending event for a later time is kept: when it fires early it finds
    /// nothing to do and re-arms). Inline, scheduling out of line: it runs
    /// after every segment and ACK, and nearly always finds an event pending
    /// early enough (B1 20 ms: all but 2,958 of 1.34 million times).
    #[inline(always)]
    fn sync_timer(&mut self, id: u32) {
        let f = &self.hosts.flows[id as usize];
        if let Some(t) = f.conn.next_deadline() {
            if f.timer_event.is_none_or(|e| e > t) {
                self.schedule_timer(id, t);
            }
        }
    }

    /// Schedule flow `id`'s timer event at `t` ([`Simulation::sync_timer`]).
    #[inline(never)]
    fn schedule_timer(&mut self, id: u32, t: Time) {
        self.hosts.flows[id as usize].timer_event = Some(t);
        self.events.schedule(t, Event::ConnTimer(id));
    }

    /// An ICMP "fragmentation needed" with next-hop MTU `mtu` reached flow
    /// `id`'s sender: its segments shrink to fit (RFC 1191 §3), never below
    /// `transport.min_pmtu` less the header (nor 24 B), and grow back (up to
    /// `transport.mss`) only with `transport.pmtu_raise`.
    pub(super) fn icmp_mtu(&mut self, id: u32, mtu: u32) {
        let t = &self.hosts.transport;
        let conn = &mut self.hosts.flows[id as usize].conn;
        let header = conn.header();
        let floor = (t.min_pmtu.0 as u32)
            .saturating_sub(header)
            .max(MIN_MSS as u32);
        let mss = mtu.saturating_sub(header).max(floor).min(t.mss.0 as u32);
        if mss < conn.mss() || (t.pmtu_raise && mss > conn.mss()) {
            conn.set_mss(mss);
        }
    }

    /// A TCP packet left its source host (on the wire, or dropped at the NIC).
    pub(super) fn left_host(&mut self, flow: u32, p: u32) {
        let f = &mut self.hosts.flows[flow as usize];
        if self.arena.hop(p).src == f.src_node && f.conn.left_host() {
            self.hosts.resume.push(flow);
        }
    }

    /// Let flows held back by their host queue limit send again.
    pub(super) fn resume_flows(&mut self) {
        while let Some(id) = self.hosts.resume.pop() {
            self.drive(id, |conn, now, segs| conn.resume(now, segs));
        }
    }

    /// The timer event of flow `id`: run the timers whose deadlines have
    /// come, else re-arm. Returns whether one had come.
    pub(super) fn timer_fired(&mut self, id: u32) -> bool {
        let now = self.now();
        let f = &mut self.hosts.flows[id as usize];
        if f.timer_event == Some(now) {
            f.timer_event = None;
        }
        if f.conn.next_deadline().is_none_or(|t| t > now) {
            self.sync_timer(id);
            self.maybe_ending(id);
            return false;
        }
        self.drive(id, |conn, now, segs| conn.on_timer(now, segs));
        self.maybe_ending(id);
        true
    }

    /// The completion time of `size` bytes from `src` to `dst` on an empty
    /// network ([`ideal_fct`]).
    pub(super) fn ideal_fct(&self, src: u32, dst: u32, size: u64) -> Time {
        let path = self.net.path(src, dst);
        let hops = path.iter().map(|&p| {
            let port = &self.net.ports[p as usize];
            (port.rate, port.arrive_after)
        });
        ideal_fct(hops, size, &self.hosts.transport, self.host_delay_means)
    }
}

/// The completion time of `size` bytes over a path of `hops` (each egress
/// port's rate and the time from the end of a packet's serialization to its
/// arrival) on an empty network with no window limit: the handshake's round
/// trip (when on), every packet through the slowest link of the path back to
/// back, the first packet's store-and-forward time over the other links, and
/// the path's propagation, switch and host delays (`host_delays`: the
/// sending and receiving stacks' delays together, a drawn one by its mean,
/// [`crate::host_delay::HostDelay::mean_both_ways`]).
pub(super) fn ideal_fct(
    hops: impl Iterator<Item = (Rate, Time)> + Clone,
    size: u64,
    transport: &TransportSpec,
    host_delays: Time,
) -> Time {
    let mss = transport.mss.0;
    let header = transport.header.0;
    let segments = size.div_ceil(mss).max(1);
    let wire = size + segments * header;
    let first = size.min(mss) + header;
    let slowest = hops.clone().map(|h| h.0).min().expect("a path has a port");
    let latency: Time = hops.clone().map(|h| h.1).sum();
    let store_forward: Time = hops.clone().map(|h| h.0.serialization(first)).sum();
    let body = slowest.serialization(wire);
    let one_way = |bytes: u64| -> Time {
        hops.clone().map(|h| h.0.serialization(bytes)).sum::<Time>() + latency + host_delays
    };
    let handshake = if transport.handshake {
        one_way(header) * 2
    } else {
        Time::ZERO
    };
    handshake + body + (store_forward - slowest.serialization(first)) + latency + host_delays
}
