//! Closed-loop request/response (`[[traffic.request_response]]`),
//! memcached-like: the key-value store of the QJUMP seed (`qjump.txt`,
//! "QJUMP in Action" 2, memcached under the memslap load generator).
//!
//! Each client keeps one request outstanding against its server (client i
//! uses `servers[i mod len]`): it sends a request of `request` bytes; once
//! the server has all of it, the server sends a response of `response`
//! bytes; once the client has all of that, the request is done, and the
//! client sends its next request after `think` time. Both directions are
//! persistent TCP connections opened with the client's first request
//! (memslap's), so only a client's first request includes the handshakes;
//! they close with its last request (`requests`).
//! The server's processing time is not modelled.
//!
//! Operation rows: one per request completed (`op_id` the client's request
//! number from 0, `host` the client, `start_s` when it was sent, `end_s`
//! when the response was complete, `bytes` request plus response,
//! `outcome` `"done"`, `value` the request latency in seconds).

use super::keys::{check_bytes, check_class, check_host, check_wait, end_of, host_list};
use super::{App, Application, Context, Given, Load, Op, OpenFlow};
use crate::cc::Protocol;
use crate::error::{join_path, parse_at, ScenarioError};
use crate::units::{Bytes, Time};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::Deserialize;
use serde_json::Value;
use std::collections::HashMap;

/// `[[traffic.request_response]]` as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRequestResponse {
    servers: Vec<u32>,
    clients: Value,
    #[serde(default = "request")]
    request: Bytes,
    #[serde(default = "response")]
    response: Bytes,
    #[serde(default)]
    think: Time,
    requests: Option<u64>,
    stop: Option<Time>,
    #[serde(default)]
    start: Time,
    #[serde(default)]
    class: u8,
    protocol: Option<Protocol>,
}

/// memslap's defaults: a 64 B key in a get, a 1024 B value back.
fn request() -> Bytes {
    Bytes(64)
}

fn response() -> Bytes {
    Bytes(1024)
}

#[derive(Clone, Debug, PartialEq)]
pub struct RequestResponseSpec {
    pub servers: Vec<u32>,
    pub clients: Vec<u32>,
    pub request: u64,
    pub response: u64,
    pub think: Time,
    /// Requests per client (`None`: until `stop`).
    pub requests: Option<u64>,
    /// No request starts at or after this time.
    pub stop: Option<Time>,
    pub start: Time,
    pub class: u8,
    pub protocol: Option<Protocol>,
}

/// One client's connections and its request in progress.
#[derive(Clone, Copy, Default)]
struct Client {
    /// Its request and response flows, once opened.
    flows: Option<(u32, u32)>,
    sent: u64,
    started: Time,
}

pub struct RequestResponse {
    spec: RequestResponseSpec,
    clients: Vec<Client>,
    /// Flow id → the client and whether it is its response flow.
    owner: HashMap<u32, (usize, bool)>,
}

impl RequestResponse {
    fn server(&self, i: usize) -> u32 {
        self.spec.servers[i % self.spec.servers.len()]
    }

    /// Whether client `c`'s request in progress is its last one.
    fn last(&self, c: &Client) -> bool {
        self.spec.requests.is_some_and(|n| c.sent + 1 >= n)
    }

    fn flow(&self, src: u32, dst: u32, size: u64, c: &Client) -> OpenFlow {
        OpenFlow {
            src,
            dst,
            size,
            deadline: None,
            class: self.spec.class,
            protocol: self.spec.protocol,
            op: u32::try_from(c.sent).ok(),
            keep_open: !self.last(c),
        }
    }

    /// Client `i` sends its next request now, if it has one left.
    fn send_request(&mut self, cx: &mut dyn Context, i: usize) {
        let now = cx.now();
        let s = &self.spec;
        let c = self.clients[i];
        if s.requests.is_some_and(|n| c.sent >= n) || s.stop.is_some_and(|t| now >= t) {
            return;
        }
        self.clients[i].started = now;
        match c.flows {
            Some((req, _)) => cx.append(req, s.request, self.last(&c)),
            None => {
                let req = cx.open_flow(self.flow(s.clients[i], self.server(i), s.request, &c));
                self.owner.insert(req, (i, false));
                self.clients[i].flows = Some((req, u32::MAX));
            }
        }
    }
}

impl Application for RequestResponse {
    fn start(&mut self, cx: &mut dyn Context) {
        cx.set_timer(self.spec.start, u64::MAX);
    }

