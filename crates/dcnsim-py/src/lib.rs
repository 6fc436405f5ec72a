//! Python bindings: `dcnsim._core`. Scenarios cross as JSON text; tables come
//! back as `Columns` (numpy arrays and lists of strings, made when asked for)
//! that the Python package turns into DataFrames, packet captures as a dict of name → pcap bytes;
//! tables are written as Parquet files here (`parquet_file.rs`). Runs release the
//! GIL.

mod parquet_file;

use dcnsim_core::{Aborted, Column, LatencyStats, Progress, Scenario, Sink, Table};
use numpy::{PyArray1, PyReadonlyArray1};
use parquet_file::{TableFile, WriteError};
use pyo3::create_exception;
use pyo3::exceptions::{PyKeyError, PyOSError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyIterator, PyList, PyTuple};
use serde_json::Value;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;

create_exception!(_core, ScenarioError, pyo3::exceptions::PyValueError);

fn parse(json: &str) -> PyResult<Scenario> {
    Scenario::from_json_str(json).map_err(|e| ScenarioError::new_err(e.to_string()))
}

/// Validate a scenario given as JSON text; raises ScenarioError.
#[pyfunction]
fn validate(scenario_json: &str) -> PyResult<()> {
    parse(scenario_json).map(|_| ())
}

/// What a valid scenario contains (sizes and applications); raises ScenarioError.
#[pyfunction]
fn describe<'py>(py: Python<'py>, scenario_json: &str) -> PyResult<Bound<'py, PyAny>> {
    json_to_py(py, &parse(scenario_json)?.describe())
}

/// A size such as `"8GB"` in bytes; raises ValueError saying why not.
#[pyfunction]
fn parse_bytes(text: &str) -> PyResult<u64> {
    text.parse::<dcnsim_core::units::Bytes>()
        .map(|b| b.0)
        .map_err(pyo3::exceptions::PyValueError::new_err)
}

/// What the memory limits of this process's cgroups leave, in bytes (the
/// smallest limit less what its cgroup holds but its file cache), with
/// `/proc` and `/sys` under `root`; None without a limit.
#[pyfunction]
#[pyo3(signature = (root = "/"))]
fn cgroup_left(root: &str) -> Option<u64> {
    dcnsim_core::cgroup_left(std::path::Path::new(root))
}

/// A quantity of the scenario language as the core reads it: `"time"` in
/// picoseconds, `"rate"` in bit/s, `"capacity"` as `(count, "pkt" | "B")`;
/// raises ValueError saying why not. Crosscheck translates scenarios with it.
#[pyfunction]
fn quantity<'py>(py: Python<'py>, kind: &str, text: &str) -> PyResult<Bound<'py, PyAny>> {
    use dcnsim_core::units::{Capacity, Rate, Time};
    let bad = pyo3::exceptions::PyValueError::new_err;
    Ok(match kind {
        "time" => text
            .parse::<Time>()
            .map_err(bad)?
            .0
            .into_pyobject(py)?
            .into_any(),
        "rate" => text
            .parse::<Rate>()
            .map_err(bad)?
            .0
            .into_pyobject(py)?
            .into_any(),
        "capacity" => match text.parse::<Capacity>().map_err(bad)? {
            Capacity::Packets(n) => (n, "pkt").into_pyobject(py)?.into_any(),
            Capacity::Bytes(n) => (n, "B").into_pyobject(py)?.into_any(),
        },
        _ => return Err(bad(format!("unknown quantity kind {kind:?}"))),
    })
}

/// The TCP profiles table (`transport.profile`), as the core reads it.
#[pyfunction]
fn profiles_toml() -> &'static str {
    include_str!("../../dcnsim-core/src/tcp/profiles.toml")
}

/// The reference documents, compiled in so an installed dcnsim carries them
/// (`dcnsim docs NAME`).
const DOCS: [(&str, &str); 7] = [
    ("scenario", include_str!("../../../docs/scenario.md")),
    ("experiments", include_str!("../../../docs/experiments.md")),
    ("studies", include_str!("../../../docs/studies.md")),
    (
        "architecture",
        include_str!("../../../docs/architecture.md"),
    ),
    ("performance", include_str!("../../../docs/performance.md")),
    ("estimate", include_str!("../../../docs/estimate.md")),
    ("crosscheck", include_str!("../../../docs/crosscheck.md")),
];

