//! Packet Slicing at a switch (the Packet Slicing seed, §III): under highly
//! concurrent TCP, the switch tells every sender, by a standard ICMP
//! "fragmentation needed" message (RFC 1191), to send smaller packets, so a
//! shallow buffer holds a packet of every flow and full-window losses (and the
//! timeouts they cause) stop. Hosts are unmodified: they shrink their MSS as
//! any RFC 1191 host does (`sim/hosts.rs`, `transport.min_pmtu`).
//!
//! Each egress port of the switch keeps its own state (§III.D):
//! - **n**, the flows it carries: +1 on each SYN (without ACK: a flow's
//!   first segment) that leaves by the port, −1 on the FIN of a flow it
//!   counted, from that flow's sender. A flow that ends without a FIN (or
//!   whose FIN takes another port) stays counted: n over-counts, as the seed
//!   says, and packets are then cut "in a gentler manner" than needed;
//! - **ŵ**, the mean window in packets: `window` when configured; else the
//!   minimum window 2 when n > Y/(2s) (the seed's shortcut for high
//!   concurrency); else estimated passively. The estimator (in the spirit of
//!   the seed's [15], Jaiswal et al.: a window is what a flow sends in one
//!   round trip) counts the TCP packets that arrive for the port, SYN and FIN
//!   aside (dropped ones included), over consecutive intervals of `rtt_min`,
//!   and scales the count to one round trip as the port sees it then,
//!   RTT_min + Q/C with Q the bytes queued as the interval's first later
//!   arrival finds them (`Port::queued_at`): ŵ = count · (C·RTT_min + Q) /
//!   (C·RTT_min) / n (2 before the first interval ends). Windows in packets
//!   are what TCP keeps when its segments shrink, so ŵ does not grow with the
//!   slicing itself (a count per RTT_min alone would: smaller packets drain
//!   faster);
//! - **k̂** = n·s·ŵ / Y (eq. 11), with Y = B + C·RTT_min (eq. 5) of the
//!   port's buffer B (a buffer in packets counts packets of `packet` bytes)
//!   and rate C, limited to [1, s / `floor`] so packets stay at least `floor`
//!   bytes (§III.C: k from 1 to 23 for 1500 B and 64 B);
//! - the **next-hop MTU** = ⌊s / k̂⌋ bytes. Whenever it changes, the switch
//!   sends a 56-byte ICMP message (IPv4 header, ICMP header, the quoted IPv4
//!   header and 8 bytes) carrying it to the sender of every flow it counts, a
//!   real packet routed from the switch. A flow counted while the MTU is
//!   below s gets the current one at once.
//!
//! When n falls (FINs), k̂ falls and the MTU rises again: the switch
//! announces the larger MTU the same way. Whether packets grow back is the
//! senders' choice: RFC 1191 §3 hosts (and Linux) never raise their path MTU
//! on an ICMP message (`transport.pmtu_raise` follows the seed's switch
//! instead). By default every change is announced at once, as the seed's
//! switch does: with each SYN of a burst changing k̂ that is n(n+1)/2
//! messages, and the first ones reach the senders before their first data
//! (their handshake takes a round trip). With `interval` the announcements
//! of one port are at least `interval` apart (`rtt_min`: about one per round
//! trip, n per burst); a change within it is announced by a timer at its
//! end, with the MTU as it is then.
//!
//! Rows (`agent_rows`): `flows` (n, on each change) and `mtu` (on each
//! announcement); the port is not named, so one port per switch should carry
//! the incast when rows are read.

use super::{Agent, FlowHandle, ScenarioView, Switch, SwitchAgent, ON_ARRIVAL};
use crate::error::{join_path, ScenarioError};
use crate::packet::{Kind, Packet};
use crate::tcp::{ACK, FIN, SYN};
use crate::units::{Bytes, Capacity, Time};
use serde::Deserialize;
use std::collections::BTreeMap;

