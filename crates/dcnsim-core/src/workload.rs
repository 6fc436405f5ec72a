//! Empirical flow-size distributions: a CDF given as (size, probability)
//! points, sampled by inverting it with linear interpolation (the convention of
//! the pFabric and HPCC traffic generators these files come from). A repeated
//! size with rising probability is a point mass.
//!
//! Shipped distributions (files in `crates/dcnsim-core/workloads/`, each citing
//! its source): `websearch` (DCTCP, SIGCOMM 2010), `datamining` (VL2, SIGCOMM
//! 2009), `fb_hadoop` (Roy et al., SIGCOMM 2015) and `detail` (a DeTail-style
//! mix for the first seed; see the file for what is and is not from the paper).

use crate::error::ScenarioError;
use crate::units::Bytes;

/// A validated CDF: sizes and probabilities both non-decreasing, ending at 1.
#[derive(Clone, Debug, PartialEq)]
pub struct Cdf {
    /// Where it came from (a shipped name or a file path), for reports.
    pub source: String,
    points: Vec<(f64, f64)>,
}

const SHIPPED: [(&str, &str); 4] = [
    ("websearch", include_str!("../workloads/websearch.cdf")),
    ("datamining", include_str!("../workloads/datamining.cdf")),
    ("fb_hadoop", include_str!("../workloads/fb_hadoop.cdf")),
    ("detail", include_str!("../workloads/detail.cdf")),
];

/// The largest CDF file read (the shipped ones are under 1 KB).
pub const MAX_CDF_FILE_BYTES: u64 = 1 << 20;

/// The largest flow size a CDF may give: 1 TB (1e12 B), 1,000 times the largest
/// shipped size (datamining's 1 GB) and 800 s at 10 Gbps. A larger one is a
/// slip (`1e300`) that would make the mean gap between flows longer than any
/// run, which then opens no flow at all.
pub const MAX_CDF_SIZE: f64 = 1e12;

/// A size of data a flow or an application sends (a flow's, a message's, a
/// response's): from 1 B to [`MAX_CDF_SIZE`], the largest a workload's CDF
/// may give (1 TB, 800 s at 10 Gbps; a larger one is a slip of the unit).
pub fn check_bytes(path: String, b: Bytes) -> Result<u64, ScenarioError> {
    if b.0 == 0 {
        return Err(ScenarioError::new(path, "must be at least 1 B"));
    }
    if b.0 as f64 > MAX_CDF_SIZE {
        return Err(ScenarioError::new(
            path,
            format!(
                "{} B exceeds the maximum of {MAX_CDF_SIZE:e} B (1 TB, the largest flow size a workload's CDF may give)",
                b.0
            ),
        ));
    }
    Ok(b.0)
}

/// Read `path` as text if it is a regular file of at most `limit` bytes. Its
/// kind and size are checked before it is opened, so a directory, a device
/// such as `/dev/zero` or a FIFO is refused at once instead of read without
/// end or blocking.
pub fn read_regular_file(path: &str, limit: u64) -> Result<String, String> {
    let meta = std::fs::metadata(path).map_err(|e| e.to_string())?;
    if !meta.is_file() {
        let kind = if meta.is_dir() {
            "a directory"
        } else {
            "not a regular file"
        };
        return Err(format!("it is {kind}"));
    }
    if meta.len() > limit {
        return Err(format!(
            "it has {} bytes, more than the {limit} allowed",
            meta.len()
        ));
    }
    std::fs::read_to_string(path).map_err(|e| e.to_string())
}

/// What the first column of a CDF file holds: its name and unit in messages,
/// and its bound.
pub struct Axis {
    pub name: &'static str,
    pub unit: &'static str,
    /// What the bound is, after "the <max> <unit>" in its message.
    pub bound: &'static str,
    pub max: f64,
}

/// Flow sizes in bytes (the workload CDFs).
pub const SIZES: Axis = Axis {
    name: "size",
    unit: "B",
    bound: "(1 TB) bound of a flow size",
    max: MAX_CDF_SIZE,
};

