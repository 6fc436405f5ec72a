//! One tiny example per closed-enum axis, written as a registered one is
//! written in its axis's folder, plugged in by a Rust program without
//! registering it, and run: a queue discipline, an AQM, a port stage, a
//! forwarding policy and a topology (docs/architecture.md, "Plug-in axes").
//! Each test checks, against a closed form, that the run used it.
//!
//! The data-plane tests send one constant stream of ten 1500 B datagrams from
//! host 0 to host 1 of a star (`sw0`), sent 1.2 us apart (10 Gbps) and all
//! recorded; host 0's link is 10 Gbps, host 1's 1 Gbps where a test wants a
//! bottleneck at `sw0->host1`, and every link has 1 us of propagation.

mod common;
use common::{port_sent, port_value};
use dcnsim_core::forwarding::{At, ForwardingPolicy, Pick};
use dcnsim_core::network::Network;
use dcnsim_core::packet::Hop;
use dcnsim_core::queue::{Aqm, Discipline, Next, NoKeys, Occupancy, PortContext, Queued, Verdict};
use dcnsim_core::routing::Hops;
use dcnsim_core::stage::Stage;
use dcnsim_core::topology::{Builder, LinkParams, NodeKind, Topology};
use dcnsim_core::units::{Rate, Time};
use dcnsim_core::{Output, Scenario, ScenarioError, Simulation};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::Deserialize;
use std::collections::VecDeque;

const PACKETS: usize = 10;

/// The star and its stream; `host1` is host 1's link rate.
fn star(host1: &str) -> Scenario {
    Scenario::from_toml_str(&format!(
        r#"
[topology]
kind = "star"
hosts = 2
link = {{ rate = "10Gbps", delay = "1us" }}
host_rates = ["10Gbps", "{host1}"]
[[traffic.streams]]
src = 0
dst = 1
rate = "10Gbps"
pattern = "constant"
size = "1500B"
stop = "12us"
record = true
"#
    ))
    .unwrap()
}

/// Run `sc` with what `plug` plugs in, checking packet conservation.
fn run_plugged(sc: &Scenario, plug: impl FnOnce(&mut Simulation)) -> Output {
    let mut sim = Simulation::new(sc);
    plug(&mut sim);
    let out = sim.run(&mut |_| true).expect("not aborted");
    let s = &out.summary;
    assert_eq!(
        s.packets_injected,
        s.packets_delivered + s.packets_dropped + s.packets_in_flight,
        "conservation: {s:?}"
    );
    assert_eq!(out.probes.i64("probe_id").len(), PACKETS);
    out
}

fn port(sc: &Scenario, name: &str) -> u32 {
    sc.topology.port_by_name(name).unwrap()
}

/// The stream's packets that were dropped (hops −1), by probe id.
fn dropped(out: &Output) -> Vec<usize> {
    let hops = out.probes.i64("hops");
    (0..hops.len()).filter(|&i| hops[i] == -1).collect()
}

/// Queue discipline: a FIFO that drops every third packet offered to it.
#[derive(Debug)]
struct EveryThird {
    fifo: VecDeque<Queued>,
    offered: u64,
}

impl Discipline for EveryThird {
    type Spec = NoKeys;

    fn new(_spec: &NoKeys, _port: &PortContext) -> EveryThird {
        EveryThird {
            fifo: VecDeque::new(),
            offered: 0,
        }
    }

    fn enqueue(&mut self, q: Queued, dropped: &mut Vec<u32>) {
        self.offered += 1;
        if self.offered.is_multiple_of(3) {
            dropped.push(q.pkt);
        } else {
            self.fifo.push_back(q);
        }
    }

    fn dequeue(&mut self, _now: Time, _paused: u8) -> Next {
        self.fifo
            .pop_front()
            .map_or(Next::Empty, |q| Next::Packet(q.pkt))
    }

    fn packets(&self) -> u64 {
        self.fifo.len() as u64
    }

    fn bytes(&self) -> u64 {
        self.fifo.iter().map(|q| u64::from(q.size)).sum()
    }
}

