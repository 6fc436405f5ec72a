//! N hosts on one switch `sw0`, optionally with per-host link rates so that one
//! port can be made a bottleneck.

use super::{base_link, check_count, Builder, LinkParams, LinkSpec, Topology};
use crate::error::ScenarioError;
use crate::units::Rate;
use serde::Deserialize;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Star {
    hosts: u32,
    link: Option<LinkSpec>,
    host_rates: Option<Vec<Rate>>,
}

impl Builder for Star {
    fn build(&self) -> Result<Topology, ScenarioError> {
        check_count("topology.hosts", self.hosts, 2)?;
        let link = base_link(self.link);
        if let Some(rates) = &self.host_rates {
            if rates.len() != self.hosts as usize {
                return Err(ScenarioError::new(
                    "topology.host_rates",
                    format!(
                        "needs one rate per host: {} hosts, {} rates",
                        self.hosts,
                        rates.len()
                    ),
                ));
            }
        }
        let mut t = Topology::default();
        let sw = t.add_group("sw", 1, 1)[0];
        for (h, host) in t
            .add_group("host", self.hosts as usize, 0)
            .into_iter()
            .enumerate()
        {
            let rate = self.host_rates.as_ref().map_or(link.rate, |r| r[h]);
            t.connect(host, sw, LinkParams { rate, ..link });
        }
        Ok(t)
    }
}
