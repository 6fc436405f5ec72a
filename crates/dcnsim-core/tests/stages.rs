//! Port stages against closed forms: BOTCP's occupancy stamp
//! (`max_occupancy`) and a per-class token bucket (`token_bucket`).

mod common;
use common::{error_of, run_toml};
use dcnsim_core::agent::{Switch, SwitchAgent};
use dcnsim_core::packet::Packet;
use dcnsim_core::units::Time;
use dcnsim_core::{Scenario, Simulation};
use std::cell::RefCell;
use std::rc::Rc;

/// A line h0 - s0 - s1 - h1 of 10 Gbps links but s1->h1 at 1 Gbps; h0
/// sends a constant 5 Gbps stream of 1024 B packets to h1 (100 packets), and
/// every switch port stamps. `extra` is appended.
fn line(extra: &str) -> String {
    format!(
        r#"
[topology]
kind = "edges"
link = {{ rate = "10Gbps", delay = "1us" }}
nodes = [
  {{ name = "h0", kind = "host" }}, {{ name = "s0", kind = "switch" }},
  {{ name = "s1", kind = "switch" }}, {{ name = "h1", kind = "host" }},
]
links = [{{ a = "h0", b = "s0" }}, {{ a = "s0", b = "s1" }}, {{ a = "s1", b = "h1", rate = "1Gbps" }}]
[[network.stages]]
kind = "max_occupancy"
ports = "switches"
[[traffic.streams]]
src = 0
dst = 1
rate = "5Gbps"
pattern = "constant"
size = "1024B"
stop = "163.84us"
record = true
{extra}
"#
    )
}

/// The test's sender side: gives every packet arriving at `s0` the BOF
/// field, 0 (without adding its bytes, so the closed form below keeps
/// 1024 B packets).
struct Tag;

impl SwitchAgent for Tag {
    fn on_arrival(&mut self, _sw: &mut Switch, pkt: &mut Packet, _egress: u32) {
        pkt.option = Some(0);
    }

    fn event_driven_ports(&self) -> bool {
        false
    }
}

/// (sent, option) of every packet leaving `s1`.
type Rows = Rc<RefCell<Vec<(Time, Option<u32>)>>>;

/// Records [`Rows`].
struct Seen(Rows);

impl SwitchAgent for Seen {
    fn on_departure(&mut self, _sw: &mut Switch, pkt: &mut Packet, _port: u32) {
        self.0.borrow_mut().push((pkt.sent, pkt.option));
    }

    fn event_driven_ports(&self) -> bool {
        false
    }
}

fn stamps(extra: &str) -> Vec<u32> {
    let sc = Scenario::from_toml_str(&line(extra)).unwrap();
    let node = |n: &str| sc.topology.node_id(n).unwrap() as u32;
    let mut sim = Simulation::new(&sc);
    let seen = Rc::new(RefCell::new(Vec::new()));
    sim.attach_agent(node("s0"), Box::new(Tag));
    sim.attach_agent(node("s1"), Box::new(Seen(seen.clone())));
    let out = sim.run(&mut |_| true).unwrap();
    assert_eq!(out.summary.packets_dropped, 0);
    let mut seen = seen.borrow().clone();
    seen.sort();
    seen.iter().map(|&(_, o)| o.expect("tagged")).collect()
}

/// Packet k reaches s1 1.6384 us after packet k − 1; s1->h1 sends one every
/// 8.192 us, five gaps. When packet k arrives, packets 0 ..= ⌊k/5⌋ have
/// started (the one starting at that instant too), so k − ⌊k/5⌋ − 1 of
/// 1024 B each wait: its stamp counts them in the seed's 1500 B packets
/// (§5.3, `BOF_UNIT`), rounded down, s0's port being empty. The scheduled
/// port (the agents need no event-driven ports) and the event-driven one (its
/// queue traced) stamp alike.
#[test]
fn a_packet_carries_the_packets_it_found_queued_on_its_path() {
    let want: Vec<u32> = (0..100u32)
        .map(|k| (k - (k / 5 + 1).min(k)) * 1024 / 1500)
        .collect();
    assert_eq!(stamps(""), want);
    assert_eq!(stamps("[trace]\nqueues = [\"s1->h1\"]"), want);
}

/// A stamp stage changes nothing for packets without the option: every
/// table equal to the run without it.
#[test]
fn packets_without_the_option_are_left_alone() {
    let with = run_toml(&line(""));
    let plain = line("").replace(
        "[[network.stages]]\nkind = \"max_occupancy\"\nports = \"switches\"\n",
        "",
    );
    assert!(!plain.contains("stages"));
    let without = run_toml(&plain);
    assert_eq!(with.probes, without.probes);
    assert_eq!(with.ports, without.ports);
}

/// Host 0 sends a 5 Gbps stream of 1500 B class-3 packets; its NIC
/// limits class 3 to 1 Gbps with no burst, so packet k leaves at 12k us
/// and arrives 4.4 us later (two hops of 1.2 us serialization and 1 us
/// propagation): the closed form, and a long-run rate of exactly 1 Gbps.
#[test]
fn a_token_bucket_spaces_a_class_at_its_rate() {
    let out = run_toml(
        r#"
[topology]
kind = "star"
hosts = 2
link = { rate = "10Gbps", delay = "1us" }
[[network.stages]]
kind = "token_bucket"
ports = ["host0->sw0"]
classes = [{ class = 3, rate = "1Gbps" }]
[[traffic.streams]]
src = 0
dst = 1
rate = "5Gbps"
pattern = "constant"
size = "1500B"
stop = "600us"
class = 3
record = true
"#,
    );
    let received = out.probes.f64("received_s");
    assert_eq!(received.len(), 250);
    for (k, &r) in received.iter().enumerate() {
        let want = (12.0 * k as f64 + 4.4) * 1e-6;
        assert!((r - want).abs() < 1e-12, "packet {k}: {r} vs {want}");
    }
}

#[test]
fn bad_stages_name_the_field() {
    let star =
        "[topology]\nkind = \"star\"\nhosts = 2\nlink = { rate = \"10Gbps\", delay = \"1us\" }\n";
    for (stage, want) in [
        ("kind = \"max_occupancy\"", "network.stages[0].ports: missing"),
        (
            "kind = \"max_occupancy\"\nports = \"spines\"",
            "network.stages[0].ports: \"spines\" is not a port group",
        ),
        (
            "kind = \"max_occupancy\"\nports = [\"sw0->host9\"]",
            "network.stages[0].ports[0]: no port named \"sw0->host9\"",
        ),
        (
            "kind = \"max_occupancy\"\nports = \"all\"\nunit = \"pkt\"",
            "network.stages[0].unit: unknown key",
        ),
        (
            "kind = \"token_bucket\"\nports = \"nics\"\nclasses = [{ class = 9, rate = \"1Gbps\" }]",
            "network.stages[0].classes[0].class: 802.1Q classes are 0 to 7, got 9",
        ),
        (
            "kind = \"token_bucket\"\nports = \"nics\"\nclasses = [{ class = 1, rate = \"0Gbps\" }]",
            "network.stages[0].classes[0].rate:",
        ),
        (
            "kind = \"shaper\"\nports = \"nics\"",
            "network.stages[0].kind: unknown variant `shaper`",
        ),
    ] {
        let err = error_of(&format!("{star}[[network.stages]]\n{stage}\n"));
        assert!(err.starts_with(want), "{stage}: got {err}");
    }
}
