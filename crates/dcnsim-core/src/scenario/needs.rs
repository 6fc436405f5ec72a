//! What the controllers the traffic runs need of the rest of the scenario
//! ([`Need`], declared by each kind's `Build::needs`), checked here whatever
//! the kind: the scenario names no controller, and no controller the network.

use super::{NetworkSpec, TrafficSpec, TransportSpec};
use crate::cc::{Need, Protocol};
use crate::error::ScenarioError;
use crate::packet::OPTION_BYTES;
use crate::topology::{NodeKind, Topology};
use crate::units::Capacity;

/// Check every need of every protocol some flow or application runs.
pub(super) fn check(
    traffic: &TrafficSpec,
    transport: &TransportSpec,
    network: &NetworkSpec,
    topo: &Topology,
) -> Result<(), ScenarioError> {
    for &protocol in Protocol::ALL {
        if !traffic.uses(protocol, transport.protocol) {
            continue;
        }
        for need in protocol.needs(&transport.cc) {
            match need {
                Need::SwitchStage { kind, why } => {
                    switch_stage(protocol, kind, why, network, topo)?;
                }
                Need::Buffer { bytes, key, why } => {
                    // A buffer in packets holds the protocol's largest ones.
                    let option = protocol.flags().inband_option.map_or(0, |_| OPTION_BYTES);
                    let largest = transport.segment_bytes() + u64::from(option);
                    let capacity = network.queue.capacity;
                    let buffer = match capacity {
                        Capacity::Bytes(b) => b,
                        Capacity::Packets(n) => n.saturating_mul(largest),
                    };
                    if buffer < bytes {
                        return Err(ScenarioError::new(
                            format!("transport.{}.{key}", protocol.name()),
                            format!("{why} (network.queue.capacity = {capacity}: {buffer} B, below the {bytes} B it needs)"),
                        ));
                    }
                }
            }
        }
    }
    Ok(())
}

/// A stage of `kind` on every switch egress port.
fn switch_stage(
    protocol: Protocol,
    kind: &str,
    why: &str,
    network: &NetworkSpec,
    topo: &Topology,
) -> Result<(), ScenarioError> {
    let staged = |p: usize| {
        network
            .stages
            .iter()
            .any(|st| st.params.name() == kind && st.ports.contains(&(p as u32)))
    };
    let bare = topo
        .ports()
        .into_iter()
        .enumerate()
        .find(|&(p, (node, _, _))| topo.nodes[node].kind != NodeKind::Host && !staged(p));
    match bare {
        Some((_, (node, peer, _))) => Err(ScenarioError::new(
            "network.stages",
            format!(
                "protocol \"{}\" needs the {kind} stage on every switch port ({why}), and {}->{} has none: add [[network.stages]] kind = \"{kind}\", ports = \"switches\"",
                protocol.name(),
                topo.nodes[node].name,
                topo.nodes[peer].name
            ),
        )),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::CcSettings;
    use crate::stage::StageKind;
    use strum::VariantNames;

    /// A controller names a stage by the word users write: every name a
    /// registered kind needs is a registered stage kind, so the error's
    /// advice (`add [[network.stages]] kind = ...`) can be followed.
    #[test]
    fn every_stage_a_controller_needs_is_a_registered_kind() {
        let mut named = 0;
        for &protocol in Protocol::ALL {
            for need in protocol.needs(&CcSettings::default()) {
                if let Need::SwitchStage { kind, .. } = need {
                    assert!(StageKind::VARIANTS.contains(&kind), "{kind}");
                    named += 1;
                }
            }
        }
        assert!(named > 0, "BOTCP needs its stamp");
    }
}
