//! An egress port, and what it does to a packet offered to it: an outage
//! drops it; its on-enqueue stages rewrite or refuse it; the AQM of its
//! class's domain may mark or drop it; a packet that finds the wire idle and
//! the queue empty starts serializing at once unless its class is held;
//! otherwise it waits in the discipline ([`Port::offer`], [`Port::wait`]).
//! A port wakes when its wire frees ([`Port::next`]): a MAC control frame
//! first, then what the discipline offers of the classes neither paused
//! (802.1Qbb) nor shaped. A *scheduled* FIFO port commits each packet on
//! arrival instead (`queue/droptail.rs`) and costs no wake-up. The events,
//! the agents' hooks, captures and a dropped or delivered packet's fate are
//! the simulation's (`sim/dataplane.rs`).

mod pause;

use crate::packet::{Arena, Hop, CE, NONE, NOT_ECT};
use crate::queue::{Aqms, Next, Occupancy, PortContext, Queue, QueueSpec, Queued, Verdict};
use crate::stage::{Found, StageKind, Stages};
use crate::units::{Capacity, Rate, Time};
pub use pause::Paused;
use std::collections::VecDeque;

/// What a port's stages do on enqueue. One byte: `Inline` keeps its kind
/// in the niche of [`StageKind`] (a test below holds it so).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Stamps {
    /// Nothing: most ports.
    #[default]
    None,
    /// A stage of this kind declared [`crate::stage::Stage::STATELESS`]
    /// is the port's only guard (no other stage on enqueue, no outage):
    /// the port runs its stamp inline ([`StageKind::stamp`]), not through
    /// its stage list.
    Inline(StageKind),
    /// The port's stages, run out of line through its list.
    Stages,
}

