//! Python bindings: `dcnsim._core`. Scenarios cross as JSON text; results come
//! back as dicts of numpy arrays (strings as lists) that the Python package
//! turns into DataFrames, packet captures as a dict of name → pcap bytes.
//! Runs release the GIL.

use dcnsim_core::{Aborted, Column, Progress, Scenario, Sink, Table};
use numpy::IntoPyArray;
use pyo3::create_exception;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple};
use serde_json::Value;
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

/// The reference documents, compiled in so an installed dcnsim carries them
/// (`dcnsim docs NAME`).
const DOCS: [(&str, &str); 5] = [
    ("scenario", include_str!("../../../docs/scenario.md")),
    ("experiments", include_str!("../../../docs/experiments.md")),
    ("studies", include_str!("../../../docs/studies.md")),
    (
        "architecture",
        include_str!("../../../docs/architecture.md"),
    ),
    ("performance", include_str!("../../../docs/performance.md")),
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

fn table_to_py<'py>(py: Python<'py>, t: Table) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (name, col) in t.columns {
        match col {
            Column::F64(v) => d.set_item(name, v.into_pyarray(py))?,
            Column::I64(v) => d.set_item(name, v.into_pyarray(py))?,
            Column::Str(v) => d.set_item(name, PyList::new(py, v)?)?,
        }
    }
    Ok(d)
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
/// second. With `sink` (and `chunk_rows`), the recorded rows (`probes`,
/// `queues`, `flow_trace`) go to `sink(name, columns)` in chunks of about
/// `chunk_rows` rows as the run goes, and those tables come back empty. An exception from a callback (or a
/// pending signal such as Ctrl-C) aborts the run and propagates.
#[pyfunction]
#[pyo3(signature = (scenario_json, hook=None, memory_check=None, sink=None, chunk_rows=None))]
fn run<'py>(
    py: Python<'py>,
    scenario_json: &str,
    hook: Option<Py<PyAny>>,
    memory_check: Option<Bound<'py, PyAny>>,
    sink: Option<Py<PyAny>>,
    chunk_rows: Option<usize>,
) -> PyResult<Bound<'py, PyDict>> {
    let sc = parse(scenario_json)?;
    let sink = match (sink, chunk_rows) {
        (Some(s), Some(n)) => Some((s, n)),
        (None, _) => None,
        (Some(_), None) => {
            return Err(pyo3::exceptions::PyValueError::new_err(
                "chunk_rows: required with sink",
            ))
        }
    };
    if let Some(check) = memory_check {
        let held = sink.as_ref().map(|&(_, n)| n as u64);
        check.call1((sc.memory_estimate(held),))?;
    }
    // The first error of a callback (or a pending signal); it stops the run.
    let failure: Mutex<Option<PyErr>> = Mutex::new(None);
    let call = |f: &dyn Fn(Python<'_>) -> PyResult<()>| {
        Python::attach(|py| match py.check_signals().and_then(|()| f(py)) {
            Ok(()) => true,
            Err(e) => {
                *failure.lock().expect("not poisoned") = Some(e);
                false
            }
        })
    };
    let result = py.detach(|| {
        let mut on_progress = |p: &Progress| {
            call(&|py| match &hook {
                Some(h) => h.call1(py, (progress_to_py(py, p)?,)).map(drop),
                None => Ok(()),
            })
        };
        match &sink {
            None => dcnsim_core::run(&sc, &mut on_progress),
            Some((s, chunk_rows)) => {
                let mut send = |name: &'static str, t: Table| {
                    let rows = Mutex::new(Some(t));
                    call(&|py| {
                        let t = rows
                            .lock()
                            .expect("not poisoned")
                            .take()
                            .expect("sent once");
                        s.call1(py, (name, table_to_py(py, t)?)).map(drop)
                    })
                };
                let sink = Sink {
                    chunk_rows: *chunk_rows,
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
        Err(Aborted::Hook) => {
            return Err(failure
                .into_inner()
                .expect("not poisoned")
                .unwrap_or_else(|| pyo3::exceptions::PyRuntimeError::new_err("run aborted")))
        }
    };
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
    let pcaps = PyDict::new(py);
    for (name, bytes) in out.pcaps {
        pcaps.set_item(name, PyBytes::new(py, &bytes))?;
    }
    d.set_item("pcaps", pcaps)?;
    Ok(d)
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
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // Workload CDFs known by name (`traffic.workloads[].cdf`); anything else is a path.
    m.add(
        "SHIPPED_CDFS",
        PyTuple::new(m.py(), dcnsim_core::workload::Cdf::NAMES)?,
    )?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(bench_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(bench_names, m)?)?;
    m.add_function(wrap_pyfunction!(describe, m)?)?;
    m.add_function(wrap_pyfunction!(names, m)?)?;
    m.add_function(wrap_pyfunction!(parse_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(docs, m)?)?;
    Ok(())
}
