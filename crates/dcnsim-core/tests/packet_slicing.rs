//! The `packet_slicing` switch agent (the Packet Slicing seed, §III.D)
//! against hand computation.
//!
//! Setup: a star of workers and an aggregator (host 0), 1 Gbps links of
//! 25 us (100 us round trip through the switch), a 64 KB buffer per port,
//! 1500 B packets (1460 B payload + 40 B header). Y = 64 000 B + 1 Gbps x
//! 100 us = 76 500 B (eq. 5), so with the window fixed at 2 packets the
//! switch slices once n > 76 500 / 3 000 = 25.5 flows, to an MTU of
//! ⌊1500 / (n·1500·2 / 76 500)⌋ = ⌊38 250 / n⌋ B (eq. 11).

mod common;
use common::{error_of, run_toml};
use dcnsim_core::agent::{Switch, SwitchAgent, ON_DEPARTURE};
use dcnsim_core::packet::{Kind, Packet};
use dcnsim_core::units::Time;
use dcnsim_core::{run, Output, Scenario, Simulation};
use std::cell::RefCell;
use std::rc::Rc;

fn star(hosts: u32, traffic: &str, agent: &str, transport: &str) -> String {
    format!(
        r#"
[topology]
kind = "star"
hosts = {hosts}
link = {{ rate = "1Gbps", delay = "25us" }}
[network]
queue = {{ capacity = "64KB", aqm = {{ kind = "threshold", k = "20pkt" }} }}
[transport]
protocol = "dctcp"
mss = "1460B"
min_rto = "200ms"
init_cwnd = 2
{transport}
{traffic}
{agent}
"#
    )
}

/// One round of 64 KB from every worker to host 0.
const INCAST: &str = r#"[[traffic.incast]]
aggregator = 0
workers = "all"
sru = "64KB"
rounds = 1
persistent = false
"#;

const AGENT: &str = r#"
[[agents]]
kind = "packet_slicing"
switches = "all"
rtt_min = "100us"
window = 2
"#;

/// What leaves the switch: (time, kind, size, when the packet was sent, port).
type Row = (Time, Kind, u32, Time, u32);

#[derive(Default)]
struct Recorder {
    rows: Rc<RefCell<Vec<Row>>>,
}

impl SwitchAgent for Recorder {
    fn on_departure(&mut self, sw: &mut Switch, pkt: &mut Packet, port: u32) {
        let row = (sw.now, pkt.kind, pkt.size, pkt.sent, port);
        self.rows.borrow_mut().push(row);
    }

    fn hooks(&self) -> u8 {
        ON_DEPARTURE
    }
}

/// Runs `sc` with a `Recorder` at `sw0`: the output and what left the switch.
fn run_recorded(sc: &Scenario) -> (Output, Rc<RefCell<Vec<Row>>>) {
    let sw = sc.topology.node_id("sw0").unwrap() as u32;
    let mut sim = Simulation::new(sc);
    let rec = Recorder::default();
    let rows = rec.rows.clone();
    sim.attach_agent(sw, Box::new(rec));
    (sim.run(&mut |_| true).unwrap(), rows)
}

fn mtu_rows(out: &dcnsim_core::Output) -> Vec<(f64, f64)> {
    let rows = &out.agent_rows;
    (0..rows.rows())
        .filter(|&i| rows.str("key")[i] == "mtu")
        .map(|i| (rows.f64("time_s")[i], rows.f64("value")[i]))
        .collect()
}