/// Parse `value probability` lines (`#` starts a comment) into points whose
/// values and probabilities are both non-decreasing, the last probability 1:
/// an empirical CDF of `axis` (flow sizes, host delays).
pub fn parse_points(text: &str, axis: &Axis) -> Result<Vec<(f64, f64)>, String> {
    let (name, unit) = (axis.name, axis.unit);
    let mut points: Vec<(f64, f64)> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let n = i + 1;
        let fields: Vec<&str> = line.split_whitespace().collect();
        let [value, prob] = fields[..] else {
            return Err(format!(
                "line {n}: expected two numbers ({name} in {}, cumulative probability), got \"{line}\"",
                if unit == "B" { "bytes" } else { unit }
            ));
        };
        let num = |s: &str, what: &str| {
            s.parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .ok_or_else(|| format!("line {n}: {what} \"{s}\" is not a number"))
        };
        let (value, prob) = (num(value, name)?, num(prob, "probability")?);
        if value < 0.0 {
            return Err(format!("line {n}: {name} {value} is negative"));
        }
        if value > axis.max {
            return Err(format!(
                "line {n}: {name} {value:e} {unit} is beyond the {:e} {unit} {}",
                axis.max, axis.bound
            ));
        }
        if !(0.0..=1.0).contains(&prob) {
            return Err(format!("line {n}: probability {prob} is outside [0, 1]"));
        }
        if let Some(&(pv, pp)) = points.last() {
            if value < pv {
                return Err(format!(
                    "line {n}: not monotone: {name} {value} is below the previous {pv}"
                ));
            }
            if prob < pp {
                return Err(format!(
                    "line {n}: not monotone: probability {prob} is below the previous {pp}"
                ));
            }
        }
        points.push((value, prob));
    }
    match points.last() {
        None => Err("no points".into()),
        Some(&(_, p)) if (p - 1.0).abs() > 1e-9 => {
            Err(format!("the last probability must be 1, got {p}"))
        }
        Some(_) => Ok(points),
    }
}

/// The value at cumulative probability `u` in [0, 1) of CDF `points`, linear
/// between points (the pFabric and HPCC generators' convention).
pub fn interpolate(points: &[(f64, f64)], u: f64) -> f64 {
    let i = points.partition_point(|&(_, p)| p < u);
    match i {
        0 => points[0].0,
        i if i >= points.len() => points[points.len() - 1].0,
        i => {
            let (s0, p0) = points[i - 1];
            let (s1, p1) = points[i];
            s0 + (s1 - s0) * (u - p0) / (p1 - p0)
        }
    }
}

