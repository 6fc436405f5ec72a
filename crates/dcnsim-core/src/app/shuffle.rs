//! A bulk shuffle (`[[traffic.shuffle]]`), Hadoop-like: the interfering
//! MapReduce job of the QJUMP seed (`qjump.txt`, "QJUMP in Action" and
//! "Performance Comparison": Hadoop's metric is its job runtime).
//!
//! Each job, every mapper sends `bytes` to every reducer (itself excepted)
//! over its own TCP flow, all opened at the job's start; the job is done
//! when every flow is. The next job starts `gap` later. Map and reduce
//! computation is not modelled: only the shuffle's traffic.
//!
//! Operation rows: one per job (`op_id` the job, `host` the first reducer,
//! `start_s` and `end_s` the job's, `bytes` all flows' bytes, `outcome`
//! `"done"`, `value` the job runtime in seconds).

use super::keys::{check_bytes, check_class, check_count, check_rounds, host_list};
use super::{App, Application, Context, Given, Load, Op, OpenFlow};
use crate::cc::Protocol;
use crate::error::{join_path, parse_at, ScenarioError};
use crate::units::{Bytes, Time};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::Deserialize;
use serde_json::Value;

/// `[[traffic.shuffle]]` as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawShuffle {
    mappers: Value,
    reducers: Value,
    bytes: Bytes,
    #[serde(default = "one")]
    jobs: u32,
    #[serde(default)]
    gap: Time,
    #[serde(default)]
    start: Time,
    #[serde(default)]
    class: u8,
    protocol: Option<Protocol>,
}

fn one() -> u32 {
    1
}

#[derive(Clone, Debug, PartialEq)]
pub struct ShuffleSpec {
    pub mappers: Vec<u32>,
    pub reducers: Vec<u32>,
    /// Bytes from each mapper to each reducer.
    pub bytes: u64,
    pub jobs: u32,
    pub gap: Time,
    pub start: Time,
    pub class: u8,
    pub protocol: Option<Protocol>,
}

impl ShuffleSpec {
    /// The (mapper, reducer) pairs of a job.
    fn pairs(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.mappers.iter().flat_map(move |&m| {
            self.reducers
                .iter()
                .filter(move |&&r| r != m)
                .map(move |&r| (m, r))
        })
    }
}

pub struct Shuffle {
    spec: ShuffleSpec,
    job: u32,
    started: Time,
    /// Flows of this job still running.
    pending: usize,
}

impl Application for Shuffle {
    fn start(&mut self, cx: &mut dyn Context) {
        cx.set_timer(self.spec.start, 0);
    }

    fn on_timer(&mut self, cx: &mut dyn Context, _token: u64) {
        self.started = cx.now();
        self.pending = 0;
        let s = &self.spec;
        for (m, r) in s.pairs() {
            cx.open_flow(OpenFlow {
                src: m,
                dst: r,
                size: s.bytes,
                deadline: None,
                class: s.class,
                protocol: s.protocol,
                op: Some(self.job),
                keep_open: false,
            });
            self.pending += 1;
        }
    }

    fn on_flow_done(&mut self, cx: &mut dyn Context, _flow: u32) {
        self.pending -= 1;
        if self.pending > 0 {
            return;
        }
        let now = cx.now();
        let s = &self.spec;
        cx.write_op(Op {
            id: self.job.into(),
            host: s.reducers[0],
            start: self.started,
            end: Some(now),
            bytes: s.bytes * s.pairs().count() as u64,
            outcome: "done",
            value: (now - self.started).as_secs_f64(),
        });
        self.job += 1;
        if self.job < s.jobs {
            cx.set_timer(now + s.gap, 0);
        }
    }
}

impl App for Shuffle {
    const KEY: &'static str = "shuffle";
    const NAME: &'static str = "shuffle";
    type Spec = ShuffleSpec;

    fn parse(v: Value, at: &str, given: &Given) -> Result<Vec<ShuffleSpec>, ScenarioError> {
        let topo = given.topology;
        let c: RawShuffle = parse_at(v, at)?;
        let mappers = host_list(&join_path(at, "mappers"), &c.mappers, topo, "mapper", None)?;
        let reducers = host_list(
            &join_path(at, "reducers"),
            &c.reducers,
            topo,
            "reducer",
            None,
        )?;
        if mappers.len() == 1 && reducers == mappers {
            return Err(ScenarioError::new(
                join_path(at, "reducers"),
                "the only reducer is the only mapper: the shuffle sends nothing",
            ));
        }
        check_class(at, c.class)?;
        let bytes = check_bytes(join_path(at, "bytes"), c.bytes)?;
        let jobs = check_count(at, "jobs", c.jobs)?;
        check_rounds(at, c.start, c.gap, given.stop_time, jobs, "shuffle")?;
        Ok(vec![ShuffleSpec {
            mappers,
            reducers,
            bytes,
            jobs,
            gap: c.gap,
            start: c.start,
            class: c.class,
            protocol: c.protocol,
        }])
    }

    fn load(spec: &ShuffleSpec) -> Load {
        let jobs = f64::from(spec.jobs);
        Load {
            flows: spec.pairs().count() as f64 * jobs,
            ops: jobs,
            ..Load::default()
        }
    }

    fn new(spec: &ShuffleSpec, _rng: Xoshiro256PlusPlus) -> Shuffle {
        Shuffle {
            spec: spec.clone(),
            job: 0,
            started: spec.start,
            pending: 0,
        }
    }
}
