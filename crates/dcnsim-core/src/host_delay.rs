//! A host stack's processing delay (`network.host_delay`): the time a packet
//! spends in its host's software between the application and the NIC (on
//! sending) and between the NIC and the application (on receiving).
//!
//! The scalar form (`host_delay = "2.5us"`) is one constant for both directions,
//! as before (the first seed's and pFabric's scripts' `HOST_DELAY`). The table
//! form gives each direction its own distribution: a constant, a uniform range,
//! a lognormal (the shape of measured kernel-stack latencies: a floor-free body
//! with a long right tail), or an empirical CDF read from a file. The QJUMP seed's
//! memcached and Naiad latencies alone (779 µs and ~500 µs at the 99th
//! percentile, `qjump.txt`) are almost all host software, the kind of
//! latency a lognormal stack models.
//!
//! A drawn delay keeps a host's packets in order in each direction (a stack is
//! a FIFO): a packet leaves the stack at its arrival plus its draw, or right
//! after the packet before it, whichever is later ([`Stack::release`]).

use crate::error::ScenarioError;
use crate::units::{Time, MAX_DELAY};
use crate::workload::{interpolate, parse_points, read_regular_file, Axis, MAX_CDF_FILE_BYTES};
use rand::Rng;
use rand_distr::Distribution;
use rand_xoshiro::Xoshiro256PlusPlus;
use serde_json::Value;

/// One direction's delay.
#[derive(Clone, Debug, PartialEq)]
pub enum Delay {
    Constant(Time),
    /// Uniform on `[low, high]`.
    Uniform {
        low: Time,
        high: Time,
    },
    /// exp(N(ln median, sigma²)): half the draws below `median`.
    LogNormal {
        median: Time,
        sigma: f64,
    },
    /// An empirical CDF: (delay in ps, cumulative probability), interpolated
    /// linearly, as the workload CDFs are.
    Empirical {
        source: String,
        points: Vec<(f64, f64)>,
    },
}

/// The largest lognormal `sigma`: its p99 is then e^(2.326·3) ≈ 1,070
/// times its median, already beyond any stack measured; a larger one is a slip.
pub const MAX_SIGMA: f64 = 3.0;

impl Delay {
    /// The delay when it is not drawn.
    pub fn constant(&self) -> Option<Time> {
        match self {
            Delay::Constant(t) => Some(*t),
            _ => None,
        }
    }

    /// One draw, at most [`MAX_DELAY`].
    pub fn sample<R: Rng>(&self, rng: &mut R) -> Time {
        let ps = match self {
            Delay::Constant(t) => return *t,
            Delay::Uniform { low, high } => rng.random_range(low.0..=high.0) as f64,
            Delay::LogNormal { median, sigma } => {
                rand_distr::LogNormal::new((median.0 as f64).ln(), *sigma)
                    .expect("sigma validated")
                    .sample(rng)
            }
            Delay::Empirical { points, .. } => interpolate(points, rng.random::<f64>()),
        };
        Time((ps.round() as u64).min(MAX_DELAY.0))
    }

    /// The mean delay (a lognormal's median·e^(σ²/2)), for the zero-load
    /// latency a report compares against.
    pub fn mean(&self) -> Time {
        let ps = match self {
            Delay::Constant(t) => return *t,
            Delay::Uniform { low, high } => (low.0 as f64 + high.0 as f64) / 2.0,
            Delay::LogNormal { median, sigma } => median.0 as f64 * (sigma * sigma / 2.0).exp(),
            Delay::Empirical { points, .. } => {
                let mut m = points[0].0 * points[0].1;
                for w in points.windows(2) {
                    m += (w[1].1 - w[0].1) * (w[0].0 + w[1].0) / 2.0;
                }
                m
            }
        };
        Time((ps.round() as u64).min(MAX_DELAY.0))
    }

