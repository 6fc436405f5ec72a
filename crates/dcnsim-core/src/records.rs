//! What a run reports: column tables (one schema type serves every table) and a
//! summary of counters. Column names carry their unit (`sent_s`, `size_bytes`).

use serde::Serialize;

#[derive(Clone, Debug)]
pub enum Column {
    F64(Vec<f64>),
    I64(Vec<i64>),
    Str(Vec<String>),
}

/// Columns are equal when identical bit for bit, so NaN (a dropped probe's
/// latency) equals NaN: the comparison determinism tests need.
impl PartialEq for Column {
    fn eq(&self, other: &Column) -> bool {
        match (self, other) {
            (Column::F64(a), Column::F64(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
            }
            (Column::I64(a), Column::I64(b)) => a == b,
            (Column::Str(a), Column::Str(b)) => a == b,
            _ => false,
        }
    }
}

impl Column {
    pub fn len(&self) -> usize {
        match self {
            Column::F64(v) => v.len(),
            Column::I64(v) => v.len(),
            Column::Str(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A table as named columns of equal length, in order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Table {
    pub columns: Vec<(&'static str, Column)>,
}

impl Table {
    pub fn push(&mut self, name: &'static str, column: Column) {
        debug_assert!(self
            .columns
            .first()
            .is_none_or(|(_, c)| c.len() == column.len()));
        self.columns.push((name, column));
    }

    pub fn rows(&self) -> usize {
        self.columns.first().map_or(0, |(_, c)| c.len())
    }

    pub fn column(&self, name: &str) -> Option<&Column> {
        self.columns
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, c)| c)
    }

    pub fn f64(&self, name: &str) -> &[f64] {
        match self.column(name) {
            Some(Column::F64(v)) => v,
            _ => panic!("no f64 column {name}"),
        }
    }

    pub fn str(&self, name: &str) -> &[String] {
        match self.column(name) {
            Some(Column::Str(v)) => v,
            _ => panic!("no str column {name}"),
        }
    }

    pub fn i64(&self, name: &str) -> &[i64] {
        match self.column(name) {
            Some(Column::I64(v)) => v,
            _ => panic!("no i64 column {name}"),
        }
    }
}

/// Where a streamed run sends its recorded rows while it goes
/// ([`crate::run_streamed`]): the rows of `probes`, `queues` and `flow_trace`
/// leave in order, in chunks, and are no longer held, so memory does not grow
/// with the rows a run records.
pub struct Sink<'a> {
    /// Held rows that trigger a chunk. Checked every 65,536 events, so a chunk
    /// may be larger by the rows those events recorded; probe rows leave once
    /// their packet is delivered or dropped (rows recorded after one still on
    /// its way wait for it).
    pub chunk_rows: usize,
    /// Receives each chunk: the table's name (that of its [`Output`] field) and
    /// its rows. At the end every table is sent once more, even with no rows.
    /// Returning `false` aborts the run.
    pub send: &'a mut dyn FnMut(&'static str, Table) -> bool,
}

/// Counters and timings of one run (`summary.json`).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Summary {
    pub name: String,
    pub seed: u64,
    pub version: &'static str,
    pub events: u64,
    /// Packets that finished serialization onto a link and reached its far end.
    pub packet_hops: u64,
    pub packets_injected: u64,
    /// Of those, the packets switch agents emitted (PAUSE frames, ICMP …).
    pub packets_from_switches: u64,
    pub packets_delivered: u64,
    pub packets_dropped: u64,
    /// Packets still queued, on a wire or in host processing at the end.
    pub packets_in_flight: u64,
    /// The most TCP connections whose state was held at once: a connection
    /// is let go once both its ends are done and nothing of it is pending.
    pub tcp_connections_peak: u64,
    pub sim_time_s: f64,
    pub wall_s: f64,
    pub packet_hops_per_s: f64,
    /// Whether the run ended at `stop_time` rather than running out of traffic.
    pub stopped_at_stop_time: bool,
    /// What stages report of their entries (QJUMP's epoch and levels' rates),
    /// one per entry that reports; absent when none does.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub stages: Vec<serde_json::Value>,
    /// Why a switch agent ended the run early, if one did: the port and the
    /// reason (`pause`: no progress while paused, a PFC deadlock). Written
    /// only then, so other runs' summaries keep their keys.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped_by_agent: Option<String>,
}

/// Everything a run produced.
#[derive(Clone, Debug)]
pub struct Output {
    pub summary: Summary,
    pub flows: Table,
    /// Probe and recorded stream packets; empty (columns, no rows) when the run
    /// streamed them, as `queues` and `flow_trace`.
    pub probes: Table,
    pub queues: Table,
    /// One row per egress port: counters and the largest queue seen.
    pub ports: Table,
    /// One row per operation of an application (`crate::app`).
    pub ops: Table,
    /// One row per finished incast round: a view of the incast rows of `ops`.
    pub rounds: Table,
    /// Rows switch agents wrote (time, switch, agent, key, value).
    pub agent_rows: Table,
    /// cwnd and sequence numbers of traced TCP flows over time.
    pub flow_trace: Table,
    /// Every port's packets and bytes per interval of `trace.links`, and its
    /// link's utilisation (`sim/links.rs`).
    pub links: Table,
    /// Packet captures: (requested host or port name, pcap file bytes).
    pub pcaps: Vec<(String, Vec<u8>)>,
}

/// Count, mean, population standard deviation, minimum and maximum of probe
/// latencies arriving in chunks (a streamed run's probe rows, or a whole
/// table); NaN latencies (dropped or in flight) count as rows but not as
/// received. Chunks merge exactly as one sample would: Chan, Golub and
/// LeVeque's pairwise update of the mean and the sum of squared deviations.
#[derive(Clone, Debug, PartialEq)]
pub struct LatencyStats {
    pub rows: u64,
    pub received: u64,
    pub mean: f64,
    /// Sum of squared deviations from the mean.
    m2: f64,
    pub min: f64,
    pub max: f64,
}

impl Default for LatencyStats {
    fn default() -> LatencyStats {
        LatencyStats {
            rows: 0,
            received: 0,
            mean: f64::NAN,
            m2: 0.0,
            min: f64::NAN,
            max: f64::NAN,
        }
    }
}

impl LatencyStats {
    /// Adds a chunk of latencies.
    pub fn add(&mut self, latency_s: &[f64]) {
        self.rows += latency_s.len() as u64;
        let received = || latency_s.iter().copied().filter(|x| !x.is_nan());
        let n = received().count() as u64;
        if n == 0 {
            return;
        }
        let mean = received().sum::<f64>() / n as f64;
        let m2: f64 = received().map(|x| (x - mean) * (x - mean)).sum();
        let (lo, hi) = received().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| {
            (lo.min(x), hi.max(x))
        });
        if self.received == 0 {
            (self.mean, self.m2, self.min, self.max) = (mean, m2, lo, hi);
        } else {
            let total = (self.received + n) as f64;
            let delta = mean - self.mean;
            self.mean += delta * n as f64 / total;
            self.m2 += m2 + delta * delta * self.received as f64 * n as f64 / total;
            (self.min, self.max) = (self.min.min(lo), self.max.max(hi));
        }
        self.received += n;
    }