/// Bytes of the ICMP message on the wire: IPv4 header (20), ICMP header with
/// the next-hop MTU (8), the quoted IPv4 header (20) and 8 bytes of the
/// datagram (RFC 792, RFC 1191 §4).
pub const ICMP_BYTES: u32 = 56;

/// The smallest packet the seed slices to (§III.C: the Ethernet minimum).
pub const MIN_PACKET: u64 = 64;

/// The minimum window of the seed's TCPs, in packets (§II.B, §III.D).
const MIN_WINDOW: f64 = 2.0;

#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PacketSlicingSpec {
    /// RTT_min of eq. (5): the round-trip propagation delay through the
    /// port (the seed: 100 µs); at most [`crate::units::MAX_DELAY`].
    #[serde(deserialize_with = "crate::units::delay")]
    pub rtt_min: Time,
    /// s: the senders' default packet size on the wire (default 1500 B, the
    /// seed's).
    #[serde(default = "default_packet")]
    pub packet: Bytes,
    /// The smallest packet it asks for (default 64 B), from 64 B to `packet`.
    #[serde(default = "default_floor")]
    pub floor: Bytes,
    /// ŵ in packets, instead of the seed's rule and the estimator.
    pub window: Option<f64>,
    /// The least time between two announcements of one port (default 0:
    /// each change at once); at most [`crate::units::MAX_DELAY`].
    #[serde(default, deserialize_with = "crate::units::delay")]
    pub interval: Time,
}

fn default_packet() -> Bytes {
    Bytes(1500)
}

fn default_floor() -> Bytes {
    Bytes(MIN_PACKET)
}

/// One egress port's state.
#[derive(Debug)]
struct PortState {
    /// Y of eq. (5), bytes, and its pipe C·RTT_min.
    y: f64,
    pipe: f64,
    /// The flows counted (by `flow_id`, for a fixed order): handle and sender.
    flows: BTreeMap<u32, (FlowHandle, u32)>,
    /// TCP packets seen in the current estimation interval, which ends at
    /// `interval_end`, and the estimate from the last one.
    seen: u64,
    interval_end: Time,
    estimate: f64,
    /// The MTU last announced, and when; a timer is pending.
    mtu: u32,
    announced: Option<Time>,
    pending: bool,
}

/// Packet Slicing at one switch.
#[derive(Debug)]
pub struct PacketSlicing {
    spec: PacketSlicingSpec,
    first_port: u32,
    ports: Vec<PortState>,
}

/// k̂ of eq. (11) for `n` flows of mean window `w` packets of `s` bytes and
/// `y` bytes of buffer and pipe, within [1, s / `floor`].
pub fn k_hat(n: usize, s: f64, w: f64, y: f64, floor: f64) -> f64 {
    (n as f64 * s * w / y).clamp(1.0, s / floor)
}

/// The next-hop MTU of slicing ratio `k`: ⌊s / k⌋, at least `floor`.
pub fn mtu_of(k: f64, s: u32, floor: u32) -> u32 {
    ((f64::from(s) / k).floor() as u32).max(floor)
}

impl Agent for PacketSlicing {
    type Spec = PacketSlicingSpec;

    fn check(spec: &PacketSlicingSpec, path: &str, sc: &ScenarioView) -> Result<(), ScenarioError> {
        let (floor, packet) = (spec.floor.0, spec.packet.0);
        if packet < MIN_PACKET || packet > u64::from(u16::MAX) {
            return Err(ScenarioError::new(
                join_path(path, "packet"),
                format!("must be from {MIN_PACKET} B to 65535 B, got {packet} B"),
            ));
        }
        if !(MIN_PACKET..=packet).contains(&floor) {
            return Err(ScenarioError::new(
                join_path(path, "floor"),
                format!(
                    "must be from {MIN_PACKET} B (the Ethernet minimum) to packet ({packet} B), got {floor} B"
                ),
            ));
        }
        if spec.rtt_min == Time::ZERO {
            return Err(ScenarioError::new(
                join_path(path, "rtt_min"),
                "must be above 0 (the round-trip propagation delay)",
            ));
        }
        if let Some(w) = spec.window {
            if !(w.is_finite() && w > 0.0) {
                return Err(ScenarioError::new(
                    join_path(path, "window"),
                    format!("must be a positive number of packets, got {w}"),
                ));
            }
        }
        if !sc.transport.handshake {
            return Err(ScenarioError::new(
                join_path(path, "kind"),
                "packet_slicing counts flows by their SYN and FIN: needs transport.handshake = true",
            ));
        }
        Ok(())
    }

