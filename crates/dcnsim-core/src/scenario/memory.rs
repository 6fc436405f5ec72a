//! What a run of a scenario will hold in memory, estimated from the validated
//! scenario before anything is built, so a run that cannot fit is refused with
//! its dominant term instead of aborting on an allocation failure.
//!
//! The terms are upper-side estimates from the sizes of the structures they
//! count (routing tables, ports, per-flow state, recorded rows as the core holds
//! them and as the Python front converts them), not measurements, except what
//! a workload holds at once: its open connections and packets in flight follow
//! a model of its sources' queues (`app/workload.rs`, [`Scenario::busy_queue`]), checked
//! against the measured growth of benchmark B1's workload at k = 8 … 48
//! (`tests/test_memory_scale.py`).

use super::Scenario;
use crate::network::Port;
use crate::routing::Routes;
use crate::topology::NodeKind;
use crate::units::Time;

/// Routing tables ([`crate::routing`]; none for a fat-tree or a leaf-spine),
/// bytes per node:
/// its row index and its destination entry (group, attachment switch,
/// last-hop port).
const ROUTE_NODE: u64 = 4 + 3 * 4;
/// Bytes per cell: a `u32` list id per (switch + the hosts' empty row,
/// attachment switch).
const ROUTE_CELL: u64 = 4;
/// Bytes of deduplicated next-hop lists per port between switches: a length
/// and a port (4 B each), twice. A fat-tree holds about 6 B per such port (one
/// multi-port up list per edge and aggregation switch, one single-port list
/// per port down from an aggregation or core switch).
const ROUTE_PORT: u64 = 2 * (4 + 4);
/// Bytes per recorded packet row (ten 8-byte columns in the core, a copy in
/// the Python front while tables are converted).
const ROW: u64 = 2 * 10 * 8;
/// Bytes per row of `ports.parquet`, made as the run ends: its 17 eight-byte
/// columns in the core and again in the Python front (Arrow, then pandas
/// shares it), the port's name copied for the table in the core (a 24 B
/// `String` and its text) and in the front (about 24 B). A fat-tree's ports
/// outnumber its hosts six to one, so at k = 64 this is 135 MB; measured
/// growth of a k = 24 … 64 incast with it in the estimate: within 10 %
/// (`tests/test_memory_scale.py`).
const PORT_ROW: u64 = 2 * 17 * 8 + 48 + 24;
/// Bytes per TCP flow opened, kept to the end: its record in the core
/// (152 B), then as the run ends its row of `flows.parquet` made whole
/// (288 B: 20 eight-byte fields, its kind, its protocol's and origin's
/// names) beside the table's columns (344 B: 22 eight-byte columns and
/// three text columns of a 24 B `String` and its text). B1 at k = 8 for
/// 100 ms: 620 B a flow for the row and the columns, measured.
const FLOW_ROW: u64 = 152 + 288 + 344;
/// Bytes per live TCP connection (`size_of::<sim::hosts::Flow>()`, 720 B
/// on x86_64): its table doubles, and at its last doubling the old and the
/// new buffer are both full, so the peak is its capacity, the power of two
/// above the connections open at once.
const CONN: u64 = 720;
/// Bytes per packet in flight: its two cache-line rows (hop fields and
/// ends), whose tables double (the peak is their capacity, as for [`CONN`]).
const PACKET: u64 = 128;
/// Bytes per packet in flight beside its rows: about three event-calendar
/// slots of 16 B (65,536 slots for 22,411 packets on B1 at k = 16, 5 ms)
/// and its FIFO entries at its port (4 B and 16 B).
const PACKET_EXTRA: u64 = 70;
/// Bytes per operation row (nine 8-byte columns in the core, a copy in the
/// Python front while tables are converted).
const OP: u64 = 2 * 9 * 8;

fn span(start: Time, stop: Time) -> f64 {
    stop.0.saturating_sub(start.0) as f64 / 1e12
}

