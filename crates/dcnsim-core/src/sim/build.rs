//! Construction: the network, its ports' AQM, outages, traces and captures,
//! the forwarding state, and the applications, from a validated scenario
//! (whose names are already resolved to indices).

use super::hosts::Hosts;
use super::links::LinkRows;
use super::records::Recorded;
use super::{
    derive, rng_for, Counters, Simulation, RNG_AQM, RNG_HOST_STACK, RNG_SWITCH, SALT_ECMP,
};
use crate::agent::{Switch, SwitchAgent};
use crate::app::Application;
use crate::engine::EventQueue;
use crate::forwarding::Forwarder;
use crate::host_delay::{Delay, Stack};
use crate::network::{Network, Port};
use crate::packet::Arena;
use crate::pcap::Capture;
use crate::queue::{Aqms, PortAqm};
use crate::scenario::{PcapTarget, Scenario};
use crate::topology::NodeKind;
use crate::units::Time;

impl Simulation {
    pub fn new(sc: &Scenario) -> Simulation {
        let mut net = Network::build(&sc.topology, &sc.network);
        let traced_ports = sc.resolved.traced_ports.clone();
        for (i, &p) in traced_ports.iter().enumerate() {
            net.ports[p as usize].trace = Some(i as u32);
        }
        for &(p, start, stop) in &sc.resolved.outages {
            net.ports[p as usize].add_outage(start, stop);
        }
        for (i, port) in net.ports.iter_mut().enumerate() {
            let spec = match sc.topology.nodes[port.node as usize].kind {
                NodeKind::Host => &sc.network.nic_queue,
                NodeKind::Switch => &sc.network.queue,
            };
            if let Some(a) = &spec.aqm {
                port.aqm = Aqms::new(port.queue.aqm_domains(), a.stateless(), |d| {
                    PortAqm::new(a, rng_for(sc.seed, RNG_AQM, (i as u64) << 8 | d))
                });
            }
        }
        let stage_reports = attach_stages(&mut net, sc);
        let hosts_n = sc.topology.host_count();
        let mut host_capture = vec![None; hosts_n];
        let capture_names: Vec<String> =
            sc.trace.pcap.iter().map(|n| n.trim().to_string()).collect();
        for (c, target) in sc.resolved.pcap.iter().enumerate() {
            let c = c as u32;
            match *target {
                PcapTarget::Port(p) => net.ports[p as usize].add_capture(c),
                PcapTarget::Host(h) => {
                    host_capture[h as usize] = Some(c);
                    let nic = net.host_port[h as usize] as usize;
                    net.ports[nic].add_capture(c);
                }
            }
        }
        let port_names = net
            .ports
            .iter()
            .map(|p| {
                let name = |n: u32| sc.topology.nodes[n as usize].name.as_str();
                format!("{}->{}", name(p.node), name(p.peer))
            })
            .collect();
        let hd = &sc.network.host_delay;
        let stack = |d: &Delay, direction: u64| {
            d.constant().is_none().then(|| {
                let rng = rng_for(sc.seed, RNG_HOST_STACK, direction);
                Box::new(Stack::new(d.clone(), hosts_n, rng))
            })
        };
        let mut sim = Simulation {
            fwd: Forwarder::new(
                &sc.forwarding,
                &net,
                |i| rng_for(sc.seed, RNG_SWITCH, i),
                |i| derive(sc.seed, SALT_ECMP, i),
            ),
            net,
            events: EventQueue::default(),
            arena: Arena::default(),
            dropped: Vec::new(),
            agents: Default::default(),
            send_delay: hd.send.constant().unwrap_or(Time::ZERO),
            receive_delay: hd.receive.constant().unwrap_or(Time::ZERO),
            send_stack: stack(&hd.send, 0),
            receive_stack: stack(&hd.receive, 1),
            host_delay_means: hd.mean_both_ways(),
            streams: Vec::new(),
            hosts: Hosts {
                flows: Vec::new(),
                free_slots: Vec::new(),
                ending: Vec::new(),
                records: Vec::new(),
                transport: sc.transport.clone(),
                segs: Vec::new(),
                params: Vec::new(),
                resume: Vec::new(),
                host_sends: vec![0; hosts_n],
                nic_ahead: Vec::new(),
            },
            apps: Default::default(),
            rec: Recorded {
                traced_flows: sc.trace.flows.clone(),
                flow_trace: Default::default(),
                captures: (0..capture_names.len()).map(|_| Capture::new()).collect(),
                capture_names,
                host_capture,
                probes: Default::default(),
                queues: Default::default(),
                links: None,
                rows_taken: 0,
                traced_ports,
                port_names,
                stage_reports,
            },
            stop: sc.stop_time,
            n: Counters::default(),
            name: sc.name.clone(),
            seed: sc.seed,
        };
        for spec in &sc.agents {
            for &node in &spec.nodes {
                let no_flows = |_| None;
                let sw = Switch::new(
                    Time::ZERO,
                    node,
                    &sim.net,
                    &mut sim.agents.emitted,
                    &no_flows,
                );
                let agent = spec.params.build(&sw);
                sim.attach_agent(node, agent);
            }
        }
        if let Some(interval) = sc.trace.links {
            let rates = sim.net.ports.iter().map(|p| p.rate.bps()).collect();
            sim.rec.links = Some(LinkRows::new(interval, rates));
            sim.start_links();
        }
        let t = &sc.traffic;
        sim.schedule_ports(
            !t.flows.is_empty() || !t.apps.is_empty(),
            t.probes
                .iter()
                .map(|p| p.src)
                .chain(t.streams.iter().map(|s| s.src)),
        );
        sim.start_applications(sc);
        sim
    }

