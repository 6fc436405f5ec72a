//! Topologies: nodes (hosts and switches) joined by full-duplex links.
//!
//! Each builder turns its scenario table into a [`Topology`]: a list of named
//! nodes and links with rate and propagation delay. Hosts are numbered `0..N-1`
//! in a documented order per builder; switches carry a tier (1 = the tier hosts
//! attach to) used by equal-length routing.
//!
//! Add a topology by writing one file here whose type holds the kind's keys
//! (`Deserialize`, `deny_unknown_fields`) and implements [`Builder`], and
//! adding one line to the `topologies!` registry below; its snake-case name
//! is the `kind` users write. A Rust program can also validate a scenario
//! whose `[topology]` table is read by a builder of its own, unregistered
//! (`Scenario::with_topology`; see `tests/plugged.rs`).

mod edges;
mod fat_tree;
mod leaf_spine;
mod star;
mod tree3;

use crate::error::{parse_at, ScenarioError};
use crate::units::{Rate, Time};
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::Value;
use std::collections::HashMap;
use strum::VariantNames;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeKind {
    Host,
    Switch,
}

#[derive(Clone, Debug)]
pub struct Node {
    pub name: String,
    pub kind: NodeKind,
    /// 0 for hosts; 1.. for switches (ToR/edge/leaf = 1). `None` if unknown.
    pub tier: Option<u32>,
}

/// A full-duplex link: one egress port at each end with this rate and delay.
#[derive(Clone, Debug)]
pub struct Link {
    pub a: usize,
    pub b: usize,
    pub rate: Rate,
    pub delay: Time,
}

#[derive(Clone, Debug, Default)]
pub struct Topology {
    pub nodes: Vec<Node>,
    /// Node id of host `i`.
    pub hosts: Vec<usize>,
    pub links: Vec<Link>,
    names: HashMap<String, usize>,
}

/// `{ rate = RATE, delay = TIME }`, each falling back to a base link.
#[derive(Clone, Copy, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    pub rate: Option<Rate>,
    #[serde(default, deserialize_with = "crate::units::optional_delay")]
    pub delay: Option<Time>,
}

/// The resolved rate and delay of a link.
#[derive(Clone, Copy, Debug)]
pub struct LinkParams {
    pub rate: Rate,
    pub delay: Time,
}

impl LinkSpec {
    pub fn over(self, base: LinkParams) -> LinkParams {
        LinkParams {
            rate: self.rate.unwrap_or(base.rate),
            delay: self.delay.unwrap_or(base.delay),
        }
    }
}

/// `topology.link`: the defaults every builder's links fall back to.
pub(crate) fn base_link(spec: Option<LinkSpec>) -> LinkParams {
    spec.unwrap_or_default().over(LinkParams {
        rate: Rate(10_000_000_000),
        delay: Time::from_us(1),
    })
}

/// What every topology kind provides: its keys are the type's fields (the
/// `[topology]` table without `kind`), and it builds the nodes and links.
pub trait Builder: DeserializeOwned {
    /// The nodes and links; errors name the key under `topology`.
    fn build(&self) -> Result<Topology, ScenarioError>;
}

/// The registry: `Variant(Type)`, one line per topology kind; the variant's
/// snake-case name is the `kind` users write.
macro_rules! topologies {
    ($($variant:ident($ty:ty),)*) => {
        /// `topology.kind`: the registered topologies.
        #[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq, strum::VariantNames)]
        #[serde(rename_all = "snake_case")]
        #[strum(serialize_all = "snake_case")]
        pub enum TopologyKind { $($variant,)* }

        /// The `[topology]` table: a registered kind's keys.
        #[derive(Clone, Debug)]
        pub enum TopologySpec { $($variant($ty),)* }

        impl TopologySpec {
            fn parse(kind: TopologyKind, table: Value) -> Result<TopologySpec, ScenarioError> {
                Ok(match kind {
                    $(TopologyKind::$variant => TopologySpec::$variant(parse_at(table, "topology")?),)*
                })
            }

            /// The nodes and links, checked ([`built_by`]).
            pub fn build(&self) -> Result<Topology, ScenarioError> {
                match self { $(TopologySpec::$variant(s) => built_by(s),)* }
            }
        }
    };
}

topologies! {
    Star(star::Star),
    Tree3(tree3::Tree3),
    FatTree(fat_tree::FatTree),
    LeafSpine(leaf_spine::LeafSpine),
    Edges(edges::Edges),
}

impl TopologySpec {
    pub fn from_value(value: Value) -> Result<TopologySpec, ScenarioError> {
        let kinds = || TopologyKind::VARIANTS.join(", ");
        let Value::Object(mut table) = value else {
            return Err(ScenarioError::new(
                "topology",
                "must be a table with a kind",
            ));
        };
        let kind = match table.remove("kind") {
            Some(Value::String(k)) => k,
            Some(other) => {
                return Err(ScenarioError::new(
                    "topology.kind",
                    format!("expected one of {}, got {other}", kinds()),
                ))
            }
            None => {
                return Err(ScenarioError::new(
                    "topology.kind",
                    format!("required (one of {})", kinds()),
                ))
            }
        };
        let Ok(kind) = serde_json::from_value(Value::String(kind.clone())) else {
            return Err(ScenarioError::new(
                "topology.kind",
                format!("unknown topology \"{kind}\" (expected one of {})", kinds()),
            ));
        };
        TopologySpec::parse(kind, Value::Object(table))
    }
}