#[test]
fn forty_flows_are_told_eq_11s_mtu_and_their_packets_shrink() {
    let sc = Scenario::from_toml_str(&star(41, INCAST, AGENT, "")).unwrap();
    let (out, rows) = run_recorded(&sc);
    let s = &out.summary;
    assert_eq!(
        s.packets_injected,
        s.packets_delivered + s.packets_dropped + s.packets_in_flight
    );
    assert!(out
        .flows
        .i64("bytes_delivered")
        .iter()
        .all(|&b| b == 64_000));
    // The MTU falls with every SYN from the 26th on, to ⌊38 250 / 40⌋ = 956.
    let mtus = mtu_rows(&out);
    let values: Vec<f64> = mtus.iter().map(|m| m.1).collect();
    let expected: Vec<f64> = (26..=40).map(|n| (38_250 / n) as f64).collect();
    assert_eq!(values[..15], expected[..], "{values:?}");
    // As flows finish, n falls and the MTU is raised again, to 1500 at the end.
    assert_eq!(*values.last().unwrap(), 1500.0);
    let rows = rows.borrow();
    let to_aggregator = sc.topology.port_by_name("sw0->host0").unwrap();
    let icmps: Vec<_> = rows
        .iter()
        .filter(|r| matches!(r.1, Kind::IcmpMtu { mtu: 956 }))
        .collect();
    assert_eq!(icmps.len(), 40, "every sender is told 956 B once");
    assert!(icmps.iter().all(|r| r.2 == 56 && r.4 != to_aggregator));
    // Once told (25 us and 448 ns after it left the switch), a sender's new
    // segments are at most 956 B; it ignores the larger MTUs that follow
    // (RFC 1191).
    let told = icmps.iter().map(|r| r.0).max().unwrap() + Time::from_us(26);
    let data: Vec<_> = rows
        .iter()
        .filter(|r| r.1 == Kind::Tcp && r.4 == to_aggregator && r.3 > told)
        .collect();
    assert!(!data.is_empty());
    assert!(data.iter().all(|r| r.2 <= 956), "all sliced");
    assert!(data.iter().any(|r| r.2 == 956), "full sliced segments");
}

/// 30 short flows and one long one: n = 31 slices to ⌊38 250 / 31⌋ = 1233 B;
/// once the short ones end, n = 1 and the switch announces 1500 B again.
fn grow_back(transport: &str) -> Vec<u32> {
    let mut traffic = String::from("[[traffic.flows]]\nsrc = 31\ndst = 0\nsize = \"3MB\"\n");
    for w in 1..=30 {
        traffic += &format!("[[traffic.flows]]\nsrc = {w}\ndst = 0\nsize = \"20KB\"\n");
    }
    let sc = Scenario::from_toml_str(&star(32, &traffic, AGENT, transport)).unwrap();
    let (out, rows) = run_recorded(&sc);
    let values: Vec<f64> = mtu_rows(&out).iter().map(|m| m.1).collect();
    assert!(values.contains(&1233.0), "{values:?}");
    assert_eq!(*values.last().unwrap(), 1500.0);
    let to_aggregator = sc.topology.port_by_name("sw0->host0").unwrap();
    let end = out.flows.f64("end_s")[0];
    let late = Time((end * 0.9 * 1e12) as u64);
    let sizes: Vec<u32> = rows
        .borrow()
        .iter()
        .filter(|r| r.1 == Kind::Tcp && r.4 == to_aggregator && r.0 > late && r.2 > 40)
        .map(|r| r.2)
        .collect();
    assert!(!sizes.is_empty());
    sizes
}

#[test]
fn packets_grow_back_only_with_pmtu_raise() {
    // RFC 1191 §3: the larger MTU is ignored; the long flow keeps 1233 B
    // (its last segment is shorter).
    let kept = grow_back("");
    assert!(kept.iter().all(|&s| s <= 1233) && kept.contains(&1233));
    // The seed's reading: the sender follows the switch back to 1500 B.
    let raised = grow_back("pmtu_raise = true");
    assert!(raised.contains(&1500) && !raised.contains(&1233));
}

/// The sizes of the data packets that leave by `port` after `after`
/// (sizes above `header`: no pure ACK, SYN or FIN).
fn data_sizes(rows: &[Row], port: u32, after: Time, header: u32) -> Vec<u32> {
    rows.iter()
        .filter(|r| r.1 == Kind::Tcp && r.4 == port && r.3 > after && r.2 > header)
        .map(|r| r.2)
        .collect()
}

