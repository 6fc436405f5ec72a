//! The data plane: a packet's life from its host's NIC to its destination.
//!
//! An application send at `sent` joins its NIC's queue after the host
//! processing delay. A port serializes one packet at a time; the packet
//! reaches the far end after serialization plus propagation delay
//! (store-and-forward). A switch adds its latency, picks an egress port by the
//! forwarding policy and offers the packet to that port. At the destination
//! host it is delivered after the host processing delay.
//!
//! What a port does to a packet offered to it is the port's
//! (`network/port.rs`: [`Port::offer`], [`Port::next`], [`Port::start`]);
//! here are the events around it: a port whose packet waits makes sure a
//! wake-up ([`Event::PortFree`]) is pending, and a packet that starts
//! serializing is scheduled to arrive at the peer. Ports therefore cost
//! events only while they have a queue, and a *scheduled* FIFO port none at
//! all (see `queue/droptail.rs` for when a port is scheduled).
//!
//! Switch agents (`crate::agent`) see a packet on its arrival at their switch
//! (after the egress port is chosen), on its departure from one of its ports
//! (as serialization starts) and on its drop there; what they emit is sent
//! once the current event is handled ([`Event::AgentSend`]).
//!
//! Control packets: a PAUSE is addressed to the neighbour it is sent to; on
//! arrival it pauses the classes it names on that node's port back towards
//! the sender (802.3x / 802.1Qbb), and it is sent ahead of the port's queue
//! and never paused itself. An ICMP next-hop MTU message is delivered to its
//! flow's sender like any packet.

use super::Simulation;
use crate::agent::{ON_ARRIVAL, ON_DEPARTURE, ON_DROP};
use crate::engine::Event;
#[cfg(doc)]
use crate::network::Port;
use crate::network::{Offered, Wake};
use crate::packet::{Kind, Packet, NONE};
use crate::queue::Queued;
use crate::units::Time;

/// Events ahead whose packet the loop prefetches, and whose port or flow.
const PACKET_AHEAD: usize = 6;
const PORT_AHEAD: usize = 3;
/// Events ahead whose planned port's queue head (a scheduled FIFO's oldest
/// committed packet), or a wake-up's next packet, the loop prefetches (the
/// port arrived in the cache since [`PORT_AHEAD`]), on fabrics whose ports
/// outgrow the caches.
const QUEUE_AHEAD: usize = 1;
/// Events ahead whose routing table cell the loop prefetches, on fabrics
/// whose tables outgrow the caches: one before [`PORT_AHEAD`] plans the
/// route.
const ROUTE_AHEAD: usize = 4;

/// What a host's NIC will be doing when a packet sent now reaches it, a
/// host delay ahead ([`Simulation::nic_at`]).
enum Nic {
    /// Idle, with nothing queued.
    Idle,
    /// Still sending what is queued ahead of it: this many packets and
    /// bytes will be waiting then.
    Behind(u64, u64),
    /// Not known now.
    Later,
}

impl Simulation {
    /// A new packet leaves its host's processing and joins its NIC queue.
    pub(super) fn inject(&mut self, pkt: Packet) {
        self.n.injected += 1;
        let p = self.arena.alloc(pkt);
        self.nic_enqueue(p);
    }

    /// Packet `p` (already counted as injected) joins its source's NIC queue.
    pub(super) fn nic_enqueue(&mut self, p: u32) {
        let src = self.arena.hop(p).src;
        let host = self.net.node_host[src as usize];
        self.enqueue(self.net.host_port[host as usize], p);
    }

