"""Sweeps on Slurm: on the one-node cluster `.ci/slurm up` starts (CI's .ci/run starts
it and sets DCNSIM_SLURM_TESTS=1, so these run there and fail if Slurm does not
work), a small sweep gives the local pool's tables byte for byte, and each way a
cluster can fail ends the sweep with one line within a bounded time. The checks of
the [slurm] table alone need no cluster."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import tomli_w

import dcnsim.slurm as slurm_jobs
from dcnsim.slurm import cluster
from dcnsim.sweeps import Sweep, SweepError
from simhelp import assert_one_error_line, cli, interruptible

pytest.importorskip("dask_jobqueue", reason="the dask extra (a test requirement) is missing")

on_slurm = pytest.mark.skipif(
    not os.environ.get("DCNSIM_SLURM_TESTS"),
    reason="no Slurm cluster: run `.ci/slurm up` and set DCNSIM_SLURM_TESTS=1 (.ci/run does)",
)

#: 2 protocols x 2 seeds = 4 runs of web-search traffic on a k = 4 fat-tree, 20 ms.
SWEEP = {
    "name": "on slurm",
    "seeds": 2,
    "tables": ["flows"],
    "base": {
        "stop_time": "20ms",
        "topology": {"kind": "fat_tree", "k": 4, "link": {"rate": "1Gbps", "delay": "25us"}},
        "transport": {"protocol": "newreno"},
        "traffic": {"workloads": [{"src": "all", "dst": "all", "cdf": "websearch", "load": 0.5}]},
    },
    "grid": {"transport": {"protocol": ["newreno", "dctcp"]}},
}
#: The summary's columns that say how fast a run went, not what it simulated.
TIMING = ["wall_s", "packet_hops_per_s"]


def write(tmp_path: Path, slurm: dict | None, **base) -> Path:
    """The sweep file, with this [slurm] table (none if None) and base changes."""
    spec = {**SWEEP, "base": {**SWEEP["base"], **base}}
    if slurm is not None:
        spec["slurm"] = slurm
    path = tmp_path / "sweep.toml"
    path.write_text(tomli_w.dumps(spec))
    return path


def table(tmp_path: Path, **extra) -> dict:
    """A [slurm] table for the test cluster, worker logs under tmp_path/logs."""
    logs = tmp_path / "logs"
    return {"cores": 1, "memory": "1GB", "walltime": "00:05:00", "workers": 2} | {
        "log_directory": str(logs),
        **extra,
    }


def jobs() -> list[str]:
    """The ids of the cluster's jobs still queued or running."""
    out = subprocess.run(
        ["squeue", "-h", "-t", "PD,CF,R", "-o", "%i"], capture_output=True, text=True, check=True
    )
    return out.stdout.split()


def timed_error(tmp_path: Path, path: Path, bound_s: float) -> str:
    started = time.monotonic()
    proc = cli("sweep", str(path), "--out", str(tmp_path / "out"), "--dask", "slurm")
    assert time.monotonic() - started < bound_s
    return assert_one_error_line(proc)


@pytest.mark.parametrize(
    ("slurm", "expected"),
    [
        ({"partition": "debug"}, "slurm.partition: unknown key: dask-jobqueue calls it queue"),
        ({"cores": 0, "memory": "1GB"}, "slurm.cores: expected a whole number >= 1, got 0"),
        ({"cores": 1, "memory": 4}, "slurm.memory: expected a non-empty string, got 4"),
        ({"cores": 1, "memory": "1GB", "walltime": "soon"}, "slurm.walltime: 'soon' is not a"),
        ({"cores": 1, "memory": "1GB", "worker_wait": -1}, "slurm.worker_wait: expected seconds"),
        ({"cores": 1, "memory": "1GB", "nodes": 2}, "slurm.nodes: unknown key (expected one"),
        ({"cores": 1, "job_extra_directives": "-N 1"}, "slurm.job_extra_directives: expected a"),
    ],
)
def test_bad_slurm_tables_are_refused_when_the_sweep_is_read(slurm, expected):
    with pytest.raises(SweepError) as refused:
        Sweep.from_dict({**SWEEP, "slurm": slurm})
    assert str(refused.value).startswith(expected), refused.value


