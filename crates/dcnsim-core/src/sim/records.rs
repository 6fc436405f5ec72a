//! What a run records as it goes (probe rows, queue traces, flow traces,
//! packet captures) and the output tables built from it: the recorded rows
//! either at the end or, when the run streams them, in chunks while it goes
//! ([`Simulation::send_rows`]); the flow, port and operation tables from the
//! simulation's state at the end.

use super::apps::Apps;
use super::hosts::{tcp_sport, FlowRecord, FlowTraceRows, TCP_PORT};
use super::links::LinkRows;
use super::Simulation;
use crate::app::Op;
use crate::network::{Network, Port};
use crate::packet::{Kind, Packet, CLASSES, NONE};
use crate::pcap::{switch_host, Capture, Frame, Transport};
use crate::records::{Column, Sink, Table};
use crate::tcp::{Outcome, HEADER, NO_TS};
use crate::traffic::{datagram_sport, Stream, APP_PORT, PROBE_PORT, STREAM_PORT};
use crate::units::Time;

/// What a run records as it goes, owned here: flow and queue traces, probe
/// rows, captures, and the names the tables use.
pub(super) struct Recorded {
    pub(super) traced_flows: Vec<u32>,
    pub(super) flow_trace: FlowTraceRows,
    pub(super) captures: Vec<Capture>,
    pub(super) capture_names: Vec<String>,
    /// Capture of each host's deliveries, if the host is captured.
    pub(super) host_capture: Vec<Option<u32>>,
    pub(super) probes: ProbeRows,
    pub(super) queues: QueueRows,
    /// Every port's counters per interval, when `trace.links` asks.
    pub(super) links: Option<LinkRows>,
    /// Recorded rows already taken out of the tables above.
    pub(super) rows_taken: u64,
    /// Ports whose queue is traced, in trace order.
    pub(super) traced_ports: Vec<u32>,
    /// `"node->peer"` of every port, by port index.
    pub(super) port_names: Vec<String>,
    /// What the stages report for the summary (`Summary::stages`).
    pub(super) stage_reports: Vec<serde_json::Value>,
}

/// Rows of `probes.parquet`, filled as packets are sent and received.
///
/// A row is settled once its packet is delivered or dropped. When the run
/// streams its rows, the settled rows at the front leave in order (see
/// [`ProbeRows::take`]); `base` is the id of the first row still held, so row
/// ids (`probe_id`, `Packet::record`) stay those of the whole table.
#[derive(Default)]
pub(super) struct ProbeRows {
    base: u32,
    /// Rows before this index (into the held rows) are all settled.
    settled: usize,
    flow: Vec<i64>,
    src: Vec<i64>,
    dst: Vec<i64>,
    size: Vec<i64>,
    class: Vec<u8>,
    sent: Vec<Time>,
    received: Vec<Option<Time>>,
    hops: Vec<i64>,
    done: Vec<bool>,
}

/// What a probe packet is built from: source and destination hosts, size,
/// class and send time.
pub(super) struct ProbeSend {
    pub src: u32,
    pub dst: u32,
    pub size: u32,
    pub class: u8,
    pub sent: Time,
}

impl ProbeRows {
    pub fn push(&mut self, flow: u32, src: u32, dst: u32, size: u32, class: u8, sent: Time) -> u32 {
        self.flow
            .push(if flow == NONE { -1 } else { i64::from(flow) });
        self.src.push(src.into());
        self.dst.push(dst.into());
        self.size.push(size.into());
        self.class.push(class);
        self.sent.push(sent);
        self.received.push(None);
        self.hops.push(-1);
        self.done.push(false);
        self.base + (self.sent.len() - 1) as u32
    }

    /// Rows held (recorded and not yet taken).
    pub fn len(&self) -> usize {
        self.sent.len()
    }

    fn index(&self, id: u32) -> usize {
        (id - self.base) as usize
    }

