//! `ecmp`: equal-cost multi-path by a per-flow hash of the five-tuple.

use super::{ForwardingPolicy, Pick};
use crate::network::Network;
use crate::packet::Hop;

/// Per-flow hashing (RFC 2992's hash-threshold idea, here a multiply-shift of
/// the mixed hash): the five-tuple hash, salted per switch and per seed, so
/// every packet of a flow takes one path.
pub struct Ecmp;

impl ForwardingPolicy for Ecmp {
    #[inline(always)]
    fn pick<'n>(net: &'n Network, node: u32, pkt: &mut Hop) -> Pick<'n> {
        Pick::Hash(net.next_hops(node, pkt.dst), pkt.hash)
    }
}
