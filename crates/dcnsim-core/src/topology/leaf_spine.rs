//! A two-tier leaf-spine fabric: every leaf connects to every spine. The BOTCP
//! seed (§5) uses 6 leaves × 6 spines × 32 hosts per leaf, 10 Gbps host links
//! and 40 Gbps fabric links (3:2 over-subscription at the leaves).

use super::{base_link, check_count, LinkSpec, NodeKind, Topology};
use crate::scenario::ScenarioError;
use serde::Deserialize;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LeafSpine {
    #[serde(default = "six")]
    leaves: u32,
    #[serde(default = "six")]
    spines: u32,
    #[serde(default = "thirty_two")]
    hosts_per_leaf: u32,
    link: Option<LinkSpec>,
    #[serde(default)]
    host_link: LinkSpec,
    #[serde(default)]
    fabric_link: LinkSpec,
}

fn six() -> u32 {
    6
}
fn thirty_two() -> u32 {
    32
}

impl LeafSpine {
    pub fn build(&self) -> Result<Topology, ScenarioError> {
        check_count("topology.leaves", self.leaves, 1)?;
        check_count("topology.spines", self.spines, 1)?;
        check_count("topology.hosts_per_leaf", self.hosts_per_leaf, 1)?;
        let base = base_link(self.link);
        let mut t = Topology::default();
        let hosts: Vec<usize> = (0..self.leaves * self.hosts_per_leaf)
            .map(|h| t.add(format!("host{h}"), NodeKind::Host, 0))
            .collect();
        let leaves: Vec<usize> = (0..self.leaves)
            .map(|i| t.add(format!("leaf{i}"), NodeKind::Switch, 1))
            .collect();
        let spines: Vec<usize> = (0..self.spines)
            .map(|i| t.add(format!("spine{i}"), NodeKind::Switch, 2))
            .collect();
        for (h, &host) in hosts.iter().enumerate() {
            t.connect(
                host,
                leaves[h / self.hosts_per_leaf as usize],
                self.host_link.over(base),
            );
        }
        for &leaf in &leaves {
            for &spine in &spines {
                t.connect(leaf, spine, self.fabric_link.over(base));
            }
        }
        Ok(t)
    }
}
