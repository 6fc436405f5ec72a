//! BOTCP end to end (seed `botcp.txt`): the seed's extreme flow load (§5.3)
//! on one bottleneck port of 128 KiB (87 packets of 1500 B), and what BOTCP
//! needs of a scenario.
//!
//! 100 senders on one switch send 50 KB each to one receiver, 20 of them
//! starting every 200 µs (0, 200, …, 800 µs), so that from the fourth burst
//! on more flows share the port than its buffer and the path hold packets.
//! BOTCP must take windows below one segment and keep every flow sending
//! without a drop; DCTCP (K = 20 packets), whose window stops at one
//! segment, overflows the buffer and waits for retransmission timeouts.

use dcnsim_core::{Output, Scenario};

mod common;
use common::{error_of, port_value, run_toml};

const BOTTLENECK: &str = "sw0->host0";

/// The scenario for `protocol`; `extra` goes at the end.
fn extreme(protocol: &str, extra: &str) -> String {
    let mut flows = String::new();
    for i in 0..100 {
        let start = 200 * (i / 20);
        flows += &format!(
            "[[traffic.flows]]\nsrc = {}\ndst = 0\nsize = \"50KB\"\nstart = \"{start}us\"\n",
            i + 1
        );
    }
    format!(
        r#"
stop_time = "200ms"
[topology]
kind = "star"
hosts = 101
link = {{ rate = "10Gbps", delay = "2us" }}
[network]
queue = {{ capacity = "128KiB", aqm = {{ kind = "threshold", k = "20pkt" }} }}
[[network.stages]]
kind = "max_occupancy"
ports = "switches"
[transport]
protocol = "{protocol}"
min_rto = "0.2ms"
{flows}
[trace]
queues = ["{BOTTLENECK}"]
{extra}
"#
    )
}

fn sum(out: &Output, col: &str) -> i64 {
    out.flows.i64(col).iter().sum()
}

#[test]
fn botcp_keeps_100_flows_on_an_87_packet_port_without_a_drop() {
    let out = run_toml(&extreme("botcp", ""));
    let delivered = out.flows.i64("bytes_delivered");
    assert!(
        delivered.iter().all(|&b| b == 50_000),
        "every flow completes"
    );
    // The queue stays below the buffer (128 KiB, 87 packets of 1504 B), so
    // nothing is dropped and no flow waits for a timeout: the windows went
    // below one segment, since 100 flows of one segment each would hold
    // about 100 packets at the port.
    let max_bytes = port_value(&out, BOTTLENECK, "max_queue_bytes");
    assert!(max_bytes < 128 * 1024, "max queue {max_bytes} B");
    assert_eq!(port_value(&out, BOTTLENECK, "packets_dropped"), 0);
    assert_eq!(sum(&out, "timeouts"), 0);
}

/// A port whose only guard is the stamp runs it itself (inline); beside
/// another on-enqueue stage it runs through the port's stage list. A second
/// `max_occupancy` entry on the same ports stamps nothing new (the field is
/// already the larger), so both ways must give the same run.
#[test]
fn the_stamp_run_inline_and_through_the_stage_list_agree() {
    let alone = run_toml(&extreme("botcp", ""));
    let twice = run_toml(&extreme(
        "botcp",
        "[[network.stages]]\nkind = \"max_occupancy\"\nports = \"switches\"\n",
    ));
    assert_eq!(alone.flows.f64("fct_s"), twice.flows.f64("fct_s"));
    assert_eq!(
        alone.flows.i64("packets_sent"),
        twice.flows.i64("packets_sent")
    );
    assert_eq!(alone.queues.i64("bytes"), twice.queues.i64("bytes"));
    assert!(alone.queues.i64("bytes").iter().any(|&b| b > 20 << 10));
}