    /// Mark the ports that commit packets to the wire on arrival
    /// (`queue/droptail.rs`): FIFO ports without a shaper stage whose queue
    /// is neither traced nor captured, when no switch agent that needs
    /// event-driven ports runs ([`SwitchAgent::event_driven_ports`]: a PAUSE
    /// may hold any port), and host NICs only without TCP (a host stack
    /// learns when its segments leave the NIC). And the hosts whose NIC may
    /// take TCP packets a host delay ahead, when sent
    /// ([`Simulation::send`]): on the same conditions but any discipline and
    /// with TCP and no stage on the NIC, when no datagram application
    /// (`datagram_sources`: probes, streams) sends from the host, so that
    /// only its TCP packets reach the NIC, all a host delay after they were
    /// sent.
    fn schedule_ports(&mut self, tcp: bool, datagram_sources: impl Iterator<Item = u32>) {
        let free = !self
            .agents
            .by_node
            .iter()
            .flatten()
            .any(|a| a.event_driven_ports());
        let unobserved = |pt: &Port| free && pt.trace.is_none() && !pt.captured();
        for i in 0..self.net.ports.len() {
            let host = self.net.is_host(self.net.ports[i].node);
            let pt = &mut self.net.ports[i];
            let on = unobserved(pt) && !pt.shaped() && pt.queue.schedulable() && !(tcp && host);
            pt.schedule(on);
        }
        let net = &self.net;
        self.hosts.nic_ahead = (0..net.host_port.len())
            .map(|h| {
                let nic = &net.ports[net.host_port[h] as usize];
                unobserved(nic) && !nic.stamps() && !nic.shaped()
            })
            .collect();
        for h in datagram_sources {
            self.hosts.nic_ahead[h as usize] = false;
        }
    }

    /// Run `agent` at switch `node`, after the agents already there (a Rust
    /// program's own agents; scenarios list theirs in `[[agents]]`).
    pub fn attach_agent(&mut self, node: u32, agent: Box<dyn SwitchAgent>) {
        assert!(
            !self.net.is_host(node),
            "attach_agent: node {node} is a host; agents run at switches"
        );
        if self.agents.by_node.is_empty() {
            self.agents.by_node = (0..self.net.node_host.len()).map(|_| Vec::new()).collect();
            self.agents.hooked = vec![0; self.net.node_host.len()];
        }
        self.agents.hooked[node as usize] |= agent.hooks();
        self.agents.any |= agent.hooks();
        if agent.event_driven_ports() {
            for pt in &mut self.net.ports {
                pt.schedule(false);
            }
            self.hosts.nic_ahead.fill(false);
        }
        self.agents.by_node[node as usize].push(agent);
    }

    /// Add `app`, a Rust program's own application, after the scenario's,
    /// and start it (at time 0). Its rows in `ops.parquet` and its flows in
    /// `flows.parquet` carry `name`; instances of one name are numbered in
    /// the order attached. Host NICs become event-driven, as with any TCP
    /// traffic (see `Simulation::schedule_ports`).
    pub fn attach_app(&mut self, name: &str, app: Box<dyn Application>) {
        for &port in &self.net.host_port {
            self.net.ports[port as usize].schedule(false);
        }
        let instance = (0..self.apps.len())
            .filter(|&a| self.apps.label(a).0 == name)
            .count() as u32;
        self.add_app(name.to_string(), instance, app);
    }
}

/// Build every `[[network.stages]]` entry at its ports, with each port's
/// context, and set the ports' stage flags; returns what the summary
/// reports of the entries (each built for its first port).
fn attach_stages(net: &mut Network, sc: &Scenario) -> Vec<serde_json::Value> {
    let mut reports = Vec::new();
    if sc.network.stages.is_empty() {
        return reports;
    }
    for spec in &sc.network.stages {
        for &p in &spec.ports {
            let ctx = net.port_context(p);
            let pt = &mut net.ports[p as usize];
            if p == spec.ports[0] {
                reports.extend(spec.params.report(&ctx));
            }
            pt.stages.push(spec.params.build(&ctx));
            if spec.params.on_enqueue() {
                pt.add_stamps(spec.params.stateless());
            }
            if spec.params.shapes() {
                pt.shape();
            }
        }
    }
    reports
}
