//! Packets live in an arena and are referred to by index; freed slots are
//! reused, so the hot path allocates nothing once the arena has grown.

use crate::units::Time;

/// Marks "no flow" / "no record" in `u32` index fields.
pub const NONE: u32 = u32::MAX;

#[derive(Clone, Copy, Debug)]
pub struct Packet {
    /// Source and destination host indices.
    pub src: u32,
    pub dst: u32,
    /// Wire size in bytes (headers included).
    pub size: u32,
    /// The stream this packet belongs to, or [`NONE`].
    pub flow: u32,
    /// Its row in the probe table, or [`NONE`].
    pub record: u32,
    /// The node its current link leads to.
    pub next_node: u32,
    /// Links crossed so far.
    pub hops: u32,
    /// Equal-length routing: the packet has reached the top tier.
    pub climbed: bool,
    /// Five-tuple hash used by ECMP-style policies.
    pub hash: u64,
    /// When the application sent it.
    pub sent: Time,
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