/// Behind the 1 Gbps bottleneck packet 0 finds the port idle and goes
/// straight to the wire (12 us); packets 1 to 9 (1.2 us apart) find it busy
/// and are offered to the discipline, which drops the third, sixth and
/// ninth of them.
#[test]
fn a_plugged_discipline_drops_exactly_every_third_packet() {
    let sc = star("1Gbps");
    let at = port(&sc, "sw0->host1");
    let out = run_plugged(&sc, |sim| {
        sim.plug_discipline::<EveryThird>(&NoKeys {}, &[at])
            .unwrap();
    });
    assert_eq!(dropped(&out), [3, 6, 9]);
    assert_eq!(port_value(&out, "sw0->host1", "packets_dropped"), 3);
    assert_eq!(port_sent(&out, "sw0->host1"), 7);
    // The scenario's drop-tail elsewhere.
    assert_eq!(port_value(&out, "host0->sw0", "packets_dropped"), 0);
}

/// AQM: drop (or mark, if ECN-capable) a packet that finds `depth` or more
/// packets waiting.
#[derive(Clone, Debug, Deserialize, PartialEq)]
struct DepthSpec {
    depth: u64,
}

struct DropAtDepth(u64);

impl Aqm for DropAtDepth {
    type Spec = DepthSpec;

    fn check(spec: &DepthSpec, path: &str) -> Result<(), ScenarioError> {
        if spec.depth == 0 {
            return Err(ScenarioError::new(path, "depth must be at least 1"));
        }
        Ok(())
    }

    fn new(spec: &DepthSpec, _rng: Xoshiro256PlusPlus) -> DropAtDepth {
        DropAtDepth(spec.depth)
    }

    fn on_arrival(&mut self, occ: Occupancy, ecn_capable: bool, _class: u8) -> Verdict {
        Verdict::signal(occ.packets >= self.0, ecn_capable)
    }
}

/// Behind the 1 Gbps bottleneck packet 0 goes straight to the wire (12 us)
/// and packets 1, 2, 3 (1.2 us apart) find 0, 1 and 2 waiting; packets 4
/// to 9 arrive before packet 0 has left and find 3: dropped.
#[test]
fn a_plugged_aqm_drops_the_packets_that_find_its_depth() {
    let sc = star("1Gbps");
    let at = port(&sc, "sw0->host1");
    let out = run_plugged(&sc, |sim| {
        sim.plug_aqm::<DropAtDepth>(&DepthSpec { depth: 3 }, &[at])
            .unwrap();
    });
    assert_eq!(dropped(&out), [4, 5, 6, 7, 8, 9]);
    assert_eq!(port_value(&out, "sw0->host1", "packets_dropped"), 6);
    let received = out.probes.f64("received_s");
    for (k, &t) in received.iter().take(4).enumerate() {
        let want_us = 2.2 + 12.0 * (k + 1) as f64 + 1.0;
        assert!((t * 1e6 - want_us).abs() < 1e-6, "packet {k}: {t}");
    }
    let mut sim = Simulation::new(&sc);
    let e = sim.plug_aqm::<DropAtDepth>(&DepthSpec { depth: 0 }, &[at]);
    assert_eq!(
        e.unwrap_err().to_string(),
        "sw0->host1: depth must be at least 1"
    );
}

/// Port stage: a shaper that holds every class until `until`.
#[derive(Clone, Debug, Deserialize, PartialEq)]
struct HoldSpec {
    until: Time,
}

struct HoldUntil(Time);

impl Stage for HoldUntil {
    type Spec = HoldSpec;
    const SHAPES: bool = true;

    fn new(spec: &HoldSpec, _ctx: &PortContext) -> HoldUntil {
        HoldUntil(spec.until)
    }

    fn held(&self, now: Time) -> u8 {
        if now < self.0 {
            0xff
        } else {
            0
        }
    }

    fn release_at(&self, _held: u8) -> Time {
        self.0
    }
}

/// Every packet waits at `sw0->host1` until 50 us, then they leave back to
/// back at 10 Gbps: packet k reaches host 1 at 50 + 1.2 (k + 1) + 1 us.
#[test]
fn a_plugged_shaper_holds_the_port_until_its_time() {
    let sc = star("10Gbps");
    let at = port(&sc, "sw0->host1");
    let out = run_plugged(&sc, |sim| {
        let spec = HoldSpec {
            until: Time::from_us(50),
        };
        sim.plug_stage::<HoldUntil>(&spec, &[at]).unwrap();
    });
    assert!(dropped(&out).is_empty());
    for (k, &t) in out.probes.f64("received_s").iter().enumerate() {
        let want_us = 50.0 + 1.2 * (k + 1) as f64 + 1.0;
        assert!((t * 1e6 - want_us).abs() < 1e-6, "packet {k}: {t}");
    }
}

