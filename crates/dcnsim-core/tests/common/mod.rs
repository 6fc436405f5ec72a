//! Shared helpers of the integration tests.
#![allow(dead_code)]

use dcnsim_core::{run, Output, Scenario};

/// Validate and run a TOML scenario, checking packet conservation.
pub fn run_toml(text: &str) -> Output {
    let sc = Scenario::from_toml_str(text).unwrap_or_else(|e| panic!("{e}"));
    let out = run(&sc, &mut |_| true).expect("not aborted");
    let s = &out.summary;
    assert_eq!(
        s.packets_injected,
        s.packets_delivered + s.packets_dropped + s.packets_in_flight,
        "conservation: {s:?}"
    );
    out
}

/// The error message of an invalid TOML scenario.
pub fn error_of(text: &str) -> String {
    Scenario::from_toml_str(text)
        .expect_err("scenario should be invalid")
        .to_string()
}

/// Packets sent on the named port.
pub fn port_sent(out: &Output, name: &str) -> i64 {
    port_value(out, name, "packets_sent")
}

/// The named port's value in an integer `column` of the ports table.
pub fn port_value(out: &Output, name: &str, column: &str) -> i64 {
    let names = out.ports.str("port");
    let i = names
        .iter()
        .position(|n| n == name)
        .unwrap_or_else(|| panic!("no port {name}"));
    out.ports.i64(column)[i]
}

/// Four hosts of a 1 Gbps star each send a 0.6-load stream to host 3 for
/// 20 ms: 1.8 times what the drop-tail port `sw0->host3` (of `capacity`)
/// can take. `trace` is the body of the `[trace]` table.
pub fn star_overload(capacity: &str, trace: &str) -> Output {
    run_toml(&format!(
        r#"
stop_time = "20ms"
[topology]
kind = "star"
hosts = 4
link = {{ rate = "1Gbps", delay = "1us" }}
[network]
queue = {{ kind = "droptail", capacity = "{capacity}" }}
[trace]
{trace}
[[traffic.streams]]
src = "all"
dst = 3
load = 0.6
"#
    ))
}

/// The 5:1 overload: host 0 (10 Gbps NIC) sends a constant 5 Gbps stream of
/// 1500 B datagrams for 2 ms to host 1 behind a 1 Gbps link, through switch
/// queues of `capacity`, every link of `delay`. `tail` is appended after the
/// stream's keys (more stream keys, then `[[agents]]` tables).
pub fn five_to_one(delay: &str, capacity: &str, tail: &str) -> String {
    format!(
        r#"
stop_time = "30ms"
[topology]
kind = "star"
hosts = 2
link = {{ rate = "10Gbps", delay = "{delay}" }}
host_rates = ["10Gbps", "1Gbps"]
[network]
queue = {{ capacity = "{capacity}" }}
[[traffic.streams]]
src = 0
dst = 1
rate = "5Gbps"
pattern = "constant"
size = "1500B"
stop = "2ms"
{tail}
"#
    )
}