    /// One direction from its value at `at`: a time (a constant) or a table
    /// `{ kind = "constant" | "uniform" | "lognormal" | "cdf", ... }`.
    pub fn from_value(value: &Value, at: &str) -> Result<Delay, ScenarioError> {
        let table = match value {
            Value::String(_) => return Ok(Delay::Constant(time(value, at)?)),
            Value::Object(t) => t,
            _ => return Err(ScenarioError::new(
                at,
                "expected a time (\"2us\") or a distribution table ({ kind = \"lognormal\", ... })",
            )),
        };
        let kind = table.get("kind").and_then(Value::as_str).ok_or_else(|| {
            ScenarioError::new(
                format!("{at}.kind"),
                "required: \"constant\", \"uniform\", \"lognormal\" or \"cdf\"",
            )
        })?;
        let keys: &[&str] = match kind {
            "constant" => &["kind", "value"],
            "uniform" => &["kind", "low", "high"],
            "lognormal" => &["kind", "median", "sigma"],
            "cdf" => &["kind", "file"],
            other => {
                return Err(ScenarioError::new(
                    format!("{at}.kind"),
                    format!(
                        "unknown distribution \"{other}\" (\"constant\", \"uniform\", \"lognormal\" or \"cdf\")"
                    ),
                ))
            }
        };
        if let Some(k) = table.keys().find(|k| !keys.contains(&k.as_str())) {
            return Err(ScenarioError::new(
                format!("{at}.{k}"),
                format!("unknown key for kind \"{kind}\" ({})", keys[1..].join(", ")),
            ));
        }
        let field = |k: &str| {
            table
                .get(k)
                .ok_or_else(|| ScenarioError::new(format!("{at}.{k}"), "required"))
        };
        let t = |k: &str| field(k).and_then(|v| time(v, &format!("{at}.{k}")));
        match kind {
            "constant" => Ok(Delay::Constant(t("value")?)),
            "uniform" => {
                let (low, high) = (t("low")?, t("high")?);
                if high < low {
                    return Err(ScenarioError::new(
                        format!("{at}.high"),
                        format!("{high} is below low ({low})"),
                    ));
                }
                Ok(Delay::Uniform { low, high })
            }
            "lognormal" => {
                let median = t("median")?;
                let sigma = field("sigma")?.as_f64().filter(|s| s.is_finite());
                let sigma = sigma.ok_or_else(|| {
                    ScenarioError::new(format!("{at}.sigma"), "expected a number")
                })?;
                if median == Time::ZERO {
                    return Err(ScenarioError::new(
                        format!("{at}.median"),
                        "must be above 0 (a lognormal has no zero median)",
                    ));
                }
                if !(0.0..=MAX_SIGMA).contains(&sigma) {
                    return Err(ScenarioError::new(
                        format!("{at}.sigma"),
                        format!("{sigma} is outside [0, {MAX_SIGMA}]"),
                    ));
                }
                Ok(Delay::LogNormal { median, sigma })
            }
            _ => {
                let path = field("file")?.as_str().ok_or_else(|| {
                    ScenarioError::new(format!("{at}.file"), "expected a file path")
                })?;
                let at_file = format!("{at}.file");
                let text = read_regular_file(path, MAX_CDF_FILE_BYTES).map_err(|e| {
                    ScenarioError::new(at_file.as_str(), format!("cannot read \"{path}\": {e}"))
                })?;
                // Lines "delay_us probability": microseconds, at most the 1 s bound.
                let points = parse_points(&text, &DELAYS)
                    .map_err(|m| ScenarioError::new(at_file.as_str(), format!("{path}: {m}")))?;
                let points = points.into_iter().map(|(us, p)| (us * 1e6, p)).collect();
                Ok(Delay::Empirical {
                    source: path.to_string(),
                    points,
                })
            }
        }
    }
}

/// Host delays in microseconds (a delay CDF file's first column).
const DELAYS: Axis = Axis {
    name: "delay",
    unit: "us",
    bound: "(1 s) bound of any delay",
    max: 1e6,
};

fn time(value: &Value, at: &str) -> Result<Time, ScenarioError> {
    let t: Time = value
        .as_str()
        .ok_or_else(|| ScenarioError::new(at, "expected a time such as \"2us\""))?
        .parse()
        .map_err(|e: String| ScenarioError::new(at, e))?;
    if t > MAX_DELAY {
        return Err(ScenarioError::new(
            at,
            format!(
                "a delay of {} s is beyond the 1 s bound of any delay (docs/scenario.md, Bounds)",
                t.as_secs_f64()
            ),
        ));
    }
    Ok(t)
}

