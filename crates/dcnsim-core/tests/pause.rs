//! PAUSE / PFC (the `pause` agent) against closed forms.
//!
//! Setup of the 2-to-1 overload: a star of three hosts, every link 10 Gbps
//! and 1 us; hosts 0 and 1 each send a constant 10 Gbps stream of 1500 B
//! datagrams to host 2 until the stop time T = 2 ms, into 100-packet switch
//! queues. Twice the bottleneck's rate arrives at the switch:
//! - without flow control the bottleneck queue overflows and drops;
//! - with PFC (xoff 20 packets, xon 10) the switch pauses both senders
//!   instead and loses nothing; the bottleneck `sw0->host2` never idles after
//!   its first packet, and each paused NIC, always backlogged, sends exactly
//!   when not paused: by symmetry each gets the fair share R/2, a utilisation
//!   of 1/2 of its 10 Gbps, and is paused the other half of the time (less
//!   the packets in service when a PAUSE arrives, which finish).

mod common;
use common::{port_value, run_toml};
use dcnsim_core::agent::{Switch, SwitchAgent, ON_ARRIVAL};
use dcnsim_core::packet::{Kind, Packet};
use dcnsim_core::{Output, Scenario, Simulation};
use pcap_file::pcap::PcapReader;

const T: f64 = 2e-3;
const RATE: f64 = 10e9;
/// 1500 B at 10 Gbps.
const PKT_S: f64 = 1.2e-6;

fn two_to_one(agents: &str) -> String {
    format!(
        r#"
stop_time = "2ms"
[topology]
kind = "star"
hosts = 3
link = {{ rate = "10Gbps", delay = "1us" }}
[network]
queue = {{ capacity = "100pkt" }}
nic_queue = {{ capacity = "5000pkt" }}
[[traffic.streams]]
src = 0
dst = 2
rate = "10Gbps"
pattern = "constant"
size = "1500B"
[[traffic.streams]]
src = 1
dst = 2
rate = "10Gbps"
pattern = "constant"
size = "1500B"
[trace]
pcap = ["sw0->host0"]
{agents}
"#
    )
}

const PFC: &str = r#"
[[agents]]
kind = "pause"
switches = "all"
xoff = "20pkt"
xon = "10pkt"
per_class = true
trace = true
"#;

fn port_f64(out: &Output, name: &str, column: &str) -> f64 {
    let i = out
        .ports
        .str("port")
        .iter()
        .position(|n| n == name)
        .unwrap();
    out.ports.f64(column)[i]
}

#[test]
fn without_flow_control_the_switch_drops() {
    let out = run_toml(&two_to_one(""));
    assert!(port_value(&out, "sw0->host2", "packets_dropped") > 100);
    assert_eq!(port_value(&out, "sw0->host0", "pause_frames_sent"), 0);
    assert_eq!(port_f64(&out, "host0->sw0", "paused_s"), 0.0);
}

#[test]
fn pfc_loses_nothing_and_the_paused_ports_get_the_fair_share() {
    let out = run_toml(&two_to_one(PFC));
    assert_eq!(out.summary.packets_dropped, 0);
    // The bottleneck: busy from its first packet's arrival (1.2 us + 1 us).
    let busy = port_value(&out, "sw0->host2", "bytes_sent") as f64 * 8.0 / RATE;
    assert!(
        (busy - (T - 2.2e-6)).abs() <= PKT_S,
        "bottleneck busy {busy} s"
    );
    let delivered = out.flows.i64("bytes_delivered");
    for (flow, nic) in ["host0->sw0", "host1->sw0"].into_iter().enumerate() {
        // Each stream gets half the bottleneck ...
        let share = delivered[flow] as f64 * 8.0 / RATE / busy;
        assert!((share - 0.5).abs() < 0.005, "{nic}: share {share}");
        // ... so its NIC, always backlogged, is busy half the time, plus
        // what the switch holds of it at the end (at most xoff + 3 packets:
        // tests/agents.rs) and the packet on the wire.
        let sent = port_value(&out, nic, "bytes_sent") as f64 * 8.0 / RATE;
        let utilisation = sent / T;
        assert!(
            utilisation >= share * busy / T && sent - busy / 2.0 <= 24.0 * PKT_S,
            "{nic}: utilisation {utilisation}, fair share 0.5"
        );
        // Paused or sending, all the time; both at once only while the
        // packet in service when a PAUSE arrives finishes.
        let paused = port_f64(&out, nic, "paused_s");
        let class0 = port_f64(&out, nic, "class0_paused_s");
        assert_eq!(paused, class0, "PFC paused class 0 only");
        let xoffs = port_value(&out, nic, "pause_frames_received") as f64;
        let overlap = paused + sent - T;
        assert!(
            overlap >= -PKT_S && overlap <= xoffs * PKT_S,
            "{nic}: paused {paused} s, sending {sent} s"
        );
    }
    // The trace: one row per PAUSE sent, as counted.
    let keys = out.agent_rows.str("key");
    for (port, row) in [("sw0->host0", 0.0), ("sw0->host1", 1.0)] {
        let rows = (0..keys.len())
            .filter(|&i| out.agent_rows.f64("value")[i] == row)
            .count() as i64;
        assert_eq!(rows, port_value(&out, port, "pause_frames_sent"));
    }
    assert!(keys.iter().all(|k| k.ends_with(" c0")));
}

