"""Sweeps: one base scenario, a grid of changes to it, seeds, and where to run them.

A sweep file (TOML) says::

    name = "protocols by load"
    base = "websearch.toml"        # a scenario file, relative to this file, or a table
    seeds = 5                      # seeds 1..5, or a list such as [1, 7, 9]
    tables = ["flows"]             # what each run keeps (its summary is always kept)

    [grid]                         # every combination of these (cartesian)
    transport.protocol = ["newreno", "dctcp"]
    "traffic.workloads[0].load" = [0.2, 0.5, 0.8]

    [[zip]]                        # these vary together: the i-th values form one point
    "topology.link.rate" = ["1Gbps", "10Gbps"]
    stop_time = ["50ms", "5ms"]

    [[figures]]                    # for report.html: mean of y per run, against x, by "by"
    name = "slowdown"              # (stat, kind = "cdf", where, log: dcnsim.sweep_figures)
    table = "flows"
    y = "slowdown"
    x = "traffic_workloads_0_load"
    by = "transport_protocol"

Each run is the base scenario with one point's values set and one seed. It is named
by a hash of its canonical scenario and the dcnsim version (``Run.id``), so a sweep
that stops for any reason resumes where it was: finished runs are skipped, and a run
that failed keeps its one-line error (simulations are deterministic: it would fail
again). Runs go to a local process pool, or to Dask (``dask="local"`` for a
LocalCluster on this machine, ``"tcp://HOST:PORT"`` for a running scheduler,
``"slurm"`` for a dask-jobqueue SLURMCluster configured by the ``[slurm]`` table:
its options, and ``workers``). Results land in a sweep directory (``dcnsim.store``).
"""

from __future__ import annotations

import itertools
import json
import os
import re
import sys
import time
from collections.abc import Iterator, Mapping
from concurrent.futures import as_completed
from concurrent.futures.process import BrokenProcessPool
from contextlib import ExitStack, closing, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from dcnsim import _core, limits, store
from dcnsim.results import Results, run
from dcnsim.scenario import Scenario, ScenarioError, as_scenario
from dcnsim.studies.runner import process_pool, stop_pool

__all__ = [
    "TABLES",
    "Run",
    "Sweep",
    "SweepError",
    "SweepOutcome",
    "column_name",
    "execute",
    "one_line",
    "run_id",
    "run_sweep",
]

#: The tables a run may keep: the core's tables, by name.
TABLES = ("flows", "ops", "probes", "ports", "rounds", "queues", "flow_trace")
_KEYS = ("name", "base", "seeds", "tables", "grid", "zip", "figures", "slurm")
#: Seeds of a sweep that does not say: 1..5.
DEFAULT_SEEDS = 5


class SweepError(ValueError):
    """A sweep file or option that cannot be run: one line, ``field: reason``."""


@dataclass(frozen=True)
class Run:
    """One run of a sweep: its id, its grid values (by catalog column) and scenario."""

    id: str
    params: dict[str, Any]
    scenario: Scenario


