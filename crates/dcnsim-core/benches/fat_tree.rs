//! The fixed benchmarks (`dcnsim_core::BENCH_SCENARIOS`), each at its own
//! stop time: on a k=8 fat-tree of 10 Gbps, 1 us links, Poisson datagrams
//! between random hosts at 50% load, DCTCP web-search flows at 50% load and
//! the same flows with pFabric hosts and switch ports (20 ms each), B1 (the
//! DCTCP flows for 1 s), and the flow-heavy case on the first seed's 3-tier
//! tree; then the DCTCP flows with SACK (`transport.sack`). Prints packet-hops
//! per wall second, pFabric's ratio to DCTCP and SACK's; run with
//! `cargo bench -p dcnsim-core`.

use dcnsim_core::{run, Scenario, BENCH_SCENARIOS};
use std::collections::HashMap;

fn main() {
    let best: HashMap<&str, f64> = BENCH_SCENARIOS
        .iter()
        .map(|&(name, text, _)| (name, bench(text, None)))
        .collect();
    println!("pfabric / tcp: {:.2}", best["pfabric"] / best["tcp"]);
    let (_, tcp, _) = BENCH_SCENARIOS.iter().find(|b| b.0 == "tcp").unwrap();
    let sack = bench(tcp, Some(("sack", true.into())));
    println!("tcp with sack / tcp: {:.3}", sack / best["tcp"]);
}

/// Best of three runs of the scenario `text`, with `transport_key` (a key of
/// `[transport]` and its value) set.
fn bench(text: &str, transport_key: Option<(&str, serde_json::Value)>) -> f64 {
    let mut value: serde_json::Value = toml::from_str(text).expect("bench scenario is TOML");
    let mut label = String::new();
    if let Some((key, v)) = transport_key {
        label = format!(" {key} = {v}");
        value["transport"][key] = v;
    }
    let sc = Scenario::from_value(value).expect("bench scenario is valid");
    println!("{}{label}", sc.name);
    let repeats = 3;
    let mut best = 0.0f64;
    for i in 0..repeats {
        let out = run(&sc, &mut |_| true).expect("bench runs to the end");
        let s = &out.summary;
        println!(
            "run {}: {} events, {} packet-hops in {:.3} s wall ({:.3} ms simulated): {:.2} M packet-hops/s",
            i + 1,
            s.events,
            s.packet_hops,
            s.wall_s,
            s.sim_time_s * 1e3,
            s.packet_hops_per_s / 1e6
        );
        best = best.max(s.packet_hops_per_s);
    }
    println!("best of {repeats}: {:.2} M packet-hops/s", best / 1e6);
    best
}
