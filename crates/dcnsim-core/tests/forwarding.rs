//! Forwarding policies on the spraying seed's k = 4 fat-tree (§2, Fig. 1): a
//! flow from S0 to S15 has four equal-cost paths, one through each core.

mod common;
use common::{port_sent, run_toml};

const CORE_PORTS: [&str; 4] = ["agg0->core0", "agg0->core1", "agg1->core2", "agg1->core3"];

fn one_flow(policy: &str, seed: u64, packets: u64) -> [i64; 4] {
    // A constant 1 Gbps stream of 1500 B packets: one packet every 12 us.
    let stop_us = packets * 12;
    let out = run_toml(&format!(
        r#"
seed = {seed}
[topology]
kind = "fat_tree"
k = 4
link = {{ rate = "10Gbps", delay = "1us" }}
[forwarding]
policy = "{policy}"
[[traffic.streams]]
src = 0
dst = 15
rate = "1Gbps"
pattern = "constant"
stop = "{stop_us}us"
"#
    ));
    let counts = CORE_PORTS.map(|p| port_sent(&out, p));
    assert_eq!(counts.iter().sum::<i64>(), packets as i64);
    counts
}

/// Pearson's chi-square statistic against a uniform spread.
fn chi_square(counts: &[i64]) -> f64 {
    let total: i64 = counts.iter().sum();
    let expect = total as f64 / counts.len() as f64;
    counts
        .iter()
        .map(|&c| (c as f64 - expect).powi(2) / expect)
        .sum()
}

#[test]
fn rps_sprays_one_flow_evenly_over_the_cores() {
    // 3 degrees of freedom: P(chi2 > 16.27) = 0.001 under the uniform spread.
    // Ten seeds: a sound sprayer fails one of them with probability 1%; the
    // pooled statistic over all seeds has 27 degrees of freedom.
    let mut pooled = 0.0;
    let mut fails = 0;
    for seed in 1..=10 {
        let counts = one_flow("rps", seed, 4000);
        let x = chi_square(&counts);
        pooled += x;
        if x > 16.27 {
            fails += 1;
        }
        assert!(counts.iter().all(|&c| c > 0), "{counts:?}");
    }
    assert!(fails <= 1, "{fails} of 10 seeds rejected uniformity");
    // chi2(30 dof) 0.999 quantile is 59.7; pooled over 10 × 3 dof.
    assert!(pooled < 59.7, "pooled chi-square {pooled}");
    // And it is not trivially equal: exact quarters on every seed would be
    // suspicious too (chi-square of 0).
    assert!(pooled > 0.0);
}

#[test]
fn ecmp_keeps_a_flow_on_one_path() {
    let mut used = std::collections::BTreeSet::new();
    for seed in 1..=8 {
        let counts = one_flow("ecmp", seed, 500);
        let busy: Vec<usize> = (0..4).filter(|&i| counts[i] > 0).collect();
        assert_eq!(busy.len(), 1, "seed {seed}: {counts:?}");
        used.insert(busy[0]);
    }
    // The per-seed hash salt moves the flow between cores across seeds.
    assert!(used.len() > 1, "ecmp chose core {used:?} for every seed");
}

#[test]
fn single_picks_the_same_path_for_every_seed() {
    let first = one_flow("single", 1, 300);
    assert_eq!(first.iter().filter(|&&c| c > 0).count(), 1);
    for seed in 2..=6 {
        assert_eq!(one_flow("single", seed, 300), first);
    }
}

#[test]
fn single_spreads_different_pairs_over_the_cores() {
    let mut streams = String::new();
    for src in 0..4 {
        for dst in 12..16 {
            streams += &format!(
                "[[traffic.streams]]\nsrc = {src}\ndst = {dst}\nrate = \"1Gbps\"\npattern = \"constant\"\nstop = \"120us\"\n"
            );
        }
    }
    let out = run_toml(&format!(
        "[topology]\nkind = \"fat_tree\"\nk = 4\n[forwarding]\npolicy = \"single\"\n{streams}"
    ));
    let used = CORE_PORTS.iter().filter(|p| port_sent(&out, p) > 0).count()
        + ["agg2->core0", "agg2->core1", "agg3->core2", "agg3->core3"]
            .iter()
            .filter(|p| port_sent(&out, p) > 0)
            .count();
    assert!(used >= 3, "16 pairs used only {used} core uplinks");
}