@dataclass(frozen=True)
class Sweep:
    """A checked sweep: build it with ``Sweep.from_toml`` or ``Sweep.from_dict``."""

    name: str
    base: Scenario
    grid: dict[str, list[Any]]
    zipped: list[dict[str, list[Any]]]
    seeds: list[int]
    tables: list[str]
    #: The report's figures, each a ``[[figures]]`` entry (``FIGURE_KEYS``): drawn by
    #: ``dcnsim.sweep_figures``, described in docs/experiments.md.
    figures: list[dict[str, str]]
    slurm: dict[str, Any]

    @classmethod
    def from_toml(cls, path: str | os.PathLike[str]) -> Sweep:
        """Read a sweep file; a base scenario path in it is relative to the file."""
        import tomllib

        path = Path(path)
        try:
            data = limits.loads(limits.read_small_file(path).decode("utf-8"))
        except OSError as exc:
            raise SweepError(f"{path}: cannot read: {exc.strerror or exc}") from None
        except limits.LimitError as exc:
            raise SweepError(f"{path}: {exc}") from None
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise SweepError(f"{path}: not TOML: {exc}") from None
        return cls.from_dict(data, path.parent)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], base_dir: str | os.PathLike[str] = ".") -> Sweep:
        """Check a sweep given as data; raises ``SweepError`` naming the bad field."""
        limits.check_data(data, "", SweepError)
        unknown = [k for k in data if k not in _KEYS]
        if unknown:
            raise SweepError(f"{unknown[0]}: unknown key (expected one of {', '.join(_KEYS)})")
        base = _base(data.get("base"), Path(base_dir))
        grid = _flat_lists("grid", data.get("grid", {}))
        zipped = data.get("zip", [])
        if not isinstance(zipped, list) or not all(isinstance(g, Mapping) for g in zipped):
            raise SweepError("zip: expected a list of tables ([[zip]])")
        zipped = [_flat_lists(f"zip[{i}]", g) for i, g in enumerate(zipped)]
        for i, group in enumerate(zipped):
            lengths = {k: len(v) for k, v in group.items()}
            if len(set(lengths.values())) > 1:
                shown = ", ".join(f"{k}: {n}" for k, n in lengths.items())
                raise SweepError(f"zip[{i}]: lists of different lengths ({shown})")
        keys = [*grid, *(k for g in zipped for k in g)]
        if not keys:
            raise SweepError("grid: empty: give at least one scenario key with a list of values")
        for key, values in [*grid.items(), *(kv for g in zipped for kv in g.items())]:
            _check_key(base, key, values[0])
        if len(set(keys)) < len(keys):
            raise SweepError("grid: a key appears twice (in [grid] and [[zip]] together)")
        slurm = data.get("slurm", {})
        if not isinstance(slurm, Mapping):
            raise SweepError("slurm: expected a table of SLURMCluster options")
        tables = _tables(data.get("tables", ["flows"]))
        columns = [*(column_name(k) for k in keys), "seed"]
        return cls(
            name=str(data.get("name") or base.get("name") or "sweep"),
            base=base,
            grid=grid,
            zipped=zipped,
            seeds=_seeds(data.get("seeds", DEFAULT_SEEDS)),
            tables=tables,
            figures=_figures(data.get("figures", []), tables, columns),
            slurm=dict(slurm),
        )

    def to_dict(self) -> dict[str, Any]:
        """The sweep as data, the base scenario inline: what ``sweep.toml`` of its
        directory holds, so the directory says what it ran."""
        return {
            "name": self.name,
            "seeds": self.seeds,
            "tables": self.tables,
            "grid": self.grid,
            "zip": self.zipped,
            "figures": self.figures,
            **({"slurm": self.slurm} if self.slurm else {}),
            "base": self.base.to_dict(),
        }

    def columns(self) -> list[str]:
        """The catalog columns of the grid keys, then ``seed``."""
        return [*(column_name(k) for k in self.grid), *self._zip_columns(), "seed"]

    def _zip_columns(self) -> Iterator[str]:
        return (column_name(k) for g in self.zipped for k in g)

    def runs(self) -> list[Run]:
        """Every run: the grid's cartesian product, each zip group's points, each seed."""
        axes: list[list[dict[str, Any]]] = [
            [{key: value} for value in values] for key, values in self.grid.items()
        ]
        axes += [
            [{k: v[i] for k, v in group.items()} for i in range(len(next(iter(group.values()))))]
            for group in self.zipped
        ]
        out = []
        for combo in itertools.product(*axes):
            point = {k: v for part in combo for k, v in part.items()}
            scenario = self.base
            for key, value in point.items():
                scenario = scenario.set(key, value)
            for seed in self.seeds:
                seeded = scenario.set("seed", seed)
                params = {column_name(k): _cell(v) for k, v in point.items()} | {"seed": seed}
                out.append(Run(run_id(seeded), params, seeded))
        return out


def column_name(key: str) -> str:
    """The catalog column of a scenario key: ``traffic.workloads[0].load`` ->
    ``traffic_workloads_0_load`` (a plain SQL name)."""
    return key.replace("[", "_").replace("]", "").replace(".", "_")


