//! A periodic sender (`[[traffic.periodic]]`), PTP-like: the clock
//! synchronisation of the QJUMP seed (`qjump.txt`, "QJUMP in Action" 1,
//! PTPd). Every `interval` a server sends a small sync message (one
//! datagram, UDP as PTP's event messages) to each client.
//!
//! A PTP client sets its clock from the sync message's timestamp and the
//! path delay it assumes, its running minimum (PTPd filters the delay and
//! "assumes roughly constant network delay", seed §1). Its offset error is
//! then the message's extra delay: one-way latency minus the smallest
//! latency that client has seen so far. The client's own clock, servo and
//! delay-request exchange are not modelled.
//!
//! Operation rows: one per sync message delivered (`op_id` its sequence
//! number, `host` the client, `start_s` sent, `end_s` delivered, `bytes` its
//! size, `outcome` `"done"`, `value` the offset error in seconds). A
//! message lost has no row.

use super::keys::{check_class, check_host, end_of, host_list};
use super::{App, Application, Context, Datagram, Delivered, Given, Load, Op};
use crate::app::keys::check_size;
use crate::error::{join_path, parse_at, ScenarioError};
use crate::units::{Bytes, Time};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::Deserialize;
use serde_json::Value;
use std::collections::HashMap;

/// `[[traffic.periodic]]` as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPeriodic {
    server: u32,
    clients: Value,
    interval: Time,
    #[serde(default = "sync_size")]
    size: Bytes,
    #[serde(default)]
    start: Time,
    stop: Option<Time>,
    #[serde(default)]
    class: u8,
}

/// A PTP Sync message over UDP/IPv4/Ethernet: 44 B + 8 + 20 + 14 + 4 (FCS).
fn sync_size() -> Bytes {
    Bytes(90)
}

#[derive(Clone, Debug, PartialEq)]
pub struct PeriodicSpec {
    pub server: u32,
    pub clients: Vec<u32>,
    pub interval: Time,
    /// Bytes on the wire of each message.
    pub size: u32,
    pub start: Time,
    /// No message is sent at or after this time.
    pub stop: Time,
    pub class: u8,
}

pub struct Periodic {
    spec: PeriodicSpec,
    /// Messages sent to each client so far (the next sequence number).
    sent: u32,
    /// Each client's smallest latency so far, by host.
    min_latency: HashMap<u32, Time>,
}

impl Application for Periodic {
    fn start(&mut self, cx: &mut dyn Context) {
        cx.set_timer(self.spec.start, 0);
    }

    /// Send this interval's messages; set the next interval's timer.
    fn on_timer(&mut self, cx: &mut dyn Context, _token: u64) {
        let s = &self.spec;
        for &c in &s.clients {
            cx.send_datagram(Datagram {
                src: s.server,
                dst: c,
                size: s.size,
                class: s.class,
                tag: self.sent,
            });
        }
        self.sent += 1;
        let next = cx.now() + s.interval;
        if next < s.stop {
            cx.set_timer(next, 0);
        }
    }

    fn on_datagram(&mut self, cx: &mut dyn Context, d: &Delivered) {
        let now = cx.now();
        let latency = now - d.sent;
        let min = self.min_latency.entry(d.datagram.dst).or_insert(latency);
        *min = (*min).min(latency);
        cx.write_op(Op {
            id: d.datagram.tag.into(),
            host: d.datagram.dst,
            start: d.sent,
            end: Some(now),
            bytes: d.datagram.size.into(),
            outcome: "done",
            value: (latency - *min).as_secs_f64(),
        });
    }
}

impl App for Periodic {
    const KEY: &'static str = "periodic";
    const NAME: &'static str = "periodic";
    type Spec = PeriodicSpec;

    fn parse(v: Value, at: &str, given: &Given) -> Result<Vec<PeriodicSpec>, ScenarioError> {
        let topo = given.topology;
        let c: RawPeriodic = parse_at(v, at)?;
        check_host(topo, join_path(at, "server"), c.server)?;
        check_class(at, c.class)?;
        let clients = host_list(
            &join_path(at, "clients"),
            &c.clients,
            topo,
            "client",
            Some((c.server, "the server")),
        )?;
        let size = check_size(join_path(at, "size"), c.size)?;
        // The server's link must carry an interval's messages within the
        // interval, or its NIC queue grows without end (as a stream faster
        // than its link, refused too): docs/scenario.md, Bounds.
        let link = topo.host_link_rates()[c.server as usize];
        let busy = link.serialization(clients.len() as u64 * u64::from(size));
        if c.interval < busy {
            return Err(ScenarioError::new(
                join_path(at, "interval"),
                format!(
                    "{} is shorter than the {} the server's {} link takes to send one \
                     message to each of the {} clients",
                    c.interval,
                    busy,
                    link,
                    clients.len()
                ),
            ));
        }
        let stop = end_of(at, c.stop, given.stop_time, c.start, "periodic sender")?;
        Ok(vec![PeriodicSpec {
            server: c.server,
            clients,
            interval: c.interval,
            size,
            start: c.start,
            stop,
            class: c.class,
        }])
    }

    fn load(spec: &PeriodicSpec) -> Load {
        let rounds = (spec.stop - spec.start).0.div_ceil(spec.interval.0) as f64;
        Load {
            flows: 0.0,
            ops: rounds * spec.clients.len() as f64,
            ..Load::default()
        }
    }

    fn new(spec: &PeriodicSpec, _rng: Xoshiro256PlusPlus) -> Periodic {
        Periodic {
            spec: spec.clone(),
            sent: 0,
            min_latency: HashMap::new(),
        }
    }
}
