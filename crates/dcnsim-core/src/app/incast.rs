//! Barrier-synchronized incast (`[[traffic.incast]]`), the partition-aggregate
//! pattern of the incast seed (§I–II): each round the aggregator asks every
//! worker for its response; all answer at once, each over its own TCP flow,
//! and the next round starts the moment the last response is complete (its
//! last data byte is at the aggregator). The request is not modelled as a
//! packet. With `spread` each worker answers at its own uniformly random
//! time within `spread` of the round's start, less synchronized (the Packet
//! Slicing seed, §IV.B.3: "sending time of each flow in the 10ms time
//! interval with the uniform distribution").
//!
//! Operation rows: one per response (`op_id` the round, `host` the worker,
//! `start_s` the round's start, `end_s` when the response was complete,
//! `bytes` the response's size, `outcome` `"timeout"` if the worker's flow
//! had a retransmission timeout in the round, else `"done"`, `value` those
//! timeouts), written together when the round ends, so only finished rounds
//! have rows. `rounds.parquet` is their view by round ([`rounds`]).

use super::keys::{
    check_bytes, check_class, check_count, check_relative_deadline, check_starts_before, fan_in,
};
use super::{App, Application, Context, Given, Load, Op, OpenFlow};
use crate::cc::Protocol;
use crate::error::{join_path, parse_at, ScenarioError};
use crate::packet::NONE;
use crate::records::{Column, Table};
use crate::units::{Bytes, Time};
use rand::Rng;
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::Deserialize;
use serde_json::Value;

/// `[[traffic.incast]]` as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawIncast {
    aggregator: u32,
    workers: Value,
    sru: Option<Bytes>,
    total: Option<Bytes>,
    #[serde(default = "one")]
    rounds: u32,
    #[serde(default = "yes")]
    persistent: bool,
    #[serde(default)]
    start: Time,
    /// A worker's response waits at most this long: a delay (at most
    /// [`crate::units::MAX_DELAY`]).
    #[serde(default, deserialize_with = "crate::units::delay")]
    spread: Time,
    deadline: Option<Time>,
    #[serde(default)]
    class: u8,
    protocol: Option<Protocol>,
}

fn one() -> u32 {
    1
}

fn yes() -> bool {
    true
}

/// An incast application's settings. `total` splits one response across the
/// workers (the web-search variant), `sru` gives each worker a fixed share.
///
/// With `persistent` (the default) each worker keeps one connection for all
/// rounds, so its window and DCTCP's α carry over from round to round, as in
/// the ns-2 incast setups the seed follows (§II.B: windows shrink to about two
/// segments under high fan-in); otherwise every response opens a connection.
#[derive(Clone, Debug, PartialEq)]
pub struct IncastSpec {
    pub aggregator: u32,
    pub workers: Vec<u32>,
    pub bytes_per_worker: u64,
    pub rounds: u32,
    pub persistent: bool,
    pub start: Time,
    /// Each worker starts its response at a uniformly random time in
    /// [0, `spread`) after the round's start (0: all at once).
    pub spread: Time,
    /// Relative deadline of each response, from its round's start.
    pub deadline: Option<Time>,
    pub class: u8,
    pub protocol: Option<Protocol>,
}

/// An incast application's progress.
pub struct Incast {
    spec: IncastSpec,
    /// The current round (0-based) and when it started.
    round: u32,
    round_start: Time,
    /// Responses of this round still missing.
    pending: u32,
    /// The flows answering this round, one per worker in worker order (flow
    /// ids opened one after another, unless `spread`; [`NONE`] until a
    /// spread worker's starts).
    flows: Vec<u32>,
    /// Per worker: its flow's timeouts before this round began, and when its
    /// response of this round was complete.
    timeouts_before: Vec<u64>,
    ends: Vec<Time>,
    rng: Xoshiro256PlusPlus,
}

impl Incast {
    /// A round starts: every worker starts its response now, or (with
    /// `spread`) at a timer of its own (token: the worker's place + 1).
    fn start_round(&mut self, cx: &mut dyn Context) {
        let now = cx.now();
        self.round_start = now;
        self.pending = self.spec.workers.len() as u32;
        if !(self.spec.persistent && self.round > 0) {
            self.flows.fill(NONE);
        }
        for i in 0..self.spec.workers.len() {
            if self.spec.spread == Time::ZERO {
                self.start_worker(cx, i);
            } else {
                let at = now + Time(self.rng.random_range(0..self.spec.spread.0));
                cx.set_timer(at, i as u64 + 1);
            }
        }
    }