    /// The packet of row `id` (not yet sent, so still held).
    pub fn to_send(&self, id: u32) -> ProbeSend {
        let r = self.index(id);
        ProbeSend {
            src: self.src[r] as u32,
            dst: self.dst[r] as u32,
            size: self.size[r] as u32,
            class: self.class[r],
            sent: self.sent[r],
        }
    }

    /// Row `id`'s packet reached its host at `at` after `hops` links.
    pub fn delivered(&mut self, id: u32, at: Time, hops: u32) {
        let r = self.index(id);
        self.received[r] = Some(at);
        self.hops[r] = hops.into();
        self.done[r] = true;
    }

    /// Row `id`'s packet was dropped: the row stays unreceived.
    pub fn dropped(&mut self, id: u32) {
        let r = self.index(id);
        self.done[r] = true;
    }

    /// The settled rows at the front (every held row if `all`, at the end of
    /// the run), as table rows; they are no longer held.
    pub fn take(&mut self, all: bool) -> Table {
        while self.settled < self.done.len() && self.done[self.settled] {
            self.settled += 1;
        }
        let n = if all { self.len() } else { self.settled };
        let first = i64::from(self.base);
        self.base += n as u32;
        self.settled -= n.min(self.settled);
        fn front<T>(v: &mut Vec<T>, n: usize) -> Vec<T> {
            let rest = v.split_off(n);
            std::mem::replace(v, rest)
        }
        front(&mut self.done, n);
        let received: Vec<Option<Time>> = front(&mut self.received, n);
        let sent: Vec<Time> = front(&mut self.sent, n);
        let latency: Vec<f64> = received
            .iter()
            .zip(&sent)
            .map(|(r, &s)| r.map_or(f64::NAN, |r| secs(r - s)))
            .collect();
        let mut t = Table::default();
        t.push("probe_id", Column::I64((first..first + n as i64).collect()));
        t.push("flow_id", Column::I64(front(&mut self.flow, n)));
        t.push("src", Column::I64(front(&mut self.src, n)));
        t.push("dst", Column::I64(front(&mut self.dst, n)));
        t.push("size_bytes", Column::I64(front(&mut self.size, n)));
        t.push(
            "class",
            Column::I64(
                front(&mut self.class, n)
                    .into_iter()
                    .map(i64::from)
                    .collect(),
            ),
        );
        t.push(
            "sent_s",
            Column::F64(sent.iter().map(|&s| secs(s)).collect()),
        );
        t.push(
            "received_s",
            Column::F64(received.iter().map(|r| r.map_or(f64::NAN, secs)).collect()),
        );
        t.push("latency_s", Column::F64(latency));
        t.push("hops", Column::I64(front(&mut self.hops, n)));
        t
    }
}

/// Rows of `queues.parquet`.
#[derive(Default)]
pub(super) struct QueueRows {
    pub time: Vec<f64>,
    pub port: Vec<u32>,
    pub packets: Vec<i64>,
    pub bytes: Vec<i64>,
}

fn secs(t: Time) -> f64 {
    t.as_secs_f64()
}

/// One row of `flows.parquet`: a datagram stream or a TCP flow.
struct FlowRow {
    id: i64,
    kind: &'static str,
    protocol: String,
    origin: String,
    app: i64,
    round: i64,
    src: i64,
    dst: i64,
    class: i64,
    size: i64,
    start: f64,
    end: f64,
    deadline: f64,
    fct: f64,
    ideal: f64,
    packets_sent: i64,
    packets_delivered: i64,
    drops: i64,
    bytes_delivered: i64,
    retransmits: i64,
    timeouts: i64,
    ooo: i64,
    mean_latency: f64,
}

