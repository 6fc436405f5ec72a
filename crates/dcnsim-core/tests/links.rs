//! `links.parquet` (`trace.links`): every port's packets, bytes and
//! utilisation per interval, checked against closed forms: a saturated link
//! at line rate is busy every interval (utilisation 1), an idle one 0; a
//! packet on the wire across an interval's end is split by its bits; the
//! rows sum to the ports table's counters; turning the counters on changes
//! no other table, and ports that commit packets ahead (scheduled) count as
//! event-driven ones do.

mod common;

use common::{error_of, run_toml, star_overload};
use dcnsim_core::Output;

/// `(time_s, interval_s, packets, bytes, utilisation)` of `port`'s rows.
fn rows(out: &Output, port: &str) -> Vec<(f64, f64, i64, f64, f64)> {
    let l = &out.links;
    (0..l.rows())
        .filter(|&i| l.str("port")[i] == port)
        .map(|i| {
            (
                l.f64("time_s")[i],
                l.f64("interval_s")[i],
                l.i64("packets")[i],
                l.f64("bytes")[i],
                l.f64("utilisation")[i],
            )
        })
        .collect()
}

#[test]
fn a_saturated_link_is_busy_every_interval_and_an_idle_one_never() {
    let out = star_overload("50pkt", "links = \"1ms\"");
    let ports = out.ports.rows();
    assert_eq!(out.links.rows(), ports * 20, "a row per port per interval");
    let full = rows(&out, "sw0->host3");
    assert_eq!(full.len(), 20);
    for (i, &(t, span, _, bytes, u)) in full.iter().enumerate() {
        assert!(
            (t - i as f64 * 1e-3).abs() < 1e-15,
            "interval {i} starts at {t}"
        );
        assert!((span - 1e-3).abs() < 1e-15);
        // From the second millisecond on the queue never empties: the port
        // serializes all the time, 125,000 B per ms at 1 Gbps.
        if i > 0 {
            assert!((u - 1.0).abs() < 1e-9, "interval {i}: utilisation {u}");
            assert!((bytes - 125_000.0).abs() < 1e-3, "interval {i}: {bytes} B");
        }
    }
    // Nothing goes to host 0 (datagrams have no ACKs).
    for (_, _, packets, bytes, u) in rows(&out, "sw0->host0") {
        assert_eq!((packets, bytes, u), (0, 0.0, 0.0));
    }
    // Each sender's NIC at its load: 0.6 on average over the run.
    let nic: f64 = rows(&out, "host0->sw0").iter().map(|r| r.4).sum::<f64>() / 20.0;
    assert!((nic - 0.6).abs() < 0.03, "host0's mean utilisation {nic}");
    let l = &out.links;
    let u = l.f64("utilisation");
    assert!(u.iter().all(|&u| (0.0..=1.0 + 1e-9).contains(&u)));
    // Over the run the rows add up to the ports table's counters.
    for (p, name) in out.ports.str("port").iter().enumerate() {
        let r = rows(&out, name);
        let packets: i64 = r.iter().map(|r| r.2).sum();
        let bytes: f64 = r.iter().map(|r| r.3).sum();
        assert_eq!(packets, out.ports.i64("packets_sent")[p], "{name}");
        let sent = out.ports.i64("bytes_sent")[p] as f64;
        // A packet still on the wire at the stop counts its bits sent.
        assert!(
            bytes <= sent + 1e-6 && sent - bytes < 1500.0,
            "{name}: {bytes} of {sent}"
        );
    }
}

#[test]
fn counting_links_changes_no_other_table_and_scheduled_ports_count_alike() {
    let plain = star_overload("50pkt", "");
    assert_eq!(plain.links.rows(), 0);
    let counted = star_overload("50pkt", "links = \"1ms\"");
    // The samples are events of their own, but the run is the same run.
    for column in [
        "packets_sent",
        "bytes_sent",
        "packets_dropped",
        "max_queue_bytes",
    ] {
        assert_eq!(
            plain.ports.i64(column),
            counted.ports.i64(column),
            "{column}"
        );
    }
    assert_eq!(
        plain.flows.i64("packets_delivered"),
        counted.flows.i64("packets_delivered")
    );
    assert_eq!(plain.summary.packet_hops, counted.summary.packet_hops);
    assert_eq!(plain.summary.sim_time_s, counted.summary.sim_time_s);
    // Tracing every queue makes every port event-driven; without, the
    // switch's ports commit packets to the wire on arrival: the same counts.
    let ports = ["host0->sw0", "host1->sw0", "host2->sw0", "host3->sw0"]
        .iter()
        .flat_map(|p| [p.to_string(), format!("sw0->host{}", &p[4..5])])
        .map(|p| format!("\"{p}\""))
        .collect::<Vec<_>>()
        .join(", ");
    let driven = star_overload("50pkt", &format!("links = \"1ms\"\nqueues = [{ports}]"));
    assert!(driven.summary.events > counted.summary.events);
    assert_eq!(counted.links.i64("packets"), driven.links.i64("packets"));
    for column in ["time_s", "interval_s", "bytes", "utilisation"] {
        let (a, b) = (counted.links.f64(column), driven.links.f64(column));
        assert_eq!(a.len(), b.len());
        for (x, y) in a.iter().zip(b) {
            assert!((x - y).abs() < 1e-6, "{column}: {x} against {y}");
        }
    }
}

