//! A custom topology listed node by node and link by link.

use super::{base_link, Builder, LinkSpec, NodeKind, Topology};
use crate::error::ScenarioError;
use crate::units::{Rate, Time};
use serde::Deserialize;
use std::collections::HashSet;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Edges {
    nodes: Vec<NodeEntry>,
    links: Vec<LinkEntry>,
    link: Option<LinkSpec>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct NodeEntry {
    name: String,
    kind: EntryKind,
    tier: Option<u32>,
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
enum EntryKind {
    Host,
    Switch,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct LinkEntry {
    a: String,
    b: String,
    rate: Option<Rate>,
    #[serde(default, deserialize_with = "crate::units::optional_delay")]
    delay: Option<Time>,
}

impl Builder for Edges {
    fn build(&self) -> Result<Topology, ScenarioError> {
        let base = base_link(self.link);
        let mut t = Topology::default();
        for (i, n) in self.nodes.iter().enumerate() {
            let at = |f: &str| format!("topology.nodes[{i}].{f}");
            if n.name.is_empty() || n.name.contains("->") {
                return Err(ScenarioError::new(
                    at("name"),
                    "must be non-empty and must not contain \"->\"",
                ));
            }
            let tier = match (n.kind, n.tier) {
                (EntryKind::Host, Some(_)) => {
                    return Err(ScenarioError::new(
                        at("tier"),
                        "hosts are tier 0; tier is for switches",
                    ))
                }
                (EntryKind::Host, None) => Some(0),
                (EntryKind::Switch, Some(0)) => {
                    return Err(ScenarioError::new(
                        at("tier"),
                        "switch tiers start at 1 (hosts are tier 0)",
                    ))
                }
                (EntryKind::Switch, tier) => tier,
            };
            let kind = match n.kind {
                EntryKind::Host => NodeKind::Host,
                EntryKind::Switch => NodeKind::Switch,
            };
            t.add_node(n.name.clone(), kind, tier)
                .map_err(|m| ScenarioError::new(at("name"), m))?;
        }
        let mut pairs = HashSet::new();
        for (i, l) in self.links.iter().enumerate() {
            let at = |f: &str| format!("topology.links[{i}].{f}");
            let find = |field: &str, name: &str| {
                t.node_id(name).ok_or_else(|| {
                    ScenarioError::new(
                        at(field),
                        format!("no node named \"{name}\" in topology.nodes"),
                    )
                })
            };
            let (a, b) = (find("a", &l.a)?, find("b", &l.b)?);
            if a == b {
                return Err(ScenarioError::new(
                    at("b"),
                    format!("a link must join two nodes, got \"{}\" twice", l.a),
                ));
            }
            if !pairs.insert((a.min(b), a.max(b))) {
                return Err(ScenarioError::new(
                    format!("topology.links[{i}]"),
                    format!("a second link between \"{}\" and \"{}\"", l.a, l.b),
                ));
            }
            let params = LinkSpec {
                rate: l.rate,
                delay: l.delay,
            };
            t.connect(a, b, params.over(base));
        }
        Ok(t)
    }
}
