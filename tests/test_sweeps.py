"""Sweeps: resuming after Ctrl-C, Dask against the local pool, failed runs, queries,
and bad input. Small grids of short runs (a few seconds in all)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest
import tomli_w

import dcnsim
from dcnsim.cluster import DASK_CONNECT_TIMEOUT_S
from dcnsim.sweeps import Sweep, column_name, run_id
from simhelp import EXAMPLES, assert_one_error_line, cli, interruptible

#: Web-search flows on a k = 4 fat-tree: 0.2-0.5 s of wall time per run.
BASE = {
    "stop_time": "400ms",
    "topology": {"kind": "fat_tree", "k": 4, "link": {"rate": "1Gbps", "delay": "25us"}},
    "transport": {"protocol": "newreno"},
    "traffic": {"workloads": [{"src": "all", "dst": "all", "cdf": "websearch", "load": 0.5}]},
}
#: 3 loads x 2 protocols x 4 seeds = 24 runs.
GRID_24 = {
    "name": "resume",
    "base": BASE,
    "seeds": 4,
    "tables": ["flows"],
    "grid": {"transport": {"protocol": ["newreno", "dctcp"]}},
    "zip": [{"traffic.workloads[0].load": [0.3, 0.5, 0.7]}],
}
#: What differs between two executions of the same runs: when and how fast they ran.
TIMING = ["wall_s", "finished"]


def write_sweep(tmp_path: Path, spec: dict, name: str = "sweep.toml") -> Path:
    path = tmp_path / name
    path.write_text(tomli_w.dumps(spec))
    return path


def records(out: Path) -> dict[str, int]:
    """Each finished run's id and the modification time of its record."""
    return {p.parent.name: p.stat().st_mtime_ns for p in (out / "runs").glob("run=*/run.json")}


