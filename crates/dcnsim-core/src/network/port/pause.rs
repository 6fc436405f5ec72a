//! A port's link-level flow control: what PAUSE frames (IEEE 802.3x, Annex
//! 31B; per class, 802.1Qbb) it received and sent, and for how long each
//! class was paused (the counters of `ports.parquet`), and how a port obeys
//! it.

use super::{Port, Service};
use crate::packet::{Hop, Kind, CLASSES};
use crate::units::Time;

/// A port's PAUSE state (802.3x / 802.1Qbb) and its counters: PAUSE frames
/// it sent and received, and the time each class (and any class) was paused.
/// A class is paused over `[since, until)`; a later PAUSE for it ends that
/// interval at its arrival (or earlier, if it had run out) and starts the
/// next, so the totals add up disjoint intervals.
#[derive(Clone, Debug, Default)]
pub struct Paused {
    /// Until when each class is paused (a PAUSE of 0 quanta: its arrival).
    pub until: [Time; CLASSES],
    since: [Time; CLASSES],
    total: [Time; CLASSES],
    /// The interval during which some class was paused.
    any_since: Time,
    any_total: Time,
    /// PAUSE frames sent out of this port, and received on it (from its peer).
    pub frames_sent: u64,
    pub frames_received: u64,
}

impl Paused {
    /// A PAUSE naming `classes` (bit c for class c) arrived at `now`: they are
    /// paused until `until` (`now` resumes them). Returns the latest end of a
    /// pause of any class.
    pub fn receive(&mut self, now: Time, classes: u8, until: Time) -> Time {
        self.frames_received += 1;
        let before = self.latest();
        for c in 0..CLASSES {
            if classes & (1 << c) != 0 {
                self.total[c] = self.total[c] + (self.until[c].min(now) - self.since[c]);
                self.since[c] = now;
                self.until[c] = until;
            }
        }
        let after = self.latest();
        if !(before > now && after > now) {
            self.any_total = self.any_total + (before.min(now) - self.any_since);
            self.any_since = now;
        }
        after
    }

    fn latest(&self) -> Time {
        self.until.iter().copied().max().unwrap_or(Time::ZERO)
    }

    /// Time paused up to `end`: with any class paused, and per class.
    pub fn paused_time(&self, end: Time) -> (Time, [Time; CLASSES]) {
        let open = |since: Time, until: Time| until.min(end).max(since) - since;
        let mut per = self.total;
        for (c, t) in per.iter_mut().enumerate() {
            *t = *t + open(self.since[c], self.until[c]);
        }
        (self.any_total + open(self.any_since, self.latest()), per)
    }
}

impl Port {
    /// A PAUSE for `classes` reached this port's node at `now`: stop serving
    /// them for `quanta` × 512 bit times at the port's rate (0 resumes at
    /// once; IEEE 802.3 Annex 31B.3), once the packet in service has been
    /// sent. Returns when the port must wake, if packets wait.
    pub fn pause_for(&mut self, now: Time, classes: u8, quanta: u16) -> Option<Time> {
        debug_assert!(!self.scheduled(), "a paused port is event-driven");
        let until = now + self.rate.serialization(u64::from(quanta) * 512 / 8);
        self.pause_latest = self.pause.receive(now, classes, until);
        self.service = Service::Holding;
        (!self.queue.is_empty()).then(|| now.max(self.busy_until))
    }

    /// The classes paused at `now` (bit c for class c).
    #[inline]
    pub fn paused(&self, now: Time) -> u8 {
        if self.free() || self.pause_latest <= now {
            return 0;
        }
        let mut mask = 0;
        for (c, &until) in self.pause.until.iter().enumerate() {
            if until > now {
                mask |= 1 << c;
            }
        }
        mask
    }

    /// Control frame `pkt` starts serializing: a PAUSE counts among the
    /// PAUSE frames sent.
    pub fn start_control(&mut self, pkt: &Hop) {
        if let Kind::Pause { .. } = pkt.kind {
            self.pause.frames_sent += 1;
        }
    }
}
