//! Fuzz the scenario parser and validator: any bytes, read as TOML and as JSON,
//! must give a scenario or a one-line `ScenarioError` naming a field, never a
//! panic, an abort or a hang. Run (nightly, cargo-fuzz):
//! `cargo +nightly fuzz run scenario -- -max_total_time=600` from the repository
//! root; seeds are the example scenarios (`fuzz/seeds.sh` copies them).
#![no_main]

use dcnsim_core::Scenario;
use libfuzzer_sys::fuzz_target;

fn check(result: Result<Scenario, dcnsim_core::ScenarioError>) {
    if let Err(e) = result {
        let line = e.to_string();
        assert!(!line.contains('\n'), "error on more than one line: {line:?}");
        assert!(line.contains(": "), "error without a field: {line:?}");
    }
}

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        check(Scenario::from_toml_str(text));
        check(Scenario::from_json_str(text));
    }
});
