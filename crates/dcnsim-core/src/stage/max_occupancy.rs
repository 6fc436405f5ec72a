//! BOTCP's buffer-occupancy stamp (seed `botcp.txt` §4.1, "Buffer Occupancy
//! Feedback", and its Figure 5).
//!
//! The seed reads a port's buffer occupancy "on the scale of packets" from
//! the higher-order bits of its queue length in bytes, dropping the low 10
//! bits (§3.1: "the lower-order 10 bits of queue length do not offer any
//! information about the number of packets"): BO = queue bytes >> 10, held in
//! one octet of the option, so it saturates at 255. A switch overwrites the
//! packet's BOF field with BO when BO is greater, so a packet arrives with the
//! largest occupancy along its path (its bottleneck's).
//!
//! Here: a packet that carries the in-band option ([`Hop::option`]) and
//! is offered to a port holding `bytes` bytes (as it finds the buffer: the
//! packet on the wire not counted, as tail drop and AQM see it) leaves with
//! option `max(option, min(bytes >> 10, 255))`. The option word is the BOF
//! field; a packet without the option is left alone (no bytes are added to
//! it: only a BOTCP sender adds the option). A scheduled FIFO port stays
//! scheduled: it knows its occupancy on arrival.

use super::{Found, PortContext, Stage};
use crate::packet::Hop;
use crate::units::Time;
use serde::Deserialize;

/// The largest value of the one-octet BOF field.
pub const BOF_MAX: u32 = 255;

/// No keys: the reading is the seed's.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct MaxOccupancySpec {}

#[derive(Clone, Debug)]
pub struct MaxOccupancy;

/// The BOF value of a buffer holding `bytes`: bytes >> 10, at most 255.
pub fn bof(bytes: u64) -> u32 {
    (bytes >> 10).min(u64::from(BOF_MAX)) as u32
}

impl Stage for MaxOccupancy {
    type Spec = MaxOccupancySpec;
    const ON_ENQUEUE: bool = true;

    fn new(_spec: &MaxOccupancySpec, _ctx: &PortContext) -> MaxOccupancy {
        MaxOccupancy
    }

    fn on_enqueue(&mut self, pkt: &mut Hop, found: Found, _now: Time) -> bool {
        stamp(pkt, found.bytes);
        true
    }
}

/// The stamp of a packet offered to a port holding `bytes`. A port whose
/// only guard this stage is calls it inline (`network::port::Stamps::Alone`);
/// beside other stages or outages it runs through [`Stage::on_enqueue`].
#[inline(always)]
pub fn stamp(pkt: &mut Hop, bytes: u64) {
    if let Some(v) = pkt.option {
        pkt.option = Some(v.max(bof(bytes)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{Kind, Packet};

    #[test]
    fn the_stamp_is_the_larger_of_the_field_and_the_kilobytes_queued() {
        assert_eq!(
            [bof(0), bof(1023), bof(1024), bof(30 * 1500)],
            [0, 0, 1, 43]
        );
        assert_eq!(bof(1 << 30), BOF_MAX);
        let mut stamp = MaxOccupancy;
        let found = |kb: u64| Found {
            packets: 0,
            bytes: kb << 10,
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
