//! What a run of a scenario will hold in memory, estimated from the validated
//! scenario before anything is built, so a run that cannot fit is refused with
//! its dominant term instead of aborting on an allocation failure.
//!
//! The terms are upper-side estimates from the sizes of the structures they
//! count (routing tables, ports, per-flow state, recorded rows as the core holds
//! them and as the Python front converts them), not measurements.

use super::Scenario;
use crate::network::Port;
use crate::units::Time;

/// Bytes per routing-table entry: one `u32` offset per (node, destination
/// host) and at least one `u32` next hop (more where paths are equal-cost).
const ROUTE_ENTRY: u64 = 4 + 4 * 2;
/// Bytes per recorded packet row (ten 8-byte columns in the core, a copy in
/// the Python front while tables are converted).
const ROW: u64 = 2 * 10 * 8;
/// Bytes per TCP flow: connection state, its timers and its output row.
const FLOW: u64 = 2048;

fn span(start: Time, stop: Time) -> f64 {
    stop.0.saturating_sub(start.0) as f64 / 1e12
}

impl Scenario {
    /// Estimated bytes of a run, by term, largest first. A run that streams
    /// its recorded rows out holds at most about `held_rows` of them.
    pub fn memory_estimate(&self, held_rows: Option<u64>) -> Vec<(&'static str, u64)> {
        let nodes = self.topology.nodes.len() as u64;
        let hosts = self.topology.host_count() as u64;
        let ports = 2 * self.topology.links.len() as u64;
        let t = &self.traffic;
        let probes = t.probe_packets(hosts);
        let mut recorded: f64 = t
            .streams
            .iter()
            .filter(|s| s.record)
            .map(|s| span(s.start, s.stop) * s.rate.0 as f64 / (8.0 * f64::from(s.size.max(1))))
            .sum();
        recorded += probes as f64;
        if let Some(held) = held_rows {
            recorded = recorded.min(held as f64);
        }
        let workload_flows: f64 = t
            .workloads
            .iter()
            .map(|w| span(w.start, w.stop) / (w.mean_gap.0.max(1) as f64 / 1e12))
            .sum();
        let incast_flows: u64 = t
            .incast
            .iter()
            .map(|a| a.workers.len() as u64 * if a.persistent { 1 } else { u64::from(a.rounds) })
            .sum();
        let flows = t.flows.len() as f64 + workload_flows + incast_flows as f64;
        let mut terms = vec![
            (
                "routing tables",
                nodes.saturating_mul(hosts).saturating_mul(ROUTE_ENTRY),
            ),
            ("ports", ports * (std::mem::size_of::<Port>() as u64 + 64)),
            ("recorded packets", recorded as u64 * ROW),
            ("TCP flows", (flows * FLOW as f64) as u64),
        ];
        terms.sort_by_key(|t| std::cmp::Reverse(t.1));
        terms
    }
}
