//! The host stack (`network.host_delay` as a table): a drawn delay adds its
//! distribution's mean to every packet's latency, each direction from its
//! own seeded stream, and a host's packets leave its stack in order.

mod common;
use common::run_toml;

/// A 100 Mbps stream of 1000 B packets (one every 80 µs) from host 0 to 1
/// on a 10 Gbps star, for `stop`, every packet recorded.
fn stream(host_delay: &str, rate: &str, stop: &str, seed: u64) -> String {
    format!(
        r#"
seed = {seed}
[topology]
kind = "star"
hosts = 4
link = {{ rate = "10Gbps", delay = "1us" }}
[network]
host_delay = {host_delay}
[[traffic.streams]]
src = 0
dst = 1
rate = "{rate}"
pattern = "constant"
size = "1000B"
start = "0us"
stop = "{stop}"
record = true
"#
    )
}

/// (sent, received) of every recorded packet, in seconds.
fn times(toml: &str) -> (Vec<f64>, Vec<f64>) {
    let out = run_toml(toml);
    (
        out.probes.f64("sent_s").to_vec(),
        out.probes.f64("received_s").to_vec(),
    )
}

fn mean_latency_us(sent: &[f64], recv: &[f64]) -> f64 {
    sent.iter().zip(recv).map(|(s, r)| r - s).sum::<f64>() / sent.len() as f64 * 1e6
}

#[test]
fn drawn_delays_add_their_closed_form_means() {
    // Without host delay every packet takes the same zero-load latency.
    let (s0, r0) = times(&stream("\"0us\"", "100Mbps", "800ms", 1));
    let zero_load = mean_latency_us(&s0, &r0);
    assert!(s0
        .iter()
        .zip(&r0)
        .all(|(s, r)| ((r - s) * 1e6 - zero_load).abs() < 1e-6));
    // Sending uniform on [10, 30] µs (mean 20), receiving lognormal with
    // median 10 µs and σ 0.5 (mean 10·e^(σ²/2) = 11.331 µs). Packets 80 µs
    // apart are (almost) never held back by the one ahead, so the mean
    // latency is the zero-load one plus both means; 10,000 packets put the
    // standard error at 0.08 µs.
    let hd = r#"{ send = { kind = "uniform", low = "10us", high = "30us" }, receive = { kind = "lognormal", median = "10us", sigma = 0.5 } }"#;
    let (s, r) = times(&stream(hd, "100Mbps", "800ms", 1));
    assert_eq!(s.len(), 10_000);
    assert_eq!(s, s0);
    let expect = zero_load + 20.0 + 10.0 * (0.125f64).exp();
    let got = mean_latency_us(&s, &r);
    assert!(
        (got - expect).abs() < 0.3,
        "mean latency {got} µs, expected {expect}"
    );
    // Each direction alone.
    let send_only = r#"{ send = { kind = "uniform", low = "10us", high = "30us" } }"#;
    let (s, r) = times(&stream(send_only, "100Mbps", "800ms", 1));
    let got = mean_latency_us(&s, &r);
    assert!((got - zero_load - 20.0).abs() < 0.2, "send only: {got}");
    assert!(s
        .iter()
        .zip(&r)
        .all(|(s, r)| (r - s) * 1e6 >= zero_load + 10.0 - 1e-6));
    // The same seed draws the same delays; another seed others.
    assert_eq!(
        times(&stream(hd, "100Mbps", "10ms", 1)),
        times(&stream(hd, "100Mbps", "10ms", 1))
    );
    assert_ne!(
        times(&stream(hd, "100Mbps", "10ms", 1)).1,
        times(&stream(hd, "100Mbps", "10ms", 2)).1
    );
}

#[test]
fn a_hosts_packets_stay_in_order() {
    // Packets 8 µs apart with delays spread over 100 µs each way: without a
    // FIFO stack most would overtake each other.
    let hd = r#"{ send = { kind = "uniform", low = "0us", high = "100us" }, receive = { kind = "lognormal", median = "30us", sigma = 1.0 } }"#;
    let (s, r) = times(&stream(hd, "1Gbps", "20ms", 3));
    assert_eq!(s.len(), 2500);
    assert!(s.windows(2).all(|w| w[0] < w[1]));
    assert!(
        r.windows(2).all(|w| w[0] <= w[1]),
        "a packet overtook the one ahead"
    );
    // and each is still delayed by at least the zero-load latency
    assert!(s.iter().zip(&r).all(|(s, r)| r - s > 3e-6));
}

#[test]
fn the_scalar_and_its_constant_table_are_the_same_run() {
    let scalar = times(&stream("\"2.5us\"", "1Gbps", "2ms", 1));
    let table = r#"{ send = "2.5us", receive = { kind = "constant", value = "2.5us" } }"#;
    assert_eq!(scalar, times(&stream(table, "1Gbps", "2ms", 1)));
}
