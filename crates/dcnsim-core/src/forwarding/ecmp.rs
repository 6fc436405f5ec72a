//! `ecmp`: equal-cost multi-path by a per-flow hash of the five-tuple.

use super::{At, ForwardingPolicy, NoKeys, Pick};
use crate::network::Network;
use crate::packet::Hop;

/// Per-flow hashing (RFC 2992's hash-threshold idea, here a multiply-shift of
/// the mixed hash): the five-tuple hash, salted per switch and per seed, so
/// every packet of a flow takes one path.
pub struct Ecmp;

impl ForwardingPolicy for Ecmp {
    type Spec = NoKeys;

    fn new(_spec: &NoKeys, _net: &Network, _node: u32) -> Ecmp {
        Ecmp
    }

    #[inline(always)]
    fn pick<'a>(&'a mut self, net: &'a Network, pkt: &mut Hop, at: &mut At<'_>) -> Pick<'a> {
        Pick::Hash(net.next_hops(at.node, pkt.dst), pkt.hash)
    }
}
