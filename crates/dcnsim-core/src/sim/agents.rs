//! Switch agents on the data path: running their hooks on a packet at
//! their switch or at their timers, and sending what they emit (routed
//! packets from the switch, MAC control frames out of a port ahead of its
//! queue), setting their timers and keeping their rows.

use super::Simulation;
use crate::agent::{Emit, Switch, SwitchAgent};
use crate::engine::Event;
use crate::network::Offered;
#[cfg(doc)]
use crate::network::Port;
use crate::packet::{Packet, NONE};
use crate::records::{Column, Table};
use crate::units::Time;

/// The switch agents of a run, owned here.
#[derive(Default)]
pub(super) struct Agents {
    /// The switch agents at each node (empty when the scenario has none).
    pub(super) by_node: Vec<Vec<Box<dyn SwitchAgent>>>,
    /// The packet hooks any agent at each node has (`SwitchAgent::hooks`).
    pub(super) hooked: Vec<u8>,
    /// The packet hooks any agent anywhere has: what the data path tests
    /// before calling [`Simulation::run_agents`] (0 without agents).
    pub(super) any: u8,
    /// Packets agents just emitted (reused buffer).
    pub(super) emitted: Vec<Emit>,
    /// Agents' timers and rows.
    pub(super) book: AgentBook,
    /// Why an agent ended the run ([`Switch::end_run`]), if one did.
    pub(super) ended: Option<String>,
}

/// Agents' timers and rows.
#[derive(Default)]
pub(super) struct AgentBook {
    /// Pending timers (switch node, agent, token), by the index their
    /// [`Event::AgentTimer`] carries; `None` once fired.
    timers: Vec<Option<(u32, u32, u64)>>,
    /// Indices of `timers` free for the next.
    free: Vec<u32>,
    /// The `agent_rows` table's columns.
    time: Vec<f64>,
    switch: Vec<u32>,
    agent: Vec<i64>,
    key: Vec<&'static str>,
    value: Vec<f64>,
}

impl AgentBook {
    /// The `agent_rows` table: one row per [`Switch::row`], with the
    /// switch's name from `names` (by node).
    pub(super) fn table(self, names: impl Fn(u32) -> String) -> Table {
        let mut t = Table::default();
        t.push("time_s", Column::F64(self.time));
        t.push(
            "switch",
            Column::Str(self.switch.into_iter().map(names).collect()),
        );
        t.push("agent", Column::I64(self.agent));
        t.push(
            "key",
            Column::Str(self.key.into_iter().map(String::from).collect()),
        );
        t.push("value", Column::F64(self.value));
        t
    }
}

impl Simulation {
    /// Run `hook` of every agent at the node of `port` on packet `p` (there
    /// may be none). What they emit is sent by an [`Event::AgentSend`] at the
    /// same time, once the current event is handled. Returns whether an
    /// arrival hook discarded the packet ([`Switch::discard`]). Out of line
    /// and called only when some agent has the hook (`which`, tested by the
    /// caller on `Agents::any`), so the hot path stays small.
    #[inline(never)]
    pub(super) fn run_agents(
        &mut self,
        port: u32,
        p: u32,
        which: u8,
        hook: impl Fn(&mut dyn SwitchAgent, &mut Switch, &mut Packet),
    ) -> bool {
        let node = self.net.ports[port as usize].node;
        if self.agents.hooked[node as usize] & which == 0 {
            return false;
        }
        let agents = &mut self.agents.by_node[node as usize];
        let was_empty = self.agents.emitted.is_empty();
        let now = self.events.now();
        let hosts = &self.hosts;
        let live = |slot| hosts.live(slot);
        let mut sw = Switch::new(now, node, &self.net, &mut self.agents.emitted, &live);
        let mut pkt = self.arena.get(p);
        for (i, agent) in agents.iter_mut().enumerate() {
            if agent.hooks() & which != 0 {
                hook(agent.as_mut(), sw.for_agent(i as u32), &mut pkt);
            }
        }
        let discarded = sw.discarded();
        self.arena.put(p, pkt);
        if was_empty && !self.agents.emitted.is_empty() {
            self.events.schedule(now, Event::AgentSend);
        }
        discarded
    }