    /// A TCP host hands a packet to its NIC after the host processing delay.
    /// `unwatched`: the host stack need not learn when it leaves the NIC (a
    /// receiver's segment; see [`crate::tcp::Conn::left_host`]). What the NIC
    /// will be doing a host delay ahead is often known now
    /// ([`Simulation::nic_at`]): such a packet that will find it idle starts
    /// serializing then, committed now; any packet that will find it still
    /// sending what was queued ahead of it joins its queue now. Any other
    /// waits for a [`Event::HostSend`]. Inline: out of line (since
    /// applications send datagrams through it too) it cost each TCP
    /// segment some 17 instructions, with [`Simulation::nic_at`].
    #[inline(always)]
    pub(super) fn send(&mut self, pkt: Packet, unwatched: bool) {
        if self.send_stack.is_some() {
            self.send_drawn(pkt);
            return;
        }
        if self.send_delay == Time::ZERO {
            self.inject(pkt);
            return;
        }
        self.n.injected += 1;
        let p = self.arena.alloc(pkt);
        let at = self.now() + self.send_delay;
        let host = self.net.node_host[pkt.src as usize];
        let nic = self.net.host_port[host as usize];
        match self.nic_at(host, at, pkt.size) {
            Nic::Idle if unwatched => self.enqueue_at(nic, p, at),
            Nic::Behind(packets, bytes) => self.join_nic_queue(nic, p, packets, bytes),
            _ => {
                self.hosts.host_sends[host as usize] += 1;
                self.events.schedule(at, Event::HostSend(p));
            }
        }
    }

    /// A probe or stream packet whose send event came a constant sending
    /// delay after its time (none when it is drawn) reaches its host stack.
    pub(super) fn app_send(&mut self, pkt: Packet) {
        if self.send_stack.is_some() {
            self.send_drawn(pkt);
        } else {
            self.inject(pkt);
        }
    }

    /// A packet enters its host's sending stack, whose delay is drawn
    /// (`network.host_delay.send`), and reaches the NIC when the stack
    /// releases it: after its draw, and not before the host's packet ahead
    /// of it ([`crate::host_delay::Stack::release`]). Never committed early ([`Nic::Later`]).
    #[cold]
    fn send_drawn(&mut self, pkt: Packet) {
        self.n.injected += 1;
        let host = self.net.node_host[pkt.src as usize];
        let now = self.now();
        let stack = self.send_stack.as_mut().expect("a drawn sending delay");
        let at = stack.release(host as usize, now);
        let p = self.arena.alloc(pkt);
        self.hosts.host_sends[host as usize] += 1;
        self.events.schedule(at, Event::HostSend(p));
    }

    /// What host `host`'s NIC is known now to be doing at `at`, a host delay
    /// ahead, when a packet of `size` bytes sent now reaches it. It is known
    /// when nothing but the host's TCP packets reaches it, all a host delay
    /// after they were sent, so in the order sent, and nothing records its
    /// queue or packets as they come (`nic_ahead`: no datagram application
    /// on the host, no queue trace or capture, no switch agent, the only
    /// source of pauses and control frames); none of those packets is still
    /// on its way (a [`Event::HostSend`] pending); and `at` is not past the
    /// stop time. Then:
    /// - [`Nic::Idle`]: the wire is free by then and nothing is queued;
    /// - [`Nic::Behind`]: a drop-tail queue without AQM (which would judge
    ///   the packet by the queue at `at`), up at `at`, that admits the
    ///   packet now (so then, when it holds no more), and whose
    ///   last packet starts after `at`, none of them exactly at `at`
    ///   ([`Port::behind_at`]). The packet joining at `at` would
    ///   find the port busy and its wake-up already pending, and the packet
    ///   ahead of it would find it queued when it starts: joining now, the
    ///   port sends it at the same wake-up, scheduled by the same event.
    ///   Carries what the queue then holds ahead of it.
    ///
    /// Inline, as [`Simulation::send`] is.
    #[inline(always)]
    fn nic_at(&self, host: u32, at: Time, size: u32) -> Nic {
        let pt = &self.net.ports[self.net.host_port[host as usize] as usize];
        if !self.hosts.nic_ahead[host as usize]
            || self.hosts.host_sends[host as usize] != 0
            || self.stop.is_some_and(|s| at > s)
        {
            return Nic::Later;
        }
        if pt.idle_at(at) {
            return Nic::Idle;
        }
        pt.behind_at(at, size)
            .map_or(Nic::Later, |(packets, bytes)| Nic::Behind(packets, bytes))
    }