/// When a port's packets start serializing: committed on arrival (a
/// scheduled FIFO) or when the wire frees (event-driven). In the first line,
/// so that an arrival at an idle port learns whether anything can hold its
/// classes without reading two lines further on (docs/performance.md,
/// "QJUMP's cost").
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
        self.queue.prefetch_head();
    }

    /// Start loading the FIFO entry of the packet this port sends next
    /// when it wakes (an event-driven FIFO's head).
    #[inline(always)]
    pub fn prefetch_waiting(&self) {
        self.queue.prefetch_waiting();
    }

    /// The packet this port sends next when it wakes, if its queue is a
    /// FIFO holding one.
    #[inline(always)]
    pub fn first_waiting(&self) -> Option<u32> {
        self.queue.first_waiting()
    }

    /// The whole buffer as an arrival finds it: packets and bytes waiting
    /// (a scheduled FIFO's from its committed packets alone, so that an
    /// arrival reads only the port's first two lines).
    #[inline]
    pub fn found(&self) -> Found {
        let (packets, bytes) = self.queue.held(self.scheduled());
        Found { packets, bytes }
    }

    /// The whole buffer at `now`: packets and bytes not yet started. On a
    /// scheduled FIFO [`Port::found`] still counts the committed packets
    /// that started since the last arrival (the next one retires them), so
    /// a switch agent's arrival hook, which runs before that, reads this.
    pub fn queued_at(&self, now: Time) -> Found {
        let (packets, bytes) = self.queue.unstarted_at(now, self.scheduled());
        Found { packets, bytes }
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

    /// Whether the queue is empty (see [`Port::found`]).
    #[inline(always)]
    pub fn queue_empty(&self) -> bool {
        self.queue.empty(self.scheduled())
    }

    /// Drop every packet offered in `[start, stop)`.
    pub fn add_outage(&mut self, start: Time, stop: Time) {
        self.outages.push((start, stop));
        self.guarded = true;
        if matches!(self.stamps, Stamps::Inline(_)) {
            self.stamps = Stamps::Stages;
        }
    }

    /// A stage of this port rewrites packets on enqueue; `stateless`: its
    /// kind, when it declared a stateless stamp, which the port runs inline
    /// while it is the port's only guard ([`Stamps::Inline`]).
    pub fn add_stamps(&mut self, stateless: Option<StageKind>) {
        self.guarded = true;
        self.stamps = match stateless {
            Some(kind) if self.stamps == Stamps::None && self.outages.is_empty() => {
                Stamps::Inline(kind)
            }
            _ => Stamps::Stages,
        };
    }

    /// Whether a stage of this port rewrites packets on enqueue.
    pub fn stamps(&self) -> bool {
        self.stamps != Stamps::None
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

    /// Record the queue's depth if it is the deepest yet.
    #[inline]
    fn note_depth(&mut self) {
        self.note_depth_of(self.queue.packets(), self.queue.bytes());
    }

    /// Record a depth of `packets` packets and `bytes` bytes if it is the
    /// deepest yet (one the queue has, or will have once a packet that
    /// joined it ahead arrives).
    #[inline]
    fn note_depth_of(&mut self, packets: u64, bytes: u64) {
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

/// What became of a packet offered to a port ([`Port::offer`]).
pub enum Offered {
    /// It starts serializing at this time: now, or on a scheduled port once
    /// what is ahead of it has been sent.
    Starts(Time),
    /// It waits in the discipline ([`Port::wait`]).
    Waits,
    /// An outage, a stage, the AQM or a scheduled FIFO's full buffer dropped
    /// it (counted in the port's drops).
    Dropped,
}

/// What a port does when it wakes ([`Port::next`]).
pub enum Wake {
    /// Send this MAC control frame.
    Control(u32),
    /// Send this packet, which the discipline offered.
    Packet(u32),
    /// Nothing yet: wake again at this time.
    Again(Time),
    /// Nothing until a packet arrives.
    Idle,
}

impl Port {
    /// A port of `node` towards `peer` (whose port back is `reverse`),
    /// built in its context `ctx`, with a queue of `queue`; what it sends
    /// reaches the peer `arrive_after` after its last bit left.
    pub fn new(
        ctx: &PortContext,
        queue: &QueueSpec,
        node: u32,
        peer: u32,
        reverse: u32,
        arrive_after: Time,
    ) -> Port {
        Port {
            node,
            peer,
            rate: ctx.rate,
            arrive_after,
            ps_per_byte: ctx
                .rate
                .exact_ps_per_byte()
                .and_then(|ps| u32::try_from(ps).ok())
                .unwrap_or(0),
            reverse,
            queue: Queue::new(queue, ctx),
            buffer: ctx.buffer,
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
        }
    }

    /// Offer `pkt` to the port at `now` (the current time, or later for a
    /// NIC known to be idle then): the pipeline up to the discipline. Inline
    /// in the arrivals at switches, the hot path.
    #[inline(always)]
    pub fn offer(&mut self, pkt: &mut Hop, now: Time) -> Offered {
        if self.scheduled() {
            self.queue.retire(now, self.busy_until <= now);
        }
        if self.guarded() {
            if let Stamps::Inline(kind) = self.stamps {
                kind.stamp(pkt, self.found());
            } else if !self.passes_guards(pkt, now) {
                self.drops += 1;
                return Offered::Dropped;
            }
        }
        let class = pkt.class;
        if !self.aqm.is_empty() {
            let (domain, packets, bytes) = self.queue.occupancy(class, self.scheduled());
            let ecn_capable = pkt.ecn != NOT_ECT;
            // Only RED's idle decay needs the idle time and the slot; the
            // others' domain is looked up once.
            let aqm = &mut self.aqm[domain];
            let verdict = if aqm.decays_when_idle() {
                let idle = packets == 0 && self.queue_empty() && self.busy_until < now;
                let since = if idle {
                    now - self.busy_until
                } else {
                    Time::ZERO
                };
                let occ = Occupancy {
                    packets,
                    bytes,
                    idle: since,
                    slot: self.serialization(1500),
                };
                self.aqm[domain].on_arrival(occ, ecn_capable, class)
            } else {
                let occ = Occupancy {
                    packets,
                    bytes,
                    idle: Time::ZERO,
                    slot: Time::ZERO,
                };
                aqm.on_arrival(occ, ecn_capable, class)
            };
            match verdict {
                Verdict::Pass => {}
                Verdict::Mark => pkt.ecn = CE,
                Verdict::Drop => {
                    self.drops += 1;
                    return Offered::Dropped;
                }
            }
        }
        if self.scheduled() {
            // Nothing pauses or holds a scheduled port, and once its wire is
            // free every packet it committed has started (`retire` above):
            // an idle wire is an empty queue.
            if self.busy_until <= now {
                return Offered::Starts(now);
            }
            let start = self.busy_until;
            if !self.queue.commit(start, pkt.size) {
                self.drops += 1;
                return Offered::Dropped;
            }
            self.note_depth();
            Offered::Starts(start)
        } else if self.busy_until <= now
            && self.queue_empty()
            && (self.holds_nothing(now)
                || self
                    .queue
                    .may_bypass(class, self.paused(now) | self.held(now)))
        {
            // Every discipline lets a class neither paused nor held by a
            // shaper bypass an empty queue.
            if self.shaped() {
                self.stages.on_start(class, pkt.size, now);
            }
            Offered::Starts(now)
        } else {
            Offered::Waits
        }
    }

    /// Whether `pkt` passes the outage windows and the on-enqueue stages
    /// (it finds the port's buffer as it is at `now`); `false`: an outage
    /// drops it or a stage refuses it. Out of line: most ports have
    /// neither, and a stateless stamp alone is run inline ([`Stamps::Inline`]).
    #[inline(never)]
    fn passes_guards(&mut self, pkt: &mut Hop, now: Time) -> bool {
        if self.is_down(now) {
            return false;
        }
        !self.stamps() || self.stages.on_enqueue(pkt, self.found(), now)
    }

    /// Packet `q` joins the discipline of this event-driven port at `now`
    /// ([`Offered::Waits`]); what the discipline drops (the arrival, or
    /// packets it evicted for it) is added to `dropped` and counted in the
    /// port's drops. Returns when the port must wake, unless the arrival was
    /// dropped.
    #[inline(always)]
    pub fn wait(&mut self, q: Queued, now: Time, dropped: &mut Vec<u32>) -> Option<Time> {
        self.queue.enqueue(q, dropped);
        if !dropped.is_empty() {
            self.drops += dropped.len() as u64;
            if dropped.contains(&q.pkt) {
                return None;
            }
        }
        self.note_depth();
        Some(self.busy_until.max(now))
    }

    /// What the port does when it wakes at `now`: an early wake-up (a pause
    /// ended while the wire is busy) waits for the wire; a control frame
    /// goes first; then what the discipline offers, of the classes neither
    /// paused (802.1Qbb) nor held by a shaper stage (`arena`: the packets,
    /// whose class and size a shaper counts).
    #[inline(always)]
    pub fn next(&mut self, now: Time, arena: &Arena) -> Wake {
        if self.wake_at == Some(now) {
            self.wake_at = None;
        }
        if self.busy_until > now {
            return Wake::Again(self.busy_until);
        }
        if let Some(c) = self.control.pop_front() {
            return Wake::Control(c);
        }
        let paused = self.paused(now) | self.held(now);
        match self.queue.dequeue(now, paused) {
            Next::Packet(p) => {
                if self.shaped() {
                    let pkt = arena.hop(p);
                    self.stages.on_start(pkt.class, pkt.size, now);
                }
                Wake::Packet(p)
            }
            Next::Empty => {
                // Waiting packets of paused or held classes: wake when a
                // pause ends or a shaper releases a class.
                if paused != 0 && !self.queue.is_empty() {
                    let held = self.held(now);
                    let release = (held != 0).then(|| self.stages.release_at(held));
                    let end = self.pause.until.iter().copied().filter(|&u| u > now);
                    if let Some(t) = end.chain(release).min() {
                        return Wake::Again(t);
                    }
                }
                Wake::Idle
            }
            Next::NotBefore(t) => Wake::Again(t),
        }
    }

    /// When the port must wake again after starting to send what
    /// [`Port::next`] offered: once the wire is free, if packets wait (and,
    /// after a control frame, `control`: if control frames wait).
    #[inline(always)]
    pub fn again(&self, control: bool) -> Option<Time> {
        let waits = control && !self.control.is_empty() || !self.queue.is_empty();
        waits.then_some(self.busy_until)
    }

    /// `pkt` starts serializing at `start`: the wire is busy until its last
    /// bit has left, it counts as sent and heads for the peer. Returns when
    /// it arrives there.
    #[inline(always)]
    pub fn start(&mut self, pkt: &mut Hop, start: Time) -> Time {
        let done = start + self.serialization(pkt.size);
        self.busy_until = done;
        self.sent_packets += 1;
        self.sent_bytes += u64::from(pkt.size);
        pkt.next_node = self.peer;
        pkt.route = NONE;
        pkt.ingress = self.reverse;
        done + self.arrive_after
    }

    /// A MAC control frame `pkt` is offered at `now`: it goes out before
    /// anything queued, unless an outage drops it (counted).
    pub fn offer_control(&mut self, p: u32, now: Time) -> Offered {
        if self.is_down(now) {
            self.drops += 1;
            Offered::Dropped
        } else if self.busy_until <= now && self.control.is_empty() {
            Offered::Starts(now)
        } else {
            self.control.push_back(p);
            Offered::Waits
        }
    }

    /// Whether a packet reaching this (event-driven) port at `at` finds the
    /// wire free and nothing queued.
    #[inline(always)]
    pub fn idle_at(&self, at: Time) -> bool {
        self.busy_until <= at && self.queue.is_empty()
    }

    /// What a packet of `size` bytes reaching this event-driven port at `at`
    /// would find waiting ahead of it, when that is known now: a drop-tail
    /// queue without AQM (which would judge the packet by the queue at
    /// `at`), up at `at`, that admits the packet now (so then, when it holds
    /// no more), and whose last packet starts after `at`, none of them
    /// exactly at `at` ([`crate::queue::DropTail::waiting_after`]).
    /// Packets and bytes.
    #[inline(always)]
    pub fn behind_at(&self, at: Time, size: u32) -> Option<(u64, u64)> {
        debug_assert!(!self.scheduled(), "a TCP host's NIC is event-driven");
        if !self.aqm.is_empty() || self.is_down(at) {
            return None;
        }
        let first = self.busy_until;
        self.queue
            .waiting_after(size, first, at, |b| self.serialization(b))
    }

    /// Packet `q` joins the drop-tail queue now, as it would at a later
    /// time behind `packets` packets of `bytes` bytes ([`Port::behind_at`]):
    /// the deepest-queue record takes that depth.
    pub fn join_behind(&mut self, q: Queued, packets: u64, bytes: u64, dropped: &mut Vec<u32>) {
        debug_assert!(self.wake_at.is_some(), "a NIC with a queue wakes");
        self.queue.enqueue(q, dropped);
        debug_assert!(dropped.is_empty(), "the NIC admitted it");
        self.note_depth_of(packets + 1, bytes + u64::from(q.size));
    }

    /// The run ended at `end`: a scheduled port counted packets as sent
    /// when it committed them; those not started by then are not.
    pub fn settle(&mut self, end: Time) {
        if self.scheduled() {
            let (packets, bytes) = self.queue.unstarted_after(end);
            self.sent_packets -= packets;
            self.sent_bytes -= bytes;
        }
    }

    /// Packets that started serializing by `t` (not before the last event,
    /// nor after the run's end, before [`Port::settle`]) and the bytes
    /// serialized by then: the counters less what a scheduled port committed
    /// to start after `t`, less the part of the packet on the wire at `t`
    /// still to go (the one that ends where the first of those starts, or
    /// at `busy_until`). `links.parquet` (`sim/links.rs`) takes differences.
    pub fn sent_by(&self, t: Time) -> (u64, f64) {
        let ((packets, bytes), next) = match self.scheduled() {
            true => (self.queue.unstarted_after(t), self.queue.start_after(t)),
            false => ((0, 0), None),
        };
        let wire_free = next.unwrap_or(self.busy_until);
        let to_go = Time(wire_free.0.saturating_sub(t.0)).as_secs_f64() * self.rate.bps() / 8.0;
        (
            self.sent_packets - packets,
            (self.sent_bytes - bytes) as f64 - to_go,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::network::Network;
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
        assert_eq!(size_of::<Stamps>(), 1, "Inline's kind in StageKind's niche");
        assert!(end(offset_of!(Port, stamps), size_of::<Stamps>()) <= 64);
        assert_eq!(offset_of!(Port, queue), 64);
        let Queue::Droptail(fifo) = &pt.queue else {
            panic!("a FIFO port")
        };
        let fifo_at = std::ptr::from_ref(fifo) as usize - std::ptr::from_ref(pt) as usize;
        assert!(end(fifo_at, DropTail::HOT_END) <= Port::HOT_BYTES);
        assert_eq!(Port::HOT_BYTES, 128);
    }
}
