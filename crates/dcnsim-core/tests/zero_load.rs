//! Zero-load latency equals the closed form: Σ over links of (8·size/rate +
//! delay) plus the host delay once at each end. The first seed (§2, §3.1,
//! §3.2): 1 core, 2 aggregation, 8 ToR switches, 128 hosts, 0.2 us links,
//! 2.5 us host delay, 1500 B packets.

mod common;
use common::run_toml;

fn seed_tree(upper_rate: &str, policy: &str) -> String {
    format!(
        r#"
[topology]
kind = "tree3"
cores = 1
aggs = 2
tors = 8
hosts_per_tor = 16
link = {{ rate = "1Gbps", delay = "0.2us" }}
tor_agg_link = {{ rate = "{upper_rate}" }}
agg_core_link = {{ rate = "{upper_rate}" }}
[network]
host_delay = "2.5us"
[forwarding]
policy = "{policy}"
[[traffic.probes]]
src = 0
dst = "all"
interval = "200us"
size = "1500B"
"#
    )
}

/// Latency in picoseconds of a path with `host_links` 1 Gbps hops and
/// `upper_links` hops at `upper_bps`.
fn closed_form_ps(upper_links: u64, upper_bps: u64) -> u64 {
    let ser = |bps: u64| 1500 * 8 * 1_000_000_000_000 / bps;
    2 * 2_500_000 + 2 * (ser(1_000_000_000) + 200_000) + upper_links * (ser(upper_bps) + 200_000)
}

fn latencies_ps(out: &dcnsim_core::Output) -> Vec<u64> {
    let sent = out.probes.f64("sent_s");
    let recv = out.probes.f64("received_s");
    sent.iter()
        .zip(recv)
        .map(|(s, r)| ((r - s) * 1e12).round() as u64)
        .collect()
}

#[test]
fn first_seed_three_latency_groups() {
    let out = run_toml(&seed_tree("1Gbps", "single"));
    let lat = latencies_ps(&out);
    let hops = out.probes.i64("hops");
    let dst = out.probes.i64("dst");
    assert_eq!(lat.len(), 127);
    for i in 0..127 {
        let (expect_us, expect_hops) = match dst[i] {
            1..=15 => (29_400_000, 2),
            16..=63 => (53_800_000, 4),
            _ => (78_200_000, 6),
        };
        assert_eq!(lat[i], expect_us, "probe to host {}", dst[i]);
        assert_eq!(hops[i], expect_hops);
    }
    // Times are integers, so the exported seconds are exact to the picosecond.
    let l: Vec<f64> = out.probes.f64("latency_s").to_vec();
    let mean = l.iter().sum::<f64>() / l.len() as f64;
    let std = (l.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / l.len() as f64).sqrt();
    assert!((mean * 1e6 - 63.21).abs() < 0.005, "mean {}", mean * 1e6);
    assert!((std * 1e6 - 16.78).abs() < 0.005, "std {}", std * 1e6);
}

#[test]
fn equal_length_routing_makes_every_path_six_hops() {
    let out = run_toml(&seed_tree("1Gbps", "elr"));
    for (l, h) in latencies_ps(&out).iter().zip(out.probes.i64("hops")) {
        assert_eq!((*l, *h), (78_200_000, 6));
    }
}

/// `elr_classes`: only the listed classes climb to the core; the others take
/// the shortest path (2, 4 or 6 hops), as with ECMP.
#[test]
fn equal_length_routing_of_some_classes_only() {
    let tree = seed_tree("1Gbps", "elr");
    let test = tree.replace("policy = \"elr\"", "policy = \"elr\"\nelr_classes = [1]");
    let climbed = run_toml(&test.replace("size = \"1500B\"", "size = \"1500B\"\nclass = 1"));
    for l in latencies_ps(&climbed) {
        assert_eq!(l, closed_form_ps(4, 1_000_000_000));
    }
    let shortest = run_toml(&test);
    for (l, d) in latencies_ps(&shortest)
        .iter()
        .zip(shortest.probes.i64("dst"))
    {
        let upper = match d {
            1..=15 => 0,
            16..=63 => 2,
            _ => 4,
        };
        assert_eq!(*l, closed_form_ps(upper, 1_000_000_000), "to {d}");
    }
}

#[test]
fn faster_upper_tiers_follow_the_closed_form() {
    for (rate, bps) in [("2Gbps", 2_000_000_000), ("4Gbps", 4_000_000_000)] {
        for policy in ["single", "ecmp", "rps"] {
            let out = run_toml(&seed_tree(rate, policy));
            for (l, d) in latencies_ps(&out).iter().zip(out.probes.i64("dst")) {
                let upper = match d {
                    1..=15 => 0,
                    16..=63 => 2,
                    _ => 4,
                };
                assert_eq!(*l, closed_form_ps(upper, bps), "{rate} {policy} to {d}");
            }
        }
        let out = run_toml(&seed_tree(rate, "elr"));
        for l in latencies_ps(&out) {
            assert_eq!(l, closed_form_ps(4, bps));
        }
    }
}

#[test]
fn switch_latency_is_added_once_per_switch() {
    let out = run_toml(
        r#"
[topology]
kind = "fat_tree"
k = 4
link = { rate = "10Gbps", delay = "1us" }
[network]
switch_latency = "0.5us"
host_delay = "1us"
[[traffic.probes]]
src = 0
dst = 15
"#,
    );
    // 6 links of 1.2 us + 1 us, 5 switches of 0.5 us, 2 host delays of 1 us.
    let lat = out.probes.f64("latency_s")[0];
    assert_eq!(
        (lat * 1e12).round() as u64,
        6 * 2_200_000 + 5 * 500_000 + 2 * 1_000_000
    );
}

/// A run that stops while a packet is in its destination host's processing
/// counts the packet's last hop (its arrival at the host is folded into the
/// delivery, a host delay later): one 1500 B probe over two 1 Gbps links of
/// 1 us with 5 us of host delay leaves the NIC at 5 us, reaches the switch
/// at 18 us and its host at 31 us, and is delivered at 36 us.
#[test]
fn a_stop_during_host_processing_counts_the_last_hop() {
    let run = |stop_us: u32| {
        run_toml(&format!(
            r#"
stop_time = "{stop_us}us"
[topology]
kind = "star"
hosts = 2
link = {{ rate = "1Gbps", delay = "1us" }}
[network]
host_delay = "5us"
[[traffic.probes]]
src = 0
dst = 1
size = "1500B"
"#
        ))
        .summary
    };
    for (stop_us, hops, delivered) in [
        (17, 0, 0),
        (18, 1, 0),
        (30, 1, 0),
        (31, 2, 0),
        (35, 2, 0),
        (36, 2, 1),
    ] {
        let s = run(stop_us);
        assert_eq!(
            (s.packet_hops, s.packets_delivered, s.packets_in_flight),
            (hops, delivered, 1 - delivered),
            "stop at {stop_us} us"
        );
    }
}
