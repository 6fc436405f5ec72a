"""One run of a sweep: what it is (``Run``), how a worker runs it (``execute``) and
how its answer comes back (``future_answer``), whether from a local process pool
(``dcnsim.sweeps``) or a Dask cluster (``dcnsim.cluster``); and ``SweepError``, the
one-line error of a sweep that cannot run, raised by the sweep's checks, its
``[slurm]`` table (``dcnsim.slurm``) and its cluster.
"""

from __future__ import annotations

import json
import time
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any

from dcnsim.results import Results, run
from dcnsim.scenario import Scenario, ScenarioError

__all__ = ["Run", "SweepError", "execute", "future_answer", "one_line"]


class SweepError(ValueError):
    """A sweep file or option that cannot be run: one line, ``field: reason``."""


@dataclass(frozen=True)
class Run:
    """One run of a sweep: its id, its grid values (by catalog column) and scenario."""

    id: str
    params: dict[str, Any]
    scenario: Scenario


def execute(scenario_json: str, tables: list[str]) -> dict[str, Any]:
    """Run one scenario (in a worker): its kept tables and summary, or ``error``, the
    one-line reason it failed. Module-level, so that workers find it by name."""
    started = time.perf_counter()
    try:
        results: Results = run(Scenario(json.loads(scenario_json)))
    except ScenarioError as exc:  # the core's exception class does not pickle
        return {"error": one_line(exc, named=False)}
    except Exception as exc:  # a run's failure must not stop the sweep
        return {"error": one_line(exc)}
    return {
        "tables": {name: results.columns(name) for name in tables},
        "summary": results.summary,
        "wall_s": time.perf_counter() - started,
    }


def one_line(exc: BaseException, named: bool = True) -> str:
    """An exception as one line: its first line, after its class name if ``named``."""
    text = str(exc).splitlines()[0] if str(exc).strip() else ""
    if not named:
        return text or type(exc).__name__
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def future_answer(future: Any) -> dict[str, Any]:
    """A future's answer; a worker that died counts as the run's failure."""
    try:
        return future.result()
    except BrokenProcessPool:
        raise SweepError("a worker process died") from None  # run_sweep says what is kept
    except Exception as exc:  # a Dask worker lost too often, an answer that did not arrive
        return {"error": one_line(exc)}
