"""Sweeps on Slurm: the sweep file's ``[slurm]`` table, checked before anything is
submitted, and the state of the worker jobs when the cluster has no worker.

The table holds dask-jobqueue's ``SLURMCluster`` options (``KEYS``; Slurm's partition
is its ``queue``) and two of dcnsim's own: ``workers``, the number of worker jobs, and
``worker_wait``, how long the sweep waits for a worker before it ends (``WORKER_WAIT_S``).
``cluster`` makes the cluster with no dashboard unless asked and tries the worker job
on Slurm with ``sbatch --test-only`` before any job is submitted: a partition, account,
walltime or memory that Slurm refuses is one line (``SweepError``), not tracebacks and
a hang. ``why_no_worker`` reads the jobs' states (``scontrol``) once the cluster has
no worker: all ended (a walltime shorter than a run, a job that failed at start) is a
line at once; still queued, a line after ``worker_wait``.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import tempfile
from collections.abc import Mapping
from typing import Any

from dcnsim.sweep_run import SweepError

#: The ``[slurm]`` keys and what each holds: ``str``, ``int`` (>= 1), ``float``
#: (seconds > 0), ``list`` (of strings) or ``dict`` (a table). dask-jobqueue's
#: ``SLURMCluster`` options, less those a sweep sets itself, and ``workers``,
#: ``worker_wait``.
KEYS: dict[str, type] = {
    "queue": str,
    "account": str,
    "cores": int,
    "memory": str,
    "processes": int,
    "walltime": str,
    "job_cpu": int,
    "job_mem": str,
    "job_name": str,
    "job_extra_directives": list,
    "job_script_prologue": list,
    "job_directives_skip": list,
    "worker_extra_args": list,
    "log_directory": str,
    "local_directory": str,
    "python": str,
    "shebang": str,
    "interface": str,
    "death_timeout": float,
    "scheduler_options": dict,
    "workers": int,
    "worker_wait": float,
}
#: What other tools call a key that dask-jobqueue names otherwise.
_RENAMED = {"partition": "queue", "time": "walltime", "mem": "memory", "project": "account"}
#: How long a sweep waits for a worker (none yet, or every one lost while jobs are
#: still queued) before it ends: ``worker_wait`` in the table.
WORKER_WAIT_S = 600.0
#: Slurm's time formats (sbatch --time): minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM,
#: D-HH:MM:SS.
_WALLTIME = re.compile(r"\d+(:\d{1,2}){0,2}|\d+-\d+(:\d{1,2}){0,2}")
#: Job states of a job that may still start a worker.
_ALIVE = {"PENDING", "CONFIGURING", "RUNNING", "REQUEUED", "RESIZING", "SUSPENDED"}
#: What a lost worker job's state or reason says of the cause, most telling first
#: (squeue(1), JOB STATE CODES and JOB REASON CODES). A job killed at its time limit is
#: TIMEOUT, or COMPLETING (TimeLimit) if still so after ``worker_wait``.
_LOST = (
    ({"TIMEOUT", "TimeLimit"}, "a run takes longer than walltime = {walltime}"),
    ({"OUT_OF_MEMORY", "OutOfMemory"}, "a worker needs more than memory = {memory}"),
    ({"NODE_FAIL", "NodeDown"}, "a compute node failed (scontrol show node)"),
    ({"PREEMPTED"}, "Slurm preempted the worker jobs for others"),
    ({"CANCELLED"}, "the worker jobs were cancelled outside the sweep (scancel)"),
)


def check_table(table: Any) -> dict[str, Any]:
    """The ``[slurm]`` table, its keys and their types checked (``SweepError``)."""
    if not isinstance(table, Mapping):
        raise SweepError("slurm: expected a table of SLURMCluster options")
    for key, value in table.items():
        where = f"slurm.{key}"
        if key in _RENAMED:
            raise SweepError(
                f"{where}: unknown key: dask-jobqueue calls it {_RENAMED[key]} "
                f"({_RENAMED[key]} = {json.dumps(value)})"
            )
        kind = KEYS.get(key)
        if kind is None:
            raise SweepError(f"{where}: unknown key (expected one of {', '.join(KEYS)})")
        if kind is int and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
            raise SweepError(f"{where}: expected a whole number >= 1, got {value!r}")
        if kind is float and (
            isinstance(value, bool) or not isinstance(value, int | float) or not value > 0
        ):
            raise SweepError(f"{where}: expected seconds > 0, got {value!r}")
        if kind is str and (not isinstance(value, str) or not value):
            raise SweepError(f"{where}: expected a non-empty string, got {value!r}")
        if kind is list and (
            not isinstance(value, list) or not all(isinstance(v, str) for v in value)
        ):
            raise SweepError(f"{where}: expected a list of strings, got {value!r}")
        if kind is dict and not isinstance(value, Mapping):
            raise SweepError(f"{where}: expected a table, got {value!r}")
    if "walltime" in table and not _WALLTIME.fullmatch(table["walltime"]):
        raise SweepError(
            f"slurm.walltime: '{table['walltime']}' is not a Slurm time "
            "(MM, MM:SS, HH:MM:SS or D-HH:MM:SS)"
        )
    return dict(table)


def cluster(table: Mapping[str, Any], jobs: int) -> tuple[Any, int]:
    """A ``SLURMCluster`` from the table and the number of worker jobs to ask for;
    nothing submitted yet, and ``sbatch --test-only`` has accepted the worker job."""
    import dask
    from dask.utils import parse_bytes

    if not table:
        raise SweepError(
            "slurm: --dask slurm needs a [slurm] table in the sweep file: at least "
            'cores and memory, e.g. cores = 1, memory = "4GB" (docs/experiments.md)'
        )
    for key in ("cores", "memory"):
        if key not in table and dask.config.get(f"jobqueue.slurm.{key}", None) is None:
            raise SweepError(f"slurm.{key}: required (one worker job's {key})")
    for key in ("memory", "job_mem"):
        try:
            if key in table:
                parse_bytes(table[key])
        except ValueError:
            raise SweepError(f"slurm.{key}: '{table[key]}' is not a size (e.g. 4GB)") from None
    options = {k: v for k, v in table.items() if k not in ("workers", "worker_wait")}
    # The scheduler runs in this process: no dashboard unless the table asks for one
    # (its HTTP server, which the scheduler always has, on a free port of loopback, not
    # on 8787, which a second sweep would find taken).
    asked = table.get("scheduler_options", {})
    options["scheduler_options"] = {
        "dashboard": "dashboard_address" in asked,
        "dashboard_address": "127.0.0.1:0",
        **asked,
    }
    if "log_directory" in options:
        options["log_directory"] = os.path.expanduser(options["log_directory"])
    # dask_jobqueue sets SIGINT to sys.exit() when imported (its runner module): Ctrl-C
    # would end the sweep with status 0, unsaid. Its handler is put back.
    handler = signal.getsignal(signal.SIGINT)
    try:
        from dask_jobqueue import SLURMCluster
    finally:
        signal.signal(signal.SIGINT, handler)
    try:
        made = SLURMCluster(**options)
    except (ValueError, TypeError) as exc:
        raise SweepError(f"slurm: {str(exc).splitlines()[0]}") from None
    try:
        _test_only(made.job_script())
    except BaseException:
        made.close()
        raise
    return made, int(table.get("workers", jobs))


def _test_only(script: str) -> None:
    """``sbatch --test-only`` on the worker job: Slurm's refusal as one line."""
    with tempfile.NamedTemporaryFile("w", suffix=".sh", prefix="dcnsim-worker-") as f:
        f.write(script)
        f.flush()
        try:
            proc = subprocess.run(
                ["sbatch", "--test-only", f.name], capture_output=True, text=True, timeout=60
            )
        except FileNotFoundError:
            raise SweepError(
                "slurm: sbatch not found: run the sweep where Slurm's commands are (a login node)"
            ) from None
        except subprocess.TimeoutExpired:
            raise SweepError("slurm: sbatch --test-only did not answer in 60 s") from None
    if proc.returncode != 0:
        lines = [ln for ln in proc.stderr.splitlines() if ln.strip()] or [f"exit {proc.returncode}"]
        reason = lines[-1].removeprefix("sbatch: error: ")
        raise SweepError(f"slurm: Slurm refuses the worker job: {reason}")