/// 10 workers with ŵ configured at 120 packets: k̂ = 10·1500·120 / 76 500
/// = 23.5, above s / 64 = 23.4, so the switch asks for its floor, 64 B. A
/// sender takes the MTU down to `transport.min_pmtu`: 64 B packets (24 B of
/// payload) by default, and with the `linux` profile Linux's 552 B
/// (`ip_rt_min_pmtu`; 500 B of payload under its 52 B header).
fn packets_at_the_floor(transport: &str, header: u32) -> Vec<u32> {
    let agent = AGENT.replace("window = 2", "window = 120");
    let sc = Scenario::from_toml_str(&star(11, INCAST, &agent, transport)).unwrap();
    let (out, rows) = run_recorded(&sc);
    assert_eq!(mtu_rows(&out)[9].1, 64.0, "n = 10: the floor");
    let rows = rows.borrow();
    let told = rows
        .iter()
        .filter(|r| matches!(r.1, Kind::IcmpMtu { mtu: 64 }))
        .map(|r| r.0)
        .max()
        .expect("every sender told 64 B")
        + Time::from_us(26);
    let to_aggregator = sc.topology.port_by_name("sw0->host0").unwrap();
    let sizes = data_sizes(&rows, to_aggregator, told, header);
    assert!(!sizes.is_empty());
    sizes
}

#[test]
fn the_senders_floor_is_min_pmtu_64_bytes_or_linuxs_552() {
    for (transport, header, floor) in [("", 40, 64), ("profile = \"linux\"", 52, 552)] {
        let sizes = packets_at_the_floor(transport, header);
        // Full segments at the floor; a flow's last may be shorter.
        assert!(sizes.iter().all(|&s| s <= floor), "{transport}: {sizes:?}");
        let short = sizes.iter().filter(|&&s| s < floor).count();
        assert!(
            short <= 10 && sizes.len() > 100 + short,
            "{transport}: {sizes:?}"
        );
    }
}

/// ŵ estimated passively (no `window`): 10 long NewReno flows, each held by
/// its receive window at `w` segments of 1500 B, share the aggregator's
/// port, whose 64 KB buffer with the 12.5 KB pipe (Y = 76.5 KB) holds all
/// 10·w packets, so nothing is lost and the windows stay at w. The switch
/// takes s = 3000 B (`packet`), so k̂ = n·s·ŵ / Y is above 1 (n·ŵ > 25.5)
/// while n stays below Y / (2s) = 12.75, where the rule ŵ = 2 would take
/// over, and the 1500 B senders, whose MSS never grows, ignore the MTU:
/// each announced MTU ⌊s / k̂⌋ is ⌊Y / (n·ŵ)⌋, which gives back the
/// estimate. The estimator (packets per RTT_min, scaled by (C·RTT_min + Q)
/// / (C·RTT_min)) finds w within 15 % (it leaves out the 24 us the packets
/// take to serialize).
fn estimated_window(w: u32) -> f64 {
    let mut traffic = String::new();
    for src in 1..=10 {
        traffic += &format!("[[traffic.flows]]\nsrc = {src}\ndst = 0\nsize = \"3MB\"\n");
    }
    let agent = AGENT.replace("window = 2\n", "packet = \"3000B\"\n");
    let text = star(11, &traffic, &agent, &format!("rwnd = \"{w}pkt\""))
        .replace("protocol = \"dctcp\"", "protocol = \"newreno\"")
        .replace(", aqm = { kind = \"threshold\", k = \"20pkt\" }", "");
    let out = run_toml(&text);
    assert_eq!(out.summary.packets_dropped, 0);
    let mut steady: Vec<f64> = mtu_rows(&out)
        .iter()
        .filter(|m| m.0 > 2e-3)
        .map(|m| 76_500.0 / (10.0 * m.1))
        .collect();
    assert!(steady.len() > 5, "{steady:?}");
    steady.sort_by(f64::total_cmp);
    steady[steady.len() / 2]
}

#[test]
fn the_passive_estimator_finds_the_windows() {
    for w in [3, 4] {
        let found = estimated_window(w);
        assert!(
            (found / f64::from(w) - 1.0).abs() < 0.15,
            "w = {w}: estimated {found}"
        );
    }
}

