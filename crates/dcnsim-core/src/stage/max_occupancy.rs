//! BOTCP's buffer-occupancy stamp (seed `botcp.txt` §4.1, "Buffer Occupancy
//! Feedback", and its Figure 5).
//!
//! The seed reads a port's buffer occupancy "on the scale of packets" from
//! its queue length (§3.1) and stamps it into one octet of the option. Its
//! unit is fixed by the seed's own arithmetic, not by the bit shift its prose
//! sketches (§3.1: "the lower-order 10 bits of queue length do not offer any
//! information about the number of packets"): §5.3 converts Bm = 60 to
//! "60 × 1500/1024 ≅ 89 Kb" and the 87-packet buffer to "127 Kb", and calls
//! 87 − 60 = 27 packets the burst tolerance, so one unit is one packet of
//! the seed's 1500 bytes (§5: "a typical packet size of 1500 bytes ... a
//! maximum queue limit of ~87 packets", 128 KiB / 1500 B). A shift by 10
//! bits would count KiB, 1.46 units per packet, and hold Bm = 60 at 41
//! packets; the seed's Fig. 9 holds the queue at 60 packets.
//!
//! Here: BO = ⌊queue bytes / 1500⌋, at most 255. A switch overwrites the
//! packet's BOF field with BO when BO is greater, so a packet arrives with the
//! largest occupancy along its path (its bottleneck's). A packet that carries
//! the in-band option ([`Hop::option`]) and is offered to a port holding
//! `bytes` bytes (as it finds the buffer: the packet on the wire not counted,
//! as tail drop and AQM see it) leaves with option `max(option, BO)`. The
//! option word is the BOF field; a packet without the option is left alone
//! (no bytes are added to it: only a BOTCP sender adds the option). A
//! scheduled FIFO port stays scheduled: it knows its occupancy on arrival.

use super::{Found, PortContext, Stage};
use crate::packet::Hop;
pub use crate::packet::{bof, BOF_MAX, BOF_UNIT};
use serde::Deserialize;

/// No keys: the reading is the seed's.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct MaxOccupancySpec {}

#[derive(Clone, Debug)]
pub struct MaxOccupancy;

impl Stage for MaxOccupancy {
    type Spec = MaxOccupancySpec;
    const ON_ENQUEUE: bool = true;
    /// The stamp reads only the packet and the buffer: a port whose only
    /// guard it is runs it inline. Through the out-of-line check and the
    /// port's stage list it cost some 60 instructions per stamped hop
    /// (docs/performance.md, "BOTCP's cost").
    const STATELESS: bool = true;

    fn new(_spec: &MaxOccupancySpec, _ctx: &PortContext) -> MaxOccupancy {
        MaxOccupancy
    }

    /// The stamp of a packet offered to a port holding `found`.
    #[inline(always)]
    fn stamp(pkt: &mut Hop, found: Found) {
        if let Some(v) = pkt.option {
            pkt.option = Some(v.max(bof(found.bytes)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{Kind, Packet};
    use crate::units::Time;

    #[test]
    fn the_stamp_is_the_larger_of_the_field_and_the_packets_queued() {
        assert_eq!(
            [
                bof(0),
                bof(1499),
                bof(1500),
                bof(30 * 1500),
                bof(30 * 1500 - 1)
            ],
            [0, 0, 1, 30, 29]
        );
        // §5.3's arithmetic: Bm = 60 is 60 × 1500/1024 ≅ 89 KiB of queue, and
        // the 128 KiB buffer holds 87 units, 27 above Bm.
        assert_eq!(bof(89 * 1024), 60);
        assert_eq!((bof(128 << 10), bof(128 << 10) - 60), (87, 27));
        assert_eq!(bof(1 << 30), BOF_MAX);
        let mut stamp = MaxOccupancy;
        let found = |units: u64| Found {
            packets: 0,
            bytes: units * BOF_UNIT,
        };
        let mut pkt = Packet::new(Kind::Tcp, 0, 1, 1000, 0, Time::ZERO);
        assert!(stamp.on_enqueue(&mut pkt, found(9), Time::ZERO));
        assert_eq!((pkt.option, pkt.size), (None, 1000), "no option, no stamp");
        pkt.set_option(0);
        let size = pkt.size;
        for (kb, after) in [(5, 5), (30, 30), (12, 30)] {
            assert!(stamp.on_enqueue(&mut pkt, found(kb), Time::ZERO));
            assert_eq!(pkt.option, Some(after));
        }
        assert_eq!(pkt.size, size, "stamping does not change the wire size");
    }
}