    /// Worker `i` starts its response: on its persistent connection (opened
    /// in the first round) or a new one.
    fn start_worker(&mut self, cx: &mut dyn Context, i: usize) {
        let s = &self.spec;
        let last = self.round + 1 == s.rounds;
        if s.persistent && self.round > 0 {
            self.timeouts_before[i] = cx.flow(self.flows[i]).stats.timeouts;
            cx.append(self.flows[i], s.bytes_per_worker, last);
            return;
        }
        self.flows[i] = cx.open_flow(OpenFlow {
            src: s.workers[i],
            dst: s.aggregator,
            size: s.bytes_per_worker,
            deadline: s.deadline.map(|d| self.round_start + d),
            class: s.class,
            protocol: s.protocol,
            op: Some(self.round),
            keep_open: s.persistent && !last,
        });
        self.timeouts_before[i] = 0;
    }
}

impl Application for Incast {
    fn start(&mut self, cx: &mut dyn Context) {
        cx.set_timer(self.spec.start, 0);
    }

    fn on_timer(&mut self, cx: &mut dyn Context, token: u64) {
        match token {
            0 => self.start_round(cx),
            w => self.start_worker(cx, w as usize - 1),
        }
    }

    /// A response is complete; with the round's last, the round's rows are
    /// written and the next round starts.
    fn on_flow_done(&mut self, cx: &mut dyn Context, flow: u32) {
        let now = cx.now();
        let worker = if self.spec.spread == Time::ZERO {
            (flow - self.flows[0]) as usize
        } else {
            self.flows
                .iter()
                .position(|&f| f == flow)
                .expect("a flow of this round")
        };
        debug_assert_eq!(self.flows[worker], flow, "a round's flows are consecutive");
        self.ends[worker] = now;
        self.pending -= 1;
        if self.pending > 0 {
            return;
        }
        for (i, &f) in self.flows.iter().enumerate() {
            let timeouts = cx.flow(f).stats.timeouts - self.timeouts_before[i];
            cx.write_op(Op {
                id: self.round.into(),
                host: self.spec.workers[i],
                start: self.round_start,
                end: Some(self.ends[i]),
                bytes: self.spec.bytes_per_worker,
                outcome: if timeouts > 0 { "timeout" } else { "done" },
                value: timeouts as f64,
            });
        }
        self.round += 1;
        if self.round < self.spec.rounds {
            self.start_round(cx);
        }
    }
}

impl App for Incast {
    const KEY: &'static str = "incast";
    const NAME: &'static str = "incast";
    type Spec = IncastSpec;

    fn parse(v: Value, at: &str, given: &Given) -> Result<Vec<IncastSpec>, ScenarioError> {
        let topo = given.topology;
        let c: RawIncast = parse_at(v, at)?;
        let workers = fan_in(at, c.aggregator, &c.workers, topo)?;
        check_class(at, c.class)?;
        let bytes_per_worker = match (c.sru, c.total) {
            (Some(b), None) => check_bytes(join_path(at, "sru"), b)?,
            (None, Some(t)) => {
                let total = check_bytes(join_path(at, "total"), t)?;
                total.div_ceil(workers.len() as u64)
            }
            _ => {
                return Err(ScenarioError::new(
                    at,
                    "give either sru (bytes per worker) or total (one response split across the workers)",
                ))
            }
        };
        check_relative_deadline(at, c.deadline, "the round's start")?;
        check_starts_before(at, "start", c.start, given.stop_time, "incast")?;
        Ok(vec![IncastSpec {
            aggregator: c.aggregator,
            workers,
            bytes_per_worker,
            rounds: check_count(at, "rounds", c.rounds)?,
            persistent: c.persistent,
            start: c.start,
            spread: c.spread,
            deadline: c.deadline,
            class: c.class,
            protocol: c.protocol,
        }])
    }

    fn load(spec: &IncastSpec) -> Load {
        let workers = spec.workers.len() as f64;
        let rounds = f64::from(spec.rounds);
        Load {
            flows: workers * if spec.persistent { 1.0 } else { rounds },
            ops: workers * rounds,
            ..Load::default()
        }
    }