/// Both directions of `network.host_delay`.
#[derive(Clone, Debug, PartialEq)]
pub struct HostDelay {
    pub send: Delay,
    pub receive: Delay,
}

impl Default for HostDelay {
    fn default() -> Self {
        HostDelay::constant(Time::ZERO)
    }
}

impl HostDelay {
    /// The same constant both ways (the scalar form).
    pub fn constant(t: Time) -> HostDelay {
        HostDelay {
            send: Delay::Constant(t),
            receive: Delay::Constant(t),
        }
    }

    /// The sum of both directions' means: what one packet's trip from
    /// application to application spends in host stacks on average, for the
    /// zero-load (ideal) completion times; `2·host_delay` for the scalar.
    pub fn mean_both_ways(&self) -> Time {
        self.send.mean() + self.receive.mean()
    }

    /// (send, receive) when neither is drawn: the event loop's fast path.
    pub fn constants(&self) -> Option<(Time, Time)> {
        Some((self.send.constant()?, self.receive.constant()?))
    }

    /// `network.host_delay`: a time (both directions) or a table
    /// `{ send = ..., receive = ... }`, each a time or a distribution table
    /// (a missing one is 0).
    pub fn from_value(value: &Value, at: &str) -> Result<HostDelay, ScenarioError> {
        match value {
            Value::String(_) => Ok(HostDelay::constant(time(value, at)?)),
            Value::Object(t) => {
                if let Some(k) = t.keys().find(|k| *k != "send" && *k != "receive") {
                    let hint = if k == "kind" {
                        " (a distribution goes under send or receive)"
                    } else {
                        ""
                    };
                    return Err(ScenarioError::new(
                        format!("{at}.{k}"),
                        format!("unknown key (send, receive){hint}"),
                    ));
                }
                let one = |k: &str| {
                    t.get(k).map_or(Ok(Delay::Constant(Time::ZERO)), |v| {
                        Delay::from_value(v, &format!("{at}.{k}"))
                    })
                };
                Ok(HostDelay {
                    send: one("send")?,
                    receive: one("receive")?,
                })
            }
            _ => Err(ScenarioError::new(
                at,
                "expected a time (\"2.5us\") or a table { send = ..., receive = ... }",
            )),
        }
    }
}

/// The drawn delays of every host, one direction: the last release per host,
/// so that a host's packets leave its stack in the order they entered it,
/// and the direction's random stream (seeded from the run's seed).
#[derive(Clone, Debug)]
pub struct Stack {
    delay: Delay,
    last: Vec<Time>,
    rng: Xoshiro256PlusPlus,
}

impl Stack {
    pub fn new(delay: Delay, hosts: usize, rng: Xoshiro256PlusPlus) -> Stack {
        Stack {
            delay,
            last: vec![Time::ZERO; hosts],
            rng,
        }
    }

    /// When a packet entering `host`'s stack at `now` leaves it. Calls for
    /// one host come in the order its packets enter the stack.
    pub fn release(&mut self, host: usize, now: Time) -> Time {
        let at = (now + self.delay.sample(&mut self.rng)).max(self.last[host]);
        self.last[host] = at;
        at
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use serde_json::json;

    fn us(x: f64) -> f64 {
        x * 1e6
    }

    #[test]
    fn scalar_is_the_same_constant_both_ways() {
        let d = HostDelay::from_value(&json!("2.5us"), "network.host_delay").unwrap();
        assert_eq!(d, HostDelay::constant(Time(2_500_000)));
        assert_eq!(d.constants(), Some((Time(2_500_000), Time(2_500_000))));
    }

    #[test]
    fn a_table_gives_each_direction_its_own() {
        let v = json!({"send": "1us", "receive": {"kind": "uniform", "low": "2us", "high": "4us"}});
        let d = HostDelay::from_value(&v, "network.host_delay").unwrap();
        assert_eq!(d.send, Delay::Constant(Time::from_us(1)));
        assert_eq!(d.constants(), None);
        let only = HostDelay::from_value(&json!({"receive": "3us"}), "h").unwrap();
        assert_eq!(only.constants(), Some((Time::ZERO, Time::from_us(3))));
    }

    #[test]
    fn uniform_and_lognormal_draws_match_their_closed_forms() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
        let n = 200_000;
        let u = Delay::Uniform {
            low: Time::from_us(2),
            high: Time::from_us(4),
        };
        let draws: Vec<f64> = (0..n).map(|_| u.sample(&mut rng).0 as f64).collect();
        let mean = draws.iter().sum::<f64>() / n as f64;
        assert!((mean - us(3.0)).abs() < us(0.01), "{mean}");
        assert!(draws.iter().all(|&d| (us(2.0)..=us(4.0)).contains(&d)));
        assert_eq!(u.mean(), Time::from_us(3));

        let l = Delay::LogNormal {
            median: Time::from_us(100),
            sigma: 0.5,
        };
        let mut draws: Vec<f64> = (0..n).map(|_| l.sample(&mut rng).0 as f64).collect();
        draws.sort_by(f64::total_cmp);
        let median = draws[n / 2];
        // p99 of a lognormal: median · e^(2.3263 σ)
        let p99 = draws[n * 99 / 100];
        assert!((median / us(100.0) - 1.0).abs() < 0.01, "{median}");
        assert!(
            (p99 / (us(100.0) * (2.3263f64 * 0.5).exp()) - 1.0).abs() < 0.02,
            "{p99}"
        );
        let mean = draws.iter().sum::<f64>() / n as f64;
        assert!((mean / l.mean().0 as f64 - 1.0).abs() < 0.01, "{mean}");
    }

