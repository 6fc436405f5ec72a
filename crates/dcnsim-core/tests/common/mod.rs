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
