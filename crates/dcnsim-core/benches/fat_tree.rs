//! The fixed benchmark (see `dcnsim_core::BENCH_SCENARIO`): a k=8 fat-tree,
//! 10 Gbps, 1 us links, Poisson datagrams between random hosts at 50% load for
//! 20 ms simulated. Prints packet-hops per wall second; run with
//! `cargo bench -p dcnsim-core`.

use dcnsim_core::{run, Scenario, BENCH_SCENARIO};

fn main() {
    let sc = Scenario::from_toml_str(BENCH_SCENARIO).expect("bench scenario is valid");
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
}
