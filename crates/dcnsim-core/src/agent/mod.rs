//! Switch agents: per-switch programs on the data path.
//!
//! An agent runs at every switch its `[[agents]]` entry selects, with its own
//! state per switch. It sees each packet
//! - on **arrival** at the switch, after the forwarding policy chose the
//!   egress port and before that port's AQM and queue see it;
//! - on **departure** from a port of the switch, as serialization starts (the
//!   packet's `ingress` is still the port it arrived on);
//! - on **drop** at a port of the switch (outage, AQM, full or evicting
//!   queue), so per-switch accounting can balance;
//!
//! and may rewrite the header (ECN, class, prio, the in-band option …) and
//! emit packets of its own from the switch ([`Switch::send`], routed like any
//! packet; [`Switch::send_about`], a packet about a flow it holds by a
//! [`FlowHandle`]; [`Switch::send_on`], a MAC control frame out of one port
//! ahead of its queue). It may set timers ([`Switch::set_timer`],
//! [`SwitchAgent::on_timer`]) and write rows of the `agent_rows` table
//! ([`Switch::row`]: time, switch, agent, key, value), so a new agent needs
//! no row type of its own. Emitted packets enter the network at the same simulated time,
//! once the event that caused them has been handled. They are real: they
//! queue, serialize, travel, count as injected and delivered, and show in
//! captures.
//!
//! Ethernet flow control ([`pause`]) and Packet Slicing ([`packet_slicing`]:
//! ICMP next-hop MTU from the switch) are agents. What a port does to each
//! packet it queues (BOTCP's occupancy stamp, a shaper) is a port stage
//! (`crate::stage`), which keeps the port's speed.
//!
//! Add an agent by writing one file here that implements [`Agent`] (and
//! [`SwitchAgent`]) and adding one line to the `agents!` registry below. A
//! Rust program may also attach its own [`SwitchAgent`] to a switch with
//! `Simulation::attach_agent`.

pub mod packet_slicing;
pub mod pause;

use crate::error::{join_path, parse_at, ScenarioError};
use crate::network::{Network, NetworkSpec, Port};
use crate::packet::{Kind, Packet, NONE};
use crate::tcp::TransportSpec;
use crate::topology::{NodeKind, Topology};
use crate::units::Time;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::Value;
use std::fmt::Debug;

/// [`SwitchAgent::hooks`]: the agent has [`SwitchAgent::on_arrival`].
pub const ON_ARRIVAL: u8 = 1;
/// [`SwitchAgent::hooks`]: the agent has [`SwitchAgent::on_departure`].
pub const ON_DEPARTURE: u8 = 2;
/// [`SwitchAgent::hooks`]: the agent has [`SwitchAgent::on_drop`].
pub const ON_DROP: u8 = 4;

/// The hooks of an agent at one switch. Every hook has a do-nothing default.
pub trait SwitchAgent {
    /// `pkt` arrived at the switch and will be offered to port `egress`.
    fn on_arrival(&mut self, _sw: &mut Switch, _pkt: &mut Packet, _egress: u32) {}

    /// `pkt` starts serializing on port `port` of the switch.
    fn on_departure(&mut self, _sw: &mut Switch, _pkt: &mut Packet, _port: u32) {}

    /// `pkt` was dropped at port `port` of the switch.
    fn on_drop(&mut self, _sw: &mut Switch, _pkt: &Packet, _port: u32) {}

    /// A timer this agent set ([`Switch::set_timer`]) with `token` is due.
    fn on_timer(&mut self, _sw: &mut Switch, _token: u64) {}

    /// Whether the agent needs every port event-driven: it pauses ports or
    /// sends control frames ahead of their queues ([`Switch::send_on`]), or
    /// needs [`SwitchAgent::on_departure`] as serialization starts. An
    /// agent that says `false` leaves scheduled FIFO ports scheduled (the
    /// run keeps their speed) and must not send control frames; there a
    /// departure is seen when the port commits the packet to the wire,
    /// which may be before it starts.
    fn event_driven_ports(&self) -> bool {
        true
    }

