//! In-band feedback end to end: a flow whose controller (declared here,
//! plugged in with `Simulation::plug_controller`) asks for the in-band
//! option crosses three switches (leaf, spine, leaf), each of which stamps
//! the larger of the option and a value of its own (5, 30 and 12, as queues
//! of that many packets would), with a switch agent declared here. The
//! receiver echoes what arrives, and every ACK brings the sender's
//! controller the path's maximum, 30; a flow without the option carries
//! none and its packets are 4 bytes smaller.

use dcnsim_core::agent::{Switch, SwitchAgent};
use dcnsim_core::cc::{Controller, FlowState, Protocol, Window};
use dcnsim_core::packet::Packet;
use dcnsim_core::{Scenario, Simulation};
use std::sync::{Arc, Mutex};

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
    fn inband_option(&self) -> Option<u32> {
        Some(0)
    }

    fn on_feedback(&mut self, _w: &mut Window, value: u32, _f: &FlowState) {
        self.seen.lock().unwrap().push(value);
    }
}

/// Bytes delivered and echoes seen, with the option or without.
fn run(plugged: bool) -> (i64, i64, Vec<u32>) {
    let sc = Scenario::from_toml_str(PATH).unwrap();
    let mut sim = Simulation::new(&sc);
    for (name, value) in [("leaf0", 5), ("spine0", 30), ("leaf1", 12)] {
        let node = sc.topology.node_id(name).unwrap() as u32;
        sim.attach_agent(node, Box::new(Stamp { value }));
    }
    let seen = Arc::new(Mutex::new(Vec::new()));
    if plugged {
        let s = seen.clone();
        sim.plug_controller(
            Protocol::Ecn,
            Arc::new(move || Box::new(Listens { seen: s.clone() })),
        );
    }
    let out = sim.run(&mut |_| true).unwrap();
    let bytes = out.flows.i64("bytes_delivered")[0];
    let sent = out.ports.i64("bytes_sent").iter().sum();
    let seen = seen.lock().unwrap().clone();
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
