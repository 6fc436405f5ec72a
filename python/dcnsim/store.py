"""The result store of a sweep: one directory, queried with SQL (DuckDB) or pandas.

    DIR/sweep.toml                   the sweep that was run, base scenario inline
    DIR/catalog.parquet              one row per run of the grid: ``run`` (its id), the
                                     grid values (one column per key, then ``seed``),
                                     ``status`` (ok, failed, pending), ``error``,
                                     ``wall_s``, ``sim_time_s``, ``packet_hops``, ``finished``
    DIR/sessions.json                each call of the sweep: start, wall time, runs, where
    DIR/runs/run=<id>/run.json       the run's record (its catalog row)
    DIR/runs/run=<id>/scenario.toml  the exact scenario of the run
    DIR/runs/run=<id>/<table>.parquet, summary.parquet   its kept tables (when ok)
    DIR/report.html                  with ``--report``, and NAME.png, .svg, .pdf per figure

A run directory is written whole or not at all, and so are the catalog and
``sweep.toml``; an interrupted sweep leaves finished runs only. ``query(DIR, SQL)``
sees the catalog as the view ``catalog`` and each kept table as a view of the same
name holding every run's rows joined with the run's catalog row, so one query can
group by grid values: ``SELECT transport_protocol, avg(slowdown) FROM flows GROUP BY 1``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from dcnsim import _core, outdir
from dcnsim.results import write_table

if TYPE_CHECKING:
    from dcnsim.sweep_run import Run

__all__ = [
    "check_sweep_dir",
    "has_run",
    "load",
    "note_session",
    "open_sweep_dir",
    "query",
    "sessions",
    "write_catalog",
    "write_run",
]

_TOP = {"sweep.toml", "catalog.parquet", "sessions.json", "report.html"}
#: The report's figures, beside it (a figure's name is letters, digits, - and _).
_FIGURE = re.compile(r"^[A-Za-z0-9_-]+\.(png|svg|pdf)$")
_RUN_DIR = re.compile(r"^run=[0-9a-f]{16}$")
#: What an interrupted write leaves: a run directory's or a top file's temporary twin.
_STALE = re.compile(
    r"^\.(run=[0-9a-f]{16}|sweep\.toml|catalog\.parquet|sessions\.json|report\.html"
    r"|[A-Za-z0-9_-]+\.(png|svg|pdf))\..*\.(tmp|old)$"
)
_RUN_FILES = re.compile(r"^(run\.json|scenario\.toml|[a-z_]+\.parquet)$")


def open_sweep_dir(out: str | os.PathLike[str], spec: Mapping[str, Any]) -> Path:
    """Make or reopen a sweep directory and write ``sweep.toml``; ``OSError`` if it holds
    anything a sweep does not write. Leftovers of an interrupted write are removed."""
    directory = check_sweep_dir(out)
    runs = directory / "runs"
    runs.mkdir(parents=True, exist_ok=True)
    for stale in [*directory.iterdir(), *runs.iterdir()]:
        if _STALE.match(stale.name):
            if stale.is_dir():
                shutil.rmtree(stale, ignore_errors=True)
            else:
                stale.unlink()
    import tomli_w

    outdir.write_atomic(
        directory / "sweep.toml", lambda p: p.write_text(tomli_w.dumps(dict(spec)), "utf-8")
    )
    return directory


def check_sweep_dir(out: str | os.PathLike[str]) -> Path:
    """The sweep directory, if a sweep may write into it; else ``OSError`` saying why.
    A sweep writes inside an existing one (resuming): that is tried too, with a
    temporary file named as an interrupted catalog's (which a later sweep removes)."""
    directory = outdir.check_output_dir(out, _foreign)
    if directory.is_dir():
        try:
            fd, name = tempfile.mkstemp(prefix=".catalog.parquet.", suffix=".tmp", dir=directory)
        except OSError as exc:  # named as the directory, not the temporary file
            raise OSError(exc.errno, exc.strerror) from None
        os.close(fd)
        os.unlink(name)
    return directory


def _foreign(directory: Path) -> list[str]:
    """Entries of a sweep directory that a sweep does not write."""
    names = outdir.foreign_files(
        directory,
        lambda p: p.name in _TOP or bool(_FIGURE.match(p.name) or _STALE.match(p.name)),
    )
    runs = directory / "runs"
    if "runs" in names and runs.is_dir() and not runs.is_symlink():
        names.remove("runs")
        for entry in runs.iterdir():
            if _STALE.match(entry.name):
                continue
            if not _RUN_DIR.match(entry.name) or entry.is_symlink() or not entry.is_dir():
                names.append(f"runs/{entry.name}")
            else:
                names += [
                    f"runs/{entry.name}/{n}"
                    for n in outdir.foreign_files(entry, lambda p: bool(_RUN_FILES.match(p.name)))
                ]
    return names


def _run_dir(directory: Path, run_id: str) -> Path:
    return directory / "runs" / f"run={run_id}"


def has_run(directory: Path, run_id: str) -> bool:
    """Whether the run is in the store (finished, ok or failed)."""
    return (_run_dir(directory, run_id) / "run.json").is_file()