def tables(out: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The catalog without its timing columns, and every run's flows, in a fixed order."""
    catalog = dcnsim.load(out, "catalog").drop(columns=TIMING)
    flows = dcnsim.load(out, "flows").sort_values(["run", "flow_id"]).reset_index(drop=True)
    return catalog, flows


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("sweep") / "whole"
    outcome = dcnsim.sweep(GRID_24, out, jobs=2)
    assert (outcome.total, outcome.ran, outcome.skipped, outcome.failed) == (24, 24, 0, 0)
    return out


def test_grid_is_the_product_of_the_grid_the_zip_and_the_seeds():
    runs = Sweep.from_dict(GRID_24).runs()
    assert len(runs) == 24 and len({r.id for r in runs}) == 24
    points = {(r.params["transport_protocol"], r.params["traffic_workloads_0_load"]) for r in runs}
    assert points == {(p, ld) for p in ("newreno", "dctcp") for ld in (0.3, 0.5, 0.7)}
    first = runs[0]
    assert first.scenario.get("traffic.workloads[0].load") == 0.3
    assert first.scenario.get("seed") == 1 and first.id == run_id(first.scenario)
    assert column_name("traffic.workloads[0].load") == "traffic_workloads_0_load"


def test_interrupted_sweep_resumes_with_only_the_missing_runs(tmp_path, uninterrupted):
    path = write_sweep(tmp_path, GRID_24)
    out = tmp_path / "out"
    command = [sys.executable, "-m", "dcnsim", "sweep", str(path), "--out", str(out)]
    proc = interruptible(
        [*command, "--jobs", "2", "--no-progress"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while len(records(out)) < 12 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 130, stderr
    before = records(out)
    assert 12 <= len(before) < 24, len(before)
    # One line: how many runs the directory keeps, and that rerunning resumes.
    assert stderr.strip().splitlines()[-1] == (
        f"error: interrupted: {out} keeps {len(before)} of the sweep's 24 runs "
        f"({len(before)} finished now); run the same sweep again to resume"
    )
    catalog = pd.read_parquet(out / "catalog.parquet")  # written on the way out
    assert (catalog["status"] == "ok").sum() == len(before)
    assert (catalog["status"] == "pending").sum() == 24 - len(before)

    again = subprocess.run([*command, "--jobs", "2"], capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stderr
    assert f"ran {24 - len(before)}, {len(before)} already done, 0 failed" in again.stdout
    after = records(out)
    assert len(after) == 24
    assert {k: after[k] for k in before} == before  # finished runs were not run again
    for mine, whole in zip(tables(out), tables(uninterrupted), strict=True):
        pd.testing.assert_frame_equal(mine, whole)

    third = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert "ran 0, 24 already done" in third.stdout and records(out) == after


def test_a_sigterm_stops_a_sweep_in_one_line_and_it_resumes(tmp_path, uninterrupted):
    # SIGTERM to the whole process group (as timeout and Slurm's scancel send it): the
    # workers leave it to the sweep, which keeps what finished, writes its catalog
    # and exits 143; running it again runs only the rest.
    path = write_sweep(tmp_path, GRID_24)
    out = tmp_path / "out"
    command = [sys.executable, "-m", "dcnsim", "sweep", str(path), "--out", str(out)]
    proc = subprocess.Popen(
        [*command, "--jobs", "2", "--no-progress"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    deadline = time.monotonic() + 60
    while len(records(out)) < 8 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGTERM)
    _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 143, stderr
    before = records(out)
    assert 8 <= len(before) < 24, len(before)
    assert stderr.splitlines() == [
        f"error: terminated: {out} keeps {len(before)} of the sweep's 24 runs "
        f"({len(before)} finished now); run the same sweep again to resume"
    ]
    assert not [p for p in out.rglob(".*") if p.name.endswith((".tmp", ".old"))]
    again = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stderr
    assert f"ran {24 - len(before)}, {len(before)} already done, 0 failed" in again.stdout
    for mine, whole in zip(tables(out), tables(uninterrupted), strict=True):
        pd.testing.assert_frame_equal(mine, whole)


def test_a_killed_worker_stops_the_sweep_in_one_line_and_it_resumes(tmp_path, uninterrupted):
    path = write_sweep(tmp_path, GRID_24)
    out = tmp_path / "out"
    command = [sys.executable, "-m", "dcnsim", "sweep", str(path), "--out", str(out)]
    proc = subprocess.Popen(
        [*command, "--jobs", "2"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 60
    while len(records(out)) < 4 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    children = Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()
    assert children, "no worker processes"
    os.kill(int(children[0]), signal.SIGKILL)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 2 and stdout == "", stderr
    before = records(out)
    assert stderr.strip() == (
        f"error: a worker process died; {out} keeps {len(before)} of the sweep's 24 runs "
        f"({len(before)} finished now); run the same sweep again to resume"
    )
    again = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert f"ran {24 - len(before)}, {len(before)} already done, 0 failed" in again.stdout
    for mine, whole in zip(tables(out), tables(uninterrupted), strict=True):
        pd.testing.assert_frame_equal(mine, whole)


def test_dask_local_cluster_gives_the_local_pool_tables(tmp_path, uninterrupted):
    out = tmp_path / "dask"
    outcome = dcnsim.sweep(GRID_24, out, jobs=2, dask="local")
    assert (outcome.ran, outcome.failed) == (24, 0)
    for mine, whole in zip(tables(out), tables(uninterrupted), strict=True):
        pd.testing.assert_frame_equal(mine, whole)
    assert dcnsim.store.sessions(out)[-1]["on"] == "local"


SMALL = {
    "name": "small",
    "base": {**BASE, "stop_time": "60ms"},
    "seeds": [1, 2],
    "tables": ["flows"],
    "grid": {"transport.protocol": ["newreno", "dctcp"], "topology.k": [4, 5]},
}


def test_an_invalid_run_is_recorded_as_failed_and_the_rest_complete(tmp_path):
    path = write_sweep(tmp_path, SMALL)
    proc = cli("sweep", str(path), "--out", str(tmp_path / "out"), "--jobs", "2")
    assert proc.returncode == 0, proc.stderr
    assert "ran 8, 0 already done, 4 failed" in proc.stdout
    catalog = dcnsim.load(tmp_path / "out", "catalog")
    assert len(catalog) == 8
    failed = catalog[catalog["topology_k"] == 5]
    assert (failed["status"] == "failed").all()
    assert set(failed["error"]) == {"topology.k: fat-tree k must be even, got 5"}
    assert (catalog.loc[catalog["topology_k"] == 4, "status"] == "ok").all()
    assert f"failed {failed['run'].iloc[0]}: topology.k: fat-tree k must be even" in proc.stdout
    # A failed run is kept as failed: running again runs nothing.
    again = cli("sweep", str(path), "--out", str(tmp_path / "out"))
    assert "ran 0, 8 already done, 0 failed now" in again.stdout


def test_query_matches_pandas_on_the_same_files(tmp_path):
    spec = {**SMALL, "grid": {"transport.protocol": ["newreno", "dctcp"]}}
    spec["zip"] = [{"traffic.workloads[0].load": [0.3, 0.6]}]
    out = tmp_path / "out"
    dcnsim.sweep(spec, out, jobs=2)
    sql = (
        "SELECT transport_protocol, traffic_workloads_0_load AS load, count(*) AS flows, "
        "avg(slowdown) AS mean_slowdown FROM flows WHERE fct_s IS NOT NULL "
        "GROUP BY ALL ORDER BY ALL"
    )
    proc = cli("query", str(out), sql, "--csv")
    assert proc.returncode == 0, proc.stderr
    from io import StringIO

    answer = pd.read_csv(StringIO(proc.stdout))
    # The same by hand: every run's flows.parquet, its grid values from the catalog.
    catalog = pd.read_parquet(out / "catalog.parquet")
    frames = []
    for path in sorted((out / "runs").glob("run=*/flows.parquet")):
        frame = pd.read_parquet(path)
        frame["run"] = path.parent.name.removeprefix("run=")
        frames.append(frame)
    # Each written as `dcnsim run --out` writes a run's table: the same types, also
    # where a run has no flows at all (tree3_probes), and no pandas metadata.
    alone = dcnsim.run(EXAMPLES / "tree3_probes.toml").write(tmp_path / "alone")
    assert pq.read_schema(path).equals(pq.read_schema(alone / "flows.parquet"), check_metadata=True)
    flows = pd.concat(frames).merge(catalog, on="run")
    done = flows[flows["fct_s"].notna()]
    expected = (
        done.groupby(["transport_protocol", "traffic_workloads_0_load"])
        .agg(flows=("slowdown", "size"), mean_slowdown=("slowdown", "mean"))
        .reset_index()
        .rename(columns={"traffic_workloads_0_load": "load"})
    )
    assert len(expected) == 4 and (expected["flows"] > 0).all()
    pd.testing.assert_frame_equal(answer, expected, check_dtype=False)
    # The catalog as a view, and one run's summary: 8 runs, 60 ms each.
    summary = dcnsim.query(out, "SELECT count(*) AS n, min(sim_time_s) AS t FROM summary")
    assert summary.iloc[0].tolist() == [8, pytest.approx(0.06)]


def test_sweep_report_is_written(tmp_path):
    spec = {**SMALL, "grid": {"transport.protocol": ["newreno", "dctcp"]}}
    spec["zip"] = [{"traffic.workloads[0].load": [0.3, 0.6]}]
    spec["figures"] = [
        {
            "name": "slowdown",
            "table": "flows",
            "x": "traffic_workloads_0_load",
            "y": "slowdown",
            "by": "transport_protocol",
        }
    ]
    path = write_sweep(tmp_path, spec)
    proc = cli("sweep", str(path), "--out", str(tmp_path / "out"), "--report")
    assert proc.returncode == 0, proc.stderr
    text = (tmp_path / "out" / "report.html").read_text()
    assert text.count('<img src="data:image/png;base64,') == 1
    assert text.count("<details>") == 8  # the exact scenario of every run
    assert "dcnsim sweep small" in text and dcnsim.__version__ in text


# --- bad input ---------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


#: A valid figure of SMALL, changed one key at a time below.
FIG = {"name": "f", "table": "flows", "y": "fct_s", "x": "transport_protocol"}


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"grid": {"transport.protocl": ["dctcp"]}}, "grid.transport.protocl: not a scenario key"),
        ({"grid": {"topology.kk": [4]}}, "grid.topology.kk: not a scenario key"),
        ({"grid": {}}, "grid: empty"),
        ({"grid": {"seed": []}}, "grid.seed: expected a non-empty list"),
        # A run's seed is one of `seeds` (each grid seed was overwritten, and the
        # catalog's two `seed` columns ended the sweep in a traceback):
        ({"grid": {"seed": [1, 2]}}, "grid.seed: the seeds are the sweep's own key"),
        ({"zip": [{"seed": [1, 2], "stop_time": ["1ms", "2ms"]}]}, "zip.seed: the seeds are"),
        ({"seeds": 0}, "seeds: must be at least 1, got 0"),
        ({"seeds": -3}, "seeds: must be at least 1, got -3"),
        ({"seeds": []}, "seeds: the list is empty"),
        ({"tables": ["flow"]}, "tables: unknown table 'flow'"),
        ({"zip": [{"seed": [1, 2], "stop_time": ["1ms"]}]}, "zip[0]: lists of different lengths"),
        ({"base": "nosuch.toml"}, "base: cannot read"),
        ({"colour": "red"}, "colour: unknown key"),
        ({"figures": [{**FIG, "stat": "p0"}]}, "figures[0].stat: 'p0' (expected mean, median"),
        ({"figures": [{**FIG, "stat": "average"}]}, "figures[0].stat: 'average'"),
        ({"figures": [{**FIG, "kind": "bar"}]}, "figures[0].kind: 'bar' (expected line or cdf)"),
        ({"figures": [{**FIG, "kind": "cdf"}]}, "figures[0].x: not for a CDF"),
        ({"figures": [{**FIG, "log": "z"}]}, "figures[0].log: 'z' (expected x, y or xy)"),
        ({"figures": [FIG, FIG]}, "figures[1].name: 'f' names an earlier figure"),
        ({"figures": [{**FIG, "x": "load"}]}, "figures[0].x: 'load' is not a grid column"),
        ({"figures": [{**FIG, "y": 3}]}, "figures[0].y: expected a non-empty string"),
        # Checked against the tables' columns before the first run (DuckDB names it):
        (
            {"figures": [{**FIG, "y": "fct_ss"}]},
            "figures f: cannot draw (y, by or where): "
            'Binder Error: Referenced column "fct_ss" not found',
        ),
        ({"figures": [{**FIG, "where": "nosuch > 1"}]}, "figures f: cannot draw"),
        # Counted, not enumerated: refused at once.
        ({"seeds": 10**12}, "seeds: 1,000,000,000,000 seeds, more than the 100,000 runs"),
        (
            {"grid": {"topology.k": list(range(2, 2002, 2)), "stop_time": ["1ms"] * 1000}},
            "grid: 1000 x 1000 points x 2 seeds = 2,000,000 runs, more than the 100,000",
        ),
    ],
)
def test_bad_sweep_files_are_one_line_errors(tmp_path, change, expected):
    path = write_sweep(tmp_path, {**SMALL, **change})
    message = assert_one_error_line(cli("sweep", str(path), "--out", str(tmp_path / "out")))
    assert message.startswith(expected), message
    assert not (tmp_path / "out").exists()


def test_unreachable_dask_scheduler_is_one_line_without_hanging(tmp_path):
    path = write_sweep(tmp_path, SMALL)
    address = f"tcp://127.0.0.1:{_free_port()}"
    started = time.monotonic()
    proc = cli("sweep", str(path), "--out", str(tmp_path / "out"), "--dask", address)
    # The connect timeout plus the interpreter's and Dask's start-up: 11 s in all
    # on a 2-core machine at load 20. A hang would never end, so the margin is generous.
    assert time.monotonic() - started < DASK_CONNECT_TIMEOUT_S + 30
    message = assert_one_error_line(proc)
    assert message.startswith(f"--dask {address}: cannot reach the scheduler"), message
    assert not (tmp_path / "out").exists()
    bad = assert_one_error_line(
        cli("sweep", str(path), "--out", str(tmp_path / "o"), "--dask", "x")
    )
    assert bad.startswith("--dask: expected local, slurm or a scheduler address"), bad


def test_output_directory_with_foreign_files_is_refused(tmp_path):
    path = write_sweep(tmp_path, SMALL)
    out = tmp_path / "out"
    (out / "runs").mkdir(parents=True)
    (out / "thesis.tex").write_text("mine")
    (out / "runs" / "notes.txt").write_text("mine")
    message = assert_one_error_line(cli("sweep", str(path), "--out", str(out)))
    assert "--out" in message and "thesis.tex" in message and "runs/notes.txt" in message
    assert sorted(p.name for p in out.iterdir()) == ["runs", "thesis.tex"]


def test_query_errors_are_one_line(tmp_path):
    assert "no catalog.parquet" in assert_one_error_line(cli("query", str(tmp_path), "SELECT 1"))
    dcnsim.sweep({**SMALL, "grid": {"transport.protocol": ["newreno"]}}, tmp_path / "s", jobs=1)
    message = assert_one_error_line(cli("query", str(tmp_path / "s"), "SELECT nosuch FROM flows"))
    assert message.startswith("query:") and "nosuch" in message


def test_the_example_sweep_file_is_a_valid_sweep():
    sweep = Sweep.from_toml(Path(__file__).parents[1] / "examples/sweeps/protocols_by_load.toml")
    runs = sweep.runs()
    assert len(runs) == 2 * 3 * 3
    assert {r.scenario.get("topology.k") for r in runs} == {4}  # the base file's
    assert sweep.columns() == ["transport_protocol", "traffic_workloads_0_load", "seed"]


def test_the_dask_install_hint_works_as_written():
    """From a clone (`.[dask]`), or anywhere: the extra's requirements, as pyproject.toml
    lists them (not "dcnsim[dask]": dcnsim is not on a package index)."""
    import tomllib

    from dcnsim.cluster import dask_hint

    pyproject = tomllib.loads((EXAMPLES.parent / "pyproject.toml").read_text())
    hint = dask_hint()
    assert 'pip install ".[dask]"' in hint and "dcnsim[dask]" not in hint
    for requirement in pyproject["project"]["optional-dependencies"]["dask"]:
        assert f'"{requirement}"' in hint, hint