/// Forwarding policies: the first, or the last, of the equal-cost next hops.
struct First;
struct Last;

/// `hops`' `i`th port alone.
fn only(hops: Hops<'_>, i: usize) -> Pick<'_> {
    Pick::Hash(
        Hops::Run {
            first: hops.get(i),
            len: 1,
        },
        0,
    )
}

impl ForwardingPolicy for First {
    type Spec = NoKeys;

    fn new(_spec: &NoKeys, _net: &Network, _node: u32) -> First {
        First
    }

    fn pick<'a>(&'a mut self, net: &'a Network, pkt: &mut Hop, at: &mut At<'_>) -> Pick<'a> {
        only(net.next_hops(at.node, pkt.dst), 0)
    }
}

impl ForwardingPolicy for Last {
    type Spec = NoKeys;

    fn new(_spec: &NoKeys, _net: &Network, _node: u32) -> Last {
        Last
    }

    fn pick<'a>(&'a mut self, net: &'a Network, pkt: &mut Hop, at: &mut At<'_>) -> Pick<'a> {
        let hops = net.next_hops(at.node, pkt.dst);
        only(hops, hops.len() - 1)
    }
}

/// A k = 4 fat-tree (the spraying seed's, Fig. 1): host 0 to host 15 has one
/// path through each core; the first next hop at every switch leads through
/// core 0, the last through core 3.
#[test]
fn a_plugged_policy_picks_every_hop() {
    let sc = Scenario::from_toml_str(
        r#"
[topology]
kind = "fat_tree"
k = 4
[[traffic.streams]]
src = 0
dst = 15
rate = "10Gbps"
pattern = "constant"
stop = "12us"
record = true
"#,
    )
    .unwrap();
    let cores = ["agg0->core0", "agg0->core1", "agg1->core2", "agg1->core3"];
    let through = |out: &Output| cores.map(|p| port_sent(out, p));
    let n = PACKETS as i64;
    let first = run_plugged(&sc, |sim| {
        sim.plug_policy::<First>(&NoKeys {}, &sc.topology).unwrap()
    });
    assert_eq!(through(&first), [n, 0, 0, 0]);
    let last = run_plugged(&sc, |sim| {
        sim.plug_policy::<Last>(&NoKeys {}, &sc.topology).unwrap()
    });
    assert_eq!(through(&last), [0, 0, 0, n]);
}

/// Topology: `switches` switches in a line, host `h0` at one end and `h1`
/// at the other, 1 Gbps links of 1 us.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Line {
    switches: u32,
}

impl Builder for Line {
    fn build(&self) -> Result<Topology, ScenarioError> {
        let link = LinkParams {
            rate: Rate(1_000_000_000),
            delay: Time::from_us(1),
        };
        let mut t = Topology::default();
        let h0 = t.add_node("h0".into(), NodeKind::Host, Some(0)).unwrap();
        let mut last = h0;
        for i in 0..self.switches {
            let s = t
                .add_node(format!("s{i}"), NodeKind::Switch, Some(1))
                .unwrap();
            t.connect(last, s, link);
            last = s;
        }
        let h1 = t.add_node("h1".into(), NodeKind::Host, Some(0)).unwrap();
        t.connect(last, h1, link);
        Ok(t)
    }
}

/// A probe crosses the three switches: four links of 12 us serialization
/// and 1 us propagation; and the builder reads `[topology]`.
#[test]
fn a_plugged_topology_is_the_one_run() {
    let scenario = |topology: &str| {
        let text = format!("[topology]\n{topology}\n[[traffic.probes]]\nsrc = 0\ndst = 1\n");
        Scenario::with_topology::<Line>(toml::from_str(&text).unwrap())
    };
    let sc = scenario("switches = 3").unwrap();
    assert_eq!(sc.topology.nodes.len(), 5);
    let out = dcnsim_core::run(&sc, &mut |_| true).unwrap();
    assert_eq!(out.probes.i64("hops"), [4]);
    assert!((out.probes.f64("latency_s")[0] * 1e6 - 4.0 * 13.0).abs() < 1e-6);
    let e = scenario("switches = 3\nkind = \"line\"").unwrap_err();
    assert_eq!(e.path, "topology.kind");
    assert!(e.reason.starts_with("unknown key"), "{e}");
}
