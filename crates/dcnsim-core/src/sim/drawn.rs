//! The flows a scenario's open-loop traffic opens, drawn without simulating
//! the network, and the path each takes: what a link-level decomposition
//! (Parsimon, Zhao et al., NSDI 2023, §4; `python/dcnsim/estimate.py`) starts
//! from.
//!
//! The listed flows (`[[traffic.flows]]`) and the Poisson workloads
//! (`[[traffic.workloads]]`) are open-loop: when a flow starts, to whom and
//! how big does not depend on the network. Each workload instance is driven
//! here by the same code and the same random stream as in a run
//! ([`app_rng`]), through a context that only records the flows it opens and
//! keeps its timers, so the sources, destinations, sizes and start times are
//! those a run with the same seed draws. Closed-loop applications (incast
//! rounds, request/response, barriers, shuffles...) open flows when earlier
//! ones end, which only a packet-level run knows: they are refused by name.
//!
//! Each flow's path is routed through the network's routes ([`Routes`]):
//! at every switch one of the equal-cost next hops, chosen by a hash of the
//! flow id, the switch and the seed. That is Parsimon's per-flow random
//! choice among ECMP paths (`parsimon-core/src/network.rs`,
//! `edge_indices_between`), not the five-tuple hash a run uses: the path of
//! one flow differs from the run's, the load per link is the same in
//! distribution.

use super::hosts::ideal_fct;
use super::{app_rng, derive, SALT_DRAWN_PATH};
use crate::app::{Context, Datagram, Op, OpenFlow};
use crate::records::{Column, Table};
use crate::routing::{Numbering, Routes};
use crate::scenario::{Scenario, ScenarioError};
use crate::tcp::Outcome;
use crate::topology::NodeKind;
use crate::units::Time;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// The drawn flows, their paths and the network's ports.
pub struct Drawn {
    /// One row per flow, in start order (ties: listed flows first, then by
    /// application and timer order): `src`, `dst`, `size_bytes`, `start_s`,
    /// `class`, `protocol` (empty: `transport.protocol`), `ideal_fct_s` (on
    /// its path, as a run computes it), `first_hop` and `hops`, its path's
    /// rows of `hops`.
    pub flows: Table,
    /// Every flow's egress ports in path order (`port`): flow `i`'s are rows
    /// `first_hop[i] .. first_hop[i] + hops[i]`.
    pub hops: Table,
    /// One row per egress port: its node and peer (ids and names), whether
    /// each is a host, `rate_bps`, `delay_s` (propagation) and `arrive_s`
    /// (propagation plus the switch latency when the peer is a switch: what
    /// a packet takes from the end of its serialization to its arrival), and
    /// `reverse`, the port of the same link in the other direction.
    pub ports: Table,
}

/// A flow as an application opened it, and when.
struct Opened {
    flow: OpenFlow,
    start: Time,
}

/// What a workload sees: the time, the hosts, the flows it opens and the
/// timers it sets; nothing else is called by an open-loop application.
struct Recorder {
    now: Time,
    hosts: u32,
    app: u32,
    /// Pending timers: (time, order set, application, token).
    timers: BinaryHeap<Reverse<(Time, u64, u32, u64)>>,
    set: u64,
    opened: Vec<Opened>,
}

impl Context for Recorder {
    fn now(&self) -> Time {
        self.now
    }

    fn hosts(&self) -> u32 {
        self.hosts
    }

    fn open_flow(&mut self, flow: OpenFlow) -> u32 {
        self.opened.push(Opened {
            flow,
            start: self.now,
        });
        self.opened.len() as u32 - 1
    }

    fn append(&mut self, _: u32, _: u64, _: bool) {
        unreachable!("only open-loop applications are drawn (a workload never appends)")
    }

    fn flow(&self, _: u32) -> Outcome {
        unreachable!("only open-loop applications are drawn (a workload reads no flow)")
    }

    fn send_datagram(&mut self, _: Datagram) {
        unreachable!("only open-loop applications are drawn (a workload sends no datagram)")
    }

    fn set_timer(&mut self, at: Time, token: u64) {
        self.set += 1;
        self.timers.push(Reverse((at, self.set, self.app, token)));
    }

    fn write_op(&mut self, _: Op) {
        unreachable!("only open-loop applications are drawn (a workload writes no operation)")
    }
}

/// The open-loop applications: the keys of `[traffic]` drawn here.
pub const OPEN_LOOP: [&str; 1] = ["workloads"];