    fn new(spec: &PacketSlicingSpec, sw: &Switch) -> PacketSlicing {
        let s = spec.packet.0 as f64;
        let ports = sw
            .ports()
            .map(|p| {
                let port = sw.port(p);
                let buffer = match port.buffer {
                    Capacity::Bytes(b) => b as f64,
                    Capacity::Packets(n) => n as f64 * s,
                };
                let pipe = port.rate.bps() / 8.0 * spec.rtt_min.as_secs_f64();
                PortState {
                    y: buffer + pipe,
                    pipe,
                    flows: BTreeMap::new(),
                    seen: 0,
                    interval_end: spec.rtt_min,
                    estimate: MIN_WINDOW,
                    mtu: spec.packet.0 as u32,
                    announced: None,
                    pending: false,
                }
            })
            .collect();
        PacketSlicing {
            spec: spec.clone(),
            first_port: sw.ports().start,
            ports,
        }
    }
}

impl PacketSlicing {
    /// ŵ of port state `st` (see the module's doc).
    fn window(&self, st: &PortState) -> f64 {
        let s = self.spec.packet.0 as f64;
        match self.spec.window {
            Some(w) => w,
            None if st.flows.len() as f64 > st.y / (2.0 * s) => MIN_WINDOW,
            None => st.estimate,
        }
    }

    /// The MTU port `i` should announce now.
    fn target(&self, i: usize) -> u32 {
        let st = &self.ports[i];
        let s = self.spec.packet.0 as u32;
        let floor = self.spec.floor.0 as u32;
        let k = k_hat(
            st.flows.len(),
            f64::from(s),
            self.window(st),
            st.y,
            f64::from(floor),
        );
        mtu_of(k, s, floor)
    }

    /// Announce port `i`'s MTU if it changed, now or when `interval` allows.
    fn update(&mut self, sw: &mut Switch, i: usize) {
        let mtu = self.target(i);
        let interval = self.spec.interval;
        let st = &mut self.ports[i];
        if mtu == st.mtu || st.pending {
            return;
        }
        if let Some(at) = st.announced.map(|t| t + interval) {
            if sw.now < at {
                st.pending = true;
                sw.set_timer(at, i as u64);
                return;
            }
        }
        st.mtu = mtu;
        st.announced = Some(sw.now);
        sw.row("mtu", f64::from(mtu));
        for &(flow, sender) in st.flows.values() {
            tell(sw, flow, sender, mtu);
        }
    }

    /// A SYN or FIN of `pkt` leaving by port `i`: count the flow in or out.
    fn count(&mut self, sw: &mut Switch, pkt: &Packet, i: usize) {
        let Some(flow) = sw.flow(pkt) else {
            return;
        };
        let st = &mut self.ports[i];
        let changed = if pkt.tcp.flags & SYN != 0 {
            st.flows.insert(flow.id(), (flow, pkt.src)).is_none()
        } else {
            st.flows
                .get(&flow.id())
                .is_some_and(|&(_, sender)| sender == pkt.src)
                && st.flows.remove(&flow.id()).is_some()
        };
        if !changed {
            return;
        }
        sw.row("flows", st.flows.len() as f64);
        let before = st.mtu;
        self.update(sw, i);
        let st = &self.ports[i];
        let told_all = st.mtu != before;
        if pkt.tcp.flags & SYN != 0 && !told_all && st.mtu < self.spec.packet.0 as u32 {
            tell(sw, flow, pkt.src, st.mtu);
        }
    }
}