/// The topology `builder` builds, checked: hosts reach each other through
/// switches only. A registered kind's, or one a Rust program declares
/// ([`crate::Scenario::with_topology`]).
pub fn built_by(builder: &impl Builder) -> Result<Topology, ScenarioError> {
    let topo = builder.build()?;
    topo.check_connected()?;
    Ok(topo)
}

/// Check a count field: at least `min`, and not absurdly large.
pub(crate) fn check_count(path: &str, value: u32, min: u32) -> Result<(), ScenarioError> {
    if value < min {
        return Err(ScenarioError::new(
            path,
            format!("must be at least {min}, got {value}"),
        ));
    }
    if value > 1_000_000 {
        return Err(ScenarioError::new(
            path,
            format!("must be at most 1000000, got {value}"),
        ));
    }
    Ok(())
}

/// The most hosts a built-in topology may have (a fat-tree of k = 128 has
/// 524,288 hosts; its routing tables, [`crate::routing`], take about 0.7 GB).
pub const MAX_HOSTS: u64 = 1_000_000;

/// Check that `a` × `b` hosts (counts already checked) stay within [`MAX_HOSTS`],
/// computed in 64 bits before anything is built.
pub(crate) fn check_hosts(path: &str, a: u32, b: u32) -> Result<(), ScenarioError> {
    let hosts = u64::from(a) * u64::from(b);
    if hosts > MAX_HOSTS {
        return Err(ScenarioError::new(
            path,
            format!("gives {hosts} hosts, more than the {MAX_HOSTS} a topology may have"),
        ));
    }
    Ok(())
}

impl Topology {
    pub fn add_node(
        &mut self,
        name: String,
        kind: NodeKind,
        tier: Option<u32>,
    ) -> Result<usize, String> {
        let id = self.nodes.len();
        if self.names.insert(name.clone(), id).is_some() {
            return Err(format!("duplicate node name \"{name}\""));
        }
        if kind == NodeKind::Host {
            self.hosts.push(id);
        }
        self.nodes.push(Node { name, kind, tier });
        Ok(id)
    }

    /// Add `count` nodes named `<prefix>0..`, all of one kind and tier (names a
    /// builder makes unique by construction). Hosts are tier 0.
    pub(crate) fn add_group(&mut self, prefix: &str, count: usize, tier: u32) -> Vec<usize> {
        let kind = if tier == 0 {
            NodeKind::Host
        } else {
            NodeKind::Switch
        };
        (0..count)
            .map(|i| {
                self.add_node(format!("{prefix}{i}"), kind, Some(tier))
                    .expect("builder names are unique")
            })
            .collect()
    }

    pub fn connect(&mut self, a: usize, b: usize, link: LinkParams) {
        self.links.push(Link {
            a,
            b,
            rate: link.rate,
            delay: link.delay,
        });
    }

    pub fn node_id(&self, name: &str) -> Option<usize> {
        self.names.get(name).copied()
    }

    pub fn host_count(&self) -> usize {
        self.hosts.len()
    }

    /// The rate of every host's NIC link, by host index, in one pass over the
    /// links (every host has exactly one, checked when built).
    pub fn host_link_rates(&self) -> Vec<Rate> {
        let mut host_of = vec![u32::MAX; self.nodes.len()];
        for (h, &node) in self.hosts.iter().enumerate() {
            host_of[node] = h as u32;
        }
        let mut rates = vec![Rate(0); self.hosts.len()];
        for l in &self.links {
            for node in [l.a, l.b] {
                if let Some(rate) = rates.get_mut(host_of[node] as usize) {
                    *rate = l.rate;
                }
            }
        }
        rates
    }

    /// Egress ports, numbered node by node and, within a node, in the order
    /// of its links: `(node, peer, link)`. The network's port `i` is entry `i`.
    pub fn ports(&self) -> Vec<(usize, usize, &Link)> {
        let mut by_node: Vec<Vec<(usize, &Link)>> = vec![Vec::new(); self.nodes.len()];
        for l in &self.links {
            by_node[l.a].push((l.b, l));
            by_node[l.b].push((l.a, l));
        }
        by_node
            .into_iter()
            .enumerate()
            .flat_map(|(n, links)| links.into_iter().map(move |(peer, l)| (n, peer, l)))
            .collect()
    }

    /// `"a->b"`: the index of node `a`'s egress port towards node `b`.
    pub fn port_by_name(&self, name: &str) -> Option<u32> {
        let (a, b) = name.split_once("->")?;
        let (a, b) = (self.node_id(a.trim())?, self.node_id(b.trim())?);
        self.ports()
            .iter()
            .position(|&(n, peer, _)| (n, peer) == (a, b))
            .map(|i| i as u32)
    }