/// The stamp beside an outage on the same port (the port's guards then run
/// through its stage list, not inline): an outage that opens after every
/// flow is done changes nothing; one of 100 µs while the second burst's
/// flows send (after their handshakes: a lost SYN waits for the 1 s initial
/// RTO) leaves the run as it was until it opens, lets no packet join the
/// queue while it lasts (the traced queue only drains), drops at that port
/// alone, and every flow still finishes.
#[test]
fn the_stamp_beside_an_outage_on_its_port() {
    let outage = |start: &str, stop: &str| {
        format!(
            "[[network.outages]]\nport = \"{BOTTLENECK}\"\nstart = \"{start}\"\nstop = \"{stop}\"\n"
        )
    };
    let alone = run_toml(&extreme("botcp", ""));
    assert!(alone.flows.f64("fct_s").iter().all(|&t| t < 0.19));
    let late = run_toml(&extreme("botcp", &outage("190ms", "200ms")));
    assert_eq!(alone.flows.f64("fct_s"), late.flows.f64("fct_s"));
    assert_eq!(alone.queues.i64("bytes"), late.queues.i64("bytes"));

    let (start, stop) = (250e-6, 350e-6);
    let cut = run_toml(&extreme("botcp", &outage("250us", "350us")));
    let before = |out: &Output| -> Vec<i64> {
        let time = out.queues.f64("time_s");
        let bytes = out.queues.i64("bytes");
        (0..time.len())
            .filter(|&i| time[i] < start)
            .map(|i| bytes[i])
            .collect()
    };
    assert_eq!(before(&alone), before(&cut));
    let (time, bytes) = (cut.queues.f64("time_s"), cut.queues.i64("bytes"));
    let during: Vec<i64> = (0..time.len())
        .filter(|&i| (start..stop).contains(&time[i]))
        .map(|i| bytes[i])
        .collect();
    assert!(!during.is_empty());
    assert!(during.windows(2).all(|w| w[1] <= w[0]), "{during:?}");
    let dropped = port_value(&cut, BOTTLENECK, "packets_dropped");
    assert!(dropped > 0);
    assert_eq!(cut.summary.packets_dropped as i64, dropped);
    assert!(cut
        .flows
        .i64("bytes_delivered")
        .iter()
        .all(|&b| b == 50_000));
}

#[test]
fn dctcp_overflows_the_same_port_and_times_out() {
    let out = run_toml(&extreme("dctcp", ""));
    assert!(out
        .flows
        .i64("bytes_delivered")
        .iter()
        .all(|&b| b == 50_000));
    assert!(port_value(&out, BOTTLENECK, "packets_dropped") > 0);
    assert!(sum(&out, "timeouts") > 0);
}

#[test]
fn botcp_needs_the_stamp_on_every_switch_port_and_bm_below_the_buffer() {
    let stage = "[[network.stages]]\nkind = \"max_occupancy\"\nports = \"switches\"\n";
    let no_stamp = extreme("botcp", "").replace(stage, "");
    let e = error_of(&no_stamp);
    assert!(
        e.starts_with("network.stages: protocol \"botcp\" needs the max_occupancy stage"),
        "{e}"
    );
    // 128 KiB is 87 BOF units of 1500 B (§5.3); Bm must stay below.
    let e = error_of(&extreme("botcp", "[transport.botcp]\nbm = 87"));
    assert!(
        e.starts_with("transport.botcp.bm: must be below the switch ports' buffer"),
        "{e}"
    );
    assert!(Scenario::from_toml_str(&extreme("botcp", "[transport.botcp]\nbm = 86")).is_ok());
    // Other protocols need neither.
    let e = no_stamp.replace("protocol = \"botcp\"", "protocol = \"dctcp\"");
    assert!(Scenario::from_toml_str(&e).is_ok());
    for (keys, field) in [
        (
            "bl = 40",
            "transport.botcp.bl: must be below bs (40), got 40",
        ),
        (
            "bs = 60",
            "transport.botcp.bs: must be below bm (60), got 60",
        ),
        ("bm = 300", "transport.botcp.bm: must be at most 255"),
        ("x = \"-10KB\"", "transport.botcp.x: must be positive"),
    ] {
        let e = error_of(&extreme("botcp", &format!("[transport.botcp]\n{keys}")));
        assert!(e.starts_with(field) && !e.contains('\n'), "{keys}: {e}");
    }
}
