//! A run that streams its recorded rows out in chunks records the same rows,
//! in the same order, as one that holds them to the end.

mod common;

use dcnsim_core::{run, run_streamed, Column, Scenario, Sink, Table};

/// Two recorded 100 B streams overloading one 1 Gbps port (drops), a traced
/// TCP flow and queue, listed probes early and late, and packets still in
/// flight at `stop_time`: enough events for several chunks.
const SCENARIO: &str = r#"
seed = 7
stop_time = "40ms"

[topology]
kind = "star"
hosts = 4
link = { rate = "1Gbps", delay = "1us" }

[network]
host_delay = "2us"
queue = { capacity = "30pkt" }

[[traffic.streams]]
src = "all"
dst = 2
load = 0.3
size = "100B"
record = true

[[traffic.flows]]
src = 3
dst = 2
size = "5MB"

[[traffic.probes]]
src = 0
dst = "all"
time = "1ms"
interval = "15ms"

[trace]
queues = ["sw0->host2"]
flows = [0]
"#;

/// `chunks` of one table joined end to end.
fn concat(chunks: &[Table]) -> Table {
    let mut joined = chunks[0].clone();
    for t in &chunks[1..] {
        for ((name, all), (other, rows)) in joined.columns.iter_mut().zip(&t.columns) {
            assert_eq!(name, other);
            match (all, rows) {
                (Column::F64(a), Column::F64(b)) => a.extend(b),
                (Column::I64(a), Column::I64(b)) => a.extend(b),
                (Column::Str(a), Column::Str(b)) => a.extend(b.iter().cloned()),
                _ => panic!("column {name} changed type"),
            }
        }
    }
    joined
}

#[test]
fn streamed_rows_are_the_rows_of_a_whole_run() {
    let sc = Scenario::from_toml_str(SCENARIO).unwrap();
    let whole = run(&sc, &mut |_| true).unwrap();
    let mut chunks: Vec<(&'static str, Table)> = Vec::new();
    let mut send = |name, t| {
        chunks.push((name, t));
        true
    };
    let sink = Sink {
        chunk_rows: 1000,
        send: &mut send,
    };
    let streamed = run_streamed(&sc, &mut |_| true, sink).unwrap();
    for (name, table) in [
        ("probes", &whole.probes),
        ("queues", &whole.queues),
        ("flow_trace", &whole.flow_trace),
    ] {
        let parts: Vec<Table> = chunks
            .iter()
            .filter(|(n, _)| *n == name)
            .map(|(_, t)| t.clone())
            .collect();
        // Mid-run chunks and the final one.
        assert!(parts.len() > 2, "{name}: {} chunks", parts.len());
        assert!(table.rows() > 1000, "{name}: {} rows", table.rows());
        assert_eq!(&concat(&parts), table, "{name}");
    }
    let probes = &whole.probes;
    assert!(probes.f64("latency_s").iter().any(|l| l.is_nan()), "drops");
    assert!(probes.i64("flow_id").contains(&-1), "listed probes");
    // The returned tables of streamed rows are empty, with their columns.
    for (t, w) in [
        (&streamed.probes, &whole.probes),
        (&streamed.queues, &whole.queues),
        (&streamed.flow_trace, &whole.flow_trace),
    ] {
        assert_eq!(t.rows(), 0);
        let names = |t: &Table| t.columns.iter().map(|(n, _)| *n).collect::<Vec<_>>();
        assert_eq!(names(t), names(w));
    }
    assert_eq!(streamed.flows, whole.flows);
    assert_eq!(streamed.ports, whole.ports);
    assert_eq!(streamed.summary.events, whole.summary.events);
}

#[test]
fn a_sink_that_says_stop_aborts_the_run() {
    let sc = Scenario::from_toml_str(SCENARIO).unwrap();
    let mut send = |_, _| false;
    let sink = Sink {
        chunk_rows: 1000,
        send: &mut send,
    };
    assert!(run_streamed(&sc, &mut |_| true, sink).is_err());
}