    /// The population standard deviation of the latencies received (NaN if none).
    pub fn std(&self) -> f64 {
        if self.received == 0 {
            f64::NAN
        } else {
            (self.m2 / self.received as f64).sqrt()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::LatencyStats;

    #[test]
    fn chunks_merge_as_one_sample() {
        // 1, 2, 3, 4, 10 with two losses: mean 4, squared deviations 9+4+1+0+36 = 50,
        // std sqrt(50/5) = sqrt(10), whichever way the rows are cut into chunks.
        let rows = [1.0, f64::NAN, 2.0, 3.0, 4.0, f64::NAN, 10.0];
        for cut in 0..=rows.len() {
            let mut s = LatencyStats::default();
            s.add(&rows[..cut]);
            s.add(&[]);
            s.add(&rows[cut..]);
            assert_eq!((s.rows, s.received), (7, 5));
            assert!((s.mean - 4.0).abs() < 1e-12, "{cut}: {}", s.mean);
            assert!((s.std() - 10f64.sqrt()).abs() < 1e-12, "{cut}: {}", s.std());
            assert_eq!((s.min, s.max), (1.0, 10.0));
        }
    }

    #[test]
    fn no_latency_received_has_no_statistics() {
        let mut s = LatencyStats::default();
        s.add(&[f64::NAN, f64::NAN]);
        assert_eq!((s.rows, s.received), (2, 0));
        assert!(s.mean.is_nan() && s.std().is_nan() && s.min.is_nan() && s.max.is_nan());
    }
}