/// The reference documents by name, in order.
#[pyfunction]
fn docs() -> Vec<(&'static str, &'static str)> {
    DOCS.to_vec()
}

/// The names each axis accepts, by axis.
#[pyfunction]
fn names() -> Vec<(&'static str, Vec<&'static str>)> {
    dcnsim_core::names()
}

fn json_to_py<'py>(py: Python<'py>, v: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => b.into_pyobject(py)?.to_owned().into_any(),
        Value::Number(n) => match n.as_u64() {
            Some(u) => u.into_pyobject(py)?.into_any(),
            None => n.as_f64().unwrap_or(f64::NAN).into_pyobject(py)?.into_any(),
        },
        Value::String(s) => s.into_pyobject(py)?.into_any(),
        Value::Array(a) => {
            let items = a
                .iter()
                .map(|x| json_to_py(py, x))
                .collect::<PyResult<Vec<_>>>()?;
            PyList::new(py, items)?.into_any()
        }
        Value::Object(m) => {
            let d = PyDict::new(py);
            for (k, x) in m {
                d.set_item(k, json_to_py(py, x)?)?;
            }
            d.into_any()
        }
    })
}

fn table_to_py(py: Python<'_>, t: Table) -> PyResult<Bound<'_, Columns>> {
    Bound::new(py, Columns(t))
}

/// A table as the core returned it: a read-only mapping of column name to
/// values, each made when asked for (numbers as numpy arrays, strings as
/// lists), so a run whose tables are written as files or only counted never
/// loads numpy. `rows` is the number of rows; it pickles as a dict.
#[pyclass(frozen, mapping, module = "dcnsim._core")]
struct Columns(Table);

#[pymethods]
impl Columns {
    /// The number of rows.
    #[getter]
    fn rows(&self) -> usize {
        self.0.rows()
    }

    fn __len__(&self) -> usize {
        self.0.columns.len()
    }

    fn __getitem__<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
        match self.0.column(name) {
            Some(c) => column_to_py(py, c),
            None => Err(PyKeyError::new_err(name.to_owned())),
        }
    }

    fn __contains__(&self, name: &str) -> bool {
        self.0.column(name).is_some()
    }

    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyIterator>> {
        PyList::new(py, self.keys())?.try_iter()
    }

    fn keys(&self) -> Vec<&'static str> {
        self.0.columns.iter().map(|(n, _)| *n).collect()
    }

    fn values<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyAny>>> {
        self.0
            .columns
            .iter()
            .map(|(_, c)| column_to_py(py, c))
            .collect()
    }

    fn items<'py>(&self, py: Python<'py>) -> PyResult<Vec<(&'static str, Bound<'py, PyAny>)>> {
        self.0
            .columns
            .iter()
            .map(|(n, c)| Ok((*n, column_to_py(py, c)?)))
            .collect()
    }

    #[pyo3(signature = (name, default=None))]
    fn get<'py>(
        &self,
        py: Python<'py>,
        name: &str,
        default: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        match self.0.column(name) {
            Some(c) => column_to_py(py, c),
            None => Ok(default.unwrap_or_else(|| py.None().into_bound(py))),
        }
    }

    fn __reduce__<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyAny>,))> {
        let dict = py.get_type::<PyDict>().into_any();
        Ok((dict, (PyList::new(py, self.items(py)?)?.into_any(),)))
    }

    fn __repr__(&self) -> String {
        format!(
            "Columns({} rows: {})",
            self.0.rows(),
            self.keys().join(", ")
        )
    }
}

fn column_to_py<'py>(py: Python<'py>, c: &Column) -> PyResult<Bound<'py, PyAny>> {
    Ok(match c {
        Column::F64(v) => PyArray1::from_slice(py, v).into_any(),
        Column::I64(v) => PyArray1::from_slice(py, v).into_any(),
        Column::Str(v) => PyList::new(py, v)?.into_any(),
    })
}

fn progress_to_py<'py>(py: Python<'py>, p: &Progress) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("sim_time_s", p.sim_time_s)?;
    d.set_item("stop_time_s", p.stop_time_s)?;
    d.set_item("events", p.events)?;
    d.set_item("packet_hops", p.packet_hops)?;
    d.set_item("wall_s", p.wall_s)?;
    d.set_item("packet_hops_per_s", p.packet_hops_per_s)?;
    d.set_item("recorded_rows", p.recorded_rows)?;
    Ok(d)
}