/// The PAUSE frames captured on `sw0->host0` are the frames its counter
/// counted, and the frames host 0's NIC counted as received: PFC frames
/// (opcode 0x0101) naming class 0, with 65535 quanta or 0 (resume).
#[test]
fn pause_counters_match_the_frames_captured() {
    let out = run_toml(&two_to_one(PFC));
    let (_, bytes) = &out.pcaps[0];
    let mut reader = PcapReader::new(&bytes[..]).unwrap();
    let (mut pauses, mut resumes) = (0, 0);
    while let Some(p) = reader.next_packet() {
        let d = p.unwrap().data;
        assert_eq!(d[12..14], [0x88, 0x08], "only MAC control frames");
        assert_eq!(d[14..18], [0x01, 0x01, 0, 1], "PFC, class 0 enabled");
        match u16::from_be_bytes([d[18], d[19]]) {
            0 => resumes += 1,
            u16::MAX => pauses += 1,
            q => panic!("quanta {q}"),
        }
    }
    let sent = port_value(&out, "sw0->host0", "pause_frames_sent");
    assert!(pauses > 10 && resumes > 10);
    assert_eq!(pauses + resumes, sent);
    assert_eq!(
        port_value(&out, "host0->sw0", "pause_frames_received"),
        sent
    );
    assert_eq!(port_value(&out, "sw0->host0", "packets_sent"), sent);
}

/// Sends one 802.3x PAUSE of `quanta` back to the sender on the arrival of
/// the eighth datagram.
struct OnePause {
    quanta: u16,
    arrivals: u32,
}

impl SwitchAgent for OnePause {
    fn on_arrival(&mut self, sw: &mut Switch, pkt: &mut Packet, _egress: u32) {
        self.arrivals += 1;
        if self.arrivals == 8 {
            let kind = Kind::Pause {
                classes: u8::MAX,
                quanta: self.quanta,
            };
            let frame = Packet::new(kind, sw.node, pkt.src, 64, 0, sw.now);
            sw.send_on(pkt.ingress, frame);
        }
    }

    fn hooks(&self) -> u8 {
        ON_ARRIVAL
    }
}

