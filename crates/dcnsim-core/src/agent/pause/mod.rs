//! Ethernet link-level flow control at a switch: 802.3x PAUSE, or 802.1Qbb
//! priority-based flow control (PFC) with `per_class = true`.
//!
//! QJUMP (§"Ethernet Flow Control", Fig. 3) compares itself with it: "hosts
//! and switches issue special pause messages when their queues are nearly
//! full". This agent is the switch side, as the ingress accounting of a
//! shared-memory switch: it counts the bytes and packets the switch holds
//! (queued, or being serialized out of an egress port) by the ingress port
//! they arrived on, per class with PFC or all together with 802.3x.
//!
//! **Pause and resume.** When a count crosses its XOFF threshold the switch
//! sends a PAUSE frame out of that ingress port: a real 64-byte MAC Control
//! frame (IEEE 802.3 Annex 31B) that goes out ahead of the port's queue, after
//! the packet in service, and crosses the link. At the neighbour (a switch
//! port or a host NIC) it stops the classes it names (every class for 802.3x,
//! one for PFC) once the packet in service has been sent, for `quanta` pause
//! quanta of 512 bit times at the link's rate (802.3 Annex 31B.3; 802.1Qbb,
//! clause 36 of 802.1Q). While the count stays above XON the agent renews the pause by
//! its own timer, every `refresh` (default: half the pause time). When the
//! count falls to XON it sends a PAUSE of 0 quanta, which resumes at once
//! (802.3 31B.3: a pause time of zero ends a pause); a neighbour that hears no
//! renewal resumes when the pause time runs out.
//!
//! **Thresholds.** Static (`xoff`, `xon`, in bytes or packets): pause above
//! `xoff`, resume at or below `xon`. Or dynamic, in bytes (`alpha`, `buffer`):
//! the Choudhury–Hahne dynamic threshold over the switch's shared buffer as in
//! the HPCC authors' ns-3 (`simulation/src/point-to-point/model/switch-mmu.cc`,
//! `GetPfcThreshold`, also DCQCN's setups):
//!
//!   T = α · (buffer − Σ headroom − shared_used)
//!
//! where Σ headroom is `headroom` times the switch's counts (ports × classes
//! with PFC) and shared_used the bytes all counts hold outside their
//! headroom. An arrival that would take its count's shared bytes above T goes
//! to the count's headroom; a count pauses when it holds headroom bytes or
//! its shared bytes reach T, and resumes once its headroom is empty and its
//! shared bytes are 0 or at most T − `resume_offset` (HPCC's
//! `CheckShouldPause`, `CheckShouldResume`; its per-count `reserve`, 4 KiB
//! there, is 0 here).
//!
//! **Headroom.** The buffer a count may take beyond its threshold, for what
//! is in flight while the PAUSE travels (802.1Q's PFC buffer-requirements
//! annex sizes it from the link's delay and rate). An arrival that
//! finds it full is dropped on ingress (HPCC's `CheckIngressAdmission`): in a
//! correctly sized network this never happens. Without `headroom` nothing
//! is dropped on ingress and only the egress queues' capacities drop.
//!
//! **Deadlock.** In a cyclic topology, paused ports may wait on each other
//! for ever. At each refresh the agent looks at its switch's egress ports:
//! one with packets waiting and some class paused that has sent no packet
//! other than PAUSE frames for `deadlock_after` (continuously paused, not
//! draining: the condition of a PFC watchdog) ends the run with a report
//! naming it (`summary.stopped_by_agent`), instead of renewing pauses for
//! ever.
//!
//! Readings chosen where the standards leave it to the implementation:
//! - a packet counts from its arrival until its egress port starts sending it
//!   (departure) or drops it;
//! - `xon` defaults to half of `xoff`; `resume_offset` to 3 KiB (HPCC's);
//! - the dynamic threshold is checked, as in HPCC, only for the count an
//!   arrival or departure changes;
//! - a PFC frame names one class; a frame naming all classes is 802.3x.
//!
//! Other simulators: the HPCC ns-3 fork (`qbb-net-device.cc`) pauses until an
//! explicit resume (the pause time in the frame is not timed) and sends its
//! PFC frames as IP packets at the head of the port's queue; htsim
//! (`queue_lossless_input.cpp`) counts per input queue with static byte
//! thresholds (pause above the high one, resume below the low one) and also
//! pauses until a resume, its PAUSE reaching the peer after the wire's
//! latency without serializing. Here the pause time runs out as the
//! standards say, which a renewal prevents.
//!
//! Hosts do not send PAUSE here; a paused host NIC stops as a switch port
//! does. `trace = true` writes a row of `agent_rows` per event: key `xoff`,
//! `xon`, `refresh` or `drop` (followed by ` cN` for PFC class N), value the
//! port's row in `ports.parquet` (the port the frame leaves by).

