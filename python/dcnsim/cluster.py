"""Sweeps on a Dask cluster: connecting (a LocalCluster, a running scheduler, or
Slurm through dask-jobqueue), handing the runs out, and ending the sweep with one
line when the cluster has no worker to run them.

A Dask scheduler never gives up on a task: with no worker it waits forever. So while
runs are out, the cluster's workers are counted every ``POLL_S`` seconds, and a
cluster without a worker ends the sweep (``ClusterLost``, which ``run_sweep`` turns
into one line saying what the sweep directory keeps): on Slurm as soon as no worker
job is left that could start one, or after ``worker_wait`` (``dcnsim.slurm``); on a
scheduler of one's own after ``WORKER_WAIT_S``.
"""

from __future__ import annotations

import itertools
import logging
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from typing import Any

from dcnsim import slurm
from dcnsim.sweep_run import Run, SweepError, execute, future_answer, one_line

#: How long to wait for a Dask scheduler before saying it cannot be reached.
DASK_CONNECT_TIMEOUT_S = 5
#: How often the workers are counted while runs are out and none finishes.
POLL_S = 1.0
#: How long a sweep on a scheduler of one's own waits with no worker before it ends.
WORKER_WAIT_S = slurm.WORKER_WAIT_S


class ClusterLost(SweepError):
    """The cluster has no worker and will have none: the sweep ends (one line)."""


class Watch:
    """Counts the cluster's workers; ``check`` raises ``ClusterLost`` with the line
    ``why(had_workers, seconds_without)`` gives, once it gives one."""

    def __init__(self, client: Any, why: Callable[[bool, float], str | None]) -> None:
        self.client, self.why = client, why
        self.had_workers = False
        self.since = time.monotonic()

    def check(self) -> None:
        if self.client.nthreads():
            self.had_workers = True
            self.since = time.monotonic()
            return
        line = self.why(self.had_workers, time.monotonic() - self.since)
        if line is not None:
            raise ClusterLost(line)


def dask_hint() -> str:
    """How to install the ``dask`` extra, as commands that work as typed: in the clone,
    or anywhere with the extra's requirements read from the installed metadata."""
    from importlib.metadata import requires

    extra = [
        r.split(";")[0].strip()
        for r in requires("dcnsim") or []
        if ";" in r and "extra" in r.split(";")[1] and "dask" in r.split(";")[1]
    ]
    return 'pip install ".[dask]" in the dcnsim clone, or pip install ' + " ".join(
        f'"{r}"' for r in extra
    )


@contextmanager
def connect(dask: str, jobs: int, table: Mapping[str, Any]) -> Iterator[tuple[Any, Watch]]:
    """A connected Dask client and its ``Watch``, closed (with the cluster this made,
    whose Slurm jobs are cancelled) on the way out."""
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise SweepError(f"--dask: Dask is not installed: {dask_hint()}") from None
    with ExitStack() as stack:
        cluster = None
        try:
            if dask == "local":
                cluster = LocalCluster(
                    n_workers=jobs, threads_per_worker=1, processes=True, dashboard_address=None
                )
            elif dask == "slurm":
                # Its own one line says why a cluster ends; dask-jobqueue's and the
                # scheduler's logs (submission tracebacks, lost workers) would bury it.
                for name in ("distributed", "dask_jobqueue"):
                    logger = logging.getLogger(name)
                    stack.callback(logger.setLevel, logger.level)
                    logger.setLevel(logging.CRITICAL)
                cluster, workers = slurm.cluster(table, jobs)
            elif "://" not in dask:
                raise SweepError(
                    f"--dask: expected local, slurm or a scheduler address such as "
                    f"tcp://HOST:8786, got '{dask}'"
                )
            if cluster is not None:
                stack.callback(cluster.close)
            client = Client(cluster or dask, timeout=f"{DASK_CONNECT_TIMEOUT_S}s")
        except (OSError, TimeoutError) as exc:
            raise SweepError(
                f"--dask {dask}: cannot reach the scheduler: {one_line(exc)}"
            ) from None
        except ImportError as exc:
            raise SweepError(f"--dask {dask}: {exc}: {dask_hint()}") from None
        stack.callback(client.close)
        if dask == "slurm":
            cluster.scale(workers)
            watch = Watch(client, lambda had, s: slurm.why_no_worker(cluster, table, had, s))
        else:
            watch = Watch(client, lambda had, s: _why_no_worker(dask, had, s))
        yield client, watch


def _why_no_worker(dask: str, had_workers: bool, waited_s: float) -> str | None:
    if waited_s < WORKER_WAIT_S:
        return None
    lost = "every worker was lost" if had_workers else "no worker joined"
    return f"--dask {dask}: {lost} and none came within {WORKER_WAIT_S:g} s"


def on_dask(
    client: Any, watch: Watch, todo: Iterator[Run], tables: list[str], window: int
) -> Iterator[tuple[Run, dict[str, Any]]]:
    """(run, answer) as each run finishes on a Dask cluster (which reruns the runs of a
    worker it loses), with at most ``window`` runs submitted at a time; ``watch``
    checked whenever ``POLL_S`` passes with none finished."""
    from distributed import wait

    def submit(r: Run) -> None:
        future = client.submit(execute, r.scenario.to_json(), tables, key=f"run-{r.id}")
        pending[future] = r

    pending: dict[Any, Run] = {}
    for r in itertools.islice(todo, window):
        submit(r)
    try:
        while pending:
            try:
                done = wait(list(pending), timeout=POLL_S, return_when="FIRST_COMPLETED").done
            except TimeoutError:
                watch.check()
                continue
            for future in done:
                yield pending.pop(future), future_answer(future)
                following = next(todo, None)
                if following is not None:
                    submit(following)
    finally:
        client.cancel(list(pending))
