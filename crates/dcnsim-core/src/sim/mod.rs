//! The simulation: one deterministic event loop over the network.
//!
//! Split along the data flow:
//! - `build.rs`: construction from a validated scenario (ports, AQM,
//!   forwarding state, captures, applications);
//! - `dataplane.rs`: a packet's life in the network: host NIC, port stages,
//!   AQM and queue disciplines, links, switches (forwarding policy),
//!   delivery;
//! - `agents.rs`: switch agents' hooks and what they emit;
//! - `hosts.rs`: the TCP host stacks: connections, their segments as packets,
//!   their timers;
//! - `apps.rs`: what sends at the hosts: probes and datagram streams,
//!   listed flows, and the applications (`crate::app`);
//! - `plug.rs`: what a Rust program plugs in on the closed-enum axes (a
//!   discipline, AQM or stage at chosen ports, a forwarding policy);
//! - `records.rs`: what is recorded (probe rows, queue and flow traces,
//!   captures) and the output tables, built at the end or streamed in chunks;
//! - `links.rs`: every port's bytes per interval (`trace.links`).

mod agents;
mod apps;
mod build;
mod dataplane;
pub mod drawn;
mod hosts;
mod links;
mod plug;
mod records;

use crate::engine::{Event, EventQueue};
use crate::forwarding::{mix, Forwarder};
use crate::host_delay::Stack;
use crate::network::Network;
use crate::packet::Arena;
use crate::records::{Output, Sink, Summary};
use crate::traffic::Stream;
use crate::units::Time;
use apps::Apps;
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
    /// Rows recorded so far (probe and recorded stream packets, queue and flow
    /// trace samples), whether still held or already streamed out.
    pub recorded_rows: u64,
}

/// Why a run stopped before its end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Aborted {
    /// Its progress hook (or sink) said stop.
    Hook,
    /// The address-space limit refused a table's growth of `bytes` at
    /// simulated time `at`: the run held more than its estimate
    /// ([`crate::cache::Refusal`]).
    OutOfMemory { bytes: u64, at: Time },
    /// A cgroup of the process held (or a large table's growth would have
    /// taken it to) `used` bytes of its `limit`, more than
    /// [`crate::cgroup::STOP_SHARE`] of it, at simulated time `at`: the run
    /// stops before the kernel kills the process ([`crate::cache::cgroup_over`],
    /// [`crate::cache::Refusal`]).
    CgroupLimit { used: u64, limit: u64, at: Time },
}

impl Aborted {
    /// The run ended at simulated time `at` by a refused growth.
    pub fn refused(refusal: crate::cache::Refusal, at: Time) -> Aborted {
        match refusal {
            crate::cache::Refusal::AddressSpace { bytes } => Aborted::OutOfMemory { bytes, at },
            crate::cache::Refusal::Cgroup { would_hold, limit } => Aborted::CgroupLimit {
                used: would_hold,
                limit,
                at,
            },
        }
    }
}

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
/// Applications (`crate::app`): kind k's instance i draws from index
/// (k << 32) + i ([`app_rng`]).
const RNG_APPS: u64 = 5;
/// The path a drawn flow takes among equal-cost next hops ([`drawn`]).
const SALT_DRAWN_PATH: u64 = 6;
/// The host stacks' drawn delays: index 0 sending, 1 receiving
/// ([`crate::host_delay::Stack`]).
const RNG_HOST_STACK: u64 = 7;

/// The random stream of application kind `kind`'s instance `instance`.
fn app_rng(seed: u64, kind: usize, instance: u32) -> Xoshiro256PlusPlus {
    rng_for(seed, RNG_APPS, (kind as u64) << 32 | u64::from(instance))
}

#[derive(Default)]
struct Counters {
    events: u64,
    packet_hops: u64,
    injected: u64,
    from_switches: u64,
    delivered: u64,
    dropped: u64,
}

