//! Queue disciplines at egress ports (switch ports and host NICs).
//!
//! A port holds one [`Queue`]; the discipline decides whether an arriving packet
//! is admitted and which waiting packet is sent next. Disciplines are variants
//! of one closed enum, so the per-packet dispatch is a `match`, not a virtual
//! call. A new discipline is a module and a variant here.

mod aqm;
mod droptail;

pub use aqm::{idle_slots, Aqm, Occupancy, Verdict};
pub use droptail::DropTail;

use crate::scenario::{QueueKind, QueueSpec};

/// A waiting packet: its arena index and wire size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Queued {
    pub pkt: u32,
    pub size: u32,
}

#[derive(Clone, Debug)]
pub enum Queue {
    DropTail(DropTail),
}

impl Queue {
    pub fn new(spec: &QueueSpec) -> Queue {
        match spec.kind {
            QueueKind::Droptail => Queue::DropTail(DropTail::new(spec.capacity)),
        }
    }

    /// Offer a packet; `false` means it was dropped.
    #[inline]
    pub fn enqueue(&mut self, q: Queued) -> bool {
        match self {
            Queue::DropTail(d) => d.enqueue(q),
        }
    }

    #[inline]
    pub fn dequeue(&mut self) -> Option<Queued> {
        match self {
            Queue::DropTail(d) => d.dequeue(),
        }
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.packets() == 0
    }

    /// Packets waiting (the one being serialized is not counted).
    #[inline]
    pub fn packets(&self) -> u64 {
        match self {
            Queue::DropTail(d) => d.packets(),
        }
    }

    /// Bytes waiting.
    #[inline]
    pub fn bytes(&self) -> u64 {
        match self {
            Queue::DropTail(d) => d.bytes(),
        }
    }
}