fn stream_row(id: usize, s: &Stream) -> FlowRow {
    FlowRow {
        id: id as i64,
        kind: "stream",
        protocol: "udp".into(),
        origin: "stream".into(),
        app: -1,
        round: -1,
        src: s.spec.src.into(),
        dst: s.spec.dst.map_or(-1, i64::from),
        class: 0,
        size: (s.sent * u64::from(s.spec.size)) as i64,
        start: secs(s.spec.start),
        end: secs(s.spec.stop),
        deadline: f64::NAN,
        fct: f64::NAN,
        ideal: f64::NAN,
        packets_sent: s.sent as i64,
        packets_delivered: s.delivered as i64,
        drops: s.dropped as i64,
        bytes_delivered: s.bytes_delivered as i64,
        retransmits: 0,
        timeouts: 0,
        ooo: 0,
        mean_latency: match s.delivered {
            0 => f64::NAN,
            n => s.latency_sum_ps as f64 / n as f64 / Time::PS_PER_S as f64,
        },
    }
}

fn tcp_row(id: usize, f: &FlowRecord, c: &Outcome, apps: &Apps) -> FlowRow {
    let (origin, app) = match f.origin.app() {
        None => ("flow", -1),
        Some(a) => {
            let (name, instance) = apps.label(a);
            (name, i64::from(instance))
        }
    };
    let round = f.origin.op().map_or(-1, i64::from);
    let end = c.completed_at.map_or(f64::NAN, secs);
    FlowRow {
        id: id as i64,
        kind: "tcp",
        protocol: format!("{:?}", c.protocol).to_lowercase(),
        origin: origin.to_string(),
        app,
        round,
        src: f.src.into(),
        dst: f.dst.into(),
        class: f.class.into(),
        size: c.size as i64,
        start: secs(c.start),
        end,
        deadline: c.deadline.map_or(f64::NAN, secs),
        fct: end - secs(c.start),
        ideal: secs(f.ideal),
        packets_sent: c.stats.packets_sent as i64,
        packets_delivered: c.stats.data_packets_received as i64,
        drops: f.drops as i64,
        bytes_delivered: c.bytes_received as i64,
        retransmits: c.stats.retransmits as i64,
        timeouts: c.stats.timeouts as i64,
        ooo: c.stats.ooo_packets as i64,
        mean_latency: f64::NAN,
    }
}

/// Streams first (`kind = "stream"`, `flow_id` = stream index), then TCP
/// flows (`kind = "tcp"`, `flow_id` = flow index, as in `trace.flows`).
pub(super) fn flow_table(sim: &Simulation) -> Table {
    let rows: Vec<FlowRow> = sim
        .streams
        .iter()
        .enumerate()
        .map(|(i, s)| stream_row(i, s))
        .chain(
            sim.hosts
                .records
                .iter()
                .enumerate()
                .map(|(i, f)| tcp_row(i, f, &sim.outcome(i as u32), &sim.apps)),
        )
        .collect();
    let f = |g: &dyn Fn(&FlowRow) -> f64| Column::F64(rows.iter().map(g).collect());
    let i = |g: &dyn Fn(&FlowRow) -> i64| Column::I64(rows.iter().map(g).collect());
    let s = |g: &dyn Fn(&FlowRow) -> String| Column::Str(rows.iter().map(g).collect());
    let mut t = Table::default();
    t.push("flow_id", i(&|r| r.id));
    t.push("kind", s(&|r| r.kind.to_string()));
    t.push("protocol", s(&|r| r.protocol.clone()));
    t.push("origin", s(&|r| r.origin.clone()));
    t.push("app", i(&|r| r.app));
    t.push("round", i(&|r| r.round));
    t.push("src", i(&|r| r.src));
    t.push("dst", i(&|r| r.dst));
    t.push("class", i(&|r| r.class));
    t.push("size_bytes", i(&|r| r.size));
    t.push("start_s", f(&|r| r.start));
    t.push("end_s", f(&|r| r.end));
    t.push("deadline_s", f(&|r| r.deadline));
    t.push("fct_s", f(&|r| r.fct));
    t.push("ideal_fct_s", f(&|r| r.ideal));
    t.push("slowdown", f(&|r| r.fct / r.ideal));
    t.push("goodput_bps", f(&|r| r.size as f64 * 8.0 / r.fct));
    t.push("packets_sent", i(&|r| r.packets_sent));
    t.push("packets_delivered", i(&|r| r.packets_delivered));
    t.push("drops", i(&|r| r.drops));
    t.push("bytes_delivered", i(&|r| r.bytes_delivered));
    t.push("retransmits", i(&|r| r.retransmits));
    t.push("timeouts", i(&|r| r.timeouts));
    t.push("ooo_packets", i(&|r| r.ooo));
    t.push("mean_latency_s", f(&|r| r.mean_latency));
    t
}