impl Scenario {
    /// Estimated bytes of a run, by term, largest first. A run that streams
    /// its recorded rows out holds at most about `held_rows` of them.
    pub fn memory_estimate(&self, held_rows: Option<u64>) -> Vec<(&'static str, u64)> {
        let nodes = self.topology.nodes.len() as u64;
        let hosts = self.topology.host_count() as u64;
        let switches = nodes - hosts;
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
        // `trace.links`: a row per port per interval (of a run of known length).
        if let (Some(interval), Some(stop)) = (self.trace.links, self.stop_time) {
            recorded += (ports * stop.0.div_ceil(interval.0)) as f64;
        }
        if let Some(held) = held_rows {
            recorded = recorded.min(held as f64);
        }
        let listed = t.flows.len() as f64;
        let (mut flows, mut open, mut busy, mut ops) = (listed, listed, 0.0, 0.0);
        for l in t.apps.iter().map(|a| a.load()) {
            flows += l.flows;
            open += l.open.unwrap_or(l.flows);
            busy += l.busy;
            ops += l.ops;
        }
        let packets = busy * self.busy_queue() as f64;
        // A table that doubles peaks at its capacity (old and new buffer full).
        let doubled = |n: f64| (n.ceil() as u64).next_power_of_two();
        // A fat-tree or a leaf-spine is routed by its numbering, with no table.
        let routing = if Routes::by_numbering(&self.topology, &self.topology.ports()).is_some() {
            0
        } else {
            nodes * ROUTE_NODE
                + (switches + 1) * self.attachment_switches() * ROUTE_CELL
                + ports.saturating_sub(2 * hosts) * ROUTE_PORT
        };
        let mut terms = vec![
            ("routing tables", routing),
            ("ports", ports * (std::mem::size_of::<Port>() as u64 + 64)),
            ("port rows", ports * PORT_ROW),
            ("recorded packets", recorded as u64 * ROW),
            ("flow rows", (flows * FLOW_ROW as f64) as u64),
            (
                "TCP connections",
                if open > 0.0 { doubled(open) * CONN } else { 0 },
            ),
            (
                "packets in flight",
                if packets > 0.0 {
                    doubled(packets) * PACKET + (packets * PACKET_EXTRA as f64) as u64
                } else {
                    0
                },
            ),
            ("operation rows", (ops * OP as f64) as u64),
        ];
        terms.sort_by_key(|t| std::cmp::Reverse(t.1));
        terms
    }

    /// Packets a busy source holds in flight: its bottleneck queue, where the
    /// switches' AQM holds it ([`crate::queue::aqm::Aqm::held_packets`]:
    /// DCTCP's K, RED's `max`), else filled to the queue's capacity (drop
    /// tail), and no more than the receive window, in full segments. Measured
    /// on B1 (K = 65 packets) at k = 8 … 24: 37 … 60 packets in flight per
    /// busy source (1 − e^(−open) of them). Full drop-tail queues are the
    /// upper side: B1 without marking (NewReno, 1000 packets) estimates 23.4
    /// MB at k = 8 for 20 ms against 7.6 MB measured
    /// (`tests/test_memory_scale.py`).
    fn busy_queue(&self) -> u64 {
        let tcp = &self.transport;
        let segment = tcp.segment_bytes();
        let queue = &self.network.queue;
        let held = queue.aqm.as_ref().and_then(|a| a.held_packets(segment));
        let queued = held.unwrap_or(queue.capacity.packets_of(segment));
        tcp.rwnd
            .map_or(queued, |w| queued.min(w.packets_of(segment)))
    }

