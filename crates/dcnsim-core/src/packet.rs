//! Packets live in an arena and are referred to by index; freed slots are
//! reused, so the hot path allocates nothing once the arena has grown.

use crate::units::Time;

/// Marks "no flow" / "no record" in `u32` index fields.
pub const NONE: u32 = u32::MAX;

/// IP ECN codepoints (RFC 3168).
pub const NOT_ECT: u8 = 0;
pub const ECT0: u8 = 2;
pub const CE: u8 = 3;

/// What carries the packet: a datagram of a stream or probe, or a TCP segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Proto {
    Udp,
    Tcp,
}

#[derive(Clone, Copy, Debug)]
pub struct Packet {
    /// Source and destination host indices.
    pub src: u32,
    pub dst: u32,
    /// Wire size in bytes (IP packet: headers included).
    pub size: u32,
    /// Its stream (UDP) or connection (TCP), or [`NONE`] for probes.
    pub flow: u32,
    /// Its row in the probe table, or [`NONE`].
    pub record: u32,
    /// The node its current link leads to.
    pub next_node: u32,
    /// Links crossed so far.
    pub hops: u32,
    /// Equal-length routing: the packet has reached the top tier.
    pub climbed: bool,
    pub proto: Proto,
    /// IP ECN field: [`NOT_ECT`], [`ECT0`] or [`CE`].
    pub ecn: u8,
    /// Traffic class (WRED profile).
    pub class: u8,
    /// TCP flags ([`crate::tcp::SYN`] …); 0 for datagrams.
    pub flags: u8,
    /// Five-tuple hash used by ECMP-style policies.
    pub hash: u64,
    /// When the application sent it (a TCP segment's timestamp value).
    pub sent: Time,
    /// TCP: sequence and acknowledgment numbers, echoed timestamp.
    pub seq: u64,
    pub ack: u64,
    pub ts_echo: Time,
}

impl Packet {
    /// A datagram (probe or stream packet) with no TCP fields.
    pub fn datagram(
        src: u32,
        dst: u32,
        size: u32,
        flow: u32,
        record: u32,
        hash: u64,
        sent: Time,
    ) -> Packet {
        Packet {
            src,
            dst,
            size,
            flow,
            record,
            next_node: 0,
            hops: 0,
            climbed: false,
            proto: Proto::Udp,
            ecn: NOT_ECT,
            class: 0,
            flags: 0,
            hash,
            sent,
            seq: 0,
            ack: 0,
            ts_echo: Time::ZERO,
        }
    }
}

#[derive(Default)]
pub struct Arena {
    slots: Vec<Packet>,
    free: Vec<u32>,
}

impl Arena {
    #[inline]
    pub fn alloc(&mut self, p: Packet) -> u32 {
        match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = p;
                i
            }
            None => {
                self.slots.push(p);
                (self.slots.len() - 1) as u32
            }
        }
    }

    #[inline]
    pub fn release(&mut self, i: u32) {
        self.free.push(i);
    }

    #[inline]
    pub fn get(&self, i: u32) -> &Packet {
        &self.slots[i as usize]
    }

    #[inline]
    pub fn get_mut(&mut self, i: u32) -> &mut Packet {
        &mut self.slots[i as usize]
    }

    /// Packets allocated and not yet released.
    pub fn live(&self) -> u64 {
        (self.slots.len() - self.free.len()) as u64
    }
}