    /// Packet `p` joins the drop-tail queue of NIC `port` now, as it would
    /// a host delay from now behind `packets` packets of `bytes` bytes
    /// ([`Nic::Behind`]): the deepest-queue record takes that depth.
    fn join_nic_queue(&mut self, port: u32, p: u32, packets: u64, bytes: u64) {
        let q = self.queued(p);
        self.net.ports[port as usize].join_behind(q, packets, bytes, &mut self.dropped);
    }

    /// A packet a TCP host sent a host delay ago reaches its NIC.
    pub(super) fn host_send(&mut self, p: u32) {
        let host = self.net.node_host[self.arena.hop(p).src as usize];
        self.hosts.host_sends[host as usize] -= 1;
        self.nic_enqueue(p);
    }

    pub(super) fn arrive(&mut self, p: u32) {
        self.n.packet_hops += 1;
        let pkt = self.arena.hop_mut(p);
        pkt.hops += 1;
        let node = pkt.next_node;
        if node == pkt.dst {
            if let Kind::Pause { classes, quanta } = pkt.kind {
                // Addressed to this neighbour: pause the port back to its sender.
                let port = pkt.ingress;
                self.n.delivered += 1;
                self.arena.release(p);
                self.pause(port, classes, quanta);
            } else {
                // With a constant receiving delay the last hop is folded
                // into the delivery event (see `transmit_at`).
                debug_assert!(self.receive_delay == Time::ZERO);
                match self.receive_stack.as_mut() {
                    None => self.deliver(p),
                    Some(stack) => {
                        // A drawn one: the packet waits in its host's stack.
                        let host = self.net.node_host[node as usize] as usize;
                        let now = self.events.now();
                        let at = stack.release(host, now);
                        self.events.schedule(at, Event::Deliver(p));
                    }
                }
            }
            return;
        }
        let port = self.fwd.egress(&self.net, node, pkt, self.events.now());
        if self.agents.any & ON_ARRIVAL != 0
            && self.run_agents(port, p, ON_ARRIVAL, |a, sw, pkt| {
                a.on_arrival(sw, pkt, port)
            })
        {
            // Discarded on arrival (an agent's ingress admission).
            self.net.ports[port as usize].drops += 1;
            self.drop_at(port, p);
            return;
        }
        self.offer(port, p, self.now());
    }