mod spec;

pub use spec::PauseSpec;
use spec::{QUANTUM_BITS, RESUME_OFFSET};

use super::{Agent, ScenarioView, Switch, SwitchAgent};
use crate::error::ScenarioError;
use crate::packet::{Kind, Packet, CLASSES, NONE};
use crate::units::{Capacity, Time};

/// Bytes of a PAUSE frame on the wire (a minimum-size Ethernet frame).
pub const PAUSE_FRAME_BYTES: u32 = 64;

/// When a count pauses its upstream neighbour and when it resumes it.
#[derive(Clone, Copy, Debug)]
enum Threshold {
    /// Pause above `xoff`, resume at or below `xon`; drop above `xoff` +
    /// `headroom`.
    Static {
        xoff: Capacity,
        xon: Capacity,
        headroom: Option<u64>,
    },
    /// T = α · (`pool` − shared bytes used), `pool` = buffer − Σ headroom.
    Dynamic {
        alpha: f64,
        pool: u64,
        offset: u64,
        headroom: Option<u64>,
    },
}

/// The per-switch state: one count per (ingress port, class or all).
#[derive(Debug)]
pub struct Pause {
    threshold: Threshold,
    quanta: u16,
    refresh: Option<Time>,
    per_class: bool,
    trace: bool,
    deadlock_after: Time,
    first_port: u32,
    counts: Vec<Count>,
    /// Shared-buffer bytes held outside headroom (dynamic threshold).
    shared_used: u64,
    /// Per egress port: its packets sent (not PAUSE frames) and since when
    /// it has been paused with packets waiting without sending one.
    watch: Vec<(u64, Option<Time>)>,
}

#[derive(Clone, Copy, Debug, Default)]
struct Count {
    packets: u64,
    bytes: u64,
    /// Of `bytes`, those in headroom (dynamic threshold).
    headroom: u64,
    /// Whether the upstream neighbour is paused (XOFF sent, no XON since).
    paused: bool,
    /// Which pause this is: a refresh timer set for an earlier one is stale.
    epoch: u32,
}

impl Agent for Pause {
    type Spec = PauseSpec;

    fn check(spec: &PauseSpec, path: &str, sc: &ScenarioView) -> Result<(), ScenarioError> {
        spec::check(spec, path, sc)
    }

    fn new(spec: &PauseSpec, sw: &Switch) -> Pause {
        let ports = sw.ports();
        let classes = if spec.per_class { CLASSES } else { 1 };
        let counts = ports.len() * classes;
        let threshold = match (spec.xoff, spec.alpha) {
            (Some(xoff), _) => Threshold::Static {
                xoff,
                xon: spec.xon(xoff),
                headroom: spec.headroom.map(Capacity::amount),
            },
            // `check`: alpha and buffer are given without xoff.
            (None, alpha) => {
                let headroom = spec.headroom.map(Capacity::amount);
                let reserved = headroom.unwrap_or(0) * counts as u64;
                Threshold::Dynamic {
                    alpha: alpha.unwrap_or(1.0),
                    pool: spec
                        .buffer
                        .map_or(0, Capacity::amount)
                        .saturating_sub(reserved),
                    offset: spec.resume_offset.map_or(RESUME_OFFSET, Capacity::amount),
                    headroom,
                }
            }
        };
        Pause {
            threshold,
            quanta: spec.quanta,
            refresh: spec.refresh,
            per_class: spec.per_class,
            trace: spec.trace,
            deadlock_after: spec.deadlock_after,
            first_port: ports.start,
            counts: vec![Count::default(); counts],
            shared_used: 0,
            watch: vec![(0, None); ports.len()],
        }
    }
}