/// Send `sender` an ICMP next-hop MTU message about `flow`.
fn tell(sw: &mut Switch, flow: FlowHandle, sender: u32, mtu: u32) {
    let icmp = Packet::new(
        Kind::IcmpMtu { mtu: mtu as u16 },
        sw.node,
        sender,
        ICMP_BYTES,
        0,
        sw.now,
    );
    // A flow let go since it was counted is refused: it needs no message.
    sw.send_about(flow, icmp);
}

impl SwitchAgent for PacketSlicing {
    fn on_arrival(&mut self, sw: &mut Switch, pkt: &mut Packet, egress: u32) {
        if pkt.kind != Kind::Tcp {
            return;
        }
        let i = (egress - self.first_port) as usize;
        let flags = pkt.tcp.flags;
        if flags & (SYN | FIN) != 0 {
            if flags & (SYN | ACK) != (SYN | ACK) {
                self.count(sw, pkt, i);
            }
            return;
        }
        let st = &mut self.ports[i];
        // The estimator serves ports that carry counted flows (not those of
        // ACKs only), and only when no window is configured.
        if self.spec.window.is_some() || st.flows.is_empty() {
            return;
        }
        if sw.now >= st.interval_end {
            // The interval(s) ended before this packet: the last one's count
            // (0 for any later one that saw nothing).
            let rtt = self.spec.rtt_min;
            let n = st.flows.len() as f64;
            let queued = sw.port(egress).queued_at(sw.now).bytes as f64;
            let ended = (sw.now - st.interval_end).0 / rtt.0;
            st.estimate = if ended == 0 {
                st.seen as f64 / n * (st.pipe + queued) / st.pipe
            } else {
                0.0
            };
            st.seen = 0;
            st.interval_end = st.interval_end + Time(rtt.0 * (ended + 1));
            st.seen += 1;
            self.update(sw, i);
            return;
        }
        st.seen += 1;
    }

    fn on_timer(&mut self, sw: &mut Switch, token: u64) {
        let i = token as usize;
        self.ports[i].pending = false;
        self.update(sw, i);
    }

    fn event_driven_ports(&self) -> bool {
        false
    }

    fn hooks(&self) -> u8 {
        ON_ARRIVAL
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Eq. (11) for the seed's settings: 64 KB buffer, 1 Gbps, 100 µs,
    /// 1500 B packets, ŵ = 2: Y = 76 500 B.
    #[test]
    fn k_hat_and_the_mtu_follow_eq_11_within_the_floor() {
        let y = 64_000.0 + 1e9 / 8.0 * 100e-6;
        assert_eq!(y, 76_500.0);
        // 30 flows: 30·1500·2 / 76 500 = 1.176 -> MTU ⌊1500/1.176⌋ = 1275.
        let k = k_hat(30, 1500.0, 2.0, y, 64.0);
        assert!((k - 90_000.0 / 76_500.0).abs() < 1e-12);
        assert_eq!(mtu_of(k, 1500, 64), 1275);
        // 300 flows: k = 11.76 -> 127 B.
        assert_eq!(mtu_of(k_hat(300, 1500.0, 2.0, y, 64.0), 1500, 64), 127);
        // Few flows: k = 1, the default size; many: the 64 B floor.
        assert_eq!(k_hat(10, 1500.0, 2.0, y, 64.0), 1.0);
        assert_eq!(mtu_of(k_hat(10, 1500.0, 2.0, y, 64.0), 1500, 64), 1500);
        assert_eq!(k_hat(10_000, 1500.0, 2.0, y, 64.0), 1500.0 / 64.0);
        assert_eq!(mtu_of(k_hat(10_000, 1500.0, 2.0, y, 64.0), 1500, 64), 64);
        assert_eq!(
            mtu_of(1500.0 / 64.0, 1500, 552),
            552,
            "never below the floor"
        );
    }
}
