//! `rps`: random packet spraying, the spraying seed's scheme (§2).

use super::{ForwardingPolicy, Pick};
use crate::network::Network;
use crate::packet::Hop;

/// Every switch draws a uniformly random equal-cost next hop for every
/// packet, from its own random stream, when the packet arrives.
pub struct Rps;

impl ForwardingPolicy for Rps {
    #[inline(always)]
    fn pick<'n>(_net: &'n Network, _node: u32, _pkt: &mut Hop) -> Pick<'n> {
        Pick::Random
    }
}