/// Keys of the traced events: per class for PFC, then the 802.3x one.
const XOFF: [&str; 9] = [
    "xoff c0", "xoff c1", "xoff c2", "xoff c3", "xoff c4", "xoff c5", "xoff c6", "xoff c7", "xoff",
];
const XON: [&str; 9] = [
    "xon c0", "xon c1", "xon c2", "xon c3", "xon c4", "xon c5", "xon c6", "xon c7", "xon",
];
const REFRESH: [&str; 9] = [
    "refresh c0",
    "refresh c1",
    "refresh c2",
    "refresh c3",
    "refresh c4",
    "refresh c5",
    "refresh c6",
    "refresh c7",
    "refresh",
];
const DROP: [&str; 9] = [
    "drop c0", "drop c1", "drop c2", "drop c3", "drop c4", "drop c5", "drop c6", "drop c7", "drop",
];

impl Pause {
    fn slot(&self, ingress: u32, class: u8) -> usize {
        let port = (ingress - self.first_port) as usize;
        if self.per_class {
            port * CLASSES + usize::from(class)
        } else {
            port
        }
    }

    /// The ingress port and class of count `i`.
    fn port_class(&self, i: usize) -> (u32, u8) {
        if self.per_class {
            (self.first_port + (i / CLASSES) as u32, (i % CLASSES) as u8)
        } else {
            (self.first_port + i as u32, 0)
        }
    }