/// Resume by expiry: host 0 streams 1500 B at 10 Gbps to host 1, packet k
/// leaving at 1.2k us and reaching the switch at 1.2k + 2.2 us. Packet 7
/// arrives at 10.6 us; the PAUSE (64 B: 51.2 ns) reaches host 0 at
/// 11.6512 us, while packet 9 (10.8–12.0 us) is in service, which finishes.
/// Nothing resumes it, so it stays paused for 100 quanta × 512 bit times =
/// 5.12 us, to 16.7712 us, when packet 10 starts: it is delivered 2 × (1.2 +
/// 1) us later, at 21.1712 us, and the backlog follows back to back.
#[test]
fn a_pause_ends_when_its_quanta_run_out() {
    let sc = Scenario::from_toml_str(
        r#"
stop_time = "40us"
[topology]
kind = "star"
hosts = 2
link = { rate = "10Gbps", delay = "1us" }
[[traffic.streams]]
src = 0
dst = 1
rate = "10Gbps"
pattern = "constant"
size = "1500B"
record = true
"#,
    )
    .unwrap();
    let sw = sc.topology.node_id("sw0").unwrap() as u32;
    let mut sim = Simulation::new(&sc);
    sim.attach_agent(
        sw,
        Box::new(OnePause {
            quanta: 100,
            arrivals: 0,
        }),
    );
    let out = sim.run(&mut |_| true).unwrap();
    let received = out.probes.f64("received_s");
    let ps = |k: usize| (received[k] * 1e12).round() as u64;
    assert_eq!(ps(9), 15_200_000, "1.2 us × 9 + 4.4 us");
    assert_eq!(ps(10), 21_171_200);
    assert_eq!(ps(11), 21_171_200 + 1_200_000);
    let paused = out
        .ports
        .f64("paused_s")
        .iter()
        .copied()
        .fold(0.0, f64::max);
    assert!((paused - 5.12e-6).abs() < 1e-12, "paused {paused} s");
}

/// A ring of five switches, a host at each; host i sends a 10 Gbps stream
/// to host i + 2, whose one shortest path crosses two ring links clockwise,
/// so each ring link carries two streams (20 Gbps of demand on 10 Gbps) and
/// each switch's ring ingress waits on its ring egress: a cyclic buffer
/// dependency. With 802.3x (xoff 20, xon 2 packets) and FIFO queues the ring locks up with every
/// ring port paused, packets waiting, and nothing sent; the agent reports
/// it and ends the run instead of renewing the pauses for ever.
fn ring(closed: bool) -> String {
    let n = 5;
    let mut text = String::from(
        "[topology]\nkind = \"edges\"\nlink = { rate = \"10Gbps\", delay = \"1us\" }\nnodes = [\n",
    );
    for i in 0..n {
        text += &format!("  {{ name = \"h{i}\", kind = \"host\" }},\n");
    }
    for i in 0..n {
        text += &format!("  {{ name = \"s{i}\", kind = \"switch\" }},\n");
    }
    text += "]\nlinks = [\n";
    for i in 0..n {
        text += &format!("  {{ a = \"h{i}\", b = \"s{i}\" }},\n");
        if closed || i + 1 < n {
            text += &format!("  {{ a = \"s{i}\", b = \"s{}\" }},\n", (i + 1) % n);
        }
    }
    text += "]\n[network]\nqueue = { capacity = \"1000pkt\" }\nnic_queue = { capacity = \"100000pkt\" }\n";
    for i in 0..n {
        text += &format!(
            "[[traffic.streams]]\nsrc = {i}\ndst = {}\nrate = \"10Gbps\"\npattern = \"constant\"\nsize = \"1500B\"\nstop = \"10ms\"\n",
            (i + 2) % n
        );
    }
    text + r#"
[[agents]]
kind = "pause"
switches = "all"
xoff = "20pkt"
xon = "2pkt"
quanta = 1000
deadlock_after = "1ms"
"#
}

#[test]
fn a_deadlock_in_a_ring_is_reported_and_ends_the_run() {
    let out = run_toml(&ring(true));
    let s = &out.summary;
    let report = s.stopped_by_agent.as_deref().expect("a deadlock report");
    assert!(
        report.contains("no progress while paused") && report.contains("classes 0xff paused"),
        "{report}"
    );
    assert!(s.sim_time_s < 10e-3, "ended at {} s", s.sim_time_s);
    assert!(s.packets_in_flight > 0);
}

/// The same switches and streams on a line (the ring without s4–s0): no
/// cycle, so the ring ports are paused and resumed but always drain, and the
/// run delivers everything.
#[test]
fn paused_ports_that_drain_are_no_deadlock() {
    let out = run_toml(&ring(false));
    let s = &out.summary;
    assert_eq!(s.stopped_by_agent, None);
    assert_eq!((s.packets_dropped, s.packets_in_flight), (0, 0));
    assert!(port_value(&out, "s1->s2", "pause_frames_received") > 0);
}