impl Cdf {
    /// Names of the shipped distributions.
    pub const NAMES: [&'static str; 4] = ["websearch", "datamining", "fb_hadoop", "detail"];

    /// A shipped distribution by name, or else a CDF file at that path.
    pub fn named_or_file(name: &str) -> Result<Cdf, String> {
        if let Some((_, text)) = SHIPPED.iter().find(|(n, _)| *n == name) {
            return Cdf::parse(name, text);
        }
        let text = read_regular_file(name, MAX_CDF_FILE_BYTES).map_err(|e| {
            format!(
                "\"{name}\" is neither a shipped distribution ({}) nor a readable CDF file: {e}",
                Cdf::NAMES.join(", ")
            )
        })?;
        Cdf::parse(name, &text).map_err(|m| format!("{name}: {m}"))
    }

    /// Parse `size probability` lines; `#` starts a comment.
    pub fn parse(source: &str, text: &str) -> Result<Cdf, String> {
        let points = parse_points(text, &SIZES)?;
        match points.last() {
            Some(&(s, _)) if s < 1.0 => Err("the largest size must be at least 1 B".into()),
            _ => Ok(Cdf {
                source: source.to_string(),
                points,
            }),
        }
    }

    /// The size at cumulative probability `u` in [0, 1), at least 1 B.
    pub fn sample(&self, u: f64) -> u64 {
        (interpolate(&self.points, u).round() as u64).max(1)
    }

    /// E[min(X, `cap`)] of a size X drawn from the CDF, in bytes: the
    /// integral of P(X > s) over s in [0, `cap`] (the CDF interpolated
    /// linearly, as [`Cdf::sample`] draws). No size is below the first
    /// point's, so P(X > s) = 1 up to it.
    pub fn mean_capped(&self, cap: f64) -> f64 {
        let mut m = self.points[0].0.min(cap);
        for w in self.points.windows(2) {
            let ((a, pa), (b, pb)) = (w[0], w[1]);
            if a >= cap {
                break;
            }
            let end = b.min(cap);
            let p_end = if b > a {
                pa + (pb - pa) * (end - a) / (b - a)
            } else {
                pb
            };
            m += (end - a) * (1.0 - (pa + p_end) / 2.0);
        }
        m
    }

    /// The mean size in bytes.
    pub fn mean(&self) -> f64 {
        let (s0, p0) = self.points[0];
        let mut m = s0.max(1.0) * p0;
        for w in self.points.windows(2) {
            let ((a, pa), (b, pb)) = (w[0], w[1]);
            m += (pb - pa) * ((a + b) / 2.0).max(1.0);
        }
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;

    #[test]
    fn shipped_distributions_parse_and_sampling_matches_the_mean() {
        for name in Cdf::NAMES {
            let c = Cdf::named_or_file(name).unwrap();
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(11);
            let n = 400_000;
            let sum: f64 = (0..n).map(|_| c.sample(rng.random()) as f64).sum();
            let mean = sum / f64::from(n);
            // Heavy tails: allow 3% for the sample mean of 400k draws.
            assert!(
                (mean / c.mean() - 1.0).abs() < 0.03,
                "{name}: sample mean {mean}, analytic {}",
                c.mean()
            );
        }
    }

    /// X uniform on [100, 200]: E[min(X, 120)] = 100 + ∫ from 100 to 120 of
    /// (1 − (s − 100) / 100) ds = 118; uncapped, the mean 150.
    #[test]
    fn capped_mean_counts_the_sizes_below_the_first_point() {
        let c = Cdf::parse("t", "100 0\n200 1\n").unwrap();
        assert!((c.mean_capped(120.0) - 118.0).abs() < 1e-9);
        assert!((c.mean_capped(50.0) - 50.0).abs() < 1e-9);
        assert!((c.mean_capped(f64::INFINITY) - c.mean()).abs() < 1e-9);
    }

    #[test]
    fn interpolates_and_honours_point_masses() {
        let c = Cdf::parse("t", "100 0\n200 0.5\n200 0.8\n1000 1\n").unwrap();
        assert_eq!(c.sample(0.0), 100);
        assert_eq!(c.sample(0.25), 150);
        assert_eq!(c.sample(0.6), 200);
        assert_eq!(c.sample(0.9), 600);
        assert!((c.mean() - (0.5 * 150.0 + 0.3 * 200.0 + 0.2 * 600.0)).abs() < 1e-9);
        // The VL2 file's 50% point mass at one packet.
        let d = Cdf::named_or_file("datamining").unwrap();
        assert_eq!(d.sample(0.3), 1460);
    }

    #[test]
    fn rejects_bad_files_with_the_line() {
        let err = |t: &str| Cdf::parse("t", t).unwrap_err();
        assert!(err("100 0\n50 0.5\n200 1").contains("line 2: not monotone: size 50"));
        assert!(err("100 0.6\n200 0.5\n300 1").contains("line 2: not monotone: probability"));
        assert!(err("100 0\n200 0.9").contains("last probability must be 1"));
        assert!(err("100 0 7").contains("line 1: expected two numbers"));
        assert!(err("x 0").contains("size \"x\" is not a number"));
        assert!(err("# only a comment\n").contains("no points"));
        assert!(Cdf::named_or_file("no-such-thing")
            .unwrap_err()
            .contains("neither a shipped"));
    }

    #[test]
    fn refuses_what_is_not_a_small_regular_file_without_reading_it() {
        let dir = std::env::temp_dir().join(format!("dcnsim-cdf-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("fifo");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let big = dir.join("big.cdf");
        std::fs::write(&big, vec![b'#'; MAX_CDF_FILE_BYTES as usize + 1]).unwrap();
        let err = |p: &std::path::Path| Cdf::named_or_file(p.to_str().unwrap()).unwrap_err();
        assert!(err(&dir).ends_with("it is a directory"), "{}", err(&dir));
        assert!(err(&fifo).ends_with("it is not a regular file"));
        assert!(err(std::path::Path::new("/dev/zero")).ends_with("it is not a regular file"));
        assert!(err(&big).ends_with(&format!("more than the {MAX_CDF_FILE_BYTES} allowed")));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