/// Run a scenario given as JSON text.
///
/// `memory_check(terms)` gets the core's memory estimate of the scenario it
/// parsed (bytes by term, largest first) before anything is built, and raises
/// to refuse the run. `hook(progress: dict)` is called about every quarter
/// second. With `chunk_rows`, the recorded rows (`probes`, `queues`,
/// `flow_trace`, `links`) leave the core in chunks of about `chunk_rows` rows as the
/// run goes and those tables come back empty: a table named in `recorded`
/// (name → (Parquet file, whether written even if left empty)) goes to its
/// file, the others are dropped; `written` lists the files made. Every run
/// returns `probe_latency`, the statistics of the probe rows' latencies. An
/// exception from a callback (or a pending signal such as Ctrl-C) aborts the
/// run and propagates, and so does an OSError writing a file.
#[pyfunction]
#[pyo3(signature = (scenario_json, hook=None, memory_check=None, chunk_rows=None, recorded=None))]
fn run<'py>(
    py: Python<'py>,
    scenario_json: &str,
    hook: Option<Py<PyAny>>,
    memory_check: Option<Bound<'py, PyAny>>,
    chunk_rows: Option<usize>,
    recorded: Option<HashMap<String, (PathBuf, bool)>>,
) -> PyResult<Bound<'py, PyDict>> {
    let sc = parse(scenario_json)?;
    if let Some(check) = memory_check {
        check.call1((sc.memory_estimate(chunk_rows.map(|n| n as u64)),))?;
    }
    let mut files = RecordedFiles::new(recorded.unwrap_or_default());
    // The first error of a callback (or a pending signal); it stops the run.
    let failure: Mutex<Option<PyErr>> = Mutex::new(None);
    let result = py.detach(|| {
        let mut on_progress = |p: &Progress| {
            Python::attach(|py| {
                match py.check_signals().and_then(|()| match &hook {
                    Some(h) => h.call1(py, (progress_to_py(py, p)?,)).map(drop),
                    None => Ok(()),
                }) {
                    Ok(()) => true,
                    Err(e) => {
                        *failure.lock().expect("not poisoned") = Some(e);
                        false
                    }
                }
            })
        };
        match chunk_rows {
            None => dcnsim_core::run(&sc, &mut on_progress),
            Some(chunk_rows) => {
                let mut send = |name: &'static str, t: Table| files.send(name, &t);
                let sink = Sink {
                    chunk_rows,
                    send: &mut send,
                };
                dcnsim_core::run_streamed(&sc, &mut on_progress, sink)
            }
        }
    });
    let out = match result {
        Ok(out) => out,
        Err(Aborted::OutOfMemory { bytes, at }) => {
            return Err(ScenarioError::new_err(format!(
                "scenario: the run outgrew the memory the process may take: a table's growth \
                 to {:.1} MB was refused at {:.6} s of simulated time (more held at once than the estimate \
                 before the run counted: packets queued in deep buffers, events, flows)",
                bytes as f64 / 1e6,
                at.0 as f64 / 1e12
            )))
        }
        Err(Aborted::CgroupLimit { used, limit, at }) => {
            return Err(ScenarioError::new_err(format!(
                "scenario: the run outgrew the memory the process may take: its cgroup would \
                 hold {:.1} MB of its {:.1} MB limit at {:.6} s of simulated time, stopped before \
                 the kernel kills it (more held at once than the estimate before the run \
                 counted: packets queued in deep buffers, events, flows)",
                used as f64 / 1e6,
                limit as f64 / 1e6,
                at.0 as f64 / 1e12
            )))
        }
        Err(Aborted::Hook) => {
            return Err(
                match (failure.into_inner().expect("not poisoned"), files.failure) {
                    (Some(e), _) => e,
                    (None, Some(e)) => os_error(py, e),
                    (None, None) => pyo3::exceptions::PyRuntimeError::new_err("run aborted"),
                },
            )
        }
    };
    let mut latency = files.latency.clone();
    if chunk_rows.is_none() {
        latency.add(out.probes.f64("latency_s"));
    }
    let written = files.close().map_err(|e| os_error(py, e))?;
    let d = PyDict::new(py);
    let summary = serde_json::to_value(&out.summary).expect("summary serializes");
    d.set_item("summary", json_to_py(py, &summary)?)?;
    d.set_item("flows", table_to_py(py, out.flows)?)?;
    d.set_item("probes", table_to_py(py, out.probes)?)?;
    d.set_item("queues", table_to_py(py, out.queues)?)?;
    d.set_item("ports", table_to_py(py, out.ports)?)?;
    d.set_item("ops", table_to_py(py, out.ops)?)?;
    d.set_item("rounds", table_to_py(py, out.rounds)?)?;
    d.set_item("agent_rows", table_to_py(py, out.agent_rows)?)?;
    d.set_item("flow_trace", table_to_py(py, out.flow_trace)?)?;
    d.set_item("links", table_to_py(py, out.links)?)?;
    let pcaps = PyDict::new(py);
    for (name, bytes) in out.pcaps {
        pcaps.set_item(name, PyBytes::new(py, &bytes))?;
    }
    d.set_item("pcaps", pcaps)?;
    d.set_item("written", written)?;
    let stats = PyDict::new(py);
    stats.set_item("rows", latency.rows)?;
    stats.set_item("received", latency.received)?;
    stats.set_item("mean", latency.mean)?;
    stats.set_item("std", latency.std())?;
    stats.set_item("min", latency.min)?;
    stats.set_item("max", latency.max)?;
    d.set_item("probe_latency", stats)?;
    Ok(d)
}

