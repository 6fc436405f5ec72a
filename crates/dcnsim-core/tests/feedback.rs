//! In-band feedback end to end: a flow whose controller (declared here,
//! plugged in with `Simulation::plug_controller`) asks for the in-band
//! option crosses three switches, and every ACK must bring the sender's
//! controller the largest value stamped on its path.
//!
//! - With a switch agent declared here that stamps the larger of the option
//!   and a value of its own (5, 30 and 12) at leaf, spine and leaf; a flow
//!   without the option carries none and its packets are 4 bytes smaller.
//! - With the `max_occupancy` port stage on real queues of 5, 30 and 12
//!   packets of 1500 B (BOTCP's value is the queue in 1500-byte packets,
//!   seed §5.3's unit), held
//!   there by a `token_bucket` stage that lets their class 0 start one packet
//!   and then none for seconds, while the flow's class 7 passes them
//!   (strict priority).

use dcnsim_core::agent::{Switch, SwitchAgent};
use dcnsim_core::cc::{Controller, Flags, FlowState, Protocol, Window};
use dcnsim_core::packet::Packet;
use dcnsim_core::{Output, Scenario, Simulation};
use std::sync::{Arc, Mutex};

mod common;
use common::port_value;

const PATH: &str = r#"
[topology]
kind = "leaf_spine"
leaves = 2
spines = 1
hosts_per_leaf = 1
host_link = { rate = "10Gbps", delay = "1us" }
fabric_link = { rate = "10Gbps", delay = "1us" }
[transport]
protocol = "ecn"
[[traffic.flows]]
src = 0
dst = 1
size = "100KB"
"#;

/// Stamps max(option, `value`) on every packet that carries the option.
struct Stamp {
    value: u32,
}

impl SwitchAgent for Stamp {
    fn on_arrival(&mut self, _sw: &mut Switch, pkt: &mut Packet, _egress: u32) {
        if let Some(v) = pkt.option {
            pkt.option = Some(v.max(self.value));
        }
    }
}

/// NewReno's reactions, asking for the option and keeping the echoes.
#[derive(Debug)]
struct Listens {
    seen: Arc<Mutex<Vec<u32>>>,
}

impl Controller for Listens {
    fn on_feedback(&mut self, _w: &mut Window, value: u32, _f: &FlowState) {
        self.seen.lock().unwrap().push(value);
    }
}

/// Runs `text` with the `Stamp` agents of `stamps` (switch, value) and,
/// when `plugged`, `Listens` as the `ecn` flows' controller: the run's
/// tables and the echoes the controller saw.
fn run_with(text: &str, stamps: &[(&str, u32)], plugged: bool) -> (Output, Vec<u32>) {
    let sc = Scenario::from_toml_str(text).unwrap_or_else(|e| panic!("{e}"));
    let mut sim = Simulation::new(&sc);
    for &(name, value) in stamps {
        let node = sc.topology.node_id(name).unwrap() as u32;
        sim.attach_agent(node, Box::new(Stamp { value }));
    }
    let seen = Arc::new(Mutex::new(Vec::new()));
    if plugged {
        let s = seen.clone();
        // NewReno's flags, asking for the option (leaving with 0).
        let flags = Flags {
            inband_option: Some(0),
            ..Flags::NEWRENO
        };
        sim.plug_controller(
            Protocol::Ecn,
            flags,
            Arc::new(move || Box::new(Listens { seen: s.clone() })),
        );
    }
    let out = sim.run(&mut |_| true).unwrap();
    let seen = seen.lock().unwrap().clone();
    (out, seen)
}

/// Bytes delivered and echoes seen, with the option or without.
fn run(plugged: bool) -> (i64, i64, Vec<u32>) {
    let stamps = [("leaf0", 5), ("spine0", 30), ("leaf1", 12)];
    let (out, seen) = run_with(PATH, &stamps, plugged);
    let bytes = out.flows.i64("bytes_delivered")[0];
    let sent = out.ports.i64("bytes_sent").iter().sum();
    (bytes, sent, seen)
}

