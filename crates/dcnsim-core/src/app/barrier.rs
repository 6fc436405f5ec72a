//! An all-to-all barrier (`[[traffic.barrier]]`), Naiad-like: the
//! synchronisation benchmark of the QJUMP seed (`qjump.txt`, "QJUMP in
//! Action" 3: Naiad's workers synchronise, "a four-way synchronization").
//!
//! Each iteration every one of the k hosts sends a `size`-byte message to
//! every other host, each pair over its own persistent TCP connection
//! (opened in the first iteration, so only it includes the handshakes;
//! closed with the last). Host h sends to h+1, h+2, … (by place, modulo
//! k), so at a common start no two hosts send to the same host at once. An
//! iteration ends when every message has arrived; the next starts `gap`
//! later.
//!
//! Operation rows: one per host and iteration, written when the iteration
//! ends (`op_id` the iteration, `host` the host, `start_s` the iteration's
//! start, `end_s` when the host had all k − 1 messages, `bytes` those
//! messages' bytes, `outcome` `"done"`, `value` the iteration's
//! synchronisation time in seconds: its end minus its start, the same on
//! every row of the iteration).

use super::keys::{check_bytes, check_class, check_count, check_rounds, host_list};
use super::{App, Application, Context, Given, Load, Op, OpenFlow};
use crate::cc::Protocol;
use crate::error::{join_path, parse_at, ScenarioError};
use crate::units::{Bytes, Time};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::Deserialize;
use serde_json::Value;

/// `[[traffic.barrier]]` as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBarrier {
    hosts: Value,
    #[serde(default = "message")]
    size: Bytes,
    iterations: u32,
    #[serde(default)]
    gap: Time,
    #[serde(default)]
    start: Time,
    #[serde(default)]
    class: u8,
    protocol: Option<Protocol>,
}

/// A small synchronisation message.
fn message() -> Bytes {
    Bytes(64)
}

#[derive(Clone, Debug, PartialEq)]
pub struct BarrierSpec {
    pub hosts: Vec<u32>,
    pub size: u64,
    pub iterations: u32,
    pub gap: Time,
    pub start: Time,
    pub class: u8,
    pub protocol: Option<Protocol>,
}

pub struct Barrier {
    spec: BarrierSpec,
    iteration: u32,
    started: Time,
    /// Messages of this iteration still on their way.
    pending: usize,
    /// The flows, k − 1 per sender in sending order (flow ids opened one
    /// after another from `flows[0]`).
    flows: Vec<u32>,
    /// Per host (by place): when it had its last message of the iteration.
    done_at: Vec<Time>,
}

impl Barrier {
    fn k(&self) -> usize {
        self.spec.hosts.len()
    }

    /// The receiver (by place) of flow `j` (its place among the flows).
    fn receiver(&self, j: usize) -> usize {
        let k = self.k();
        (j / (k - 1) + j % (k - 1) + 1) % k
    }

    fn start_iteration(&mut self, cx: &mut dyn Context) {
        let s = &self.spec;
        let k = s.hosts.len();
        let last = self.iteration + 1 == s.iterations;
        self.started = cx.now();
        self.pending = k * (k - 1);
        if self.iteration > 0 {
            for &f in &self.flows {
                cx.append(f, s.size, last);
            }
            return;
        }
        for h in 0..k {
            for m in 1..k {
                let f = cx.open_flow(OpenFlow {
                    src: s.hosts[h],
                    dst: s.hosts[(h + m) % k],
                    size: s.size,
                    deadline: None,
                    class: s.class,
                    protocol: s.protocol,
                    op: Some(0),
                    keep_open: !last,
                });
                self.flows.push(f);
            }
        }
    }
}

impl Application for Barrier {
    fn start(&mut self, cx: &mut dyn Context) {
        cx.set_timer(self.spec.start, 0);
    }

    fn on_timer(&mut self, cx: &mut dyn Context, _token: u64) {
        self.start_iteration(cx);
    }

    fn on_flow_done(&mut self, cx: &mut dyn Context, flow: u32) {
        let now = cx.now();
        let j = (flow - self.flows[0]) as usize;
        debug_assert_eq!(self.flows[j], flow, "the flows are consecutive");
        let r = self.receiver(j);
        self.done_at[r] = now;
        self.pending -= 1;
        if self.pending > 0 {
            return;
        }
        let k = self.k();
        let sync = (now - self.started).as_secs_f64();
        for (h, &host) in self.spec.hosts.iter().enumerate() {
            cx.write_op(Op {
                id: self.iteration.into(),
                host,
                start: self.started,
                end: Some(self.done_at[h]),
                bytes: self.spec.size * (k as u64 - 1),
                outcome: "done",
                value: sync,
            });
        }
        self.iteration += 1;
        if self.iteration < self.spec.iterations {
            cx.set_timer(now + self.spec.gap, 0);
        }
    }
}

impl App for Barrier {
    const KEY: &'static str = "barrier";
    const NAME: &'static str = "barrier";
    type Spec = BarrierSpec;

    fn parse(v: Value, at: &str, given: &Given) -> Result<Vec<BarrierSpec>, ScenarioError> {
        let c: RawBarrier = parse_at(v, at)?;
        let path = join_path(at, "hosts");
        let hosts = host_list(&path, &c.hosts, given.topology, "host", None)?;
        if hosts.len() < 2 {
            return Err(ScenarioError::new(
                path,
                "a barrier needs at least two hosts",
            ));
        }
        check_class(at, c.class)?;
        let size = check_bytes(join_path(at, "size"), c.size)?;
        let iterations = check_count(at, "iterations", c.iterations)?;
        check_rounds(at, c.start, c.gap, given.stop_time, iterations, "barrier")?;
        Ok(vec![BarrierSpec {
            hosts,
            size,
            iterations,
            gap: c.gap,
            start: c.start,
            class: c.class,
            protocol: c.protocol,
        }])
    }

    fn load(spec: &BarrierSpec) -> Load {
        let k = spec.hosts.len() as f64;
        Load {
            flows: k * (k - 1.0),
            ops: k * f64::from(spec.iterations),
            ..Load::default()
        }
    }

    fn new(spec: &BarrierSpec, _rng: Xoshiro256PlusPlus) -> Barrier {
        let k = spec.hosts.len();
        Barrier {
            spec: spec.clone(),
            iteration: 0,
            started: spec.start,
            pending: 0,
            flows: Vec::with_capacity(k * (k - 1)),
            done_at: vec![Time::ZERO; k],
        }
    }
}