/// Where a streamed run's recorded rows go: a table with a file goes there
/// (created by its first chunk with rows, or by its last, with none, when it
/// is written even if empty), one row group per chunk; the others are dropped.
/// The probe latencies are summarized on the way.
struct RecordedFiles {
    /// Table name → its file, whether written even if empty, the file once made.
    files: HashMap<String, (PathBuf, bool, Option<TableFile>)>,
    latency: LatencyStats,
    /// The write that failed, which aborted the run.
    failure: Option<WriteError>,
}

impl RecordedFiles {
    fn new(files: HashMap<String, (PathBuf, bool)>) -> RecordedFiles {
        RecordedFiles {
            files: files
                .into_iter()
                .map(|(name, (path, always))| (name, (path, always, None)))
                .collect(),
            latency: LatencyStats::default(),
            failure: None,
        }
    }

    /// Takes a chunk; false (the run stops) if writing it failed.
    fn send(&mut self, name: &str, t: &Table) -> bool {
        if name == "probes" {
            self.latency.add(t.f64("latency_s"));
        }
        let Some((path, always, file)) = self.files.get_mut(name) else {
            return true;
        };
        let columns = t.columns.iter().map(|(n, c)| (*n, c));
        let written = match file {
            Some(f) if t.rows() > 0 => f.write(columns),
            None if t.rows() > 0 || *always => {
                TableFile::create(path, columns).map(|f| *file = Some(f))
            }
            _ => Ok(()),
        };
        written.map_err(|e| self.failure = Some(e)).is_ok()
    }

    /// Finishes the files; the names of the tables written, in order.
    fn close(self) -> Result<Vec<String>, WriteError> {
        let mut written = Vec::new();
        for (name, (_, _, file)) in self.files {
            if let Some(f) = file {
                f.close()?;
                written.push(name);
            }
        }
        written.sort();
        Ok(written)
    }
}

/// A failed write as Python's OSError (errno, reason, the file), which
/// `dcnsim.outdir` names as the path its caller gave.
fn os_error(py: Python<'_>, e: WriteError) -> PyErr {
    let path = e.path.display().to_string();
    match e.error.raw_os_error() {
        Some(code) => {
            let reason = py
                .import("os")
                .and_then(|os| os.call_method1("strerror", (code,)))
                .map_or_else(|_| e.error.to_string(), |r| r.to_string());
            PyOSError::new_err((code, reason, path))
        }
        None => PyOSError::new_err(format!("{path}: {}", e.error)),
    }
}