def write_run(directory: Path, run: Run, answer: Mapping[str, Any]) -> None:
    """Write one run's directory, whole: its record, scenario and kept tables."""
    summary = answer.get("summary", {})
    record = {
        "run": run.id,
        **run.params,
        "status": "failed" if "error" in answer else "ok",
        "error": answer.get("error", ""),
        "wall_s": float(answer.get("wall_s", float("nan"))),
        "sim_time_s": float(summary.get("sim_time_s", float("nan"))),
        "packet_hops": int(summary.get("packet_hops", 0)),
        "finished": datetime.now(UTC).isoformat(timespec="seconds"),
        "version": _core.__version__,
    }

    def write(tmp: Path) -> None:
        (tmp / "scenario.toml").write_text(run.scenario.to_toml(), encoding="utf-8")
        for name, columns in answer.get("tables", {}).items():
            write_table(tmp / f"{name}.parquet", columns)
        if summary:
            row = {k: v for k, v in summary.items() if k not in ("name", "seed")}
            pd.DataFrame([row]).to_parquet(tmp / "summary.parquet", index=False)
        (tmp / "run.json").write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")

    outdir.write_whole(
        _run_dir(directory, run.id),
        write,
        lambda d: outdir.foreign_files(d, lambda p: bool(_RUN_FILES.match(p.name))),
    )


def write_catalog(directory: Path, runs: Iterable[Run], columns: Sequence[str]) -> pd.DataFrame:
    """Write ``catalog.parquet``: one row per run of the grid, in grid order; runs not in
    the store yet are ``pending``. Returns the catalog."""
    rows = []
    for run in runs:
        path = _run_dir(directory, run.id) / "run.json"
        if path.is_file():
            rows.append(json.loads(path.read_text(encoding="utf-8")))
        else:
            rows.append({"run": run.id, **run.params, "status": "pending", "error": ""})
    fixed = ["status", "error", "wall_s", "sim_time_s", "packet_hops", "finished", "version"]
    catalog = pd.DataFrame(rows, columns=["run", *columns, *fixed])
    outdir.write_atomic(directory / "catalog.parquet", lambda p: catalog.to_parquet(p, index=False))
    return catalog


def note_session(directory: Path, started: datetime, wall_s: float, ran: int, where: str) -> None:
    """Add one call of the sweep to ``sessions.json`` (what the report shows as run times)."""
    path = directory / "sessions.json"
    sessions = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else []
    sessions.append(
        {
            "started": started.isoformat(timespec="seconds"),
            "wall_s": round(wall_s, 3),
            "runs": ran,
            "on": where,
        }
    )
    outdir.write_atomic(path, lambda p: p.write_text(json.dumps(sessions, indent=1), "utf-8"))


def sessions(directory: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The calls of the sweep that wrote ``directory``, oldest first."""
    path = Path(directory) / "sessions.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else []


def query(directory: str | os.PathLike[str], sql: str) -> pd.DataFrame:
    """Run ``sql`` (DuckDB) over a sweep directory; see the module's doc for the views.

    Raises ``FileNotFoundError`` when ``directory`` holds no catalog and
    ``duckdb.Error`` for a query DuckDB rejects.
    """
    import duckdb

    catalog = Path(directory) / "catalog.parquet"
    if not catalog.is_file():
        raise FileNotFoundError(f"{directory}: no catalog.parquet: not a sweep directory")
    with duckdb.connect() as con:
        con.execute(f"CREATE VIEW catalog AS SELECT * FROM read_parquet({_sql_text(catalog)})")
        for name in _kept_tables(Path(directory)):
            files = _sql_text(Path(directory) / "runs" / "*" / f"{name}.parquet")
            con.execute(
                f"CREATE VIEW {name} AS SELECT * FROM read_parquet({files}, "
                "hive_partitioning = true, hive_types = {'run': VARCHAR}, union_by_name = true) "
                "JOIN (SELECT * EXCLUDE (status, error, finished, version, wall_s, sim_time_s, "
                "packet_hops) FROM catalog) USING (run)"
            )
        return con.execute(sql).df()


def load(directory: str | os.PathLike[str], table: str = "flows") -> pd.DataFrame:
    """One table across every run of a sweep, with the run's grid values as columns
    (``table="catalog"``: the catalog itself)."""
    if table != "catalog" and table not in _kept_tables(Path(directory)):
        kept = ", ".join(["catalog", *_kept_tables(Path(directory))])
        raise ValueError(f"table '{table}' is not in {directory} (it has {kept})")
    order = "" if table == "catalog" else " ORDER BY run"  # the catalog is in grid order
    return query(directory, f"SELECT * FROM {table}{order}")


def _kept_tables(directory: Path) -> list[str]:
    """The tables some run of the sweep kept (plus ``summary``), by name."""
    names: set[str] = set()
    for run_dir in (directory / "runs").glob("run=*"):
        names |= {p.stem for p in run_dir.glob("*.parquet")}
    return sorted(names)


def _sql_text(path: Path) -> str:
    """A path as an SQL string literal."""
    return "'" + str(path).replace("'", "''") + "'"
