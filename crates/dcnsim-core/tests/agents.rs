//! Switch agents against closed forms: Ethernet flow control (the `pause`
//! agent) and a program's own agent that rewrites headers and emits ICMP.
//!
//! Flow-control setup: a star of two hosts; host 0 at 10 Gbps, host 1 at
//! 1 Gbps, 1 us links, so `sw0->host1` is the bottleneck. Host 0 sends a
//! constant 5 Gbps datagram stream of 1500 B packets to host 1 for 2 ms
//! (every packet recorded), into a 100-packet switch queue.
//!
//! Without flow control the queue fills at 4 Gbps and drops. With the agent
//! (xoff 20 packets, xon 10) the switch pauses host 0's NIC instead:
//! - nothing is lost, and the bottleneck never idles: xon leaves 10 packets
//!   (120 us at 1 Gbps) to cover the ~2 us it takes a resume to reach host 0
//!   and its next packet to arrive. So packet k (0-based) is delivered at
//!   exactly 2.2 us + 12 us·(k+1) + 1 us (host serialization 1.2 us and 1 us
//!   of propagation to the switch, then back to back at 1 Gbps);
//! - the switch holds at most xoff + 3 packets (queue plus wire): once a
//!   count exceeds xoff the PAUSE (64 B, 51.2 ns at 10 Gbps) reaches host 0
//!   1.05 us later, by when at most two more packets (1.2 us apart at line
//!   rate) have left it;
//! - the backlog moves to host 0's NIC queue.

mod common;
use common::{port_sent, run_toml};
use dcnsim_core::agent::{Switch, SwitchAgent, ON_ARRIVAL, ON_DEPARTURE};
use dcnsim_core::packet::{Kind, Packet, NONE};
use dcnsim_core::units::Time;
use dcnsim_core::{Scenario, Simulation};
use std::cell::RefCell;
use std::rc::Rc;

/// The 5:1 overload into 100-packet queues, its stream recorded.
fn flow_control(agents: &str) -> String {
    common::five_to_one("1us", "100pkt", &format!("record = true\n{agents}"))
}

const PAUSE_AGENT: &str = r#"
[[agents]]
kind = "pause"
switches = "all"
xoff = "20pkt"
xon = "10pkt"
"#;

fn port_i64(out: &dcnsim_core::Output, column: &str, name: &str) -> i64 {
    let i = out
        .ports
        .str("port")
        .iter()
        .position(|n| n == name)
        .unwrap();
    out.ports.i64(column)[i]
}

#[test]
fn without_flow_control_the_bottleneck_drops() {
    let out = run_toml(&flow_control(""));
    assert!(port_i64(&out, "packets_dropped", "sw0->host1") > 100);
}

#[test]
fn pause_backpressures_the_sender_without_loss_or_idle_time() {
    let out = run_toml(&flow_control(PAUSE_AGENT));
    let s = &out.summary;
    let sent = out.probes.f64("sent_s");
    let received = out.probes.f64("received_s");
    let n = sent.len();
    assert_eq!(
        n, 834,
        "5 Gbps of 1500 B packets for 2 ms: one every 2.4 us"
    );
    assert_eq!(s.packets_dropped, 0);
    // Work conservation at the bottleneck: packet k leaves it back to back.
    let mut order: Vec<f64> = received.to_vec();
    order.sort_by(f64::total_cmp);
    for (k, &t) in order.iter().enumerate() {
        let expect_us = 2.2 + 12.0 * (k + 1) as f64 + 1.0;
        assert!(
            (t * 1e6 - expect_us).abs() < 1e-6,
            "packet {k} delivered at {} us, closed form {expect_us} us",
            t * 1e6
        );
    }
    assert!(port_i64(&out, "max_queue_packets", "sw0->host1") <= 20 + 3);
    assert!(port_i64(&out, "max_queue_packets", "host0->sw0") > 100);
    // PAUSE frames went to host 0 (and were delivered there), none elsewhere.
    let frames = port_sent(&out, "sw0->host0");
    assert!(
        frames >= 2,
        "at least one pause and one resume, got {frames}"
    );
    assert_eq!(port_sent(&out, "sw0->host1"), n as i64);
    assert_eq!(s.packets_delivered, n as u64 + frames as u64);
}