    fn trace(&self, sw: &mut Switch, keys: &[&'static str; 9], port: u32, class: u8) {
        if self.trace {
            let key = keys[if self.per_class {
                usize::from(class)
            } else {
                8
            }];
            sw.row(key, f64::from(port));
        }
    }

    /// The dynamic threshold now (T = α · free shared buffer).
    fn dynamic_threshold(&self, alpha: f64, pool: u64) -> u64 {
        (alpha * pool.saturating_sub(self.shared_used) as f64) as u64
    }

    /// Whether count `i` should pause its neighbour, and whether an arrival
    /// it just took overflows its headroom.
    fn over(&self, i: usize) -> (bool, bool) {
        let c = &self.counts[i];
        match self.threshold {
            Threshold::Static { xoff, headroom, .. } => {
                let (held, limit) = match xoff {
                    Capacity::Packets(n) => (c.packets, n),
                    Capacity::Bytes(b) => (c.bytes, b),
                };
                (held > limit, headroom.is_some_and(|h| held > limit + h))
            }
            Threshold::Dynamic {
                alpha,
                pool,
                headroom,
                ..
            } => {
                let t = self.dynamic_threshold(alpha, pool);
                let pause = c.headroom > 0 || c.bytes - c.headroom >= t;
                (pause, headroom.is_some_and(|h| c.headroom > h))
            }
        }
    }

    /// Whether paused count `i` may resume its neighbour.
    fn may_resume(&self, i: usize) -> bool {
        let c = &self.counts[i];
        match self.threshold {
            Threshold::Static { xon, .. } => match xon {
                Capacity::Packets(n) => c.packets <= n,
                Capacity::Bytes(b) => c.bytes <= b,
            },
            Threshold::Dynamic {
                alpha,
                pool,
                offset,
                ..
            } => {
                let shared = c.bytes - c.headroom;
                c.headroom == 0
                    && (shared == 0 || shared + offset <= self.dynamic_threshold(alpha, pool))
            }
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

    /// Pause the neighbour of count `i` (XOFF).
    fn pause(&mut self, sw: &mut Switch, i: usize) {
        let c = &mut self.counts[i];
        c.paused = true;
        c.epoch = c.epoch.wrapping_add(1);
        let (port, class) = self.port_class(i);
        self.trace(sw, &XOFF, port, class);
        self.renew(sw, i);
    }

    /// Send count `i`'s neighbour a PAUSE of `quanta`, and come back to
    /// renew it after `refresh` (its token names the count and the pause).
    fn renew(&self, sw: &mut Switch, i: usize) {
        let (port, class) = self.port_class(i);
        self.frame(sw, port, class, self.quanta);
        let refresh = self.refresh.unwrap_or_else(|| {
            sw.port(port)
                .rate
                .serialization(u64::from(self.quanta) * QUANTUM_BITS / 8 / 2)
        });
        let token = (u64::from(self.counts[i].epoch) << 32) | i as u64;
        sw.set_timer(sw.now + refresh, token);
    }

    /// A packet left the switch (sent or dropped); those it originated (no
    /// ingress port) were never counted.
    fn leave(&mut self, sw: &mut Switch, pkt: &Packet) {
        if pkt.ingress == NONE {
            return;
        }
        let i = self.slot(pkt.ingress, pkt.class);
        let size = u64::from(pkt.size);
        let c = &mut self.counts[i];
        c.packets -= 1;
        c.bytes -= size;
        // Out of headroom first (switch-mmu.cc, RemoveFromIngressAdmission).
        let from_headroom = c.headroom.min(size);
        c.headroom -= from_headroom;
        if let Threshold::Dynamic { .. } = self.threshold {
            self.shared_used -= size - from_headroom;
        }
        if self.counts[i].paused && self.may_resume(i) {
            self.counts[i].paused = false;
            self.frame(sw, pkt.ingress, pkt.class, 0);
            self.trace(sw, &XON, pkt.ingress, pkt.class);
        }
    }

    /// An egress port of this switch with packets waiting, paused, that has
    /// sent nothing but PAUSE frames for `deadlock_after`: end the run.
    fn watch_deadlock(&mut self, sw: &mut Switch) {
        let now = sw.now;
        for port in sw.ports() {
            let pt = sw.port(port);
            let sent = pt.sent_packets - pt.pause.frames_sent;
            let paused = pt.paused(now);
            let stuck = paused != 0 && !pt.queue.is_empty();
            let w = &mut self.watch[(port - self.first_port) as usize];
            if !stuck || sent != w.0 {
                *w = (sent, stuck.then_some(now));
                continue;
            }
            let since = *w.1.get_or_insert(now);
            if now - since >= self.deadlock_after {
                let waiting = pt.queue.packets();
                sw.end_run(
                    port,
                    format!(
                        "no progress while paused (PFC deadlock?): {waiting} packets waiting, \
                         classes {paused:#04x} paused, nothing sent for {} (deadlock_after)",
                        now - since
                    ),
                );
                return;
            }
        }
    }
}

impl SwitchAgent for Pause {
    fn on_arrival(&mut self, sw: &mut Switch, pkt: &mut Packet, _egress: u32) {
        let i = self.slot(pkt.ingress, pkt.class);
        let size = u64::from(pkt.size);
        if let Threshold::Dynamic { alpha, pool, .. } = self.threshold {
            let c = &self.counts[i];
            if c.bytes - c.headroom + size > self.dynamic_threshold(alpha, pool) {
                self.counts[i].headroom += size;
            } else {
                self.shared_used += size;
            }
        }
        let c = &mut self.counts[i];
        c.packets += 1;
        c.bytes += size;
        let (pause, overflow) = self.over(i);
        if overflow {
            // Counted, so the drop hook's leave balances it.
            sw.discard();
            self.trace(sw, &DROP, pkt.ingress, pkt.class);
        }
        if pause && !self.counts[i].paused {
            self.pause(sw, i);
        }
    }

    fn on_departure(&mut self, sw: &mut Switch, pkt: &mut Packet, _port: u32) {
        self.leave(sw, pkt);
    }

    fn on_drop(&mut self, sw: &mut Switch, pkt: &Packet, _port: u32) {
        self.leave(sw, pkt);
    }

    /// Renew the pause of count `token` if it still holds, and watch for
    /// deadlock while pausing.
    fn on_timer(&mut self, sw: &mut Switch, token: u64) {
        let i = (token & u64::from(u32::MAX)) as usize;
        let c = &self.counts[i];
        if !c.paused || c.epoch != (token >> 32) as u32 {
            return;
        }
        let (port, class) = self.port_class(i);
        self.trace(sw, &REFRESH, port, class);
        self.renew(sw, i);
        self.watch_deadlock(sw);
    }
}
