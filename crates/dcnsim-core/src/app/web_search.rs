//! Web search (`[[traffic.web_search]]`), the partition-aggregate query of
//! the Packet Slicing seed's testbed (§V.C, Fig. 13): an aggregator sends a
//! query to each of its n workers and each answers with `total` / n bytes
//! (the seed: 500 KB / n) over its own new TCP connection; the query is
//! complete when every answer is whole at the aggregator. The next query is
//! sent `gap` after that, `queries` times.
//!
//! A query is a real packet: a `request`-byte datagram from the aggregator
//! to each worker, which opens its answer when the datagram arrives. A
//! request lost on the way leaves its query unfinished (no row) and stops
//! the application: the seed's queries travel over TCP, which this does not
//! model.
//!
//! Operation rows: one per complete query (`op_id` the query, `host` the
//! aggregator, `start_s` when the requests were sent, `end_s` when the last
//! answer was whole: `end_s − start_s` is the seed's search response time,
//! `bytes` all answers, `outcome` `"timeout"` if any answer had a
//! retransmission timeout, else `"done"`, `value` the answers' timeouts).

use super::keys::{check_bytes, check_class, check_count, check_rounds, fan_in};
use super::{App, Application, Context, Datagram, Delivered, Given, Load, Op, OpenFlow};
use crate::app::keys::check_size;
use crate::cc::Protocol;
use crate::error::{join_path, parse_at, ScenarioError};
use crate::units::{Bytes, Time};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::Deserialize;
use serde_json::Value;

/// `[[traffic.web_search]]` as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawWebSearch {
    aggregator: u32,
    workers: Value,
    total: Bytes,
    #[serde(default = "one")]
    queries: u32,
    #[serde(default)]
    gap: Time,
    #[serde(default)]
    start: Time,
    #[serde(default = "request_bytes")]
    request: Bytes,
    #[serde(default)]
    class: u8,
    protocol: Option<Protocol>,
}

fn one() -> u32 {
    1
}

/// A query packet: IPv4 + UDP headers and a few bytes of query.
fn request_bytes() -> Bytes {
    Bytes(64)
}

/// A web-search application's settings.
#[derive(Clone, Debug, PartialEq)]
pub struct WebSearchSpec {
    pub aggregator: u32,
    pub workers: Vec<u32>,
    /// Bytes each worker answers: ⌈total / n⌉.
    pub answer: u64,
    pub queries: u32,
    pub gap: Time,
    pub start: Time,
    pub request: u32,
    pub class: u8,
    pub protocol: Option<Protocol>,
}

/// A web-search application's progress.
pub struct WebSearch {
    spec: WebSearchSpec,
    query: u32,
    sent: Time,
    /// Answers of this query still missing, and their flows.
    pending: u32,
    flows: Vec<u32>,
}

impl WebSearch {
    fn send_query(&mut self, cx: &mut dyn Context) {
        self.sent = cx.now();
        self.pending = self.spec.workers.len() as u32;
        self.flows.clear();
        for (i, &w) in self.spec.workers.iter().enumerate() {
            cx.send_datagram(Datagram {
                src: self.spec.aggregator,
                dst: w,
                size: self.spec.request,
                class: self.spec.class,
                tag: i as u32,
            });
        }
    }
}

impl Application for WebSearch {
    fn start(&mut self, cx: &mut dyn Context) {
        cx.set_timer(self.spec.start, 0);
    }

    fn on_timer(&mut self, cx: &mut dyn Context, _token: u64) {
        self.send_query(cx);
    }

    /// A query reached worker number `tag`: it answers.
    fn on_datagram(&mut self, cx: &mut dyn Context, d: &Delivered) {
        let s = &self.spec;
        self.flows.push(cx.open_flow(OpenFlow {
            src: d.datagram.dst,
            dst: s.aggregator,
            size: s.answer,
            deadline: None,
            class: s.class,
            protocol: s.protocol,
            op: Some(self.query),
            keep_open: false,
        }));
    }

    fn on_flow_done(&mut self, cx: &mut dyn Context, _flow: u32) {
        self.pending -= 1;
        if self.pending > 0 {
            return;
        }
        let timeouts: u64 = self.flows.iter().map(|&f| cx.flow(f).stats.timeouts).sum();
        let n = self.spec.workers.len() as u64;
        cx.write_op(Op {
            id: self.query.into(),
            host: self.spec.aggregator,
            start: self.sent,
            end: Some(cx.now()),
            bytes: self.spec.answer * n,
            outcome: if timeouts > 0 { "timeout" } else { "done" },
            value: timeouts as f64,
        });
        self.query += 1;
        if self.query < self.spec.queries {
            cx.set_timer(cx.now() + self.spec.gap, 0);
        }
    }
}

impl App for WebSearch {
    const KEY: &'static str = "web_search";
    const NAME: &'static str = "web_search";
    type Spec = WebSearchSpec;

    fn parse(v: Value, at: &str, given: &Given) -> Result<Vec<WebSearchSpec>, ScenarioError> {
        let topo = given.topology;
        let c: RawWebSearch = parse_at(v, at)?;
        let workers = fan_in(at, c.aggregator, &c.workers, topo)?;
        check_class(at, c.class)?;
        let total = check_bytes(join_path(at, "total"), c.total)?;
        let answer = total.div_ceil(workers.len() as u64);
        check_size(join_path(at, "request"), c.request)?;
        let queries = check_count(at, "queries", c.queries)?;
        check_rounds(at, c.start, c.gap, given.stop_time, queries, "web search")?;
        Ok(vec![WebSearchSpec {
            aggregator: c.aggregator,
            workers,
            answer,
            queries,
            gap: c.gap,
            start: c.start,
            request: c.request.0 as u32,
            class: c.class,
            protocol: c.protocol,
        }])
    }

    fn load(spec: &WebSearchSpec) -> Load {
        let queries = f64::from(spec.queries);
        Load {
            flows: spec.workers.len() as f64 * queries,
            ops: queries,
            ..Load::default()
        }
    }

    fn new(spec: &WebSearchSpec, _rng: Xoshiro256PlusPlus) -> WebSearch {
        WebSearch {
            spec: spec.clone(),
            query: 0,
            sent: Time::ZERO,
            pending: 0,
            flows: Vec::with_capacity(spec.workers.len()),
        }
    }
}