    /// The packet hooks this agent has (`ON_ARRIVAL | ON_DEPARTURE |
    /// ON_DROP`; all by default): the others are never called, and a switch
    /// none of whose agents names a hook costs a packet nothing there (a
    /// hook call copies the whole packet out of the arena and back). Timers
    /// are always delivered.
    fn hooks(&self) -> u8 {
        ON_ARRIVAL | ON_DEPARTURE | ON_DROP
    }
}

/// An agent kind of the registry: its parameters and how to build one for a
/// switch.
pub trait Agent: SwitchAgent + Sized + 'static {
    /// The kind's own keys of an `[[agents]]` entry (besides `kind` and
    /// `switches`).
    type Spec: DeserializeOwned + Clone + Debug + PartialEq;

    /// Checks beyond the types, knowing the rest of the scenario (an agent
    /// may require a transport setting or a queue kind); errors name the
    /// key under `path`, or the setting required.
    fn check(_spec: &Self::Spec, _path: &str, _sc: &ScenarioView) -> Result<(), ScenarioError> {
        Ok(())
    }

    fn new(spec: &Self::Spec, sw: &Switch) -> Self;
}

/// What an agent's [`Agent::check`] sees of the scenario around it.
#[derive(Clone, Copy, Debug)]
pub struct ScenarioView<'a> {
    pub topology: &'a Topology,
    pub network: &'a NetworkSpec,
    pub transport: &'a TransportSpec,
}

/// A TCP flow as an agent may hold it: its connection's slot and its
/// `flow_id`. A slot is given to a later flow once its flow is let go, but
/// no two flows share an id, so a handle kept past its flow's end is
/// refused ([`Switch::send_about`]) instead of reaching the later flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FlowHandle {
    slot: u32,
    id: u32,
}

impl FlowHandle {
    /// The flow's `flow_id` (its row of the flow table).
    pub fn id(self) -> u32 {
        self.id
    }
}

/// The live flow in a connection slot, if any: its `flow_id`.
pub type LiveFlows<'a> = &'a dyn Fn(u32) -> Option<u32>;

/// What a hook sees of its switch, and where it emits packets, sets timers
/// and writes rows.
pub struct Switch<'a> {
    pub now: Time,
    pub node: u32,
    /// The agent's place among the agents of its switch (in the order they
    /// were attached): its timers and rows are its own.
    agent: u32,
    net: &'a Network,
    out: &'a mut Vec<Emit>,
    flows: LiveFlows<'a>,
    /// Whether an arrival hook discarded the packet ([`Switch::discard`]).
    discarded: bool,
}

/// What an agent emitted, waiting for the current event to be handled.
#[derive(Clone, Debug)]
pub enum Emit {
    /// Routed by the forwarding policy from switch `from`; about `flow`, if
    /// it names one (checked again as it is sent).
    Routed {
        from: u32,
        pkt: Packet,
        flow: Option<FlowHandle>,
    },
    /// A MAC control frame out of one port, served before its queue.
    Control(u32, Packet),
    /// Call agent `agent` of switch `node` back at `at` with `token`.
    Timer {
        node: u32,
        agent: u32,
        at: Time,
        token: u64,
    },
    /// A row of the `agent_rows` table.
    Row {
        node: u32,
        agent: u32,
        time: Time,
        key: &'static str,
        value: f64,
    },
    /// End the run now, because of what `port` shows (`reason`).
    End { port: u32, reason: String },
}

impl<'a> Switch<'a> {
    pub(crate) fn new(
        now: Time,
        node: u32,
        net: &'a Network,
        out: &'a mut Vec<Emit>,
        flows: LiveFlows<'a>,
    ) -> Self {
        Switch {
            now,
            node,
            agent: 0,
            net,
            out,
            flows,
            discarded: false,
        }
    }

    /// The same switch as seen by its agent number `agent`.
    pub(crate) fn for_agent(&mut self, agent: u32) -> &mut Self {
        self.agent = agent;
        self
    }

    /// The switch's ports (indices into the network's ports).
    pub fn ports(&self) -> std::ops::Range<u32> {
        self.net.ports_of(self.node)
    }

    /// A port of the network: its rate (`rate`), buffer (`buffer`), peer and
    /// queue occupancy.
    pub fn port(&self, port: u32) -> &Port {
        &self.net.ports[port as usize]
    }

