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
``dcnsim.cluster``, ``dcnsim.slurm``). Results land in a sweep directory
(``dcnsim.store``).
"""

from __future__ import annotations

import itertools
import json
import math
import os
import re
import time
from collections.abc import Iterator, Mapping
from concurrent.futures import FIRST_COMPLETED, wait
from contextlib import ExitStack, closing
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from dcnsim import _core, cluster, limits, outdir, store
from dcnsim.exits import Stopped, ending
from dcnsim.figure_sql import figure_sql
from dcnsim.scenario import Scenario, ScenarioError, as_scenario
from dcnsim.slurm import check_table
from dcnsim.studies.runner import process_pool, progress_bar, stop_pool
from dcnsim.sweep_run import Run, SweepError, execute, future_answer, one_line

__all__ = [
    "TABLES",
    "Run",
    "Sweep",
    "SweepError",
    "SweepInterrupted",
    "SweepOutcome",
    "column_name",
    "execute",
    "one_line",
    "run_id",
    "run_sweep",
]

#: The tables a run may keep: the core's tables, by name.
TABLES = ("flows", "ops", "probes", "ports", "rounds", "queues", "flow_trace", "links")
_KEYS = ("name", "base", "seeds", "tables", "grid", "zip", "figures", "slurm")
#: Seeds of a sweep that does not say: 1..5.
DEFAULT_SEEDS = 5
#: The most runs a sweep may have (grid points x seeds), counted before any run is
#: built: a grid beyond it is refused at once instead of enumerated for minutes.
MAX_RUNS = limits.MAX_RUNS


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
        if "seed" in keys:  # each run's seed is one of `seeds`: a grid's would be overwritten
            where = "grid" if "seed" in grid else "zip"
            raise SweepError(
                f"{where}.seed: the seeds are the sweep's own key, seeds = N (seeds 1..N) or a "
                "list, not a grid key"
            )
        for key, values in [*grid.items(), *(kv for g in zipped for kv in g.items())]:
            _check_key(base, key, values[0])
        if len(set(keys)) < len(keys):
            raise SweepError("grid: a key appears twice (in [grid] and [[zip]] together)")
        slurm = check_table(data.get("slurm", {}))
        tables = _tables(data.get("tables", ["flows"]))
        columns = [*(column_name(k) for k in keys), "seed"]
        seeds = _seeds(data.get("seeds", DEFAULT_SEEDS))
        _check_count(grid, zipped, len(seeds))
        return cls(
            name=str(data.get("name") or base.get("name") or "sweep"),
            base=base,
            grid=grid,
            zipped=zipped,
            seeds=seeds,
            tables=tables,
            figures=_figures(data.get("figures", []), tables, columns),
            slurm=slurm,
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

    def count(self) -> int:
        """How many runs the sweep has, without making them."""
        return _count(self.grid, self.zipped, len(self.seeds))

    def iter_runs(self) -> Iterator[Run]:
        """Every run, made one at a time as asked for, in grid order: the grid's
        cartesian product, each zip group's points, each seed."""
        axes: list[list[dict[str, Any]]] = [
            [{key: value} for value in values] for key, values in self.grid.items()
        ]
        axes += [
            [{k: v[i] for k, v in group.items()} for i in range(len(next(iter(group.values()))))]
            for group in self.zipped
        ]
        for combo in itertools.product(*axes):
            point = {k: v for part in combo for k, v in part.items()}
            scenario = self.base
            for key, value in point.items():
                scenario = scenario.set(key, value, check=False)  # checked in from_dict
            for seed in self.seeds:
                seeded = scenario.set("seed", seed, check=False)
                params = {column_name(k): _cell(v) for k, v in point.items()} | {"seed": seed}
                yield Run(run_id(seeded), params, seeded)

    def runs(self) -> list[Run]:
        """Every run, as a list (``iter_runs`` makes them one at a time)."""
        return list(self.iter_runs())


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


Grid = Mapping[str, list[Any]]


def _lengths(grid: Grid, zipped: list[dict[str, list[Any]]]) -> list[int]:
    """The number of values of each grid key and of each zip group, in order."""
    return [len(v) for v in grid.values()] + [len(next(iter(g.values()))) for g in zipped]


def _count(grid: Grid, zipped: list[dict[str, list[Any]]], seeds: int) -> int:
    return math.prod(_lengths(grid, zipped)) * seeds


def _check_count(grid: Grid, zipped: list[dict[str, list[Any]]], seeds: int) -> None:
    """Refuse a sweep of more than ``MAX_RUNS`` runs, counted, not enumerated."""
    count = _count(grid, zipped, seeds)
    if count > MAX_RUNS:
        points = " x ".join(map(str, _lengths(grid, zipped)))
        raise SweepError(
            f"grid: {points} points x {seeds} seeds = {count:,} runs, more than the "
            f"{MAX_RUNS:,} a sweep may have"
        )


def _seeds(value: Any) -> list[int]:
    if isinstance(value, bool) or not isinstance(value, int | list):
        raise SweepError(f"seeds: expected a count or a list of seeds, got {value!r}")
    if isinstance(value, int):
        if value < 1:
            raise SweepError(f"seeds: must be at least 1, got {value}")
        if value > MAX_RUNS:
            raise SweepError(
                f"seeds: {value:,} seeds, more than the {MAX_RUNS:,} runs a sweep may have"
            )
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