    /// The switches hosts hang from: the destination groups of the routing
    /// tables.
    fn attachment_switches(&self) -> u64 {
        let topo = &self.topology;
        let mut attach = vec![false; topo.nodes.len()];
        for l in &topo.links {
            let (a, b) = (topo.nodes[l.a].kind, topo.nodes[l.b].kind);
            match (a, b) {
                (NodeKind::Host, NodeKind::Switch) => attach[l.b] = true,
                (NodeKind::Switch, NodeKind::Host) => attach[l.a] = true,
                _ => {}
            }
        }
        attach.iter().filter(|&&a| a).count() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::network::Network;

    fn routing_term(sc: &Scenario) -> u64 {
        let terms = sc.memory_estimate(None);
        terms.iter().find(|t| t.0 == "routing tables").unwrap().1
    }

    /// The routing term against the tables actually built: never below them,
    /// and within a factor of two for the built-in topologies.
    #[test]
    fn routing_term_bounds_the_built_tables() {
        for topology in [
            "kind = \"fat_tree\"\nk = 4",
            "kind = \"fat_tree\"\nk = 16",
            "kind = \"tree3\"",
            "kind = \"tree3\"\ncores = 4\naggs = 4",
        ] {
            let sc = Scenario::from_toml_str(&format!("[topology]\n{topology}")).unwrap();
            let built = Network::build(&sc.topology, &sc.network).route_bytes() as u64;
            let estimate = routing_term(&sc);
            assert!(
                built <= estimate && estimate <= 2 * built,
                "{topology}: built {built} B, estimated {estimate} B"
            );
        }
    }

    /// A three-tier tree of 64 ToRs, 64 aggregation and 32 core switches:
    /// 1,184 nodes, 160 switches, 64 attachment switches and 4,224 ports
    /// between switches; a k = 64 fat-tree (70,656 nodes) and a leaf-spine
    /// of 64 leaves and 32 spines have no table.
    #[test]
    fn routing_term_of_large_topologies() {
        let sc = Scenario::from_toml_str(
            "[topology]\nkind = \"tree3\"\ncores = 32\naggs = 64\ntors = 64\nhosts_per_tor = 16",
        )
        .unwrap();
        assert_eq!(
            routing_term(&sc),
            1_184 * ROUTE_NODE + 161 * 64 * ROUTE_CELL + 4_224 * ROUTE_PORT
        );
        for topology in [
            "kind = \"fat_tree\"\nk = 64",
            "kind = \"leaf_spine\"\nleaves = 64\nspines = 32\nhosts_per_leaf = 16",
        ] {
            let sc = Scenario::from_toml_str(&format!("[topology]\n{topology}")).unwrap();
            assert_eq!(routing_term(&sc), 0, "{topology}");
        }
    }

    /// Applications count what they open and write: non-persistent incast a
    /// flow and a row per worker per round, a workload a flow per mean gap
    /// and no row.
    #[test]
    fn applications_count_their_flows_and_operation_rows() {
        let sc = Scenario::from_toml_str(
            r#"
            [topology]
            kind = "star"
            hosts = 5
            [[traffic.incast]]
            aggregator = 0
            workers = "all"
            sru = "1KB"
            rounds = 10
            persistent = false
            [[traffic.workloads]]
            src = 1
            dst = 2
            size = "1460B"
            load = 0.5
            stop = "1ms"
            "#,
        )
        .unwrap();
        let crate::app::AppSpec::Workload(w, _) = &sc.traffic.apps[0] else {
            panic!("workloads come first: {:?}", sc.traffic.apps);
        };
        let arrivals = 1e9 / w.mean_gap.0 as f64;
        let terms = sc.memory_estimate(None);
        let term = |name| terms.iter().find(|t| t.0 == name).unwrap().1;
        assert_eq!(
            term("flow rows"),
            ((40.0 + arrivals) * FLOW_ROW as f64) as u64
        );
        assert_eq!(term("operation rows"), 40 * OP);
    }

    /// A workload's open flows follow processor sharing: every flow still
    /// open while the run is short beside a flow's sojourn (λ T), ρ / (1 − ρ)
    /// once it is long (Little's law, any size distribution), and a source is
    /// busy with probability 1 − e^(−open).
    #[test]
    fn workload_open_flows_follow_processor_sharing() {
        let load = |stop: &str, cdf: &str| {
            let sc = Scenario::from_toml_str(&format!(
                r#"
                [topology]
                kind = "star"
                hosts = 2
                [[traffic.workloads]]
                src = 0
                dst = 1
                {cdf}
                load = 0.5
                stop = "{stop}"
                "#
            ))
            .unwrap();
            sc.traffic.apps[0].load()
        };
        // 1 MB flows, 10 us: 3 KB of a flow served at most, all open.
        let short = load("10us", "size = \"1MB\"");
        assert!((short.open.unwrap() - short.flows).abs() < 1e-9 * short.flows);
        let long = load("1s", "size = \"1MB\"");
        assert!((long.open.unwrap() - 1.0).abs() < 1e-9, "{long:?}");
        assert!((long.busy - (1.0 - (-1.0f64).exp())).abs() < 1e-9);
        // Web-search sizes (up to 30 MB): a second is long, a millisecond not.
        let long = load("1s", "cdf = \"websearch\"");
        assert!((long.open.unwrap() - 1.0).abs() < 0.02, "{long:?}");
        let short = load("1ms", "cdf = \"websearch\"");
        assert!(short.open.unwrap() < 0.6 * short.flows, "{short:?}");
    }

    /// A busy source's packets in flight: the AQM's certain-signal point,
    /// else the queue's capacity, capped by the receive window; bytes count
    /// full segments (1460 B + 40 B).
    #[test]
    fn busy_queue_follows_the_queue_and_the_window() {
        let busy = |network: &str, transport: &str| {
            Scenario::from_toml_str(&format!(
                "[topology]\nkind = \"star\"\nhosts = 2\n[network]\n{network}\n[transport]\n{transport}\n"
            ))
            .unwrap()
            .busy_queue()
        };
        let dctcp =
            r#"queue = { capacity = "1000pkt", aqm = { kind = "threshold", k = "65pkt" } }"#;
        assert_eq!(busy(dctcp, ""), 65);
        let in_bytes =
            r#"queue = { capacity = "1000pkt", aqm = { kind = "threshold", k = "30001B" } }"#;
        assert_eq!(busy(in_bytes, ""), 21);
        let red = r#"queue = { capacity = "1000pkt", aqm = { kind = "red", min = "20pkt", max = "60pkt", max_p = 0.1 } }"#;
        assert_eq!(busy(red, ""), 60);
        let droptail = r#"queue = { capacity = "150000B" }"#;
        assert_eq!(busy(droptail, ""), 100);
        assert_eq!(busy(droptail, r#"rwnd = "45000B""#), 30);
    }
}