    /// The flow `pkt` belongs to (a TCP segment, or ICMP about a flow),
    /// while it is live.
    pub fn flow(&self, pkt: &Packet) -> Option<FlowHandle> {
        if !matches!(pkt.kind, Kind::Tcp | Kind::IcmpMtu { .. }) || pkt.flow == NONE {
            return None;
        }
        (self.flows)(pkt.flow).map(|id| FlowHandle { slot: pkt.flow, id })
    }

    /// Send `pkt`, about no flow, from this switch, routed to `pkt.dst` by
    /// the forwarding policy (its `src` should be this switch). A TCP or
    /// ICMP packet names its flow by a handle ([`Switch::send_about`]):
    /// here it is refused (`false`).
    pub fn send(&mut self, pkt: Packet) -> bool {
        if matches!(pkt.kind, Kind::Tcp | Kind::IcmpMtu { .. }) {
            return false;
        }
        self.out.push(Emit::Routed {
            from: self.node,
            pkt,
            flow: None,
        });
        true
    }

    /// Send `pkt` about `flow` (a TCP segment or ICMP message of it) from
    /// this switch, routed as [`Switch::send`]. Refused (`false`, nothing
    /// sent) when the flow has been let go since the handle was taken.
    pub fn send_about(&mut self, flow: FlowHandle, mut pkt: Packet) -> bool {
        if (self.flows)(flow.slot) != Some(flow.id) {
            return false;
        }
        pkt.flow = flow.slot;
        self.out.push(Emit::Routed {
            from: self.node,
            pkt,
            flow: Some(flow),
        });
        true
    }

    /// Send a MAC control frame (such as PAUSE) out of `port`, one of this
    /// switch's ports, ahead of the packets queued there (802.3 Annex 31B:
    /// control frames go out at the next frame boundary and are never paused).
    pub fn send_on(&mut self, port: u32, pkt: Packet) {
        debug_assert!(
            self.ports().contains(&port),
            "send_on: not a port of this switch"
        );
        self.out.push(Emit::Control(port, pkt));
    }

    /// Discard the arriving packet (from [`SwitchAgent::on_arrival`] only):
    /// it is dropped at its egress port instead of being offered to it, is
    /// counted there and seen by the drop hooks (such as an ingress
    /// admission check, `pause`'s headroom). Agents after this one still see
    /// its arrival.
    pub fn discard(&mut self) {
        self.discarded = true;
    }

    /// Whether an arrival hook discarded the packet.
    pub(crate) fn discarded(&self) -> bool {
        self.discarded
    }

    /// End the run now, once the current event is handled, because of what
    /// port `port` shows (a deadlock, say): the run's tables are made as at
    /// its end, and `summary.stopped_by_agent` reports the switch, the port
    /// and `reason`.
    pub fn end_run(&mut self, port: u32, reason: String) {
        self.out.push(Emit::End { port, reason });
    }

    /// Call this agent back ([`SwitchAgent::on_timer`]) at `at` (not before
    /// now) with `token`. Each call sets one more timer.
    pub fn set_timer(&mut self, at: Time, token: u64) {
        self.out.push(Emit::Timer {
            node: self.node,
            agent: self.agent,
            at: at.max(self.now),
            token,
        });
    }

    /// Write a row of the `agent_rows` table: now, this switch, this agent,
    /// `key` and `value`.
    pub fn row(&mut self, key: &'static str, value: f64) {
        self.out.push(Emit::Row {
            node: self.node,
            agent: self.agent,
            time: self.now,
            key,
            value,
        });
    }
}

/// Which switches an `[[agents]]` entry runs at.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(
    untagged,
    expecting = "expected \"all\", \"tor\" or a list of switch names"
)]
pub enum SwitchSel {
    /// `"all"` switches, or `"tor"`: the switches with a host attached.
    Group(String),
    /// Switches by name.
    Names(Vec<String>),
}