/// One 1500 B packet leaves host 0 at 995 us on a 1 Gbps link (12 us on the
/// wire), counted per millisecond, in a run that ends when it is delivered.
#[test]
fn a_packet_across_an_interval_end_counts_by_its_bits_and_the_last_interval_ends_with_the_run() {
    let out = run_toml(
        r#"
[topology]
kind = "star"
hosts = 2
link = { rate = "1Gbps", delay = "1us" }
[network]
host_delay = "0us"
[trace]
links = "1ms"
[[traffic.streams]]
src = 0
dst = 1
rate = "1Gbps"
pattern = "constant"
start = "995us"
stop = "996us"
"#,
    );
    let end = out.summary.sim_time_s;
    assert!(end > 1e-3 && end < 2e-3, "delivered at {end}");
    let nic = rows(&out, "host0->sw0");
    assert_eq!(nic.len(), 2);
    // 5 us of the 12 before 1 ms: 625 B; the other 7 us after: 875 B.
    let (t0, span0, packets0, bytes0, u0) = nic[0];
    assert_eq!((t0, packets0), (0.0, 1));
    assert!((span0 - 1e-3).abs() < 1e-15);
    assert!((bytes0 - 625.0).abs() < 1e-6, "{bytes0}");
    assert!((u0 - 0.005).abs() < 1e-12, "{u0}");
    let (t1, span1, packets1, bytes1, u1) = nic[1];
    assert_eq!(packets1, 0);
    assert!((t1 - 1e-3).abs() < 1e-15);
    assert!((bytes1 - 875.0).abs() < 1e-6, "{bytes1}");
    // The last interval is cut at the run's end.
    assert!(
        (t1 + span1 - end).abs() < 1e-12,
        "{t1} + {span1} against {end}"
    );
    assert!((u1 - 875.0 * 8.0 / (1e9 * span1)).abs() < 1e-9);
    // The switch forwards it whole after 1 ms.
    let down = rows(&out, "sw0->host1");
    assert_eq!(down.iter().map(|r| r.2).collect::<Vec<_>>(), [0, 1]);
    assert!((down[1].3 - 1500.0).abs() < 1e-6);
}

#[test]
fn a_run_shorter_than_an_interval_has_one_row_per_port() {
    let out = star_overload("50pkt", "links = \"50ms\"");
    let full = rows(&out, "sw0->host3");
    assert_eq!(full.len(), 1);
    assert!(
        (full[0].1 - 20e-3).abs() < 1e-15,
        "the interval ends at stop_time"
    );
    assert!(full[0].4 > 0.99 && full[0].4 <= 1.0 + 1e-9, "{}", full[0].4);
}

#[test]
fn a_link_interval_of_zero_or_too_many_rows_is_refused_by_name() {
    let base =
        "[topology]\nkind = \"star\"\nhosts = 4\nlink = { rate = \"1Gbps\", delay = \"1us\" }\n";
    let e = error_of(&format!("{base}[trace]\nlinks = \"0us\"\n"));
    assert!(e.starts_with("trace.links: an interval of 0"), "{e}");
    let e = error_of(&format!(
        "stop_time = \"1s\"\n{base}[trace]\nlinks = \"1ns\"\n"
    ));
    assert!(
        e.starts_with("trace.links: ") && e.contains("8000000000 rows, more than 100000000"),
        "{e}"
    );
    let e = error_of(&format!("{base}[trace]\nlinks = \"fast\"\n"));
    assert!(e.starts_with("trace.links"), "{e}");
}