    /// Ask the caches for what events a few places ahead will touch: the
    /// hop fields of the packet of an arrival or delivery [`PACKET_AHEAD`]
    /// places ahead (and the rest of a delivered one), and for the arrival
    /// or delivery [`PORT_AHEAD`] places ahead (its hop fields prefetched
    /// before) the port it will leave by, decided now when the forwarding
    /// policy hashes ([`crate::forwarding::Forwarder::plan`]), or at its
    /// destination the rest of the packet, its flow and its host's NIC
    /// port. A wake-up (a host NIC's, on the fabrics here) has its port
    /// prefetched [`PACKET_AHEAD`] places ahead, the FIFO entry of the
    /// packet it will send [`PORT_AHEAD`] ahead, and, with ports too many
    /// for the caches, that packet [`QUEUE_AHEAD`] ahead. With routing
    /// tables too big for the caches, the routing cell of the arrival
    /// [`ROUTE_AHEAD`] places ahead is loaded before `plan` reads it. With
    /// ports too many for the caches, for the next arrival
    /// ([`QUEUE_AHEAD`]), whose planned port is in the cache by now, what
    /// the port points to: the head of a scheduled FIFO (its AQM is inline,
    /// in the port's lines).
    #[inline(always)]
    pub(super) fn prefetch_ahead(&mut self) {
        match self.events.peek_ahead(PACKET_AHEAD) {
            Some(Event::Arrive(p)) => self.arena.prefetch(p),
            Some(Event::Deliver(p)) => {
                self.arena.prefetch(p);
                self.arena.prefetch_ends(p);
            }
            Some(Event::PortFree(port)) => self.net.ports[port as usize].prefetch(),
            _ => {}
        }
        if self.net.routes_outgrow_caches() {
            if let Some(Event::Arrive(p)) = self.events.peek_ahead(ROUTE_AHEAD) {
                let pkt = self.arena.hop(p);
                if pkt.next_node != pkt.dst {
                    self.net.prefetch_next_hops(pkt.next_node, pkt.dst);
                }
            }
        }
        if self.net.ports_outgrow_caches() {
            match self.events.peek_ahead(QUEUE_AHEAD) {
                Some(Event::Arrive(p)) => {
                    let route = self.arena.hop(p).route;
                    if route != NONE {
                        self.net.ports[route as usize].prefetch_queue();
                    }
                }
                Some(Event::PortFree(port)) => {
                    if let Some(p) = self.net.ports[port as usize].first_waiting() {
                        self.arena.prefetch(p);
                    }
                }
                _ => {}
            }
        }
        let (p, delivered) = match self.events.peek_ahead(PORT_AHEAD) {
            Some(Event::Arrive(p)) => (p, false),
            Some(Event::Deliver(p)) => (p, true),
            Some(Event::PortFree(port)) => {
                self.net.ports[port as usize].prefetch_waiting();
                return;
            }
            _ => return,
        };
        let pkt = self.arena.hop_mut(p);
        let node = pkt.next_node;
        if !delivered && node != pkt.dst {
            if let Some(port) = self.fwd.plan(&self.net, node, pkt, self.events.now()) {
                self.net.ports[port as usize].prefetch();
            }
        } else {
            // Delivered: the rest of the packet, its flow and the NIC its
            // answer leaves by.
            if pkt.is_tcp() {
                crate::cache::prefetch(&self.hosts.flows[pkt.flow as usize]);
                let nic = self.net.host_port[self.net.node_host[node as usize] as usize];
                self.net.ports[nic as usize].prefetch();
            }
            self.arena.prefetch_ends(p);
        }
    }

    /// A PAUSE for `classes` reached the node of `port`
    /// ([`Port::pause_for`]); the port wakes when its wire is free. Host
    /// NICs obey it as switch ports do.
    fn pause(&mut self, port: u32, classes: u8, quanta: u16) {
        let now = self.now();
        if let Some(t) = self.net.ports[port as usize].pause_for(now, classes, quanta) {
            self.wake(port, t);
        }
    }

    /// Make sure `port` wakes at `t` or earlier.
    #[inline]
    pub(super) fn wake(&mut self, port: u32, t: Time) {
        let pt = &mut self.net.ports[port as usize];
        if pt.wake_at.is_none_or(|w| w > t) {
            pt.wake_at = Some(t);
            self.events.schedule(t, Event::PortFree(port));
        }
    }

    /// Offer packet `p` to `port` now.
    #[inline(always)]
    pub(super) fn enqueue(&mut self, port: u32, p: u32) {
        self.enqueue_at(port, p, self.now());
    }

    /// [`Simulation::offer`], out of line: the hosts' and agents' call.
    #[inline(never)]
    fn enqueue_at(&mut self, port: u32, p: u32, now: Time) {
        self.offer(port, p, now);
    }

    /// Offer packet `p` to `port` at `now` ([`Port::offer`]): it starts
    /// serializing, waits (and the port will wake) or is dropped. `now` is
    /// the current time, or later for a NIC known to be idle then
    /// ([`Simulation::send`]). Inline in the arrivals at switches, the hot
    /// path.
    #[inline(always)]
    fn offer(&mut self, port: u32, p: u32, now: Time) {
        match self.net.ports[port as usize].offer(self.arena.hop_mut(p), now) {
            Offered::Starts(start) => self.transmit_at(port, p, start),
            Offered::Waits => self.enqueue_waiting(port, p),
            Offered::Dropped => self.drop_at(port, p),
        }
    }