    pub fn example_port_name(&self) -> String {
        self.links
            .first()
            .map(|l| format!("{}->{}", self.nodes[l.a].name, self.nodes[l.b].name))
            .unwrap_or_default()
    }

    /// Hosts must be able to reach each other through switches only.
    fn check_connected(&self) -> Result<(), ScenarioError> {
        if self.hosts.is_empty() {
            return Err(ScenarioError::new("topology", "has no hosts"));
        }
        let mut adj = vec![Vec::new(); self.nodes.len()];
        for l in &self.links {
            adj[l.a].push(l.b);
            adj[l.b].push(l.a);
        }
        for &h in &self.hosts {
            if adj[h].len() != 1 {
                return Err(ScenarioError::new(
                    "topology",
                    format!(
                        "host \"{}\" has {} links; a host has exactly one (its NIC)",
                        self.nodes[h].name,
                        adj[h].len()
                    ),
                ));
            }
        }
        // Breadth-first search from host 0 that does not transit other hosts.
        let mut seen = vec![false; self.nodes.len()];
        let mut stack = vec![self.hosts[0]];
        seen[self.hosts[0]] = true;
        while let Some(n) = stack.pop() {
            if n != self.hosts[0] && self.nodes[n].kind == NodeKind::Host {
                continue;
            }
            for &m in &adj[n] {
                if !seen[m] {
                    seen[m] = true;
                    stack.push(m);
                }
            }
        }
        if let Some(&h) = self.hosts.iter().find(|&&h| !seen[h]) {
            return Err(ScenarioError::new(
                "topology",
                format!(
                    "disconnected: host \"{}\" cannot reach host \"{}\"",
                    self.nodes[self.hosts[0]].name, self.nodes[h].name
                ),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn build(toml_text: &str) -> Result<Topology, ScenarioError> {
        let v: Value = toml::from_str(toml_text).unwrap();
        TopologySpec::from_value(v)?.build()
    }

    #[test]
    fn fat_tree_k4_matches_the_spraying_seed() {
        let t = build("kind = \"fat_tree\"\nk = 4").unwrap();
        assert_eq!(t.host_count(), 16);
        assert_eq!(
            t.nodes
                .iter()
                .filter(|n| n.kind == NodeKind::Switch)
                .count(),
            20
        );
        // S15 hangs off E7; A0 reaches C0 and C1, A1 reaches C2 and C3 (Fig. 1).
        assert!(t.port_by_name("edge7->host15").is_some());
        assert!(t.port_by_name("agg0->core1").is_some());
        assert!(t.port_by_name("agg1->core2").is_some());
        assert!(t.port_by_name("agg0->core2").is_none());
        assert!(t.port_by_name("agg6->core0").is_some());
        assert_eq!(t.links.len(), 48);
    }

    #[test]
    fn odd_k_is_rejected_with_its_path() {
        let e = build("kind = \"fat_tree\"\nk = 5").unwrap_err();
        assert_eq!(e.to_string(), "topology.k: fat-tree k must be even, got 5");
    }

    #[test]
    fn tree3_defaults_are_the_first_seed() {
        let t = build("kind = \"tree3\"").unwrap();
        assert_eq!(t.host_count(), 128);
        assert!(t.port_by_name("tor3->agg0").is_some());
        assert!(t.port_by_name("tor4->agg1").is_some());
        assert!(t.port_by_name("host16->tor1").is_some());
        assert_eq!(
            t.nodes
                .iter()
                .filter(|n| n.kind == NodeKind::Switch)
                .count(),
            11
        );
    }

    #[test]
    fn leaf_spine_botcp() {
        let t = build("kind = \"leaf_spine\"\nhost_link = {rate = \"10Gbps\"}\nfabric_link = {rate = \"40Gbps\"}").unwrap();
        assert_eq!(t.host_count(), 192);
        assert_eq!(t.links.len(), 192 + 36);
        assert_eq!(t.host_link_rates()[191], Rate(10_000_000_000));
    }

    #[test]
    fn disconnected_edges_are_rejected() {
        let e = build(
            r#"kind = "edges"
nodes = [{name = "a", kind = "host"}, {name = "b", kind = "host"}, {name = "s1", kind = "switch"}, {name = "s2", kind = "switch"}]
links = [{a = "a", b = "s1"}, {a = "b", b = "s2"}]"#,
        )
        .unwrap_err();
        assert_eq!(e.path, "topology");
        assert!(e.reason.contains("disconnected"), "{e}");
    }

    #[test]
    fn unknown_kind_and_key() {
        assert_eq!(build("kind = \"ring\"").unwrap_err().path, "topology.kind");
        let e = build("kind = \"star\"\nhosts = 4\nhost = 3").unwrap_err();
        assert_eq!(e.path, "topology.host");
        assert!(e.reason.starts_with("unknown key"), "{e}");
    }
}