    fn new(spec: &IncastSpec, rng: Xoshiro256PlusPlus) -> Incast {
        let n = spec.workers.len();
        Incast {
            spec: spec.clone(),
            round: 0,
            round_start: spec.start,
            pending: 0,
            flows: vec![NONE; n],
            timeouts_before: vec![0; n],
            ends: vec![Time::ZERO; n],
            rng,
        }
    }
}

/// `rounds.parquet`: the incast rows of `ops` (the ops table's columns) by
/// round, one row per finished round in the order rounds finished: `app`,
/// `round`, `start_s`, `end_s` (its last response), `round_time_s`, `bytes`
/// (all responses), `goodput_bps`, `flows` (responses), `timeouts` (of all
/// its responses) and `any_timeout`.
pub fn rounds(ops: &Table) -> Table {
    let (application, app, op) = (ops.str("application"), ops.i64("app"), ops.i64("op_id"));
    let (start, end) = (ops.f64("start_s"), ops.f64("end_s"));
    let (bytes, value) = (ops.i64("bytes"), ops.f64("value"));
    // A round's rows are written together: runs of one (app, op_id).
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for i in (0..application.len()).filter(|&i| application[i] == Incast::NAME) {
        match groups.last_mut() {
            Some(g) if (app[g[0]], op[g[0]]) == (app[i], op[i]) => g.push(i),
            _ => groups.push(vec![i]),
        }
    }
    let ints = |f: &dyn Fn(&[usize]) -> i64| Column::I64(groups.iter().map(|g| f(g)).collect());
    let reals = |f: &dyn Fn(&[usize]) -> f64| Column::F64(groups.iter().map(|g| f(g)).collect());
    let last = |g: &[usize]| g.iter().map(|&i| end[i]).fold(f64::MIN, f64::max);
    let duration = |g: &[usize]| last(g) - start[g[0]];
    let total = |g: &[usize]| g.iter().map(|&i| bytes[i]).sum::<i64>();
    let timeouts = |g: &[usize]| g.iter().map(|&i| value[i] as i64).sum::<i64>();
    let mut t = Table::default();
    t.push("app", ints(&|g| app[g[0]]));
    t.push("round", ints(&|g| op[g[0]]));
    t.push("start_s", reals(&|g| start[g[0]]));
    t.push("end_s", reals(&last));
    t.push("round_time_s", reals(&duration));
    t.push("bytes", ints(&total));
    t.push(
        "goodput_bps",
        reals(&|g| total(g) as f64 * 8.0 / duration(g)),
    );
    t.push("flows", ints(&|g| g.len() as i64));
    t.push("timeouts", ints(&timeouts));
    t.push("any_timeout", ints(&|g| i64::from(timeouts(g) > 0)));
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The responses of two incast instances' rounds, with another
    /// application's row among them: one round per run of (app, op_id).
    #[test]
    fn rounds_are_the_incast_rows_by_round() {
        let mut ops = Table::default();
        let names = ["incast", "incast", "other", "incast", "incast", "incast"];
        ops.push(
            "application",
            Column::Str(names.iter().map(|s| s.to_string()).collect()),
        );
        ops.push("app", Column::I64(vec![0, 0, 0, 1, 1, 0]));
        ops.push("op_id", Column::I64(vec![0, 0, 0, 0, 0, 1]));
        ops.push("start_s", Column::F64(vec![1.0, 1.0, 0.0, 2.0, 2.0, 3.0]));
        ops.push("end_s", Column::F64(vec![1.5, 2.0, 9.0, 2.5, 2.25, 3.5]));
        ops.push("bytes", Column::I64(vec![10, 10, 5, 20, 20, 10]));
        ops.push("value", Column::F64(vec![0.0, 2.0, 7.0, 0.0, 0.0, 1.0]));
        let r = rounds(&ops);
        assert_eq!(r.i64("app"), [0, 1, 0]);
        assert_eq!(r.i64("round"), [0, 0, 1]);
        assert_eq!(r.f64("start_s"), [1.0, 2.0, 3.0]);
        assert_eq!(r.f64("end_s"), [2.0, 2.5, 3.5]);
        assert_eq!(r.f64("round_time_s"), [1.0, 0.5, 0.5]);
        assert_eq!(r.i64("bytes"), [20, 40, 10]);
        assert_eq!(r.f64("goodput_bps"), [160.0, 640.0, 160.0]);
        assert_eq!(r.i64("flows"), [2, 2, 1]);
        assert_eq!(r.i64("timeouts"), [2, 0, 1]);
        assert_eq!(r.i64("any_timeout"), [1, 0, 1]);
    }
}
