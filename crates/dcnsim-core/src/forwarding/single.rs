//! `single`: one fixed path per source–destination pair, the same for every
//! seed.

use super::{pair_hash, At, ForwardingPolicy, NoKeys, Pick};
use crate::network::Network;
use crate::packet::Hop;

/// One path per host pair: a hash of the pair only, salted per switch by the
/// switch's index alone, so the path does not change with the seed.
pub struct Single;

impl ForwardingPolicy for Single {
    type Spec = NoKeys;

    fn new(_spec: &NoKeys, _net: &Network, _node: u32) -> Single {
        Single
    }

    #[inline(always)]
    fn pick<'a>(&'a mut self, net: &'a Network, pkt: &mut Hop, at: &mut At<'_>) -> Pick<'a> {
        Pick::Hash(net.next_hops(at.node, pkt.dst), pair_hash(pkt.src, pkt.dst))
    }

    fn salt(node: u64, _per_seed: u64) -> u64 {
        super::mix(node)
    }
}