/// The flows `sc` opens before its `stop_time` (or all, without one), their
/// paths and the ports. Refuses probes, streams and closed-loop applications
/// by their key.
pub fn drawn(sc: &Scenario) -> Result<Drawn, ScenarioError> {
    let t = &sc.traffic;
    for (key, n) in [("probes", t.probes.len()), ("streams", t.streams.len())] {
        if n > 0 {
            return Err(ScenarioError::new(
                format!("traffic.{key}"),
                "datagrams are not flows: the decomposition estimates TCP flows only",
            ));
        }
    }
    if let Some(app) = t.apps.iter().find(|a| !OPEN_LOOP.contains(&a.key())) {
        return Err(ScenarioError::new(
            format!("traffic.{}", app.key()),
            "a closed-loop application (it opens flows when earlier ones end, which only \
             a packet-level run knows): the decomposition needs an open-loop flow list \
             (traffic.flows, traffic.workloads)",
        ));
    }
    let stop = sc.stop_time.unwrap_or(Time(u64::MAX));
    let mut rec = Recorder {
        now: Time::ZERO,
        hosts: sc.topology.host_count() as u32,
        app: 0,
        timers: BinaryHeap::new(),
        set: 0,
        opened: Vec::new(),
    };
    for f in &t.flows {
        rec.opened.push(Opened {
            flow: OpenFlow {
                src: f.src,
                dst: f.dst,
                size: f.size.0,
                deadline: f.deadline,
                class: f.class,
                protocol: f.protocol,
                op: None,
                keep_open: false,
            },
            start: f.start,
        });
    }
    let mut instances = [0u32; crate::app::KEYS.len()];
    let mut apps = Vec::with_capacity(t.apps.len());
    for spec in &t.apps {
        let kind = spec.kind();
        let instance = instances[kind];
        instances[kind] += 1;
        let mut app = spec.build(app_rng(sc.seed, kind, instance));
        rec.app = apps.len() as u32;
        app.start(&mut rec);
        apps.push(app);
    }
    while let Some(Reverse((at, _, app, token))) = rec.timers.pop() {
        if at >= stop {
            break;
        }
        rec.now = at;
        rec.app = app;
        apps[app as usize].on_timer(&mut rec, token);
    }
    let mut opened = rec.opened;
    opened.retain(|o| o.start < stop);
    opened.sort_by_key(|o| o.start); // stable: ties keep their order
    Ok(routed(sc, &opened))
}

/// The tables of the `opened` flows routed through `sc`'s network.
fn routed(sc: &Scenario, opened: &[Opened]) -> Drawn {
    let topo = &sc.topology;
    let ports = topo.ports();
    let num = Numbering::of(topo, &ports);
    let routes = Routes::build(&num, topo, &ports);
    let arrive: Vec<Time> = ports
        .iter()
        .map(|&(_, peer, l)| arrive_after(sc, peer, l))
        .collect();
    let hop = |p: &i64| (ports[*p as usize].2.rate, arrive[*p as usize]);
    let (mut first_hop, mut hop_count, mut hops) = (Vec::new(), Vec::new(), Vec::new());
    let mut ideal = Vec::with_capacity(opened.len());
    for (i, o) in opened.iter().enumerate() {
        let dst = num.host_node(o.flow.dst);
        let mut port = num.host_port[o.flow.src as usize];
        first_hop.push(hops.len() as i64);
        hops.push(i64::from(port));
        loop {
            let node = num.peer[port as usize];
            if num.is_host(node) {
                break;
            }
            let next = routes.next_hops(node, dst);
            let salt = derive(sc.seed, SALT_DRAWN_PATH, (i as u64) << 24 ^ u64::from(node));
            port = next.get((salt % next.len() as u64) as usize);
            hops.push(i64::from(port));
        }
        hop_count.push(hops.len() as i64 - first_hop[i]);
        let path = &hops[first_hop[i] as usize..];
        let t = ideal_fct(
            path.iter().map(hop),
            o.flow.size,
            &sc.transport,
            sc.network.host_delay.mean_both_ways(),
        );
        ideal.push(t.as_secs_f64());
    }
    let col_i = |f: &dyn Fn(&Opened) -> i64| Column::I64(opened.iter().map(f).collect());
    let mut flows = Table::default();
    flows.push("src", col_i(&|o| i64::from(o.flow.src)));
    flows.push("dst", col_i(&|o| i64::from(o.flow.dst)));
    flows.push("size_bytes", col_i(&|o| o.flow.size as i64));
    flows.push(
        "start_s",
        Column::F64(opened.iter().map(|o| o.start.as_secs_f64()).collect()),
    );
    flows.push("class", col_i(&|o| i64::from(o.flow.class)));
    flows.push(
        "protocol",
        Column::Str(
            opened
                .iter()
                .map(|o| {
                    o.flow
                        .protocol
                        .map_or(String::new(), |p| format!("{p:?}").to_lowercase())
                })
                .collect(),
        ),
    );
    flows.push("ideal_fct_s", Column::F64(ideal));
    flows.push("first_hop", Column::I64(first_hop));
    flows.push("hops", Column::I64(hop_count));
    let mut hop_table = Table::default();
    hop_table.push("port", Column::I64(hops));
    Drawn {
        flows,
        hops: hop_table,
        ports: port_table(sc, &ports, &num, &arrive),
    }
}

/// What a packet takes from the end of its serialization on link `l` to its
/// arrival at `peer`: the propagation delay, and the switch latency when the
/// peer is a switch (as the network's ports are built).
fn arrive_after(sc: &Scenario, peer: usize, l: &crate::topology::Link) -> Time {
    match sc.topology.nodes[peer].kind {
        NodeKind::Host => l.delay,
        NodeKind::Switch => l.delay + sc.network.switch_latency,
    }
}