#[test]
fn pause_agent_errors_name_the_field() {
    let bad = [
        (
            "xoff = \"0pkt\"",
            "agents[0].xoff: capacity must be positive",
        ),
        (
            "xoff = \"20pkt\"\nxon = \"30pkt\"",
            "agents[0].xon: must be below xoff (20pkt), got 30pkt",
        ),
        (
            "xoff = \"20pkt\"\nxon = \"3000B\"",
            "agents[0].xon: must be in the unit of xoff (20pkt)",
        ),
        (
            "xoff = \"20pkt\"\nquanta = 0",
            "agents[0].quanta: must be at least 1",
        ),
        ("xoff = \"20pkt\"\nxof = 3", "agents[0].xof: unknown key"),
    ];
    for (keys, want) in bad {
        let text = flow_control(&format!(
            "[[agents]]\nkind = \"pause\"\nswitches = \"all\"\n{keys}\n"
        ));
        let err = common::error_of(&text);
        assert!(err.starts_with(want), "{keys}: got {err}");
    }
    for (agent, want) in [
        (
            "kind = \"pause\"\nxoff = \"2pkt\"",
            "agents[0].switches: missing",
        ),
        (
            "kind = \"pause\"\nswitches = [\"host0\"]\nxoff = \"2pkt\"",
            "agents[0].switches[0]: \"host0\" is a host; agents run at switches",
        ),
        (
            "kind = \"pause\"\nswitches = [\"sw9\"]\nxoff = \"2pkt\"",
            "agents[0].switches[0]: no switch named \"sw9\"",
        ),
        (
            "kind = \"pause\"\nswitches = \"spines\"\nxoff = \"2pkt\"",
            "agents[0].switches: \"spines\" is not a switch group",
        ),
        (
            "kind = \"slicer\"\nswitches = \"all\"",
            "agents[0].kind: unknown variant `slicer`",
        ),
    ] {
        let err = common::error_of(&flow_control(&format!("[[agents]]\n{agent}\n")));
        assert!(err.starts_with(want), "{agent}: got {err}");
    }
}

/// A program's own agent: on the first data segment of each TCP flow it
/// tells the sender, by ICMP "fragmentation needed", to use 576-byte packets
/// (RFC 1191), and it moves every data segment to class 5.
struct Slicer {
    told: Vec<u32>,
}

const MTU: u16 = 576;
const ICMP_BYTES: u32 = 56;

impl SwitchAgent for Slicer {
    fn on_arrival(&mut self, sw: &mut Switch, pkt: &mut Packet, _egress: u32) {
        if pkt.kind != Kind::Tcp || pkt.size <= 40 {
            return;
        }
        pkt.class = 5;
        if !self.told.contains(&pkt.flow) {
            self.told.push(pkt.flow);
            let icmp = Packet::new(
                Kind::IcmpMtu { mtu: MTU },
                sw.node,
                pkt.src,
                ICMP_BYTES,
                0,
                sw.now,
            );
            let flow = sw.flow(pkt).expect("a live flow's segment");
            assert!(sw.send_about(flow, icmp));
        }
    }
}

/// Records what the switch sees after the agents before it: (time, kind,
/// size, class, when the packet was sent, port) of every departure.
#[derive(Default)]
struct Recorder {
    departures: Rc<RefCell<Vec<Row>>>,
}

type Row = (Time, Kind, u32, u8, Time, u32);

impl SwitchAgent for Recorder {
    fn on_departure(&mut self, sw: &mut Switch, pkt: &mut Packet, port: u32) {
        let row = (sw.now, pkt.kind, pkt.size, pkt.class, pkt.sent, port);
        self.departures.borrow_mut().push(row);
    }
}