def job_states(cluster: Any) -> list[tuple[str, str, str]]:
    """(job id, state, reason) of each worker job the cluster submitted."""
    out = []
    for job in list(cluster.workers.values()):
        job_id = getattr(job, "job_id", None)
        if not job_id:
            continue
        proc = subprocess.run(
            ["scontrol", "-o", "show", "job", str(job_id)],
            capture_output=True,
            text=True,
            timeout=30,
        )
        fields = dict(re.findall(r"(\w+)=(\S*)", proc.stdout))
        out.append((str(job_id), fields.get("JobState", "gone"), fields.get("Reason", "")))
    return out


def why_no_worker(
    cluster: Any, table: Mapping[str, Any], had_workers: bool, waited_s: float
) -> str | None:
    """Why the cluster has had no worker for ``waited_s`` seconds, as one line, if that
    ends the sweep: at once when no job may start a worker any more (all ended, or
    none could be submitted), after ``worker_wait`` while some are queued; else None.
    A job still COMPLETING is waited for too: its state then says how it ended."""
    states = job_states(cluster)
    alive = [s for s in states if s[1] in _ALIVE]
    wait = float(table.get("worker_wait", WORKER_WAIT_S))
    if (alive or any(s[1] == "COMPLETING" for s in states)) and waited_s < wait:
        return None
    shown = ", ".join(
        f"job {job}: {state}" + (f" ({reason})" if reason not in ("", "None") else "")
        for job, state, reason in states[:3]
    ) + (", ..." if len(states) > 3 else "")
    logs = table.get("log_directory") or f"slurm-JOBID.out in {os.getcwd()}"
    if not states:
        cause = "no worker job could be submitted (sbatch failed)"
    elif alive:
        running = any(s[1] == "RUNNING" for s in alive)
        hint = ": can the compute nodes reach this machine's scheduler port?" if running else ""
        cause = f"no worker within worker_wait = {wait:g} s ({shown}){hint}"
    elif had_workers:
        seen = {code for _, state, reason in states for code in (state, reason)}
        limits = {k: table.get(k, "the partition's default") for k in ("walltime", "memory")}
        hint = next((": " + h.format(**limits) for codes, h in _LOST if codes & seen), "")
        cause = f"every worker was lost and no job is left ({shown}){hint}"
    else:
        cause = f"the worker jobs ended before a worker joined ({shown})"
    return f"slurm: {cause}; worker logs: {logs}"