macro_rules! agents {
    ($($variant:ident($ty:ty),)*) => {
        /// The agent kinds (`kind = "..."` of an `[[agents]]` entry).
        #[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq, strum::VariantNames)]
        #[serde(rename_all = "snake_case")]
        #[strum(serialize_all = "snake_case")]
        pub enum AgentKind { $($variant,)* }

        /// One kind's parameters.
        #[derive(Clone, Debug, PartialEq)]
        pub enum AgentParams { $($variant(<$ty as Agent>::Spec),)* }

        impl AgentParams {
            fn parse(kind: AgentKind, rest: Value, path: &str, sc: &ScenarioView) -> Result<AgentParams, ScenarioError> {
                Ok(match kind {
                    $(AgentKind::$variant => {
                        let spec = parse_at(rest, path)?;
                        <$ty>::check(&spec, path, sc)?;
                        AgentParams::$variant(spec)
                    })*
                })
            }

            /// A fresh agent for switch `sw`.
            pub fn build(&self, sw: &Switch) -> Box<dyn SwitchAgent> {
                match self { $(AgentParams::$variant(s) => Box::new(<$ty>::new(s, sw)),)* }
            }
        }
    };
}

agents! {
    Pause(pause::Pause),
    PacketSlicing(packet_slicing::PacketSlicing),
}

/// A validated `[[agents]]` entry: its kind's parameters and the switch
/// nodes it runs at.
#[derive(Clone, Debug, PartialEq)]
pub struct AgentSpec {
    pub params: AgentParams,
    pub nodes: Vec<u32>,
}

#[derive(Deserialize)]
struct Common {
    kind: AgentKind,
    switches: SwitchSel,
}

impl AgentSpec {
    /// Validate the `[[agents]]` entry at `path` (`agents[i]`) of the
    /// scenario `sc`.
    pub fn from_value(
        value: Value,
        path: &str,
        sc: &ScenarioView,
    ) -> Result<AgentSpec, ScenarioError> {
        let Value::Object(mut map) = value else {
            return Err(ScenarioError::new(path, "an agent must be a table of keys"));
        };
        let mut common = serde_json::Map::new();
        for key in ["kind", "switches"] {
            let Some(v) = map.remove(key) else {
                return Err(ScenarioError::new(
                    join_path(path, key),
                    "missing (every agent names its kind and the switches it runs at)",
                ));
            };
            common.insert(key.to_string(), v);
        }
        let common: Common = parse_at(Value::Object(common), path)?;
        let params = AgentParams::parse(common.kind, Value::Object(map), path, sc)?;
        let nodes = resolve(&common.switches, &join_path(path, "switches"), sc.topology)?;
        Ok(AgentSpec { params, nodes })
    }
}

fn resolve(sel: &SwitchSel, path: &str, topo: &Topology) -> Result<Vec<u32>, ScenarioError> {
    let switch = |n: usize| topo.nodes[n].kind == NodeKind::Switch;
    let nodes: Vec<u32> = match sel {
        SwitchSel::Group(g) if g == "all" => (0..topo.nodes.len())
            .filter(|&n| switch(n))
            .map(|n| n as u32)
            .collect(),
        SwitchSel::Group(g) if g == "tor" => {
            let mut tors: Vec<u32> = topo
                .links
                .iter()
                .flat_map(|l| [(l.a, l.b), (l.b, l.a)])
                .filter(|&(s, h)| switch(s) && !switch(h))
                .map(|(s, _)| s as u32)
                .collect();
            tors.sort_unstable();
            tors.dedup();
            tors
        }
        SwitchSel::Group(g) => {
            return Err(ScenarioError::new(
                path,
                format!(
                    "\"{g}\" is not a switch group: use \"all\", \"tor\" or a list of switch names"
                ),
            ))
        }
        SwitchSel::Names(names) => {
            let mut nodes = Vec::with_capacity(names.len());
            for (i, name) in names.iter().enumerate() {
                let at = format!("{path}[{i}]");
                match topo.node_id(name.trim()) {
                    Some(n) if switch(n) => {
                        if nodes.contains(&(n as u32)) {
                            return Err(ScenarioError::new(
                                at,
                                format!("\"{name}\" is listed twice"),
                            ));
                        }
                        nodes.push(n as u32);
                    }
                    Some(_) => {
                        return Err(ScenarioError::new(
                            at,
                            format!("\"{name}\" is a host; agents run at switches"),
                        ))
                    }
                    None => {
                        return Err(ScenarioError::new(
                            at,
                            format!("no switch named \"{name}\""),
                        ))
                    }
                }
            }
            nodes
        }
    };
    if nodes.is_empty() {
        return Err(ScenarioError::new(path, "selects no switch"));
    }
    Ok(nodes)
}
