//! `links.parquet` (`trace.links`): what every port put on its link in each
//! interval of the run, the link utilisation over time an ns-3 user draws
//! from a `FlowMonitor` or an htsim user from its queue loggers.
//!
//! Off the per-packet path: an [`Event::LinkSample`] at the end of each
//! interval reads every port's counters ([`Port::sent_by`]) and keeps the
//! differences. A packet on the wire across an interval's end counts in each
//! interval by the share of its bits serialized there, so a link's bytes in
//! an interval never exceed what its rate can serialize in it (utilisation at
//! most 1). The last interval ends with the run.
//!
//! A sample does not extend the run: it is rescheduled only while other
//! events are pending (and not past `stop_time`). Samples after the last
//! event that did something (timers firing for nothing) are held back, and
//! cut to the run's end once it is known ([`Simulation::close_links`]).
//!
//! [`Port::sent_by`]: crate::network::Port::sent_by

use super::Simulation;
use crate::engine::Event;
use crate::records::{Column, Table};
use crate::units::Time;

/// The rows of `links.parquet` and the counters they are taken from.
pub(super) struct LinkRows {
    interval: Time,
    /// The start of the interval being counted: the last sample's time.
    from: Time,
    /// Each port's packets started and bytes serialized by `from`.
    last: Vec<(u64, f64)>,
    /// Each port's rate, bits per second.
    rates: Vec<f64>,
    start: Vec<Time>,
    end: Vec<Time>,
    port: Vec<u32>,
    packets: Vec<i64>,
    bytes: Vec<f64>,
    /// Rows at the front whose interval ended by the last event that did
    /// something: final, and free to leave in a streamed chunk.
    settled: usize,
}

impl LinkRows {
    /// Counting from time 0 in intervals of `interval`, for ports of `rates`.
    pub(super) fn new(interval: Time, rates: Vec<f64>) -> LinkRows {
        LinkRows {
            interval,
            from: Time::ZERO,
            last: vec![(0, 0.0); rates.len()],
            rates,
            start: Vec::new(),
            end: Vec::new(),
            port: Vec::new(),
            packets: Vec::new(),
            bytes: Vec::new(),
            settled: 0,
        }
    }

    /// Rows held (recorded and not yet taken).
    pub(super) fn len(&self) -> usize {
        self.start.len()
    }

    /// Rows ending by `t` are final.
    fn settle(&mut self, t: Time) {
        while self.settled < self.end.len() && self.end[self.settled] <= t {
            self.settled += 1;
        }
    }

    /// The final rows at the front (every held row if `all`, at the end of
    /// the run), as table rows named by `names` (`"node->peer"` by port); they
    /// are no longer held.
    pub(super) fn take(&mut self, all: bool, names: &[String]) -> Table {
        let n = if all { self.len() } else { self.settled };
        self.settled -= n;
        fn front<T>(v: &mut Vec<T>, n: usize) -> Vec<T> {
            let rest = v.split_off(n);
            std::mem::replace(v, rest)
        }
        let start = front(&mut self.start, n);
        let end = front(&mut self.end, n);
        let port = front(&mut self.port, n);
        let bytes = front(&mut self.bytes, n);
        let span: Vec<f64> = start
            .iter()
            .zip(&end)
            .map(|(&a, &b)| (b - a).as_secs_f64())
            .collect();
        let utilisation = bytes
            .iter()
            .zip(&span)
            .zip(&port)
            .map(|((&b, &s), &p)| 8.0 * b / (self.rates[p as usize] * s))
            .collect();
        let mut t = Table::default();
        t.push(
            "time_s",
            Column::F64(start.iter().map(|s| s.as_secs_f64()).collect()),
        );
        t.push("interval_s", Column::F64(span));
        t.push(
            "port",
            Column::Str(port.iter().map(|&p| names[p as usize].clone()).collect()),
        );
        t.push("packets", Column::I64(front(&mut self.packets, n)));
        t.push("bytes", Column::F64(bytes));
        t.push("utilisation", Column::F64(utilisation));
        t
    }
}

impl Simulation {
    /// The first sample, at the end of the first interval (none if the run
    /// stops before it: the run's end closes the only interval).
    pub(super) fn start_links(&mut self) {
        if let Some(l) = &self.rec.links {
            let at = l.interval;
            if self.stop.is_none_or(|s| at <= s) {
                self.events.schedule(at, Event::LinkSample);
            }
        }
    }

    /// The sample at `now`: a row per port for the interval since the last,
    /// final if the interval ended by `last_active` (the last event that did
    /// something); the next sample while other events are pending. Never
    /// extends the run (returns false, as a timer that did nothing).
    pub(super) fn sample_links(&mut self, now: Time, last_active: Time) -> bool {
        self.count_links(now);
        let l = self.rec.links.as_mut().expect("samples only when traced");
        l.settle(last_active);
        let next = Time(now.0.saturating_add(l.interval.0));
        if !self.events.is_empty() && self.stop.is_none_or(|s| next <= s) {
            self.events.schedule(next, Event::LinkSample);
        }
        false
    }

    /// Push a row per port for the interval from the last sample to `now`.
    fn count_links(&mut self, now: Time) {
        let Some(l) = self.rec.links.as_mut() else {
            return;
        };
        for (p, pt) in self.net.ports.iter().enumerate() {
            let (packets, bytes) = pt.sent_by(now);
            let (was_packets, was_bytes) = std::mem::replace(&mut l.last[p], (packets, bytes));
            l.start.push(l.from);
            l.end.push(now);
            l.port.push(p as u32);
            l.packets.push((packets - was_packets) as i64);
            // The in-flight share is a float: a difference a hair below 0
            // on an idle link is 0.
            l.bytes.push((bytes - was_bytes).max(0.0));
        }
        l.from = now;
    }

    /// The run ended at `end` (before the ports settle): rows of samples
    /// after it (timers firing for nothing at the end) are dropped, or cut
    /// to it, and the interval from the last sample to `end` is counted.
    /// Every row is then final.
    pub(super) fn close_links(&mut self, end: Time) {
        let Some(l) = self.rec.links.as_mut() else {
            return;
        };
        while l.start.last().is_some_and(|&s| s >= end) {
            l.start.pop();
            l.end.pop();
            l.port.pop();
            l.packets.pop();
            l.bytes.pop();
        }
        for e in l.end.iter_mut().rev().take_while(|e| **e > end) {
            *e = end;
        }
        if l.from < end {
            self.count_links(end);
        }
        let l = self.rec.links.as_mut().expect("checked above");
        l.settled = l.len();
    }
}