#[test]
fn an_agent_rewrites_headers_and_its_icmp_shrinks_the_sender_segments() {
    let sc = Scenario::from_toml_str(
        r#"
[topology]
kind = "star"
hosts = 2
link = { rate = "10Gbps", delay = "1us" }
[transport]
protocol = "newreno"
[[traffic.flows]]
src = 0
dst = 1
size = "200KB"
"#,
    )
    .unwrap();
    let sw = sc.topology.node_id("sw0").unwrap() as u32;
    let mut sim = Simulation::new(&sc);
    let rec = Recorder::default();
    let departures = rec.departures.clone();
    sim.attach_agent(sw, Box::new(Slicer { told: Vec::new() }));
    sim.attach_agent(sw, Box::new(rec));
    let out = sim.run(&mut |_| true).unwrap();
    assert_eq!(out.flows.i64("bytes_delivered")[0], 200_000);
    let deps = departures.borrow();
    let to_sender = sc.topology.port_by_name("sw0->host0").unwrap();
    let icmps: Vec<_> = deps
        .iter()
        .filter(|d| matches!(d.1, Kind::IcmpMtu { .. }))
        .collect();
    assert_eq!(icmps.len(), 1, "one ICMP for the one flow");
    let (t_icmp, _, size, _, _, port) = *icmps[0];
    assert_eq!((size, port), (ICMP_BYTES, to_sender));
    // It reaches host 0 after its serialization (56 B at 10 Gbps) and 1 us.
    let at_sender = t_icmp + Time(44_800) + Time(1_000_000);
    let data: Vec<_> = deps
        .iter()
        .filter(|d| d.1 == Kind::Tcp && d.2 > 40 && d.5 != to_sender)
        .collect();
    assert!(
        data.iter().all(|d| d.3 == 5),
        "the rewrite reaches the queue and later agents"
    );
    let (before, after): (Vec<&Row>, Vec<&Row>) = data.iter().partition(|d| d.4 < at_sender);
    assert!(before.iter().all(|d| d.2 == 1500));
    assert!(after.len() > 200_000 / 536 / 2);
    assert!(
        after.iter().all(|d| d.2 <= u32::from(MTU)),
        "segments sent after the ICMP fit the MTU"
    );
}

/// 802.1Qbb against 802.3x: host 0 also sends a class-7 stream (1000 B every
/// 80 us) to host 1, and every queue is strict priority. With per-class
/// pause only class 0 stops, so a class-7 packet waits at most one class-0
/// packet at each hop: latency ≤ L0 + 1.2 us + 12 us, with
/// L0 = 0.8 + 1 + 8 + 1 = 10.8 us. With 802.3x every class stops, so class 7
/// sits out the pauses at host 0's NIC.
fn class7_worst_latency_us(per_class: bool) -> f64 {
    let agents = format!(
        r#"
[[agents]]
kind = "pause"
switches = "all"
xoff = "20pkt"
xon = "10pkt"
per_class = {per_class}
[[traffic.streams]]
src = 0
dst = 1
rate = "100Mbps"
pattern = "constant"
size = "1000B"
start = "100us"
stop = "2ms"
class = 7
record = true
"#
    );
    let text = flow_control(&agents).replace(
        "queue = { capacity = \"100pkt\" }",
        "queue = { kind = \"priority\", capacity = \"100pkt\" }\nnic_queue = { kind = \"priority\", capacity = \"1000pkt\" }",
    );
    let out = run_toml(&text);
    assert_eq!(out.summary.packets_dropped, 0);
    let class = out.probes.i64("class");
    let latency = out.probes.f64("latency_s");
    let class7: Vec<f64> = (0..class.len())
        .filter(|&i| class[i] == 7)
        .map(|i| latency[i] * 1e6)
        .collect();
    assert_eq!(class7.len(), 24);
    class7.iter().copied().fold(0.0, f64::max)
}

#[test]
fn per_class_pause_leaves_the_other_classes_running() {
    let pfc = class7_worst_latency_us(true);
    assert!(
        pfc <= 10.8 + 1.2 + 12.0 + 1e-6,
        "PFC: class 7 waited {pfc} us"
    );
    let all = class7_worst_latency_us(false);
    assert!(
        all > 50.0,
        "802.3x: class 7 should sit out pauses, worst {all} us"
    );
}