pub struct Simulation {
    net: Network,
    events: EventQueue,
    arena: Arena,
    fwd: Forwarder,
    /// Packets a queue discipline just discarded (reused buffer).
    dropped: Vec<u32>,
    /// The switch agents (`agents.rs`).
    agents: agents::Agents,
    /// The host stacks' constant delay sending and receiving
    /// (`network.host_delay`; 0 for a direction whose delay is drawn).
    send_delay: Time,
    receive_delay: Time,
    /// A direction whose delay is drawn: its stacks (`host_delay.rs`),
    /// `None` for a constant (the fast path).
    send_stack: Option<Box<Stack>>,
    receive_stack: Option<Box<Stack>>,
    /// Both directions' mean delays, for ideal completion times.
    host_delay_means: Time,
    streams: Vec<Stream>,
    /// The TCP host stacks (`hosts.rs`).
    hosts: hosts::Hosts,
    apps: Apps,
    /// What the run records as it goes (`records.rs`).
    rec: records::Recorded,
    stop: Option<Time>,
    n: Counters,
    name: String,
    seed: u64,
}

impl Simulation {
    /// Run to completion (or `stop_time`). `hook` is called about every quarter
    /// second of wall time; returning `false` aborts the run.
    pub fn run(self, hook: &mut dyn FnMut(&Progress) -> bool) -> Result<Output, Aborted> {
        self.run_with(hook, None)
    }

    /// As [`Simulation::run`], sending the recorded rows to `sink` in chunks as
    /// the run goes; the returned tables of those rows are empty.
    pub fn run_streamed(
        self,
        hook: &mut dyn FnMut(&Progress) -> bool,
        mut sink: Sink,
    ) -> Result<Output, Aborted> {
        self.run_with(hook, Some(&mut sink))
    }

    fn run_with(
        mut self,
        hook: &mut dyn FnMut(&Progress) -> bool,
        mut sink: Option<&mut Sink>,
    ) -> Result<Output, Aborted> {
        let watched = crate::cache::Watched::start();
        let started = Instant::now();
        // A large table's growth the process refuses unwinds the loop
        // ([`crate::cache::Refusal`]): the run ends where it could not grow.
        let looped = crate::cache::catching(|| self.event_loop(hook, sink.as_deref_mut(), started));
        let (end, stopped) = looped.map_err(|r| Aborted::refused(r, self.events.now()))??;
        self.close_links(end);
        Self::check_memory(end)?;
        drop(watched);
        // The event loop's wall time: the rows sent below are output.
        let wall = started.elapsed().as_secs_f64();
        if let Some(sink) = sink {
            if !self.send_rows(sink, true) {
                return Err(Aborted::Hook);
            }
        }
        Ok(self.finish(wall, end, stopped))
    }

    /// The event loop, to the stop time or the last event: the time the run
    /// ends at and whether the stop time cut it.
    fn event_loop(
        &mut self,
        hook: &mut dyn FnMut(&Progress) -> bool,
        mut sink: Option<&mut Sink>,
        started: Instant,
    ) -> Result<(Time, bool), Aborted> {
        let mut last_report = 0.0;
        let mut stopped = false;
        // The last event that did something: a timer that fires after its
        // flow is done does not extend the run.
        let mut last_active = Time::ZERO;
        let hosts = self.net.host_port.len() as u32;
        let stop = self.stop.unwrap_or(Time(u64::MAX));
        while let Some((t, ev)) = self.events.pop() {
            if t > stop {
                stopped = true;
                self.count_last_hops_by(stop, t, ev);
                break;
            }
            self.n.events += 1;
            self.prefetch_ahead();
            let active = match ev {
                Event::ConnTimer(f) => self.timer_fired(f),
                Event::AgentTimer(i) => self.agent_timer(i),
                Event::LinkSample => self.sample_links(t, last_active),
                ev => {
                    self.dispatch(ev, hosts);
                    true
                }
            };
            if active {
                last_active = t;
            }
            if !self.hosts.resume.is_empty() {
                self.resume_flows();
            }
            if self.n.events & 0xffff == 0 {
                Self::check_memory(t)?;
                if let Some(sink) = sink.as_deref_mut() {
                    if self.held_rows() >= sink.chunk_rows && !self.send_rows(sink, false) {
                        return Err(Aborted::Hook);
                    }
                }
                let wall = started.elapsed().as_secs_f64();
                if wall - last_report >= 0.25 {
                    last_report = wall;
                    if !hook(&self.progress(wall)) {
                        return Err(Aborted::Hook);
                    }
                }
            }
        }
        let end = match (stopped, self.stop) {
            (true, Some(s)) => s,
            _ => last_active,
        };
        Ok((end, stopped))
    }

