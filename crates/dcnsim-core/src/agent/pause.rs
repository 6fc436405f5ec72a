//! Ethernet flow control at a switch: 802.3x PAUSE, or 802.1Qbb per-priority
//! PAUSE (PFC) with `per_class = true`.
//!
//! QJUMP (§2, Fig. 3) compares itself with Ethernet flow control, where
//! "hosts and switches issue special pause messages when their queues are
//! nearly full". This agent models the switch side as ingress accounting in
//! a shared-memory switch: it counts the bytes and packets held in the switch
//! (queued or on the wire of an egress port) by the ingress port they arrived
//! on, per class with PFC or all together with 802.3x. When a count rises
//! above `xoff` it sends a PAUSE frame with `quanta` out of that ingress port
//! (the upstream neighbour stops for `quanta` × 512 bit times); when it falls
//! to `xon` or below it sends a PAUSE with quanta 0, which resumes at once
//! (IEEE 802.3 Annex 31B). Frames are 64 bytes and go out ahead of the port's
//! queue.
//!
//! Readings chosen where the standards leave it to the implementation:
//! - a packet counts from its arrival until its last bit leaves the switch's
//!   egress port starts (departure) or it is dropped there;
//! - the pause is refreshed on an arrival above `xoff` once half its time
//!   has passed, since an agent keeps no timers of its own (real switches
//!   refresh on a timer; both keep the neighbour paused while over `xoff`);
//! - `xon` defaults to half of `xoff`.
//!
//! Hosts do not send PAUSE here; a paused host NIC stops as a switch port does.

use super::{Agent, ScenarioView, Switch, SwitchAgent};
use crate::error::{join_path, ScenarioError};
use crate::packet::{Kind, Packet, CLASSES, NONE};
use crate::units::{Capacity, Time};
use serde::Deserialize;

/// Bytes of a PAUSE frame on the wire (a minimum-size Ethernet frame).
pub const PAUSE_FRAME_BYTES: u32 = 64;

#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PauseSpec {
    /// Pause the upstream neighbour when its ingress count exceeds this.
    pub xoff: Capacity,
    /// Resume it when the count is back at or below this (default: half of
    /// `xoff`, in the same unit).
    pub xon: Option<Capacity>,
    /// Pause time in quanta of 512 bit times (default 65535, the largest).
    #[serde(default = "max_quanta")]
    pub quanta: u16,
    /// 802.1Qbb: count and pause each class on its own (default: 802.3x, one
    /// count per ingress port and PAUSE for every class).
    #[serde(default)]
    pub per_class: bool,
}

fn max_quanta() -> u16 {
    u16::MAX
}

impl PauseSpec {
    fn xon(&self) -> Capacity {
        self.xon.unwrap_or(match self.xoff {
            Capacity::Packets(n) => Capacity::Packets(n / 2),
            Capacity::Bytes(b) => Capacity::Bytes(b / 2),
        })
    }
}

/// The per-switch state: one count per (ingress port, class or all).
#[derive(Debug)]
pub struct Pause {
    xoff: Capacity,
    xon: Capacity,
    quanta: u16,
    per_class: bool,
    first_port: u32,
    counts: Vec<Count>,
}

#[derive(Clone, Copy, Debug, Default)]
struct Count {
    packets: u64,
    bytes: u64,
    /// When the PAUSE now in force upstream was sent, if any.
    paused_at: Option<Time>,
}

fn over(c: &Count, limit: Capacity) -> bool {
    match limit {
        Capacity::Packets(n) => c.packets > n,
        Capacity::Bytes(b) => c.bytes > b,
    }
}

impl Agent for Pause {
    type Spec = PauseSpec;

    fn check(spec: &PauseSpec, path: &str, _sc: &ScenarioView) -> Result<(), ScenarioError> {
        let xon = spec.xon();
        let same_unit = matches!(
            (spec.xoff, xon),
            (Capacity::Packets(_), Capacity::Packets(_)) | (Capacity::Bytes(_), Capacity::Bytes(_))
        );
        if !same_unit {
            return Err(ScenarioError::new(
                join_path(path, "xon"),
                format!("must be in the unit of xoff ({})", spec.xoff),
            ));
        }
        if xon.amount() >= spec.xoff.amount() {
            return Err(ScenarioError::new(
                join_path(path, "xon"),
                format!("must be below xoff ({}), got {xon}", spec.xoff),
            ));
        }
        if spec.quanta == 0 {
            return Err(ScenarioError::new(
                join_path(path, "quanta"),
                "must be at least 1 (a PAUSE of 0 quanta only resumes)",
            ));
        }
        Ok(())
    }

    fn new(spec: &PauseSpec, sw: &Switch) -> Pause {
        let ports = sw.ports();
        let classes = if spec.per_class { CLASSES } else { 1 };
        Pause {
            xoff: spec.xoff,
            xon: spec.xon(),
            quanta: spec.quanta,
            per_class: spec.per_class,
            first_port: ports.start,
            counts: vec![Count::default(); ports.len() * classes],
        }
    }
}

impl Pause {
    fn slot(&self, ingress: u32, class: u8) -> usize {
        let port = (ingress - self.first_port) as usize;
        if self.per_class {
            port * CLASSES + usize::from(class)
        } else {
            port
        }
    }

    fn frame(&self, sw: &mut Switch, ingress: u32, class: u8, quanta: u16) {
        let classes = if self.per_class { 1 << class } else { u8::MAX };
        let peer = sw.port(ingress).peer;
        let pkt = Packet::new(
            Kind::Pause { classes, quanta },
            sw.node,
            peer,
            PAUSE_FRAME_BYTES,
            0,
            sw.now,
        );
        sw.send_on(ingress, pkt);
    }

    /// A packet left the switch (sent or dropped); those it originated (no
    /// ingress port) were never counted.
    fn leave(&mut self, sw: &mut Switch, pkt: &Packet) {
        if pkt.ingress == NONE {
            return;
        }
        let i = self.slot(pkt.ingress, pkt.class);
        let c = &mut self.counts[i];
        c.packets -= 1;
        c.bytes -= u64::from(pkt.size);
        if c.paused_at.is_some() && !over(c, self.xon) {
            c.paused_at = None;
            self.frame(sw, pkt.ingress, pkt.class, 0);
        }
    }
}

impl SwitchAgent for Pause {
    fn on_arrival(&mut self, sw: &mut Switch, pkt: &mut Packet, _egress: u32) {
        let i = self.slot(pkt.ingress, pkt.class);
        let c = &mut self.counts[i];
        c.packets += 1;
        c.bytes += u64::from(pkt.size);
        if !over(c, self.xoff) {
            return;
        }
        let rate = sw.port(pkt.ingress).rate;
        let refresh = rate.serialization(u64::from(self.quanta) * 64 / 2);
        if c.paused_at.is_none_or(|t| sw.now >= t + refresh) {
            c.paused_at = Some(sw.now);
            self.frame(sw, pkt.ingress, pkt.class, self.quanta);
        }
    }

    fn on_departure(&mut self, sw: &mut Switch, pkt: &mut Packet, _port: u32) {
        self.leave(sw, pkt);
    }

    fn on_drop(&mut self, sw: &mut Switch, pkt: &Packet, _port: u32) {
        self.leave(sw, pkt);
    }
}