class SweepInterrupted(Stopped):
    """Ctrl-C or SIGTERM stopped a sweep; its message says how many runs the
    directory keeps and that running the sweep again resumes."""


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
    done, failed and the ETA. The runs are made as the workers take them (a few
    ahead of each worker), so the first starts at once whatever the grid's size; the
    figures are checked against the tables' columns before it. Ctrl-C stops the runs
    (``SweepInterrupted``, saying how many runs were kept); what finished stays and
    the catalog is written, so running again resumes.
    """
    if isinstance(sweep, Mapping):
        sweep = Sweep.from_dict(sweep)
    elif not isinstance(sweep, Sweep):
        sweep = Sweep.from_toml(sweep)
    jobs = (os.cpu_count() or 1) if jobs is None else jobs
    if jobs < 1:
        raise SweepError(f"jobs: must be at least 1, got {jobs}")
    _check_figures(sweep)
    total = sweep.count()
    found = store.check_sweep_dir(out)
    started, clock = datetime.now(UTC), time.perf_counter()
    failed = ran = skipped = 0
    with ExitStack() as stack:
        bar = stack.enter_context(progress_bar(sweep.name, total, progress))

        def todo() -> Iterator[Run]:
            nonlocal skipped
            for r in sweep.iter_runs():
                if store.has_run(found, r.id):
                    skipped += 1
                    bar.total -= 1
                    bar.refresh()
                else:
                    yield r

        runs = todo()
        first = next(runs, None)  # none left: nothing is started, no job submitted
        runs = itertools.chain([] if first is None else [first], runs)
        # Connect first: a scheduler that cannot be reached leaves nothing behind.
        client = None
        if dask and first is not None:
            client, watch = stack.enter_context(cluster.connect(dask, jobs, sweep.slurm))
        directory = store.open_sweep_dir(out, sweep.to_dict())
        window = 2 * jobs  # runs made ahead: each worker has its next one at hand
        answers = (
            cluster.on_dask(client, watch, runs, sweep.tables, window)
            if client is not None
            else on_pool(runs, sweep.tables, jobs, window)
        )
        stopped: BaseException | None = None
        try:
            # closing: on Ctrl-C the runs already handed out are stopped at once.
            with closing(answers):
                for run_, answer in answers:
                    with outdir.uninterrupted():  # a run written is a run counted
                        store.write_run(directory, run_, answer)
                        ran += 1
                        failed += "error" in answer
                    bar.set_postfix(failed=failed, refresh=False)
                    bar.update(1)
        except (KeyboardInterrupt, SweepError) as exc:  # Ctrl-C, a cluster with no worker
            stopped = exc
        finally:
            catalog = store.write_catalog(directory, sweep.iter_runs(), sweep.columns())
            where = dask or "local"
            store.note_session(directory, started, time.perf_counter() - clock, ran, where)
        if stopped is not None:
            kept = int((catalog["status"] != "pending").sum())
            said = (
                f"{ending(stopped)[0]}:"
                if isinstance(stopped, KeyboardInterrupt)
                else f"{stopped};"
            )
            line = (
                f"{said} {out} keeps {kept:,} of the sweep's {total:,} runs ({ran:,} "
                "finished now); run the same sweep again to resume"
            )
            if isinstance(stopped, KeyboardInterrupt):
                raise SweepInterrupted(line, stopped)
            raise SweepError(line)
    return SweepOutcome(total, ran, skipped, failed, time.perf_counter() - clock, directory)


def on_pool(
    todo: Iterator[Run], tables: list[str], jobs: int, window: int
) -> Iterator[tuple[Run, dict[str, Any]]]:
    """(run, answer) as each run finishes on a local process pool, keeping ``tables``,
    with at most ``window`` runs handed out at a time (sweeps, ``dcnsim.estimate``)."""
    first = next(todo, None)
    if first is None:
        return
    pool = process_pool(jobs)
    pending: dict[Any, Run] = {}
    try:
        for r in itertools.chain([first], todo):
            pending[pool.submit(execute, r.scenario.to_json(), tables)] = r
            while len(pending) >= window:
                yield from _finished(pending)
        while pending:
            yield from _finished(pending)
    except BaseException:
        stop_pool(pool)  # Ctrl-C: do not wait for the runs already handed out
        raise
    pool.shutdown()


def _finished(pending: dict[Any, Run]) -> Iterator[tuple[Run, dict[str, Any]]]:
    """Wait for one or more of the ``pending`` futures; take them out as answered."""
    done, _ = wait(pending, return_when=FIRST_COMPLETED)
    for future in done:
        yield pending.pop(future), future_answer(future)


#: A run with no traffic: its tables have every column, with its type, and no row.
_EMPTY_RUN = {"topology": {"kind": "star", "hosts": 2}, "stop_time": "1ns"}


def _check_figures(sweep: Sweep) -> None:
    """Each figure's query over a sweep directory of one run with the sweep's columns
    and no rows, before any run: a ``y``, ``by`` or ``where`` the tables cannot answer
    is refused now (``SweepError`` naming the figure), not after the last run."""
    import tempfile

    if not sweep.figures:
        return
    first = next(sweep.iter_runs())
    with tempfile.TemporaryDirectory(prefix="dcnsim-figures-") as tmp:
        directory = Path(tmp)
        store.write_run(directory, first, execute(Scenario(_EMPTY_RUN).to_json(), sweep.tables))
        store.write_catalog(directory, [first], sweep.columns())
        for figure in sweep.figures:
            figure_query(directory, figure, f"{figure_sql(figure)} LIMIT 0")


def figure_query(directory: Path, figure: Mapping[str, str], sql: str) -> Any:
    """``sql`` over a sweep directory (a DataFrame); a query DuckDB refuses is a
    ``SweepError`` naming the figure and its fields."""
    import duckdb

    try:
        return store.query(directory, sql)
    except duckdb.Error as exc:
        raise SweepError(
            f"figures {figure['name']}: cannot draw (y, by or where): {one_line(exc, named=False)}"
        ) from None