/// One row per operation an application wrote, in the order written:
/// `application` (its kind's name), `app` (its index among its kind's
/// instances), `op_id`, `host`, `start_s`, `end_s` (NaN: unfinished),
/// `bytes`, `outcome` and `value`.
pub(super) fn ops_table(apps: &Apps) -> Table {
    let ops = &apps.ops;
    let f = |g: &dyn Fn(&Op) -> f64| Column::F64(ops.iter().map(|(_, o)| g(o)).collect());
    let i = |g: &dyn Fn(&Op) -> i64| Column::I64(ops.iter().map(|(_, o)| g(o)).collect());
    let mut t = Table::default();
    t.push(
        "application",
        Column::Str(
            ops.iter()
                .map(|&(a, _)| apps.label(a).0.to_string())
                .collect(),
        ),
    );
    t.push(
        "app",
        Column::I64(ops.iter().map(|&(a, _)| apps.label(a).1.into()).collect()),
    );
    t.push("op_id", i(&|o| o.id as i64));
    t.push("host", i(&|o| o.host.into()));
    t.push("start_s", f(&|o| secs(o.start)));
    t.push("end_s", f(&|o| o.end.map_or(f64::NAN, secs)));
    t.push("bytes", i(&|o| o.bytes as i64));
    t.push(
        "outcome",
        Column::Str(ops.iter().map(|(_, o)| o.outcome.to_string()).collect()),
    );
    t.push("value", f(&|o| o.value));
    t
}

/// cwnd, ssthresh and sequence numbers of traced flows after every event
/// that touched them.
pub(super) fn trace_table(r: FlowTraceRows) -> Table {
    let mut t = Table::default();
    t.push("time_s", Column::F64(r.time));
    t.push("flow_id", Column::I64(r.flow));
    t.push("cwnd_bytes", Column::F64(r.cwnd));
    t.push("ssthresh_bytes", Column::F64(r.ssthresh));
    t.push("snd_una", Column::I64(r.snd_una));
    t.push("snd_nxt", Column::I64(r.snd_nxt));
    t.push("srtt_s", Column::F64(r.srtt));
    t.push("alpha", Column::F64(r.alpha));
    t
}

/// One row per port: its counters, and its link-level flow control (PAUSE
/// frames sent and received, time paused with any class paused and per
/// class, up to `end`; zeros in a run without PAUSE).
pub(super) fn port_table(net: &Network, names: &[String], end: Time) -> Table {
    let ports = &net.ports;
    let col = |f: &dyn Fn(&Port) -> u64| Column::I64(ports.iter().map(|p| f(p) as i64).collect());
    let mut t = Table::default();
    t.push("port", Column::Str(names.to_vec()));
    t.push("rate_bps", col(&|p| p.rate.0));
    t.push("packets_sent", col(&|p| p.sent_packets));
    t.push("bytes_sent", col(&|p| p.sent_bytes));
    t.push("packets_dropped", col(&|p| p.drops));
    t.push("max_queue_packets", col(&|p| p.max_packets));
    t.push("max_queue_bytes", col(&|p| p.max_bytes));
    t.push("pause_frames_sent", col(&|p| p.pause.frames_sent));
    t.push("pause_frames_received", col(&|p| p.pause.frames_received));
    let paused: Vec<_> = ports.iter().map(|p| p.pause.paused_time(end)).collect();
    t.push(
        "paused_s",
        Column::F64(paused.iter().map(|(any, _)| any.as_secs_f64()).collect()),
    );
    for (c, name) in CLASS_PAUSED.iter().enumerate() {
        t.push(
            name,
            Column::F64(paused.iter().map(|(_, per)| per[c].as_secs_f64()).collect()),
        );
    }
    t
}