/// Sends back to its source a copy of each of the first data segments it
/// sees whose port was planned ahead ([`Packet::route`]), as an ICMP (with
/// an MTU above the segments, so it changes nothing), and checks on their
/// departure that the copies left towards their own destination.
#[derive(Default)]
struct Bouncer {
    sent: Rc<RefCell<u32>>,
    checked: Rc<RefCell<u32>>,
}

impl SwitchAgent for Bouncer {
    fn on_arrival(&mut self, sw: &mut Switch, pkt: &mut Packet, _egress: u32) {
        if pkt.kind == Kind::Tcp && pkt.size > 100 && pkt.route != NONE && *self.sent.borrow() < 50
        {
            *self.sent.borrow_mut() += 1;
            let mut back = *pkt;
            back.kind = Kind::IcmpMtu { mtu: 9000 };
            back.src = sw.node;
            back.dst = pkt.src;
            back.size = ICMP_BYTES;
            let flow = sw.flow(pkt).expect("a live flow's segment");
            assert!(sw.send_about(flow, back));
        }
    }

    fn on_departure(&mut self, sw: &mut Switch, pkt: &mut Packet, port: u32) {
        if matches!(pkt.kind, Kind::IcmpMtu { .. }) {
            assert_eq!(
                sw.port(port).peer,
                pkt.dst,
                "the copy leaves towards its own destination"
            );
            *self.checked.borrow_mut() += 1;
        }
    }
}

#[test]
fn a_copy_an_agent_sends_is_routed_to_its_own_destination() {
    // Busy enough that the loop plans ports ahead (a star of 64 hosts).
    let sc = Scenario::from_toml_str(
        r#"
stop_time = "1ms"
[topology]
kind = "star"
hosts = 64
link = { rate = "10Gbps", delay = "1us" }
[transport]
protocol = "dctcp"
[[traffic.workloads]]
src = "all"
dst = "random"
cdf = "websearch"
load = 0.8
"#,
    )
    .unwrap();
    let sw = sc.topology.node_id("sw0").unwrap() as u32;
    let mut sim = Simulation::new(&sc);
    let bouncer = Bouncer::default();
    let (sent, checked) = (bouncer.sent.clone(), bouncer.checked.clone());
    sim.attach_agent(sw, Box::new(bouncer));
    sim.run(&mut |_| true).unwrap();
    assert_eq!(
        *sent.borrow(),
        50,
        "packets arrived with their port planned"
    );
    assert_eq!(*checked.borrow(), 50);
}

/// Holds the handle of the first flow it sees, and once that flow is done
/// (its slot given to the next flow) tries to send an ICMP about it: the
/// handle is refused, and the next flow, in the same slot, is untouched.
#[derive(Default)]
struct Stale {
    first: Option<dcnsim_core::agent::FlowHandle>,
    refused: Rc<RefCell<u32>>,
    later_slot_flow: Rc<RefCell<Option<u32>>>,
}

impl SwitchAgent for Stale {
    fn on_arrival(&mut self, sw: &mut Switch, pkt: &mut Packet, _egress: u32) {
        let Some(flow) = sw.flow(pkt) else { return };
        let Some(first) = self.first else {
            self.first = Some(flow);
            return;
        };
        if flow.id() != first.id() {
            // A later flow (in the first's slot, reused).
            let icmp = Packet::new(Kind::IcmpMtu { mtu: 100 }, sw.node, pkt.src, 56, 0, sw.now);
            if !sw.send_about(first, icmp) {
                *self.refused.borrow_mut() += 1;
                *self.later_slot_flow.borrow_mut() = Some(flow.id());
            }
        }
    }

    fn event_driven_ports(&self) -> bool {
        false
    }
}