/// Refresh by the agent's timer: with 50 quanta (2.56 us at 10 Gbps) a
/// pause would lapse long before the count falls to XON; the agent renews
/// it every half pause time, 1.28 us after the XOFF and after each renewal,
/// and the run stays lossless and fair.
#[test]
fn the_agent_renews_a_pause_on_its_timer() {
    let out = run_toml(&two_to_one(
        &PFC.replace("per_class", "quanta = 50\nper_class"),
    ));
    assert_eq!(out.summary.packets_dropped, 0);
    let (time, key, value) = (
        out.agent_rows.f64("time_s"),
        out.agent_rows.str("key"),
        out.agent_rows.f64("value"),
    );
    let rows: Vec<usize> = (0..key.len()).filter(|&i| value[i] == 0.0).collect();
    let mut renewals = 0;
    for w in rows.windows(2) {
        if key[w[1]] == "refresh c0" {
            renewals += 1;
            let gap_ps = ((time[w[1]] - time[w[0]]) * 1e12).round();
            assert_eq!(
                gap_ps, 1_280_000.0,
                "renewed {gap_ps} ps after the last PAUSE"
            );
            assert_ne!(key[w[0]], "xon c0", "no renewal after a resume");
        }
    }
    assert!(renewals > 100, "{renewals} renewals");
    let delivered = out.flows.i64("bytes_delivered");
    assert_eq!(delivered[0], delivered[1]);
}

/// The dynamic threshold T = α · (buffer − used) on the 5:1 overload of
/// `common::five_to_one` (5 Gbps of 1500 B datagrams from host 0 into a 1 Gbps
/// link): after packet k reaches the switch (at 2.2 + 2.4k us) the switch
/// holds k − ⌊k/5⌋ + 1 − 1 = k − ⌊k/5⌋ packets (one leaves every 12 us from
/// 2.2 us, as it starts). One ingress count holding x bytes pauses when
/// x ≥ α(B − x): with B = 60,000 B, at x = 30,000 B (20 packets, k = 24,
/// 59.8 us) for α = 1 and at 21,000 B (14 packets, k = 17, 43.0 us) for
/// α = 1/2.
#[test]
fn a_dynamic_threshold_pauses_at_alpha_times_the_free_buffer() {
    for (alpha, xoff_us) in [(1.0, 59.8), (0.5, 43.0)] {
        let agent = format!(
            "[[agents]]\nkind = \"pause\"\nswitches = \"all\"\nalpha = {alpha}\nbuffer = \"60000B\"\ntrace = true\n"
        );
        let out = run_toml(&common::five_to_one("1us", "1000pkt", &agent));
        assert_eq!(out.summary.packets_dropped, 0);
        assert_eq!(out.agent_rows.str("key")[0], "xoff");
        let at = out.agent_rows.f64("time_s")[0] * 1e6;
        assert!((at - xoff_us).abs() < 1e-6, "α {alpha}: XOFF at {at} us");
    }
}

/// Headroom: with 5 us links, a PAUSE sent as a packet crosses xoff at t
/// reaches host 0 at t + 5.0512 us, and every packet host 0 started before
/// then still arrives. Host 0 sends its backlog back to back after each XON
/// (1.2 us apart), so those started in (t − 6.2 us, t + 5.0512 us], after the
/// one that crossed: ⌊11.2512 / 1.2⌋ = 9 packets, while the 1 Gbps
/// bottleneck starts none (12 us apart, and one started at the XON). The
/// first XOFF comes while host 0 still sends at 5 Gbps, 2.4 us apart:
/// ⌊11.2512 / 2.4⌋ = 4 packets. A headroom of h packets above xoff so drops
/// max(0, 4 − h) at the first XOFF and max(0, 9 − h) at each later one on ingress, each traced and
/// counted at its egress port; 9 drops nothing.
#[test]
fn arrivals_beyond_the_headroom_are_dropped_on_ingress() {
    let agent = |headroom: u64| {
        format!(
            "[[agents]]\nkind = \"pause\"\nswitches = \"all\"\nxoff = \"20pkt\"\nheadroom = \"{headroom}pkt\"\ntrace = true\n"
        )
    };
    for h in [2, 8, 9] {
        let out = run_toml(&common::five_to_one("5us", "1000pkt", &agent(h)));
        let keys = out.agent_rows.str("key");
        let xoffs = keys.iter().filter(|k| *k == "xoff").count() as u64;
        let drops = out.summary.packets_dropped;
        assert!(xoffs > 30);
        let want = 4u64.saturating_sub(h) + 9u64.saturating_sub(h) * (xoffs - 1);
        assert_eq!(drops, want, "headroom {h}");
        assert_eq!(keys.iter().filter(|k| *k == "drop").count() as u64, drops);
        assert_eq!(
            port_value(&out, "sw0->host1", "packets_dropped") as u64,
            drops
        );
    }
}

