//! Applications that open TCP flows while the simulation runs: Poisson flow
//! arrivals with sizes from a distribution, and barrier-synchronized incast.

use crate::scenario::{IncastSpec, SizeDist, WorkloadSpec};
use crate::units::Time;
use rand::Rng;
use rand_distr::{Distribution, Exp1};
use rand_xoshiro::Xoshiro256PlusPlus;

/// Who opened a flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// Listed in `[[traffic.flows]]`.
    Listed,
    /// Arrived from workload source `i`.
    Workload(u32),
    /// A worker's response in round `round` of incast application `app`.
    Incast { app: u32, round: u32 },
}

/// One source host of a workload: its next arrival and random stream.
pub struct WorkloadSource {
    pub spec: WorkloadSpec,
    rng: Xoshiro256PlusPlus,
    /// Time of the next flow arrival.
    pub next: Time,
}

/// A new flow drawn from a workload.
pub struct Draw {
    pub dst: u32,
    pub size: u64,
}

impl WorkloadSource {
    pub fn new(spec: WorkloadSpec, rng: Xoshiro256PlusPlus) -> WorkloadSource {
        let mut s = WorkloadSource {
            next: spec.start,
            spec,
            rng,
        };
        s.next = s.next + s.gap();
        s
    }

    fn gap(&mut self) -> Time {
        let e: f64 = Exp1.sample(&mut self.rng);
        Time((e * self.spec.mean_gap.0 as f64).round() as u64)
    }

    /// Draw the flow arriving now and advance to the next arrival; the
    /// returned flag says whether another arrival falls before `stop`.
    pub fn arrive(&mut self, hosts: u32) -> (Draw, bool) {
        let dst = match self.spec.dst {
            Some(d) => d,
            None => {
                let d = self.rng.random_range(0..hosts - 1);
                if d >= self.spec.src {
                    d + 1
                } else {
                    d
                }
            }
        };
        let size = match &self.spec.sizes {
            SizeDist::Cdf(c) => c.sample(self.rng.random()),
            SizeDist::Fixed(n) => *n,
        };
        self.next = self.next + self.gap();
        (Draw { dst, size }, self.next < self.spec.stop)
    }
}

/// An incast application's progress.
pub struct Incast {
    pub spec: IncastSpec,
    /// The current round (0-based) and when it started.
    pub round: u32,
    pub round_start: Time,
    /// Responses of this round still missing.
    pub pending: u32,
    /// The flows answering this round (one per worker, in worker order).
    pub flows: Vec<u32>,
    /// Their timeouts before this round began.
    pub timeouts_before: u64,
}

/// Rows of `rounds.parquet`.
#[derive(Default)]
pub struct RoundRows {
    pub app: Vec<i64>,
    pub round: Vec<i64>,
    pub start: Vec<f64>,
    pub end: Vec<f64>,
    pub bytes: Vec<i64>,
    pub flows: Vec<i64>,
    pub timeouts: Vec<i64>,
}