    /// Send what agents emitted: routed packets from their switch, control
    /// frames ahead of their port's queue. Sending may make agents emit more.
    /// An agent ending the run empties the event queue, so the loop ends
    /// after this event.
    pub(super) fn send_emitted(&mut self) {
        while !self.agents.emitted.is_empty() {
            let mut out = std::mem::take(&mut self.agents.emitted);
            for e in out.drain(..) {
                if let Emit::Routed { .. } | Emit::Control(..) = e {
                    self.n.injected += 1;
                    self.n.from_switches += 1;
                }
                match e {
                    Emit::Routed {
                        from,
                        mut pkt,
                        flow,
                    } => {
                        if let Some(flow) = flow {
                            // Its flow may have ended since it was emitted.
                            if self.hosts.live(pkt.flow) != Some(flow.id()) {
                                self.n.injected -= 1;
                                self.n.from_switches -= 1;
                                continue;
                            }
                            self.hosts.flows[pkt.flow as usize].in_network += 1;
                        }
                        // Routed afresh: an agent may send a copy of a
                        // packet whose port here was planned for its old
                        // destination.
                        pkt.route = NONE;
                        let p = self.arena.alloc(pkt);
                        let now = self.now();
                        let port = self.fwd.egress(&self.net, from, self.arena.hop_mut(p), now);
                        self.enqueue(port, p);
                    }
                    Emit::Control(port, pkt) => {
                        let p = self.arena.alloc(pkt);
                        self.enqueue_control(port, p);
                    }
                    Emit::Timer {
                        node,
                        agent,
                        at,
                        token,
                    } => {
                        let book = &mut self.agents.book;
                        let entry = Some((node, agent, token));
                        let i = match book.free.pop() {
                            Some(i) => {
                                book.timers[i as usize] = entry;
                                i
                            }
                            None => {
                                book.timers.push(entry);
                                book.timers.len() as u32 - 1
                            }
                        };
                        self.events.schedule(at, Event::AgentTimer(i));
                    }
                    Emit::Row {
                        node,
                        agent,
                        time,
                        key,
                        value,
                    } => {
                        let book = &mut self.agents.book;
                        book.time.push(time.as_secs_f64());
                        book.switch.push(node);
                        book.agent.push(i64::from(agent));
                        book.key.push(key);
                        book.value.push(value);
                    }
                    Emit::End { port, reason } => {
                        if self.agents.ended.is_none() {
                            let name = &self.rec.port_names[port as usize];
                            let at = self.now();
                            self.agents.ended = Some(format!("{name} at {at}: {reason}"));
                        }
                    }
                }
            }
            if self.agents.emitted.is_empty() {
                self.agents.emitted = out;
            }
        }
        if self.agents.ended.is_some() {
            while self.events.pop().is_some() {}
        }
    }

    /// A MAC control frame goes out of `port` before anything queued there
    /// ([`Port::offer_control`]).
    fn enqueue_control(&mut self, port: u32, p: u32) {
        let now = self.now();
        let pt = &mut self.net.ports[port as usize];
        match pt.offer_control(p, now) {
            Offered::Starts(_) => self.transmit_control(port, p),
            Offered::Waits => {
                let t = pt.busy_until.max(now);
                self.wake(port, t);
            }
            Offered::Dropped => self.drop_at(port, p),
        }
    }

    /// Serialize control frame `p` onto `port` now ([`Port::start_control`]).
    pub(super) fn transmit_control(&mut self, port: u32, p: u32) {
        self.net.ports[port as usize].start_control(self.arena.hop(p));
        self.transmit(port, p);
    }

    /// Agent timer `i` is due: call its agent back. Returns whether the
    /// agent did anything (emitted a packet, timer, row or end): a timer that
    /// finds nothing to do (a refresh of a pause since lifted) does not
    /// extend the run's end time.
    pub(super) fn agent_timer(&mut self, i: u32) -> bool {
        let book = &mut self.agents.book;
        let Some((node, agent, token)) = book.timers[i as usize].take() else {
            return false;
        };
        book.free.push(i);
        let now: Time = self.events.now();
        let was_empty = self.agents.emitted.is_empty();
        let hosts = &self.hosts;
        let live = |slot| hosts.live(slot);
        let before = self.agents.emitted.len();
        let mut sw = Switch::new(now, node, &self.net, &mut self.agents.emitted, &live);
        self.agents.by_node[node as usize][agent as usize].on_timer(sw.for_agent(agent), token);
        let acted = self.agents.emitted.len() > before;
        if was_empty && acted {
            self.events.schedule(now, Event::AgentSend);
        }
        acted
    }
}