    #[test]
    fn empirical_cdf_file_interpolates_in_microseconds() {
        let dir = std::env::temp_dir().join(format!("dcnsim-host-delay-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("stack.cdf");
        std::fs::write(&path, "# delay_us probability\n10 0\n20 0.5\n40 1\n").unwrap();
        let v = json!({"kind": "cdf", "file": path.to_str().unwrap()});
        let d = Delay::from_value(&v, "network.host_delay.send").unwrap();
        // mean: half between 10 and 20 (15), half between 20 and 40 (30): 22.5 µs
        assert_eq!(d.mean(), Time(22_500_000));
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
        let draws: Vec<Time> = (0..10_000).map(|_| d.sample(&mut rng)).collect();
        assert!(draws
            .iter()
            .all(|t| (Time::from_us(10)..=Time::from_us(40)).contains(t)));
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_stack_keeps_its_hosts_packets_in_order() {
        let mut s = Stack::new(
            Delay::Uniform {
                low: Time::ZERO,
                high: Time::from_us(100),
            },
            2,
            Xoshiro256PlusPlus::seed_from_u64(1),
        );
        let mut last = Time::ZERO;
        for i in 0..1000 {
            let now = Time::from_us(i);
            let at = s.release(0, now);
            assert!(at >= last && at >= now && at <= now + Time::from_us(100));
            last = at;
        }
        // the other host is not held back by host 0
        assert!(s.release(1, Time::ZERO) <= Time::from_us(100));
    }

    #[test]
    fn bad_input_names_the_field() {
        let err = |v: Value| {
            HostDelay::from_value(&v, "network.host_delay")
                .unwrap_err()
                .to_string()
        };
        assert!(err(json!(3)).contains("network.host_delay"));
        assert!(err(json!({"kind": "uniform"})).contains("network.host_delay.kind"));
        assert!(err(json!({"send": {"kind": "gamma"}})).contains("unknown distribution"));
        assert!(
            err(json!({"send": {"kind": "uniform", "low": "3us", "high": "2us"}}))
                .contains("network.host_delay.send.high")
        );
        assert!(
            err(json!({"send": {"kind": "lognormal", "median": "1us", "sigma": 9.0}}))
                .contains("network.host_delay.send.sigma")
        );
        assert!(err(json!({"send": {"kind": "lognormal", "median": "1us"}}))
            .contains("network.host_delay.send.sigma"));
        assert!(err(
            json!({"send": {"kind": "lognormal", "median": "1us", "sigma": 1.0, "mean": "1us"}})
        )
        .contains("network.host_delay.send.mean"));
        assert!(err(json!({"receive": "2s"})).contains("1 s bound"));
        assert!(
            err(json!({"send": {"kind": "cdf", "file": "/nonexistent/x.cdf"}}))
                .contains("network.host_delay.send.file")
        );
    }
}