/// Write a table (`Columns`, or a dict of name → numpy float64 or int64
/// array, or list of strings) to the Parquet file `path` (`parquet_file.rs`);
/// raises OSError.
#[pyfunction]
fn write_parquet(py: Python<'_>, path: PathBuf, columns: Bound<'_, PyAny>) -> PyResult<()> {
    if let Ok(held) = columns.downcast::<Columns>() {
        let table = &held.get().0;
        let columns = table.columns.iter().map(|(n, c)| (*n, c));
        return py
            .detach(|| parquet_file::write_table(&path, columns))
            .map_err(|e| os_error(py, e));
    }
    let columns = columns.downcast::<PyDict>()?;
    let mut table: Vec<(String, Column)> = Vec::with_capacity(columns.len());
    for (name, values) in columns.iter() {
        let column = if let Ok(v) = values.downcast::<PyList>() {
            Column::Str(v.extract()?)
        } else if let Ok(v) = values.extract::<PyReadonlyArray1<'_, f64>>() {
            Column::F64(v.as_array().to_vec())
        } else if let Ok(v) = values.extract::<PyReadonlyArray1<'_, i64>>() {
            Column::I64(v.as_array().to_vec())
        } else {
            return Err(PyTypeError::new_err(format!(
                "{name}: expected a float64 or int64 array or a list of strings"
            )));
        };
        table.push((name.extract()?, column));
    }
    let columns = table.iter().map(|(n, c)| (n.as_str(), c));
    py.detach(|| parquet_file::write_table(&path, columns))
        .map_err(|e| os_error(py, e))
}

/// A fixed benchmark scenario by name (`datagram`, `tcp`, `pfabric`, `b1`,
/// `flowheavy`), as JSON text; `quick` gives it its quick run's stop time.
#[pyfunction]
#[pyo3(signature = (name = "datagram", quick = false))]
fn bench_scenario(name: &str, quick: bool) -> PyResult<String> {
    let (_, text, quick_stop) = dcnsim_core::BENCH_SCENARIOS
        .iter()
        .find(|(n, _, _)| *n == name)
        .ok_or_else(|| {
            pyo3::exceptions::PyValueError::new_err(format!("no benchmark named {name:?}"))
        })?;
    let mut v: Value = toml::from_str(text).expect("bench scenario is valid TOML");
    if quick {
        v["stop_time"] = Value::from(*quick_stop);
    }
    Ok(v.to_string())
}

/// The flows a scenario's open-loop traffic opens and their paths, drawn
/// without a run (`dcnsim_core::sim::drawn`): a dict of three tables,
/// `flows`, `hops` and `ports`. Raises ScenarioError for a scenario that does
/// not validate or whose traffic cannot be drawn (probes, streams,
/// closed-loop applications).
#[pyfunction]
fn drawn<'py>(py: Python<'py>, scenario_json: &str) -> PyResult<Bound<'py, PyDict>> {
    let sc = parse(scenario_json)?;
    let d = py
        .detach(|| dcnsim_core::sim::drawn::drawn(&sc))
        .map_err(|e| ScenarioError::new_err(e.to_string()))?;
    let out = PyDict::new(py);
    out.set_item("flows", table_to_py(py, d.flows)?)?;
    out.set_item("hops", table_to_py(py, d.hops)?)?;
    out.set_item("ports", table_to_py(py, d.ports)?)?;
    Ok(out)
}

/// The names of the fixed benchmarks.
#[pyfunction]
fn bench_names() -> Vec<&'static str> {
    dcnsim_core::BENCH_SCENARIOS
        .iter()
        .map(|(n, _, _)| *n)
        .collect()
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    m.add_class::<Columns>()?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // Workload CDFs known by name (`traffic.workloads[].cdf`); anything else is a path.
    m.add(
        "SHIPPED_CDFS",
        PyTuple::new(m.py(), dcnsim_core::workload::Cdf::NAMES)?,
    )?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(drawn, m)?)?;
    m.add_function(wrap_pyfunction!(bench_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(bench_names, m)?)?;
    m.add_function(wrap_pyfunction!(describe, m)?)?;
    m.add_function(wrap_pyfunction!(names, m)?)?;
    m.add_function(wrap_pyfunction!(parse_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(cgroup_left, m)?)?;
    m.add_function(wrap_pyfunction!(quantity, m)?)?;
    m.add_function(wrap_pyfunction!(profiles_toml, m)?)?;
    m.add_function(wrap_pyfunction!(docs, m)?)?;
    m.add_function(wrap_pyfunction!(write_parquet, m)?)?;
    Ok(())
}