    /// `u64::MAX`: every client starts; otherwise client `token`'s think
    /// time is over.
    fn on_timer(&mut self, cx: &mut dyn Context, token: u64) {
        if token == u64::MAX {
            for i in 0..self.clients.len() {
                self.send_request(cx, i);
            }
        } else {
            self.send_request(cx, token as usize);
        }
    }

    fn on_flow_done(&mut self, cx: &mut dyn Context, flow: u32) {
        let Some(&(i, is_response)) = self.owner.get(&flow) else {
            return;
        };
        let now = cx.now();
        let s = &self.spec;
        let c = self.clients[i];
        let Some((req, resp)) = c.flows else {
            unreachable!("a client's flows are open once one completes")
        };
        if !is_response {
            // The server has the request: it answers.
            if resp == u32::MAX {
                let resp = cx.open_flow(self.flow(self.server(i), s.clients[i], s.response, &c));
                self.owner.insert(resp, (i, true));
                self.clients[i].flows = Some((req, resp));
            } else {
                cx.append(resp, s.response, self.last(&c));
            }
            return;
        }
        cx.write_op(Op {
            id: c.sent,
            host: s.clients[i],
            start: c.started,
            end: Some(now),
            bytes: s.request + s.response,
            outcome: "done",
            value: (now - c.started).as_secs_f64(),
        });
        self.clients[i].sent += 1;
        if s.think == Time::ZERO {
            self.send_request(cx, i);
        } else {
            cx.set_timer(now + s.think, i as u64);
        }
    }
}

impl App for RequestResponse {
    const KEY: &'static str = "request_response";
    const NAME: &'static str = "request_response";
    type Spec = RequestResponseSpec;

    fn parse(v: Value, at: &str, given: &Given) -> Result<Vec<RequestResponseSpec>, ScenarioError> {
        let topo = given.topology;
        let c: RawRequestResponse = parse_at(v, at)?;
        let path = join_path(at, "servers");
        if c.servers.is_empty() {
            return Err(ScenarioError::new(path, "needs at least one server"));
        }
        for (i, &h) in c.servers.iter().enumerate() {
            check_host(topo, format!("{path}[{i}]"), h)?;
        }
        let except = (c.servers.len() == 1).then(|| (c.servers[0], "the server"));
        let clients = host_list(
            &join_path(at, "clients"),
            &c.clients,
            topo,
            "client",
            except,
        )?;
        for (i, h) in clients.iter().enumerate() {
            if c.servers.contains(h) {
                return Err(ScenarioError::new(
                    format!("{}[{i}]", join_path(at, "clients")),
                    format!("host {h} is a server"),
                ));
            }
        }
        check_class(at, c.class)?;
        let request = check_bytes(join_path(at, "request"), c.request)?;
        let response = check_bytes(join_path(at, "response"), c.response)?;
        if c.requests == Some(0) {
            return Err(ScenarioError::new(
                join_path(at, "requests"),
                "must be at least 1",
            ));
        }
        let stop = match (c.requests, c.stop) {
            (Some(_), None) => None,
            _ => Some(end_of(
                at,
                c.stop,
                given.stop_time,
                c.start,
                "closed-loop client",
            )?),
        };
        // Its end: its own stop (or the run's); with neither, `requests`
        // rounds.
        let end = match (c.stop, given.stop_time) {
            (Some(t), _) => Some((t, "its stop")),
            (None, t) => t.map(|t| (t, "the run's stop_time")),
        };
        let rounds = c.requests.unwrap_or(1);
        check_wait(at, "think", c.think, c.start, end, rounds, "client")?;
        Ok(vec![RequestResponseSpec {
            servers: c.servers,
            clients,
            request,
            response,
            think: c.think,
            requests: c.requests,
            stop,
            start: c.start,
            class: c.class,
            protocol: c.protocol,
        }])
    }

    fn load(spec: &RequestResponseSpec) -> Load {
        let clients = spec.clients.len() as f64;
        // Until stop: at most one request per think time (or per 10 us).
        let per_client = spec.requests.map_or_else(
            || {
                let span = spec.stop.unwrap_or(spec.start) - spec.start;
                span.as_secs_f64() / spec.think.as_secs_f64().max(10e-6)
            },
            |n| n as f64,
        );
        Load {
            flows: 2.0 * clients,
            ops: per_client * clients,
            ..Load::default()
        }
    }

    fn new(spec: &RequestResponseSpec, _rng: Xoshiro256PlusPlus) -> RequestResponse {
        RequestResponse {
            spec: spec.clone(),
            clients: vec![Client::default(); spec.clients.len()],
            owner: HashMap::new(),
        }
    }
}