#[test]
fn the_sender_sees_the_largest_stamp_on_its_path_on_every_ack() {
    let (bytes, with_bytes, seen) = run(true);
    assert_eq!(bytes, 100_000);
    assert!(
        seen.len() >= 100_000 / 1460,
        "an echo per ACK: {}",
        seen.len()
    );
    assert!(seen.iter().all(|&v| v == 30), "{seen:?}");
    let (bytes, without_bytes, seen) = run(false);
    assert_eq!(bytes, 100_000);
    assert!(seen.is_empty());
    assert!(
        with_bytes > without_bytes,
        "the option's bytes are on the wire"
    );
}

/// A chain a - s1 - s2 - s3 - b, and beside each hop a sender of class-0
/// datagrams (c1, c2, c3) whose packets wait at that hop's port: c1's (to d1
/// behind s2) at s1->s2, c2's (to d2 behind s3) at s2->s3, c3's (to b) at
/// s3->b. Each sends `n + 1` packets of 1500 B back to back from t = 0 (one
/// every 1.2 us at 10 Gbps; `stop` just after the (n+1)-th); a token
/// bucket of 1 Kbit/s on class 0 lets the first leave at once and the next
/// only 8 s later, so from then on each port holds exactly n of them. The
/// flow from a to b (class 7, strict priority) starts at 100 us and passes
/// them, finding 5, 30 and 12 packets of 1500 B waiting. Its sender's link runs at
/// 1 Gbps, so its own packets reach each 10 Gbps hop 12 us apart and never
/// wait behind each other (then a packet would find 30 packets and one of its
/// own, and carry 31).
const QUEUES: &str = r#"
stop_time = "10ms"
[topology]
kind = "edges"
link = { rate = "10Gbps", delay = "1us" }
nodes = [
  { name = "a", kind = "host" }, { name = "b", kind = "host" },
  { name = "c1", kind = "host" }, { name = "c2", kind = "host" },
  { name = "c3", kind = "host" }, { name = "d1", kind = "host" },
  { name = "d2", kind = "host" },
  { name = "s1", kind = "switch" }, { name = "s2", kind = "switch" },
  { name = "s3", kind = "switch" },
]
links = [
  { a = "a", b = "s1", rate = "1Gbps" }, { a = "s1", b = "s2" }, { a = "s2", b = "s3" },
  { a = "s3", b = "b" }, { a = "c1", b = "s1" }, { a = "d1", b = "s2" },
  { a = "c2", b = "s2" }, { a = "d2", b = "s3" }, { a = "c3", b = "s3" },
]
[network]
queue = { kind = "priority", capacity = "100pkt" }
[[network.stages]]
kind = "max_occupancy"
ports = "switches"
[[network.stages]]
kind = "token_bucket"
ports = ["s1->s2", "s2->s3", "s3->b"]
classes = [{ class = 0, rate = "1Kbps" }]
[transport]
protocol = "ecn"
[[traffic.flows]]
src = 0
dst = 1
size = "20KB"
start = "100us"
class = 7
[[traffic.streams]]
src = 2
dst = 5
rate = "10Gbps"
pattern = "constant"
size = "1500B"
stop = "6.1us"
[[traffic.streams]]
src = 3
dst = 6
rate = "10Gbps"
pattern = "constant"
size = "1500B"
stop = "36.1us"
[[traffic.streams]]
src = 4
dst = 1
rate = "10Gbps"
pattern = "constant"
size = "1500B"
stop = "14.5us"
"#;

#[test]
fn a_max_occupancy_stamp_on_queues_of_5_30_and_12_packets_delivers_30() {
    let (out, seen) = run_with(QUEUES, &[], true);
    let tcp = out.flows.str("protocol").iter().position(|p| p == "ecn");
    assert_eq!(out.flows.i64("bytes_delivered")[tcp.unwrap()], 20_000);
    // The queues the flow crossed: n class-0 packets held at each hop, and
    // still there at the end (nothing else is left in the network).
    for (port, n) in [("s1->s2", 5), ("s2->s3", 30), ("s3->b", 12)] {
        assert!(port_value(&out, port, "max_queue_packets") >= n, "{port}");
    }
    assert_eq!(out.summary.packets_in_flight, 5 + 30 + 12);
    assert!(
        seen.len() >= 20_000 / 1460,
        "an echo per ACK: {}",
        seen.len()
    );
    assert!(seen.iter().all(|&v| v == 30), "{seen:?}");
}