#[test]
fn a_stale_flow_handle_is_refused_not_aliased() {
    // Flows of 20 KB arriving about 320 ms apart, each done in some tens of
    // microseconds and its timers (the RTO's 200 ms at most) run out well
    // before the next: each opens after the one before is let go, and takes
    // its connection slot.
    let sc = Scenario::from_toml_str(
        r#"
[topology]
kind = "star"
hosts = 2
link = { rate = "10Gbps", delay = "1us" }
[[traffic.workloads]]
src = 0
dst = 1
size = "20KB"
load = 0.00005
stop = "2s"
"#,
    )
    .unwrap();
    let sw = sc.topology.node_id("sw0").unwrap() as u32;
    let mut sim = Simulation::new(&sc);
    let stale = Stale::default();
    let (refused, later) = (stale.refused.clone(), stale.later_slot_flow.clone());
    sim.attach_agent(sw, Box::new(stale));
    let out = sim.run(&mut |_| true).unwrap();
    let flows = out.flows.rows();
    assert!(flows > 2, "{flows} flows");
    let slots = out.summary.tcp_connections_peak as usize;
    assert!(slots < flows, "slots reused: {slots} for {flows} flows");
    assert!(*refused.borrow() > 0, "the stale handle was refused");
    assert_eq!(*later.borrow(), Some(flows as u32 - 1));
    // Nothing reached the later flows: no ICMP was sent.
    assert_eq!(out.summary.packets_from_switches, 0);
    assert!(out
        .flows
        .i64("bytes_delivered")
        .iter()
        .all(|&b| b == 20_000));
}

/// Counts the packets its switch forwards and, every 10 us from the first,
/// writes the count as a row, until `rows` rows.
struct Sampler {
    seen: u64,
    armed: bool,
    rows: u64,
}

impl SwitchAgent for Sampler {
    fn on_arrival(&mut self, sw: &mut Switch, _pkt: &mut Packet, _egress: u32) {
        self.seen += 1;
        if !self.armed {
            self.armed = true;
            sw.set_timer(sw.now + Time::from_us(10), 0);
        }
    }

    fn on_timer(&mut self, sw: &mut Switch, token: u64) {
        sw.row("forwarded", self.seen as f64);
        if token + 1 < self.rows {
            sw.set_timer(sw.now + Time::from_us(10), token + 1);
        }
    }

    fn event_driven_ports(&self) -> bool {
        false
    }
}

/// A constant 1 Gbps stream of 1250 B packets through the switch: one packet
/// every 10 us from 0, so at the k-th timer (10(k+1) us after the first
/// arrival at 1 + 1 us) k + 1 packets have been forwarded (the one arriving
/// at that instant runs after the timer, which was scheduled earlier).
#[test]
fn an_agent_writes_rows_at_its_timers() {
    let sc = Scenario::from_toml_str(
        r#"
[topology]
kind = "star"
hosts = 2
link = { rate = "10Gbps", delay = "1us" }
[[traffic.streams]]
src = 0
dst = 1
rate = "1Gbps"
pattern = "constant"
size = "1250B"
stop = "100us"
"#,
    )
    .unwrap();
    let sw = sc.topology.node_id("sw0").unwrap() as u32;
    let mut sim = Simulation::new(&sc);
    let sampler = Sampler {
        seen: 0,
        armed: false,
        rows: 5,
    };
    sim.attach_agent(sw, Box::new(sampler));
    let out = sim.run(&mut |_| true).unwrap();
    let rows = &out.agent_rows;
    assert_eq!(rows.rows(), 5);
    assert_eq!(rows.str("switch"), ["sw0"; 5]);
    assert_eq!(rows.i64("agent"), [0; 5]);
    assert_eq!(rows.str("key"), ["forwarded"; 5]);
    assert_eq!(rows.f64("value"), [1.0, 2.0, 3.0, 4.0, 5.0]);
    let first = 1e-6 + 1e-6; // serialization of 1250 B at 10 Gbps, then 1 us
    for (k, &t) in rows.f64("time_s").iter().enumerate() {
        assert!(
            (t - (first + 10e-6 * (k + 1) as f64)).abs() < 1e-12,
            "row {k}: {t}"
        );
    }
}

