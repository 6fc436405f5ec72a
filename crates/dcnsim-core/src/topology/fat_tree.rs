//! The k-ary fat-tree (Al-Fares et al., SIGCOMM 2008), as used by the spraying
//! seed (§2, Fig. 1, k = 4): k pods of k/2 edge and k/2 aggregation switches,
//! (k/2)² core switches and k³/4 hosts, every link alike.

use super::{base_link, Builder, LinkSpec, Topology};
use crate::error::ScenarioError;
use serde::Deserialize;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FatTree {
    k: u32,
    link: Option<LinkSpec>,
}

impl Builder for FatTree {
    fn build(&self) -> Result<Topology, ScenarioError> {
        let k = self.k as usize;
        if !k.is_multiple_of(2) {
            return Err(ScenarioError::new(
                "topology.k",
                format!("fat-tree k must be even, got {k}"),
            ));
        }
        if !(2..=128).contains(&k) {
            return Err(ScenarioError::new(
                "topology.k",
                format!("must be between 2 and 128, got {k}"),
            ));
        }
        let link = base_link(self.link);
        let half = k / 2;
        let mut t = Topology::default();
        let hosts = t.add_group("host", k * half * half, 0);
        let edges = t.add_group("edge", k * half, 1);
        let aggs = t.add_group("agg", k * half, 2);
        let cores = t.add_group("core", half * half, 3);
        for (h, &host) in hosts.iter().enumerate() {
            t.connect(host, edges[h / half], link);
        }
        for pod in 0..k {
            for e in 0..half {
                for a in 0..half {
                    t.connect(edges[pod * half + e], aggs[pod * half + a], link);
                }
            }
            for a in 0..half {
                for c in 0..half {
                    t.connect(aggs[pod * half + a], cores[a * half + c], link);
                }
            }
        }
        Ok(t)
    }
}