    /// End the run if a cgroup of the process nears its limit (at simulated
    /// time `at`).
    fn check_memory(at: Time) -> Result<(), Aborted> {
        match crate::cache::cgroup_over() {
            Some((used, limit)) => Err(Aborted::CgroupLimit { used, limit, at }),
            None => Ok(()),
        }
    }

    /// Handle every event but the TCP timers. Called in one place, the loop,
    /// and kept inline there: out of line, its call costs about 24
    /// instructions per event (saving and restoring registers).
    #[inline(always)]
    fn dispatch(&mut self, ev: Event, hosts: u32) {
        match ev {
            Event::Arrive(p) => self.arrive(p),
            Event::PortFree(port) => self.port_free(port),
            Event::Deliver(p) => self.arrive_and_deliver(p),
            Event::StreamSend(s) => self.stream_send(s, hosts),
            Event::ProbeSend(row) => self.probe_send(row),
            Event::HostSend(p) => self.host_send(p),
            Event::FlowStart(f) => self.flow_start(f),
            Event::AppTimer(t) => self.app_timer(t),
            Event::AgentSend => self.send_emitted(),
            Event::ConnTimer(_) | Event::AgentTimer(_) | Event::LinkSample => {
                unreachable!("timers and samples are handled by the loop")
            }
        }
    }

    /// At the stop time: packets that reached their destination host by then
    /// and are still in its processing have taken their last hop, though its
    /// arrival is folded into a delivery event after the stop time (`(t,
    /// ev)`, the first event after it, and what follows within a host delay).
    fn count_last_hops_by(&mut self, stop: Time, t: Time, ev: Event) {
        let mut next = Some((t, ev));
        while let Some((t, ev)) = next {
            if t > stop + self.receive_delay {
                break;
            }
            if let Event::Deliver(_) = ev {
                self.n.packet_hops += 1;
            }
            next = self.events.pop();
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
            recorded_rows: self.rec.rows_taken + self.held_rows() as u64,
        }
    }

    fn now(&self) -> Time {
        self.events.now()
    }

    fn finish(mut self, wall: f64, end: Time, stopped: bool) -> Output {
        for pt in &mut self.net.ports {
            pt.settle(end);
        }
        let in_flight = self.arena.live();
        let flows = records::flow_table(&self);
        let ops = records::ops_table(&self.apps);
        let [(_, probes), (_, queues), (_, flow_trace), (_, links)] = self.take_rows(true);
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
            packets_from_switches: self.n.from_switches,
            packets_delivered: self.n.delivered,
            packets_dropped: self.n.dropped,
            packets_in_flight: in_flight,
            tcp_connections_peak: self.hosts.flows.len() as u64,
            sim_time_s: end.as_secs_f64(),
            wall_s: wall,
            packet_hops_per_s: self.n.packet_hops as f64 / wall.max(1e-9),
            stopped_at_stop_time: stopped,
            stages: std::mem::take(&mut self.rec.stage_reports),
            stopped_by_agent: self.agents.ended.take(),
        };
        Output {
            summary,
            flows,
            probes,
            queues,
            ports: records::port_table(&self.net, &self.rec.port_names, end),
            rounds: crate::app::incast::rounds(&ops),
            ops,
            agent_rows: {
                // A switch's name: the first of its ports' "node->peer".
                let (net, names) = (&self.net, &self.rec.port_names);
                self.agents.book.table(|n| {
                    let port = &names[net.ports_of(n).start as usize];
                    port.split("->").next().unwrap_or_default().to_string()
                })
            },
            flow_trace,
            links,
            pcaps: self
                .rec
                .capture_names
                .into_iter()
                .zip(self.rec.captures)
                .map(|(n, c)| (n, c.into_bytes()))
                .collect(),
        }
    }
}