#[test]
fn bad_pause_settings_name_the_field() {
    let bad = [
        ("xon = \"2pkt\"", "agents[0].xoff: required"),
        (
            "xoff = \"20pkt\"\nalpha = 0.5",
            "agents[0].alpha: not with xoff",
        ),
        (
            "xoff = \"20pkt\"\nxon = \"30pkt\"",
            "agents[0].xon: must be below xoff (20pkt), got 30pkt",
        ),
        ("xoff = \"20pkt\"\nquanta = 0", "agents[0].quanta: must be at least 1"),
        (
            "xoff = \"20pkt\"\nheadroom = \"3000B\"",
            "agents[0].headroom: must be in the unit of xoff (20pkt)",
        ),
        (
            "xoff = \"20pkt\"\nheadroom = \"1000pkt\"",
            "agents[0].headroom: must be below the switch ports' buffer (network.queue.capacity = 1000pkt), got 1000pkt",
        ),
        (
            "xoff = \"20pkt\"\nbuffer = \"1MB\"",
            "agents[0].buffer: only with alpha",
        ),
        (
            "xoff = \"20pkt\"\nrefresh = \"0us\"",
            "agents[0].refresh: 0us is shorter than one pause quantum",
        ),
        (
            "xoff = \"20pkt\"\ndeadlock_after = \"0s\"",
            "agents[0].deadlock_after: must be positive",
        ),
        ("alpha = 0.5", "agents[0].buffer: missing"),
        ("alpha = -1.0\nbuffer = \"1MB\"", "agents[0].alpha: must be a positive number"),
        (
            "alpha = 0.5\nbuffer = \"100pkt\"",
            "agents[0].buffer: must be in bytes with alpha",
        ),
        (
            "alpha = 0.5\nbuffer = \"1MB\"\nxon = \"2pkt\"",
            "agents[0].xon: only with xoff",
        ),
        // Bounds: the switch (2 ports of 1000 packets, a packet on each
        // wire) holds 2002 packets, 2 × 1001 × 65,535 B counted in bytes.
        (
            "xoff = \"2002pkt\"\nxon = \"2pkt\"",
            "agents[0].xoff: 2002pkt is not below what the largest switch holds (2002pkt:",
        ),
        (
            "alpha = 0.5\nbuffer = \"131201071B\"",
            "agents[0].buffer: 131201071B is more than the largest switch's queues hold (131201070B:",
        ),
        (
            "alpha = 0.5\nbuffer = \"100KB\"\nresume_offset = \"100KB\"",
            "agents[0].resume_offset: must be below buffer (100000B)",
        ),
        (
            "xoff = \"20pkt\"\ndeadlock_after = \"5001ms\"",
            "agents[0].deadlock_after: must be at most 5000000us (5 s, the longest detection time of SONiC's PFC watchdog)",
        ),
        (
            "alpha = 0.5\nbuffer = \"100KB\"\nheadroom = \"50KB\"",
            "agents[0].headroom: 2 ports × 1 classes × 50000B = 100000B reserved is not below buffer (100000B)",
        ),
    ];
    for (keys, want) in bad {
        let text = common::five_to_one(
            "1us",
            "1000pkt",
            &format!("[[agents]]\nkind = \"pause\"\nswitches = \"all\"\n{keys}\n"),
        );
        let err = common::error_of(&text);
        assert!(err.starts_with(want), "{keys}: got {err}");
    }
    // One below the bounds is a switch's.
    for keys in ["xoff = \"2001pkt\"", "alpha = 0.5\nbuffer = \"131201070B\""] {
        let text = common::five_to_one(
            "1us",
            "1000pkt",
            &format!("[[agents]]\nkind = \"pause\"\nswitches = \"all\"\n{keys}\n"),
        );
        assert!(Scenario::from_toml_str(&text).is_ok(), "{keys}");
    }
}
