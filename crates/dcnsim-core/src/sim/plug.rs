//! What a Rust program plugs into a built simulation, unregistered, on the
//! axes whose registered kinds are closed enums: a queue discipline, an AQM
//! or a port stage at chosen ports, a forwarding policy at every switch.
//! Each is written as a registered one is (a type implementing
//! [`Discipline`], [`Aqm`], [`Stage`] or [`ForwardingPolicy`], as in its
//! axis's folder) and called through a pointer, one more arm of its axis's
//! `match`; the registered kinds keep theirs. Call these before
//! [`Simulation::run`]. (A controller is plugged by
//! [`Simulation::plug_controller`], an agent or an application attached by
//! [`Simulation::attach_agent`] or [`Simulation::attach_app`]; a topology is
//! a scenario's, [`crate::Scenario::with_topology`].)

use super::{derive, rng_for, Simulation, RNG_AQM, SALT_ECMP};
use crate::error::ScenarioError;
use crate::forwarding::ForwardingPolicy;
use crate::queue::{Aqm, Aqms, Discipline, PortAqm, Queue};
use crate::stage::{PortStage, Stage};
use crate::topology::Topology;

impl Simulation {
    /// Queue the packets of `ports` (port indices,
    /// [`Topology::port_by_name`]) by discipline `D` with keys `spec`,
    /// instead of the scenario's. A port with an AQM keeps it, if `D` has as
    /// many AQM domains as the discipline it replaces. The ports become
    /// event-driven (only drop-tail ports are scheduled).
    pub fn plug_discipline<D: Discipline + 'static>(
        &mut self,
        spec: &D::Spec,
        ports: &[u32],
    ) -> Result<(), ScenarioError> {
        for &port in ports {
            let ctx = self.net.port_context(port);
            let at = &self.rec.port_names[port as usize];
            D::check(spec, ctx.buffer, at)?;
            let queue = Queue::plugged(D::new(spec, &ctx));
            let pt = &mut self.net.ports[port as usize];
            let (domains, had) = (queue.aqm_domains(), pt.queue.aqm_domains());
            if !pt.aqm.is_empty() && domains != had {
                return Err(ScenarioError::new(
                    at.as_str(),
                    format!("its AQM has {had} domains; the plugged discipline has {domains}"),
                ));
            }
            pt.queue = queue;
            pt.schedule(false);
        }
        Ok(())
    }

    /// Judge the packets arriving at `ports` by AQM `A` with keys `spec`,
    /// one per AQM domain of each port's queue, instead of the scenario's
    /// (from the random streams the scenario's AQM there would draw from).
    pub fn plug_aqm<A: Aqm + 'static>(
        &mut self,
        spec: &A::Spec,
        ports: &[u32],
    ) -> Result<(), ScenarioError> {
        for &port in ports {
            A::check(spec, &self.rec.port_names[port as usize])?;
            let pt = &mut self.net.ports[port as usize];
            let rng = |d: u64| rng_for(self.seed, RNG_AQM, u64::from(port) << 8 | d);
            pt.aqm = Aqms::new(pt.queue.aqm_domains(), A::STATELESS, |d| {
                PortAqm::plugged(A::new(spec, rng(d)))
            });
        }
        Ok(())
    }

    /// Run stage `S` with keys `spec` at `ports`, after the scenario's
    /// stages there. A shaper makes its port event-driven, as a registered
    /// one does.
    pub fn plug_stage<S: Stage + 'static>(
        &mut self,
        spec: &S::Spec,
        ports: &[u32],
    ) -> Result<(), ScenarioError> {
        for &port in ports {
            S::check(spec, &self.rec.port_names[port as usize])?;
            let ctx = self.net.port_context(port);
            let pt = &mut self.net.ports[port as usize];
            pt.stages.push(PortStage::plugged(S::new(spec, &ctx)));
            if S::ON_ENQUEUE {
                pt.add_stamps(None);
            }
            if S::SHAPES {
                pt.shape();
            }
            if ctx.nic && (S::ON_ENQUEUE || S::SHAPES) {
                let host = self.net.node_host[pt.node as usize];
                self.hosts.nic_ahead[host as usize] = false;
            }
        }
        Ok(())
    }

    /// Forward by policy `P` with keys `spec` at every switch instead of
    /// the scenario's, checked against the scenario's topology `topo` (an
    /// error names the key, `forwarding.policy` for the topology).
    pub fn plug_policy<P: ForwardingPolicy + 'static>(
        &mut self,
        spec: &P::Spec,
        topo: &Topology,
    ) -> Result<(), ScenarioError> {
        P::check(spec, topo)?;
        let seed = self.seed;
        self.fwd
            .plug::<P>(spec, &self.net, |i| derive(seed, SALT_ECMP, i));
        Ok(())
    }
}