@pytest.mark.parametrize(
    ("slurm", "expected"),
    [
        ({}, "slurm: --dask slurm needs a [slurm] table in the sweep file"),
        ({"cores": 1}, "slurm.memory: required"),
        ({"cores": 1, "memory": "lots"}, "slurm.memory: 'lots' is not a size"),
    ],
)
def test_slurm_tables_that_cannot_make_a_cluster_are_refused_before_it(slurm, expected):
    with pytest.raises(SweepError) as refused:
        cluster(slurm, jobs=1)
    assert str(refused.value).startswith(expected), refused.value


def test_a_bad_slurm_table_is_one_line_and_exit_2_before_anything_is_submitted(tmp_path):
    for slurm, expected in [
        (None, "slurm: --dask slurm needs a [slurm] table in the sweep file"),
        ({"partition": "debug"}, "slurm.partition: unknown key: dask-jobqueue calls it queue"),
    ]:
        message = timed_error(tmp_path, write(tmp_path, slurm), 60)
        assert message.startswith(expected), message
        assert not (tmp_path / "out").exists()


@on_slurm
def test_a_sweep_on_slurm_gives_the_local_pool_tables_byte_for_byte(tmp_path):
    """Each run's flows file byte for byte, its summary but for the timing; without a
    dashboard port (8787 is taken here: no warning); and a sweep run again with nothing
    left submits no job."""
    path = write(tmp_path, table(tmp_path))
    with socket.socket() as taken:
        taken.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        taken.bind(("", 8787))
        taken.listen()
        proc = cli("sweep", str(path), "--out", str(tmp_path / "slurm"), "--dask", "slurm")
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    assert "ran 4, 0 already done, 0 failed now" in proc.stdout
    logs = sorted(p.name for p in (tmp_path / "logs").iterdir())
    assert len(logs) == 4  # two worker jobs, each an .out and an .err
    local = cli("sweep", str(path), "--out", str(tmp_path / "local"), "--jobs", "2")
    assert local.returncode == 0, local.stderr
    flows = sorted((tmp_path / "slurm" / "runs").glob("run=*/flows.parquet"))
    assert len(flows) == 4
    for mine in flows:
        theirs = tmp_path / "local" / mine.relative_to(tmp_path / "slurm")
        assert mine.read_bytes() == theirs.read_bytes(), mine
        summaries = [
            pq.read_table(p.with_name("summary.parquet")).drop(TIMING) for p in (mine, theirs)
        ]
        assert summaries[0].equals(summaries[1])
    again = cli("sweep", str(path), "--out", str(tmp_path / "slurm"), "--dask", "slurm")
    assert again.returncode == 0 and "ran 0, 4 already done" in again.stdout, again.stderr
    assert sorted(p.name for p in (tmp_path / "logs").iterdir()) == logs  # no new job


@on_slurm
def test_a_partition_that_does_not_exist_is_one_line_before_submitting(tmp_path):
    message = timed_error(tmp_path, write(tmp_path, table(tmp_path, queue="nosuch")), 60)
    assert message == (
        "slurm: Slurm refuses the worker job: allocation failure: Invalid partition name specified"
    ), message
    assert not list((tmp_path / "logs").glob("*")) and not (tmp_path / "out").exists()