    /// Packet `p` waits in the discipline of event-driven `port` (or is
    /// dropped, or evicts others, [`Port::wait`]); the port wakes when its
    /// wire is free. Out of line: the scheduled FIFO ports of the hot path
    /// never wait here.
    #[inline(never)]
    fn enqueue_waiting(&mut self, port: u32, p: u32) {
        let now = self.now();
        let q = self.queued(p);
        let wake = self.net.ports[port as usize].wait(q, now, &mut self.dropped);
        if !self.dropped.is_empty() {
            // The arrival, or packets the discipline evicted for it.
            let mut dropped = std::mem::take(&mut self.dropped);
            let evicted = dropped.len() > usize::from(wake.is_none());
            for &victim in &dropped {
                self.drop_at(port, victim);
            }
            dropped.clear();
            self.dropped = dropped;
            if wake.is_none() && evicted {
                self.trace_queue(port);
            }
        }
        if let Some(at) = wake {
            self.wake(port, at);
            self.trace_queue(port);
        }
    }

    /// What a queue discipline is told of packet `p`.
    fn queued(&self, p: u32) -> Queued {
        let pkt = self.arena.hop(p);
        Queued {
            pkt: p,
            size: pkt.size,
            class: pkt.class,
            prio: pkt.prio,
            flow: pkt.hash,
        }
    }

    /// `port` wakes ([`Port::next`]).
    pub(super) fn port_free(&mut self, port: u32) {
        let now = self.now();
        match self.net.ports[port as usize].next(now, &self.arena) {
            Wake::Control(c) => {
                self.transmit_control(port, c);
                if let Some(t) = self.net.ports[port as usize].again(true) {
                    self.wake(port, t);
                }
            }
            Wake::Packet(p) => {
                self.trace_queue(port);
                self.transmit(port, p);
                if let Some(t) = self.net.ports[port as usize].again(false) {
                    self.wake(port, t);
                }
            }
            Wake::Again(t) => self.wake(port, t),
            Wake::Idle => {}
        }
    }

    /// Serialize packet `p` onto `port`'s link, starting now: the wake-up
    /// paths' call, out of line ([`Simulation::enqueue`] calls
    /// [`Simulation::transmit_at`] itself, inline).
    #[inline(never)]
    pub(super) fn transmit(&mut self, port: u32, p: u32) {
        self.transmit_at(port, p, self.now());
    }

    /// Serialize packet `p` onto `port`'s link, starting at `start` (now, or
    /// later on a scheduled port, once what is ahead of it has been sent).
    /// Inline: its call from the hot path cost 19 instructions a hop.
    #[inline(always)]
    fn transmit_at(&mut self, port: u32, p: u32, start: Time) {
        if self.agents.any & ON_DEPARTURE != 0 {
            self.run_agents(port, p, ON_DEPARTURE, |a, sw, pkt| {
                a.on_departure(sw, pkt, port)
            });
        }
        let pt = &mut self.net.ports[port as usize];
        let pkt = self.arena.hop_mut(p);
        let at = pt.start(pkt, start);
        let captured = pt.captured();
        let (leaves_host, flow) = (pkt.is_tcp() && pkt.hops == 0, pkt.flow);
        if self.receive_delay != Time::ZERO
            && pkt.next_node == pkt.dst
            && !matches!(pkt.kind, Kind::Pause { .. })
        {
            // The last hop: the arrival would only start the host's
            // processing, so the delivery is scheduled now, with the key the
            // arrival would give it (time, then scheduled at the arrival).
            self.events
                .schedule_from(at + self.receive_delay, at, Event::Deliver(p));
        } else {
            self.events.schedule_from(at, start, Event::Arrive(p));
        }
        if leaves_host {
            self.left_host(flow, p);
        }
        if captured {
            self.capture_port(port, p);
        }
    }

