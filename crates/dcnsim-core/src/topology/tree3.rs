//! The three-tier tree of the first seed (§2, Fig. 1): hosts on ToRs, each ToR
//! on one aggregation switch, every aggregation switch on every core switch.
//! The seed's instance is 1 core, 2 aggregation, 8 ToR switches and 128 hosts;
//! its over-subscription is set by the upper tiers' rates (1, 2 or 4 Gbps).

use super::{base_link, check_count, check_hosts, Builder, LinkSpec, Topology};
use crate::error::ScenarioError;
use serde::Deserialize;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tree3 {
    #[serde(default = "one")]
    cores: u32,
    #[serde(default = "two")]
    aggs: u32,
    #[serde(default = "eight")]
    tors: u32,
    #[serde(default = "sixteen")]
    hosts_per_tor: u32,
    link: Option<LinkSpec>,
    #[serde(default)]
    host_link: LinkSpec,
    #[serde(default)]
    tor_agg_link: LinkSpec,
    #[serde(default)]
    agg_core_link: LinkSpec,
}

fn one() -> u32 {
    1
}
fn two() -> u32 {
    2
}
fn eight() -> u32 {
    8
}
fn sixteen() -> u32 {
    16
}

impl Builder for Tree3 {
    fn build(&self) -> Result<Topology, ScenarioError> {
        check_count("topology.cores", self.cores, 1)?;
        check_count("topology.aggs", self.aggs, 1)?;
        check_count("topology.tors", self.tors, 1)?;
        check_count("topology.hosts_per_tor", self.hosts_per_tor, 1)?;
        check_hosts("topology.hosts_per_tor", self.tors, self.hosts_per_tor)?;
        if !self.tors.is_multiple_of(self.aggs) {
            return Err(ScenarioError::new(
                "topology.tors",
                format!("must be a multiple of aggs ({}) so every aggregation switch has as many ToRs, got {}", self.aggs, self.tors),
            ));
        }
        let base = base_link(self.link);
        let mut t = Topology::default();
        let hosts = t.add_group("host", (self.tors * self.hosts_per_tor) as usize, 0);
        let tors = t.add_group("tor", self.tors as usize, 1);
        let aggs = t.add_group("agg", self.aggs as usize, 2);
        let cores = t.add_group("core", self.cores as usize, 3);
        for (h, &host) in hosts.iter().enumerate() {
            t.connect(
                host,
                tors[h / self.hosts_per_tor as usize],
                self.host_link.over(base),
            );
        }
        let tors_per_agg = (self.tors / self.aggs) as usize;
        for (i, &tor) in tors.iter().enumerate() {
            t.connect(tor, aggs[i / tors_per_agg], self.tor_agg_link.over(base));
        }
        for &agg in &aggs {
            for &core in &cores {
                t.connect(agg, core, self.agg_core_link.over(base));
            }
        }
        Ok(t)
    }
}