def run_id(scenario: Scenario) -> str:
    """16 hex digits of the SHA-256 of the canonical scenario and the dcnsim version."""
    import hashlib

    canonical = json.dumps(
        {"dcnsim": _core.__version__, "scenario": scenario.to_dict()},
        sort_keys=True,
        separators=(",", ":"),
    )
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def _cell(value: Any) -> Any:
    """A grid value as a catalog cell: scalars as they are, anything else as JSON."""
    return value if isinstance(value, str | int | float | bool) else json.dumps(value)


def _base(value: Any, base_dir: Path) -> Scenario:
    if value is None:
        raise SweepError("base: required: a scenario file (path) or an inline [base] table")
    if isinstance(value, str):
        path = base_dir / value
        try:
            return Scenario.from_toml(path)
        except ScenarioError as exc:  # "scenario: cannot read ...", "<field>: ..."
            raise SweepError(f"base: {str(exc).removeprefix('scenario: ')}") from None
    if isinstance(value, Mapping):
        return as_scenario(dict(value))
    raise SweepError(f"base: expected a scenario file path or a table, got {type(value).__name__}")


def _flat_lists(where: str, table: Any) -> dict[str, list[Any]]:
    """``{"a": {"b": [1, 2]}}`` or ``{"a.b": [1, 2]}`` -> ``{"a.b": [1, 2]}``."""
    if not isinstance(table, Mapping):
        raise SweepError(f"{where}: expected a table of scenario keys and lists of values")
    out: dict[str, list[Any]] = {}
    for key, value in table.items():
        path = f"{where}.{key}"
        if isinstance(value, Mapping):
            out |= {f"{key}.{k}": v for k, v in _flat_lists(path, value).items()}
        elif not isinstance(value, list) or not value:
            raise SweepError(f"{path}: expected a non-empty list of values, got {value!r}")
        else:
            out[key] = value
    return out


def _check_key(base: Scenario, key: str, value: Any) -> None:
    """A grid key must name a scenario field: set it to its first value and validate.
    An invalid *value* is left to the run (it fails alone, recorded in the catalog)."""
    try:
        base.set(key, value).validate()
    except ScenarioError as exc:
        message = str(exc)
        path = message.split(":", 1)[0]
        if "unknown key" in message and (key == path or key.startswith(f"{path}.")):
            raise SweepError(f"grid.{key}: not a scenario key ({message})") from None
        if key.startswith(f"{path}.") and "invalid type" in message:  # a.0.b for a[0].b
            raise SweepError(f"grid.{key}: not a scenario key ({message})") from None


def _seeds(value: Any) -> list[int]:
    if isinstance(value, bool) or not isinstance(value, int | list):
        raise SweepError(f"seeds: expected a count or a list of seeds, got {value!r}")
    if isinstance(value, int):
        if value < 1:
            raise SweepError(f"seeds: must be at least 1, got {value}")
        return list(range(1, value + 1))
    if not value:
        raise SweepError("seeds: the list is empty")
    bad = [s for s in value if isinstance(s, bool) or not isinstance(s, int) or s < 0]
    if bad:
        raise SweepError(f"seeds: expected whole numbers >= 0, got {bad[0]!r}")
    if len(set(value)) < len(value):
        raise SweepError("seeds: a seed appears twice")
    return list(value)


def _tables(value: Any) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(t, str) for t in value):
        raise SweepError(f"tables: expected a list of table names, got {value!r}")
    for name in value:
        if name not in TABLES:
            raise SweepError(
                f"tables: unknown table '{name}' (expected one of {', '.join(TABLES)})"
            )
    return list(dict.fromkeys(value))


#: The keys of a ``[[figures]]`` entry; the figure kinds; the statistics of a line
#: figure's ``y`` per run (``pNN``: any percentile, e.g. ``p99``, ``p99.9``).
FIGURE_KEYS = ("name", "kind", "table", "y", "x", "by", "stat", "log", "where")
FIGURE_KINDS = ("line", "cdf")
FIGURE_STAT = re.compile(r"mean|median|min|max|p(?P<q>100|[1-9]?[0-9](\.[0-9]+)?)")