    /// Packet `p` is dropped at `port` (its node's agents see it first).
    /// Rare on the hot path, so kept out of it.
    #[cold]
    #[inline(never)]
    pub(super) fn drop_at(&mut self, port: u32, p: u32) {
        if self.agents.any & ON_DROP != 0 {
            self.run_agents(port, p, ON_DROP, |a, sw, pkt| a.on_drop(sw, pkt, port));
        }
        self.drop_packet(p);
    }

    fn drop_packet(&mut self, p: u32) {
        self.n.dropped += 1;
        let pkt = self.arena.get(p);
        match pkt.kind {
            Kind::Tcp | Kind::IcmpMtu { .. } => {
                if pkt.is_tcp() {
                    if pkt.hops == 0 {
                        self.left_host(pkt.flow, p);
                    }
                    let id = self.hosts.flows[pkt.flow as usize].id;
                    self.hosts.records[id as usize].drops += 1;
                }
                self.left_network(pkt.flow);
                self.maybe_ending(pkt.flow);
            }
            Kind::Datagram => {
                if pkt.flow != NONE {
                    self.streams[pkt.flow as usize].dropped += 1;
                }
                if pkt.record != NONE {
                    self.rec.probes.dropped(pkt.record);
                }
            }
            _ => {}
        }
        self.arena.release(p);
    }

    /// Packet `p` reached its destination host a host delay ago, in an
    /// arrival folded into this event ([`Simulation::transmit_at`]): that
    /// hop counts now, and the host delivers it.
    pub(super) fn arrive_and_deliver(&mut self, p: u32) {
        self.n.packet_hops += 1;
        self.arena.hop_mut(p).hops += 1;
        self.deliver(p);
    }

    #[inline(always)]
    pub(super) fn deliver(&mut self, p: u32) {
        self.n.delivered += 1;
        let now = self.now();
        let pkt = self.arena.get(p);
        self.arena.release(p);
        let host = self.net.node_host[pkt.dst as usize];
        if let Some(c) = self.rec.host_capture[host as usize] {
            self.capture(c, &pkt);
        }
        match pkt.kind {
            Kind::Tcp | Kind::IcmpMtu { .. } => {
                self.left_network(pkt.flow);
                match pkt.kind {
                    Kind::IcmpMtu { mtu } => self.icmp_mtu(pkt.flow, u32::from(mtu)),
                    _ => self.tcp_deliver(&pkt),
                }
                self.maybe_ending(pkt.flow);
            }
            Kind::Datagram => {
                if pkt.record != NONE {
                    self.rec.probes.delivered(pkt.record, now, pkt.hops);
                }
                if pkt.flow != NONE {
                    let s = &mut self.streams[pkt.flow as usize];
                    s.delivered += 1;
                    s.bytes_delivered += u64::from(pkt.size);
                    s.latency_sum_ps += u128::from((now - pkt.sent).0);
                }
            }
            Kind::AppDatagram => self.app_datagram(&pkt),
            Kind::Pause { .. } => unreachable!("PAUSE frames stop at the next node"),
        }
    }

    /// Record `port`'s queue if it is traced (the check inline, the record
    /// out of line).
    #[inline(always)]
    fn trace_queue(&mut self, port: u32) {
        if let Some(i) = self.net.ports[port as usize].trace {
            self.record_queue(port, i);
        }
    }

    #[inline(never)]
    fn record_queue(&mut self, port: u32, i: u32) {
        let pt = &self.net.ports[port as usize];
        self.rec.queues.time.push(self.events.now().as_secs_f64());
        self.rec.queues.port.push(i);
        self.rec.queues.packets.push(pt.queue.packets() as i64);
        self.rec.queues.bytes.push(pt.queue.bytes() as i64);
    }
}
