//! Switch agents on the data path: running their hooks on a packet at
//! their switch, and sending what they emit (routed packets from the
//! switch, MAC control frames out of a port ahead of its queue).

use super::Simulation;
use crate::agent::{Emit, Switch, SwitchAgent};
use crate::engine::Event;
use crate::packet::{Kind, Packet, NONE};

impl Simulation {
    /// Run `hook` of every agent at the node of `port` on packet `p` (there
    /// may be none). What they emit is sent by an [`Event::AgentSend`] at the
    /// same time, once the current event is handled. Out of line and called
    /// only when the scenario has agents, so the hot path stays small.
    #[inline(never)]
    pub(super) fn run_agents(
        &mut self,
        port: u32,
        p: u32,
        hook: impl Fn(&mut dyn SwitchAgent, &mut Switch, &mut Packet),
    ) {
        let node = self.net.ports[port as usize].node;
        let agents = &mut self.agents[node as usize];
        if agents.is_empty() {
            return;
        }
        let was_empty = self.emitted.is_empty();
        let now = self.events.now();
        let mut sw = Switch::new(now, node, &self.net, &mut self.emitted);
        let mut pkt = self.arena.get(p);
        for agent in agents {
            hook(agent.as_mut(), &mut sw, &mut pkt);
        }
        self.arena.put(p, pkt);
        if was_empty && !self.emitted.is_empty() {
            self.events.schedule(now, Event::AgentSend);
        }
    }

    /// Send what agents emitted: routed packets from their switch, control
    /// frames ahead of their port's queue. Sending may make agents emit more.
    pub(super) fn send_emitted(&mut self) {
        while !self.emitted.is_empty() {
            let mut out = std::mem::take(&mut self.emitted);
            for e in out.drain(..) {
                self.n.injected += 1;
                self.n.from_switches += 1;
                match e {
                    Emit::Routed { from, mut pkt } => {
                        if matches!(pkt.kind, Kind::Tcp | Kind::IcmpMtu { .. }) {
                            self.flows[pkt.flow as usize].in_network += 1;
                        }
                        // Routed afresh: an agent may send a copy of a
                        // packet whose port here was planned for its old
                        // destination.
                        pkt.route = NONE;
                        let p = self.arena.alloc(pkt);
                        let port = self.fwd.egress(&self.net, from, self.arena.hop_mut(p));
                        self.enqueue(port, p);
                    }
                    Emit::Control(port, pkt) => {
                        let p = self.arena.alloc(pkt);
                        self.enqueue_control(port, p);
                    }
                }
            }
            if self.emitted.is_empty() {
                self.emitted = out;
            }
        }
    }

    /// A MAC control frame goes out of `port` before anything queued there.
    fn enqueue_control(&mut self, port: u32, p: u32) {
        let now = self.now();
        let pt = &mut self.net.ports[port as usize];
        if pt.is_down(now) {
            pt.drops += 1;
            self.drop_at(port, p);
        } else if pt.busy_until <= now && pt.control.is_empty() {
            self.transmit(port, p);
        } else {
            pt.control.push_back(p);
            let t = pt.busy_until.max(now);
            self.wake(port, t);
        }
    }
}