def _figures(value: Any, tables: list[str], columns: list[str]) -> list[dict[str, str]]:
    if not isinstance(value, list) or not all(isinstance(f, Mapping) for f in value):
        raise SweepError("figures: expected a list of tables ([[figures]])")
    out = []
    for i, figure in enumerate(value):
        where = f"figures[{i}]"
        for key in figure:
            if key not in FIGURE_KEYS:
                raise SweepError(f"{where}.{key}: unknown key (expected {', '.join(FIGURE_KEYS)})")
        for key in figure:
            if not isinstance(figure[key], str) or not figure[key]:
                raise SweepError(f"{where}.{key}: expected a non-empty string")
        kind = figure.get("kind", "line")
        if kind not in FIGURE_KINDS:
            raise SweepError(f"{where}.kind: '{kind}' (expected {' or '.join(FIGURE_KINDS)})")
        required = ("name", "table", "y", "x") if kind == "line" else ("name", "table", "y")
        for key in required:
            if key not in figure:
                raise SweepError(f"{where}.{key}: required, a name")
        if kind == "cdf":
            for key in ("x", "stat"):
                if key in figure:
                    raise SweepError(
                        f"{where}.{key}: not for a CDF (its x axis is y's values; "
                        "choose the runs with where)"
                    )
        if not re.fullmatch(r"[A-Za-z0-9_-]+", figure["name"]):
            raise SweepError(f"{where}.name: letters, digits, - and _ only (it names a file)")
        if figure["name"] in {f["name"] for f in out}:
            raise SweepError(f"{where}.name: '{figure['name']}' names an earlier figure")
        if figure["table"] not in [*tables, "summary"]:
            raise SweepError(
                f"{where}.table: '{figure['table']}' is not kept (tables: {', '.join(tables)}, "
                "summary)"
            )
        for key in ("x", "by"):
            if key in figure and figure[key] not in columns:
                raise SweepError(
                    f"{where}.{key}: '{figure[key]}' is not a grid column "
                    f"(expected one of {', '.join(columns)})"
                )
        stat = figure.get("stat", "mean")
        match = FIGURE_STAT.fullmatch(stat)
        if not match or (match["q"] is not None and float(match["q"]) == 0):
            raise SweepError(
                f"{where}.stat: '{stat}' (expected mean, median, min, max or a percentile "
                "such as p99 or p99.9)"
            )
        if figure.get("log", "x") not in ("x", "y", "xy"):
            raise SweepError(f"{where}.log: '{figure['log']}' (expected x, y or xy)")
        out.append(dict(figure))
    return out


# --- running ---------------------------------------------------------------------------


@dataclass(frozen=True)
class SweepOutcome:
    """What a call of ``run_sweep`` did: runs of the grid, run now, skipped as done
    before, failed now; its wall time; the sweep directory."""

    total: int
    ran: int
    skipped: int
    failed: int
    wall_s: float
    out: Path


def run_sweep(
    sweep: Sweep | Mapping[str, Any] | str | os.PathLike[str],
    out: str | os.PathLike[str],
    jobs: int | None = None,
    dask: str | None = None,
    progress: bool = False,
) -> SweepOutcome:
    """Run every run of ``sweep`` (a ``Sweep``, its dict or a sweep file) not yet in
    ``out`` and write its tables there (``dcnsim.sweep`` is this function).

    ``jobs``: local worker processes (default: the CPUs), or Dask workers of a
    ``dask="local"`` cluster. ``dask``: ``None`` (local pool), ``"local"``,
    ``"tcp://HOST:PORT"`` or ``"slurm"``. ``progress``: a bar on stderr with runs
    done, failed and the ETA. Ctrl-C stops the runs; what finished stays and the
    catalog is written, so running again resumes.
    """
    if isinstance(sweep, Mapping):
        sweep = Sweep.from_dict(sweep)
    elif not isinstance(sweep, Sweep):
        sweep = Sweep.from_toml(sweep)
    jobs = (os.cpu_count() or 1) if jobs is None else jobs
    if jobs < 1:
        raise SweepError(f"jobs: must be at least 1, got {jobs}")
    runs = sweep.runs()
    todo = [r for r in runs if not store.has_run(store.check_sweep_dir(out), r.id)]
    started, clock = datetime.now(UTC), time.perf_counter()
    failed = ran = 0
    with ExitStack() as stack:
        # Connect first: a scheduler that cannot be reached leaves nothing behind.
        client = stack.enter_context(_dask_client(dask, jobs, sweep.slurm)) if dask else None
        directory = store.open_sweep_dir(out, sweep.to_dict())
        on_dask = client is not None
        answers = _on_dask(client, todo, sweep) if on_dask else _on_pool(todo, sweep, jobs)
        try:
            # closing: on Ctrl-C the runs already handed out are stopped at once.
            with closing(answers), _progress_bar(sweep.name, len(todo), progress) as bar:
                for run_, answer in answers:
                    store.write_run(directory, run_, answer)
                    ran += 1
                    failed += "error" in answer
                    bar.set_postfix(failed=failed, refresh=False)
                    bar.update(1)
        finally:
            store.write_catalog(directory, runs, sweep.columns())
            where = dask or "local"
            store.note_session(directory, started, time.perf_counter() - clock, ran, where)
    return SweepOutcome(
        len(runs), ran, len(runs) - len(todo), failed, time.perf_counter() - clock, directory
    )