/// The `ports.parquet` columns of the time each class was paused.
const CLASS_PAUSED: [&str; CLASSES] = [
    "class0_paused_s",
    "class1_paused_s",
    "class2_paused_s",
    "class3_paused_s",
    "class4_paused_s",
    "class5_paused_s",
    "class6_paused_s",
    "class7_paused_s",
];

pub(super) fn queue_table(rows: QueueRows, names: &[String]) -> Table {
    let mut t = Table::default();
    t.push("time_s", Column::F64(rows.time));
    t.push(
        "port",
        Column::Str(
            rows.port
                .iter()
                .map(|&i| names[i as usize].clone())
                .collect(),
        ),
    );
    t.push("packets", Column::I64(rows.packets));
    t.push("bytes", Column::I64(rows.bytes));
    t
}

impl Simulation {
    /// Recorded rows held: rows of the tables a run can stream.
    pub(super) fn held_rows(&self) -> usize {
        self.rec.probes.len()
            + self.rec.queues.time.len()
            + self.rec.flow_trace.time.len()
            + self.rec.links.as_ref().map_or(0, LinkRows::len)
    }

    /// The streamable tables' rows that are final, no longer held: every row
    /// if `all` (at the end of the run), else all but the probe rows from the
    /// first whose packet is still on its way.
    pub(super) fn take_rows(&mut self, all: bool) -> [(&'static str, Table); 4] {
        let traced: Vec<String> = self
            .rec
            .traced_ports
            .iter()
            .map(|&p| self.rec.port_names[p as usize].clone())
            .collect();
        let rows = [
            ("probes", self.rec.probes.take(all)),
            (
                "queues",
                queue_table(std::mem::take(&mut self.rec.queues), &traced),
            ),
            (
                "flow_trace",
                trace_table(std::mem::take(&mut self.rec.flow_trace)),
            ),
            (
                "links",
                match self.rec.links.as_mut() {
                    Some(l) => l.take(all, &self.rec.port_names),
                    None => LinkRows::new(Time::ZERO, Vec::new()).take(true, &[]),
                },
            ),
        ];
        self.rec.rows_taken += rows.iter().map(|(_, t)| t.rows() as u64).sum::<u64>();
        rows
    }

    /// Send the final rows to `sink` (every table at the end, even empty, so
    /// each arrives at least once with its columns); false if it said stop.
    pub(super) fn send_rows(&mut self, sink: &mut Sink, all: bool) -> bool {
        self.take_rows(all)
            .into_iter()
            .filter(|(_, t)| all || t.rows() > 0)
            .all(|(name, t)| (sink.send)(name, t))
    }

    /// Record packet `p` in every capture of `port` as it starts serializing.
    pub(super) fn capture_port(&mut self, port: u32, p: u32) {
        let pkt = self.arena.get(p);
        for i in 0..self.net.ports[port as usize].captures().len() {
            let c = self.net.ports[port as usize].captures()[i];
            self.capture(c, &pkt);
        }
    }

    pub(super) fn capture(&mut self, c: u32, pkt: &Packet) {
        let cap = &mut self.rec.captures[c as usize];
        let host = |node: u32| self.net.node_host[node as usize];
        if let Kind::Pause { classes, quanta } = pkt.kind {
            cap.push_pause(self.events.now(), pkt.src, classes, quanta);
            return;
        }
        let transport = match pkt.kind {
            Kind::Tcp => {
                let f = &self.hosts.flows[pkt.flow as usize];
                let sport = tcp_sport(f.id);
                let (src_port, dst_port) = if pkt.src == f.src_node {
                    (sport, TCP_PORT)
                } else {
                    (TCP_PORT, sport)
                };
                Transport::Tcp {
                    src_port,
                    dst_port,
                    // Sequence numbers on the wire are 32 bits and wrap.
                    seq: pkt.tcp.seq as u32,
                    ack: pkt.tcp.ack as u32,
                    flags: pkt.tcp.flags,
                    window: u16::MAX,
                    options: (f.conn.header() - HEADER) as u8,
                    ts: (
                        micros(pkt.sent),
                        if pkt.tcp.ts_echo == NO_TS {
                            0
                        } else {
                            micros(pkt.tcp.ts_echo)
                        },
                    ),
                    sack: pkt.tcp.sack,
                }
            }
            Kind::IcmpMtu { mtu } => {
                let f = &self.hosts.flows[pkt.flow as usize];
                Transport::IcmpMtu {
                    mtu,
                    quoted_src: host(f.src_node),
                    quoted_dst: host(f.dst_node),
                    src_port: tcp_sport(f.id),
                    dst_port: TCP_PORT,
                    seq: f.conn.snd_una as u32,
                }
            }
            Kind::AppDatagram => Transport::Udp {
                src_port: datagram_sport(pkt.flow),
                dst_port: APP_PORT,
            },
            // Probes and streams (PAUSE frames were written above).
            _ => {
                let (id, dport) = if pkt.flow == NONE {
                    (pkt.record, PROBE_PORT)
                } else {
                    (pkt.flow, STREAM_PORT)
                };
                Transport::Udp {
                    src_port: datagram_sport(id),
                    dst_port: dport,
                }
            }
        };
        let ip_id = cap.frames() as u16;
        // An ICMP message comes from the switch's own IP address.
        let src_host = match pkt.kind {
            Kind::IcmpMtu { .. } if !self.net.is_host(pkt.src) => switch_host(pkt.src),
            _ => host(pkt.src),
        };
        cap.push(&Frame {
            time: self.events.now(),
            src_host,
            dst_host: host(pkt.dst),
            ip_len: pkt.size,
            ecn: pkt.ecn,
            ip_id,
            // BOF and its echo are octets (the stamp saturates at 255).
            ip_option: pkt.option.map(|v| {
                let octet = |v: u32| v.min(255) as u8;
                [octet(v), pkt.tcp.echo.map_or(0, octet)]
            }),
            transport,
        });
    }
}

/// A time in whole microseconds, wrapping at 32 bits as a TCP timestamp does
/// (RFC 7323 §5.4: any clock from 1 ms to 1 s per tick; finer here).
fn micros(t: Time) -> u32 {
    (t.0 / (Time::PS_PER_S / 1_000_000)) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn push(rows: &mut ProbeRows, sent_us: u64) -> u32 {
        rows.push(NONE, 0, 1, 64, 0, Time::from_us(sent_us))
    }

    #[test]
    fn probe_rows_leave_once_settled_and_in_order() {
        let mut rows = ProbeRows::default();
        let ids: Vec<u32> = (0..4).map(|i| push(&mut rows, i)).collect();
        assert_eq!(ids, [0, 1, 2, 3]);
        rows.delivered(0, Time::from_us(10), 2);
        rows.dropped(2);
        // Row 1 is on its way: rows 1.. wait for it, though row 2 is settled.
        let t = rows.take(false);
        assert_eq!(t.i64("probe_id"), [0]);
        assert_eq!(t.f64("latency_s"), [10e-6]);
        assert_eq!(t.i64("hops"), [2]);
        rows.delivered(1, Time::from_us(12), 3);
        assert_eq!(push(&mut rows, 4), 4, "ids continue past taken rows");
        let t = rows.take(false);
        assert_eq!(t.i64("probe_id"), [1, 2]);
        assert_eq!(
            t.i64("hops"),
            [3, -1],
            "a dropped row is settled, unreceived"
        );
        assert!(t.f64("received_s")[1].is_nan());
        // At the end every row leaves, received or not.
        let t = rows.take(true);
        assert_eq!(t.i64("probe_id"), [3, 4]);
        assert_eq!(rows.len(), 0);
        assert_eq!(rows.take(true).rows(), 0);
    }
}