fn port_table(
    sc: &Scenario,
    ports: &[(usize, usize, &crate::topology::Link)],
    num: &Numbering,
    arrive: &[Time],
) -> Table {
    let topo = &sc.topology;
    let is_host = |n: usize| matches!(topo.nodes[n].kind, NodeKind::Host);
    let mut t = Table::default();
    t.push(
        "node",
        Column::I64(ports.iter().map(|p| p.0 as i64).collect()),
    );
    t.push(
        "peer",
        Column::I64(ports.iter().map(|p| p.1 as i64).collect()),
    );
    let name = |n: usize| topo.nodes[n].name.clone();
    t.push(
        "node_name",
        Column::Str(ports.iter().map(|p| name(p.0)).collect()),
    );
    t.push(
        "peer_name",
        Column::Str(ports.iter().map(|p| name(p.1)).collect()),
    );
    let host = |n: usize| i64::from(is_host(n));
    t.push(
        "node_is_host",
        Column::I64(ports.iter().map(|p| host(p.0)).collect()),
    );
    t.push(
        "peer_is_host",
        Column::I64(ports.iter().map(|p| host(p.1)).collect()),
    );
    t.push(
        "rate_bps",
        Column::I64(ports.iter().map(|p| p.2.rate.bps() as i64).collect()),
    );
    t.push(
        "delay_s",
        Column::F64(ports.iter().map(|p| p.2.delay.as_secs_f64()).collect()),
    );
    t.push(
        "arrive_s",
        Column::F64(arrive.iter().map(|a| a.as_secs_f64()).collect()),
    );
    t.push(
        "reverse",
        Column::I64(num.reverse.iter().map(|&r| i64::from(r)).collect()),
    );
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(traffic: &str) -> Scenario {
        let text = format!(
            r#"
seed = 3
stop_time = "20ms"
[topology]
kind = "fat_tree"
k = 4
link = {{ rate = "10Gbps", delay = "1us" }}
{traffic}
"#
        );
        let value: serde_json::Value = toml::from_str(&text).unwrap();
        Scenario::from_value(value).unwrap()
    }

    fn ints(t: &Table, name: &str) -> Vec<i64> {
        match &t.columns.iter().find(|(n, _)| *n == name).unwrap().1 {
            Column::I64(v) => v.clone(),
            _ => panic!("{name} is not an integer column"),
        }
    }

    /// The drawn workload is the run's: same sources, destinations and sizes
    /// as the flows table of a packet-level run with the same seed.
    #[test]
    fn draws_the_flows_a_run_opens() {
        let sc = scenario(
            r#"[[traffic.workloads]]
src = "all"
dst = "random"
cdf = "websearch"
load = 0.3"#,
        );
        let d = drawn(&sc).unwrap();
        let out = crate::run(&sc, &mut |_| true).unwrap();
        let key = |t: &Table, size: &str| {
            let mut v: Vec<(i64, i64, i64)> = ints(t, "src")
                .into_iter()
                .zip(ints(t, "dst"))
                .zip(ints(t, size))
                .map(|((a, b), c)| (a, b, c))
                .collect();
            v.sort();
            v
        };
        assert!(ints(&d.flows, "src").len() > 50);
        assert_eq!(key(&d.flows, "size_bytes"), key(&out.flows, "size_bytes"));
    }

    /// Every path starts at the source's NIC, follows links port to port and
    /// ends at the destination; a k = 4 fat-tree's paths have 2, 4 or 6 hops.
    #[test]
    fn paths_are_shortest_and_connected() {
        let sc = scenario(
            r#"[[traffic.workloads]]
src = "all"
dst = "random"
size = "10KB"
load = 0.2"#,
        );
        let d = drawn(&sc).unwrap();
        let (port, node, peer) = (
            ints(&d.hops, "port"),
            ints(&d.ports, "node"),
            ints(&d.ports, "peer"),
        );
        let hosts = &sc.topology.hosts;
        let (src, dst) = (ints(&d.flows, "src"), ints(&d.flows, "dst"));
        for (i, (first, n)) in ints(&d.flows, "first_hop")
            .into_iter()
            .zip(ints(&d.flows, "hops"))
            .enumerate()
        {
            let path = &port[first as usize..(first + n) as usize];
            assert!([2, 4, 6].contains(&path.len()), "{path:?}");
            assert_eq!(node[path[0] as usize] as usize, hosts[src[i] as usize]);
            assert_eq!(
                peer[*path.last().unwrap() as usize] as usize,
                hosts[dst[i] as usize]
            );
            for w in path.windows(2) {
                assert_eq!(peer[w[0] as usize], node[w[1] as usize]);
            }
        }
    }

    #[test]
    fn refuses_closed_loop_applications_by_key() {
        let sc = scenario(
            r#"[[traffic.incast]]
aggregator = 0
workers = "all"
sru = "64KB""#,
        );
        let err = drawn(&sc).err().unwrap().to_string();
        assert!(err.starts_with("traffic.incast: a closed-loop"), "{err}");
    }
}
