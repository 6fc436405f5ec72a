//! A two-tier leaf-spine fabric: every leaf connects to every spine. The BOTCP
//! seed (§5) uses 6 leaves × 6 spines × 32 hosts per leaf, 10 Gbps host links
//! and 40 Gbps fabric links (3:2 over-subscription at the leaves).

use super::{base_link, check_count, check_hosts, Builder, LinkSpec, Topology};
use crate::error::ScenarioError;
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

impl Builder for LeafSpine {
    fn build(&self) -> Result<Topology, ScenarioError> {
        check_count("topology.leaves", self.leaves, 1)?;
        check_count("topology.spines", self.spines, 1)?;
        check_count("topology.hosts_per_leaf", self.hosts_per_leaf, 1)?;
        check_hosts("topology.hosts_per_leaf", self.leaves, self.hosts_per_leaf)?;
        let base = base_link(self.link);
        let mut t = Topology::default();
        let hosts = t.add_group("host", (self.leaves * self.hosts_per_leaf) as usize, 0);
        let leaves = t.add_group("leaf", self.leaves as usize, 1);
        let spines = t.add_group("spine", self.spines as usize, 2);
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