#[test]
fn an_interval_spaces_the_announcements() {
    let agent = format!("{AGENT}interval = \"1ms\"\n");
    let out = run_toml(&star(41, INCAST, &agent, ""));
    let mtus = mtu_rows(&out);
    assert!(mtus.len() >= 2);
    for w in mtus.windows(2) {
        assert!(w[1].0 - w[0].0 >= 1e-3 - 1e-12, "{mtus:?}");
    }
    // The SYNs all arrive within the first interval: the second announcement
    // carries n = 40's MTU.
    assert_eq!(mtus[1].1, 956.0);
    // One RTT_min (100 us) apart: about one per round trip.
    let agent = format!("{AGENT}interval = \"100us\"\n");
    let mtus = mtu_rows(&run_toml(&star(41, INCAST, &agent, "")));
    assert!(mtus.len() >= 2 && mtus.len() < 15, "{mtus:?}");
    for w in mtus.windows(2) {
        assert!(w[1].0 - w[0].0 >= 100e-6 - 1e-12, "{mtus:?}");
    }
    assert!(mtus.iter().any(|m| m.1 == 956.0), "{mtus:?}");
}

/// Flows that share no port (no incast, no queue): the agent, counting them
/// and estimating their windows, has nothing to slice, and the run is the run
/// without it, packet for packet.
#[test]
fn without_incast_the_agent_changes_nothing() {
    let traffic = "[[traffic.flows]]\nsrc = 1\ndst = 0\nsize = \"1MB\"\n\
                   [[traffic.flows]]\nsrc = 2\ndst = 3\nsize = \"500KB\"\n\
                   [[traffic.flows]]\nsrc = 3\ndst = 1\nsize = \"200KB\"\n";
    let estimated = AGENT.replace("window = 2\n", "");
    let off = run_toml(&star(4, traffic, "", ""));
    for agent in [AGENT, estimated.as_str()] {
        let on = run_toml(&star(4, traffic, agent, ""));
        assert_eq!(format!("{:?}", on.flows), format!("{:?}", off.flows));
        assert_eq!(format!("{:?}", on.ports), format!("{:?}", off.ports));
        assert_eq!(on.summary.packets_injected, off.summary.packets_injected);
        assert_eq!(mtu_rows(&on), []);
    }
}

#[test]
fn runs_with_the_agent_are_deterministic_and_conserve_packets() {
    let text = star(61, INCAST, &AGENT.replace("window = 2\n", ""), "");
    let sc = Scenario::from_toml_str(&text).unwrap();
    let a = run(&sc, &mut |_| true).unwrap();
    let b = run_toml(&text);
    assert_eq!(format!("{:?}", a.flows), format!("{:?}", b.flows));
    assert_eq!(format!("{:?}", a.agent_rows), format!("{:?}", b.agent_rows));
    assert!(!mtu_rows(&a).is_empty(), "60 flows are sliced");
}

#[test]
fn bad_settings_name_their_key() {
    for (keys, want) in [
        ("floor = \"63B\"", "agents[0].floor: must be from 64 B"),
        ("floor = \"1501B\"", "agents[0].floor: must be from 64 B (the Ethernet minimum) to packet (1500 B), got 1501 B"),
        ("interval = \"-1ms\"", "agents[0].interval"),
        ("window = 0", "agents[0].window: must be a positive number"),
        ("rtt_min = \"0us\"", "agents[0].rtt_min: must be above 0"),
    ] {
        let agent = format!("[[agents]]\nkind = \"packet_slicing\"\nswitches = \"all\"\nrtt_min = \"100us\"\n{keys}\n");
        let agent = if keys.starts_with("rtt_min") {
            agent.replacen("rtt_min = \"100us\"\n", "", 1)
        } else {
            agent
        };
        let err = error_of(&star(3, "", &agent, ""));
        assert!(err.starts_with(want), "{keys}: got {err}");
    }
    let on_host =
        "[[agents]]\nkind = \"packet_slicing\"\nswitches = [\"host1\"]\nrtt_min = \"100us\"\n";
    let err = error_of(&star(3, "", on_host, ""));
    assert!(
        err.starts_with("agents[0].switches[0]: \"host1\" is a host"),
        "{err}"
    );
    let err = error_of(&star(3, "", AGENT, "handshake = false"));
    assert!(err.contains("needs transport.handshake = true"), "{err}");
    let err = error_of(&star(3, "", "", "min_pmtu = \"60B\""));
    assert!(
        err.starts_with("transport.min_pmtu: must be from 64 B"),
        "{err}"
    );
}