@on_slurm
def test_no_worker_within_the_wait_is_one_line_naming_the_queued_jobs(tmp_path):
    """Both CPUs taken by another job: the worker job waits for resources."""
    blocker = subprocess.run(
        ["sbatch", "--parsable", "-c", "2", "--mem=100M", "-o", "/dev/null", "--wrap", "sleep 300"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    try:
        path = write(tmp_path, table(tmp_path, workers=1, worker_wait=5))
        message = timed_error(tmp_path, path, 60)
    finally:
        subprocess.run(["scancel", blocker], check=True)
    assert message.startswith("slurm: no worker within worker_wait = 5 s (job "), message
    assert ": PENDING (Resources)); worker logs: " in message
    assert message.endswith(
        "keeps 0 of the sweep's 4 runs (0 finished now); run the same sweep again to resume"
    ), message
    assert jobs() == []  # the worker job was cancelled (the blocker too, by the test)


@on_slurm
def test_a_walltime_shorter_than_a_run_is_one_line_naming_it(tmp_path):
    """Slurm counts walltime in minutes and checks it every 30 s: the one worker is
    killed 60-90 s into a run that would take far longer."""
    path = write(tmp_path, table(tmp_path, workers=1, walltime="1"), stop_time="1000s")
    message = timed_error(tmp_path, path, 180)
    assert message.startswith("slurm: every worker was lost and no job is left (job "), message
    # TIMEOUT, or COMPLETING while slurmd still cleans up the killed job (seen in CI).
    assert re.search(
        r": (TIMEOUT|COMPLETING) \(TimeLimit\)\): a run takes longer than walltime = 1; "
        "worker logs:",
        message,
    ), message
    assert "keeps 0 of the sweep's 4 runs" in message


@pytest.mark.parametrize(
    ("state", "reason", "hint"),
    [
        ("TIMEOUT", "TimeLimit", ": a run takes longer than walltime = 1; "),
        ("OUT_OF_MEMORY", "OutOfMemory", ": a worker needs more than memory = 1GB; "),
        ("NODE_FAIL", "NodeDown", ": a compute node failed (scontrol show node); "),
        ("PREEMPTED", "None", ": Slurm preempted the worker jobs for others; "),
        ("CANCELLED", "None", ": the worker jobs were cancelled outside the sweep (scancel); "),
        ("FAILED", "NonZeroExitCode", "; "),
    ],
)
def test_a_lost_worker_jobs_state_gives_the_cause(monkeypatch, state, reason, hint):
    """The line's cause from the job state and reason scontrol shows (squeue(1), JOB
    STATE CODES, JOB REASON CODES); a job still COMPLETING is waited for until
    worker_wait, so that its final state can be read."""
    limits = {"memory": "1GB", "walltime": "1", "worker_wait": 30, "log_directory": "L"}
    monkeypatch.setattr(slurm_jobs, "job_states", lambda _: [("7", state, reason)])
    line = slurm_jobs.why_no_worker(None, limits, had_workers=True, waited_s=0.5)
    why = "" if reason == "None" else f" ({reason})"
    lost = "slurm: every worker was lost and no job is left"
    assert line == f"{lost} (job 7: {state}{why}){hint}worker logs: L"
    monkeypatch.setattr(slurm_jobs, "job_states", lambda _: [("7", "COMPLETING", reason)])
    assert slurm_jobs.why_no_worker(None, limits, had_workers=True, waited_s=29.0) is None
    line = slurm_jobs.why_no_worker(None, limits, had_workers=True, waited_s=30.0)
    # Still COMPLETING after worker_wait: only the reason can say why.
    hint = hint if why else "; "
    assert line == f"{lost} (job 7: COMPLETING{why}){hint}worker logs: L"


@on_slurm
def test_worker_jobs_cancelled_outside_the_sweep_is_one_line_saying_so(tmp_path):
    path = write(tmp_path, table(tmp_path, workers=1), stop_time="1000s")
    command = ["sweep", str(path), "--out", str(tmp_path / "out"), "--dask", "slurm"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "dcnsim", *command],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and not any(
        "Registered to" in log.read_text() for log in (tmp_path / "logs").glob("*.err")
    ):
        time.sleep(0.2)
    time.sleep(2)  # the sweep sees its worker before the job is cancelled
    subprocess.run(["scancel", *jobs()], check=True)
    stdout, stderr = proc.communicate(timeout=120)
    message = assert_one_error_line(
        subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)
    )
    assert re.match(
        r"slurm: every worker was lost and no job is left \(job \d+: CANCELLED\): the "
        r"worker jobs were cancelled outside the sweep \(scancel\); worker logs: ",
        message,
    ), message
    assert "keeps 0 of the sweep's 4 runs" in message


@on_slurm
def test_ctrl_c_on_slurm_exits_130_with_one_line_and_cancels_the_jobs(tmp_path):
    path = write(tmp_path, table(tmp_path), stop_time="1000s")
    proc = interruptible(
        [
            sys.executable,
            "-m",
            "dcnsim",
            "sweep",
            str(path),
            "--out",
            str(tmp_path / "out"),
            "--dask",
            "slurm",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while not list((tmp_path / "logs").glob("*.err")) and time.monotonic() < deadline:
        time.sleep(0.2)
    time.sleep(2)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130 and stdout == "", stderr
    lines = stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: interrupted: "), stderr
    assert "keeps 0 of the sweep's 4 runs" in lines[0]
    assert jobs() == []