def _progress_bar(name: str, total: int, shown: bool) -> Any:
    from tqdm import tqdm

    return tqdm(total=total, desc=name, unit="run", disable=not shown, file=sys.stderr)


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


def _on_pool(todo: list[Run], sweep: Sweep, jobs: int) -> Iterator[tuple[Run, dict[str, Any]]]:
    """(run, answer) as each run finishes on a local process pool."""
    if not todo:
        return
    pool = process_pool(min(jobs, len(todo)))
    try:
        futures = {pool.submit(execute, r.scenario.to_json(), sweep.tables): r for r in todo}
        for future in as_completed(futures):
            yield futures[future], _answer(future)
    except BaseException:
        stop_pool(pool)  # Ctrl-C: do not wait for the runs already handed out
        raise
    pool.shutdown()


def _on_dask(client: Any, todo: list[Run], sweep: Sweep) -> Iterator[tuple[Run, dict[str, Any]]]:
    """(run, answer) as each run finishes on a Dask cluster (which reruns the runs of a
    worker it loses)."""
    from distributed import as_completed as dask_completed

    futures = {
        client.submit(execute, r.scenario.to_json(), sweep.tables, key=f"run-{r.id}"): r
        for r in todo
    }
    try:
        for future in dask_completed(futures):
            yield futures[future], _answer(future)
    finally:
        client.cancel(list(futures))


def one_line(exc: BaseException, named: bool = True) -> str:
    """An exception as one line: its first line, after its class name if ``named``."""
    text = str(exc).splitlines()[0] if str(exc).strip() else ""
    if not named:
        return text or type(exc).__name__
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _answer(future: Any) -> dict[str, Any]:
    """A future's answer; a worker that died counts as the run's failure."""
    try:
        return future.result()
    except BrokenProcessPool:
        raise SweepError(
            "a worker process died; the runs that finished are kept: run the sweep again to resume"
        ) from None
    except Exception as exc:  # a Dask worker lost too often, an answer that did not arrive
        return {"error": one_line(exc)}


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


#: How long to wait for a Dask scheduler before saying it cannot be reached.
DASK_CONNECT_TIMEOUT_S = 5


@contextmanager
def _dask_client(dask: str, jobs: int, slurm: Mapping[str, Any]) -> Iterator[Any]:
    """A connected Dask client, closed (with the cluster this made) on the way out."""
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise SweepError(f"--dask: Dask is not installed: {dask_hint()}") from None
    with ExitStack() as stack:
        try:
            if dask == "local":
                cluster = LocalCluster(
                    n_workers=jobs, threads_per_worker=1, processes=True, dashboard_address=None
                )
            elif dask == "slurm":
                from dask_jobqueue import SLURMCluster

                options = dict(slurm)
                workers = int(options.pop("workers", jobs))
                cluster = SLURMCluster(**options)
                cluster.scale(workers)
            elif "://" in dask:
                cluster = None
            else:
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
        yield client
