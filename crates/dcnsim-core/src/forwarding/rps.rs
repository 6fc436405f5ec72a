//! `rps`: random packet spraying, the spraying seed's scheme (§2).

use super::{At, ForwardingPolicy, NoKeys, Pick};
use crate::network::Network;
use crate::packet::Hop;

/// Every switch draws a uniformly random equal-cost next hop for every
/// packet, from its own random stream, when the packet arrives.
pub struct Rps;

impl ForwardingPolicy for Rps {
    type Spec = NoKeys;
    const PLANNED: bool = false;

    fn new(_spec: &NoKeys, _net: &Network, _node: u32) -> Rps {
        Rps
    }

    #[inline(always)]
    fn pick<'a>(&'a mut self, _net: &'a Network, _pkt: &mut Hop, _at: &mut At<'_>) -> Pick<'a> {
        Pick::Random
    }
}
