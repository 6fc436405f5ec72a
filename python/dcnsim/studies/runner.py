"""Running a study's scenarios in parallel worker processes.

A study hands ``run_scenarios`` a list of ``(reduce, scenario)`` pairs and gets back,
in the same order, the dict of numbers each ``reduce`` made of its run.
"""

from __future__ import annotations

import contextvars
import multiprocessing
import os
import signal
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from contextlib import contextmanager
from typing import Any

from dcnsim.limits import MAX_RUNS
from dcnsim.results import run
from dcnsim.scenario import Scenario, ScenarioError
from dcnsim.studies import kept

__all__ = [
    "BarProgress",
    "Progress",
    "process_pool",
    "progress_bar",
    "recorded_scenarios",
    "run_scenarios",
    "stop_pool",
]

#: Called after each finished simulation with (finished, total).
Progress = Callable[[int, int], None]


def progress_bar(name: str, total: int | None, shown: bool = True) -> Any:
    """The one progress style of runs of many simulations (studies, sweeps): a tqdm bar
    on stderr, ``name: 40%|####      | 12/30 [00:04<00:06, 2.9run/s]``."""
    from tqdm import tqdm

    return tqdm(total=total, desc=name, unit="run", disable=not shown, file=sys.stderr)


class BarProgress:
    """A ``Progress`` drawn as ``progress_bar``: the bar opens at the first report. A
    study that runs its scenarios in several batches (``run_scenarios`` called again)
    reports each from 1: a report after a finished batch, or counting back, or of
    another total, starts a new one, added to the bar, so it ends at 100 %."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.bar: Any = None
        self.base = 0  # runs of the batches before this one
        self.last = (0, 0)  # the last report: done, total

    def __call__(self, done: int, total: int) -> None:
        if self.bar is None:
            self.bar = progress_bar(self.name, total)
        elif self.last[0] >= self.last[1] or done < self.last[0] or total != self.last[1]:
            self.base += self.last[1]
            self.bar.total = self.base + total
        self.last = (done, total)
        self.bar.update(self.base + done - self.bar.n)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def run_scenarios(
    tasks: Sequence[tuple[Callable[[Scenario], dict[str, Any]], Scenario]],
    jobs: int | None = None,
    progress: Progress | None = None,
) -> list[dict[str, Any]]:
    """Run each ``(reduce, scenario)``: ``reduce(dcnsim.run(scenario))`` -> a dict of numbers.

    Runs go to ``jobs`` worker processes (default ``os.cpu_count()``; 1 runs them
    here, one after the other). The answers come back in the order of ``tasks``,
    each with ``wall_s``, the wall-clock seconds of its run. ``reduce`` must be a
    module-level function (it is sent to the workers by name). Inside a
    ``kept.kept_runs`` block a run whose row is kept there is not run again, and
    each row is kept as it comes back, so an interrupted study resumes.
    """
    jobs = (os.cpu_count() or 1) if jobs is None else jobs
    if jobs < 1:
        raise ValueError(f"jobs must be at least 1, got {jobs}")
    total = len(tasks)
    if total > MAX_RUNS:
        raise ScenarioError(
            f"runs: {total:,} runs, more than the {MAX_RUNS:,} a study may have (fewer seeds)"
        )
    for _, scenario in tasks:
        _record(scenario)
    out: list[dict[str, Any] | None] = [None] * total
    store = kept.active()
    keys = [store.key(*task) for task in tasks] if store else []
    todo = list(range(total))
    if store:
        for i, key in enumerate(keys):
            out[i] = store.get(key)
        todo = [i for i in todo if out[i] is None]
    done = total - len(todo)
    if progress and done:
        progress(done, total)

    def finished(i: int, row: dict[str, Any]) -> None:
        nonlocal done
        out[i] = _checked(row)
        if store:
            store.put(keys[i], row)
        done += 1
        if progress:
            progress(done, total)

    if jobs == 1 or len(todo) <= 1:
        for i in todo:
            finished(i, _run_one(*tasks[i]))
        return [row for row in out if row is not None]
    executor = process_pool(min(jobs, len(todo)))
    try:
        futures = {executor.submit(_run_one, *tasks[i]): i for i in todo}
        for future in as_completed(futures):
            finished(futures[future], future.result())
    except BaseException:
        # Ctrl-C or a failed run: stop now, not after the runs already handed out.
        stop_pool(executor)
        raise
    executor.shutdown()
    return [row for row in out if row is not None]


def process_pool(workers: int) -> ProcessPoolExecutor:
    """``workers`` processes that leave Ctrl-C and SIGTERM to this one (which stops
    them): a shell's Ctrl-C, ``timeout``'s SIGTERM and Slurm's (at ``scancel`` or the
    time limit) reach every process of the group or job step, and a worker ended by
    it would look like a worker that died, not like the interruption it is.

    fork: the workers need nothing but the already imported core, and starting them
    is instant (the core is single-threaded, so forking is safe).
    """
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else None)
    return ProcessPoolExecutor(
        max_workers=workers, mp_context=context, initializer=_leave_signals_to_parent
    )


def _leave_signals_to_parent() -> None:
    """Worker processes leave Ctrl-C and SIGTERM to the parent, which stops them."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)


def stop_pool(executor: ProcessPoolExecutor) -> None:
    """Cancel what has not started and end the workers (``shutdown`` alone would wait
    for every run already handed to a worker), by SIGKILL: they ignore SIGTERM."""
    for process in list((getattr(executor, "_processes", None) or {}).values()):
        process.kill()
    executor.shutdown(wait=True, cancel_futures=True)


def _run_one(reduce: Callable[[Any], dict[str, Any]], scenario: Scenario) -> dict[str, Any]:
    started = time.perf_counter()
    try:
        results = run(scenario)
    except ScenarioError as exc:  # the core's exception class does not pickle
        return {_ERROR: str(exc)}
    row = reduce(results)
    row["wall_s"] = time.perf_counter() - started
    return row


_ERROR = "__scenario_error__"


def _checked(row: dict[str, Any]) -> dict[str, Any]:
    if _ERROR in row:
        raise ScenarioError(row[_ERROR])
    return row


_RECORDING: contextvars.ContextVar[list[Scenario] | None] = contextvars.ContextVar(
    "dcnsim_recorded_scenarios", default=None
)


@contextmanager
def recorded_scenarios() -> Iterator[list[Scenario]]:
    """Collect every scenario ``run_scenarios`` runs inside the ``with`` block."""
    scenarios: list[Scenario] = []
    token = _RECORDING.set(scenarios)
    try:
        yield scenarios
    finally:
        _RECORDING.reset(token)


def _record(scenario: Scenario) -> None:
    """Called by the runner for each scenario it runs."""
    scenarios = _RECORDING.get()
    if scenarios is not None:
        scenarios.append(scenario)