/// An agent kind that counts flows from their SYN and FIN needs the TCP
/// handshake: its check, which sees the whole scenario, refuses one
/// without it.
struct NeedsHandshake;

impl SwitchAgent for NeedsHandshake {}

impl dcnsim_core::agent::Agent for NeedsHandshake {
    type Spec = ();

    fn check(
        _spec: &(),
        path: &str,
        sc: &dcnsim_core::agent::ScenarioView,
    ) -> Result<(), dcnsim_core::ScenarioError> {
        if !sc.transport.handshake {
            return Err(dcnsim_core::ScenarioError::new(
                "transport.handshake",
                format!("{path} counts flows by their SYN and FIN: set it to true"),
            ));
        }
        Ok(())
    }

    fn new(_spec: &(), _sw: &Switch) -> NeedsHandshake {
        NeedsHandshake
    }
}

#[test]
fn an_agent_check_sees_the_whole_scenario() {
    use dcnsim_core::agent::{Agent, ScenarioView};
    let check = |transport: &str| {
        let sc = Scenario::from_toml_str(&format!(
            "[topology]\nkind = \"star\"\nhosts = 2\nlink = {{ rate = \"10Gbps\", delay = \"1us\" }}\n{transport}"
        ))
        .unwrap();
        let view = ScenarioView {
            topology: &sc.topology,
            network: &sc.network,
            transport: &sc.transport,
        };
        NeedsHandshake::check(&(), "agents[0]", &view).map_err(|e| e.to_string())
    };
    assert_eq!(check(""), Ok(()));
    assert_eq!(
        check("[transport]\nhandshake = false"),
        Err(
            "transport.handshake: agents[0] counts flows by their SYN and FIN: set it to true"
                .into()
        )
    );
}

/// Counts the hooks it is called on, having declared `hooks`.
struct Declares {
    hooks: u8,
    calls: Rc<RefCell<[u32; 3]>>,
}

impl SwitchAgent for Declares {
    fn on_arrival(&mut self, _sw: &mut Switch, _pkt: &mut Packet, _egress: u32) {
        self.calls.borrow_mut()[0] += 1;
    }
    fn on_departure(&mut self, _sw: &mut Switch, _pkt: &mut Packet, _port: u32) {
        self.calls.borrow_mut()[1] += 1;
    }
    fn on_drop(&mut self, _sw: &mut Switch, _pkt: &Packet, _port: u32) {
        self.calls.borrow_mut()[2] += 1;
    }
    fn event_driven_ports(&self) -> bool {
        false
    }
    fn hooks(&self) -> u8 {
        self.hooks
    }
}

/// 10 datagrams through a star's switch: an agent is called on the hooks it
/// declares and on no other, even beside an agent at the same switch that
/// declares them; one that declares none is never called.
#[test]
fn an_agent_is_called_only_on_the_hooks_it_declares() {
    let sc = Scenario::from_toml_str(
        r#"
[topology]
kind = "star"
hosts = 2
link = { rate = "10Gbps", delay = "1us" }
[[traffic.streams]]
src = 0
dst = 1
rate = "1Gbps"
pattern = "constant"
size = "1250B"
stop = "95us"
"#,
    )
    .unwrap();
    let switch = sc.topology.node_id("sw0").unwrap() as u32;
    let mut sim = Simulation::new(&sc);
    let counters: Vec<_> = (0..3).map(|_| Rc::new(RefCell::new([0; 3]))).collect();
    for (hooks, calls) in [ON_ARRIVAL, ON_ARRIVAL | ON_DEPARTURE, 0]
        .into_iter()
        .zip(&counters)
    {
        let calls = calls.clone();
        sim.attach_agent(switch, Box::new(Declares { hooks, calls }));
    }
    sim.run(&mut |_| true).unwrap();
    assert_eq!(*counters[0].borrow(), [10, 0, 0]);
    assert_eq!(*counters[1].borrow(), [10, 10, 0]);
    assert_eq!(*counters[2].borrow(), [0, 0, 0]);
}
