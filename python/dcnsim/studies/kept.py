"""A study's finished runs, kept on disk so that an interrupted study resumes.

Inside ``with kept_runs(directory):`` the runner (``runner.run_scenarios``) looks each
``(reduce, scenario)`` up here before running it, and stores each run's row as it
comes back. A study stopped by Ctrl-C, SIGTERM (Slurm's time limit, ``timeout``) or a
lost machine keeps what finished; the same command run again runs only the rest. A
sweep resumes from its catalog (``dcnsim.sweeps``); this is the study's counterpart.

A row is found again only for the same scenario (its canonical JSON), the same
``reduce`` and the same dcnsim build: the key holds a digest of every file of the
installed ``dcnsim`` package, the core extension included, so a row made by another
build is never taken for this one's. Rows are pickles (a row is a dict of the numbers,
lists and strings ``reduce`` made, kept exactly); each is written beside its place
and renamed into it, so a file present is a whole row. The directory is the
caller's to remove once the study's output is written (``dcnsim study --out`` keeps
it beside its output until then).
"""

from __future__ import annotations

import contextvars
import functools
import hashlib
import os
import pickle
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from dcnsim import outdir
from dcnsim.exits import Stopped, ending

__all__ = ["KeptRuns", "active", "beside", "for_output", "kept_runs"]

_SUFFIX = ".pickle"
#: One pickle protocol for keys, so that a key does not change with Python's default.
_PROTOCOL = 5


class KeptRuns:
    """The rows kept in ``directory``; ``reused``: how many this process took from it."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.reused = 0

    def key(self, reduce: Callable[..., Any], scenario: Any) -> str:
        """The row's name: the build, ``reduce`` and the scenario, hashed. ``reduce``
        as it is sent to a worker, pickled: a function by its module and name, a
        ``functools.partial`` with the values it binds."""
        digest = hashlib.sha256(_build().encode())
        digest.update(pickle.dumps(reduce, protocol=_PROTOCOL))
        digest.update(scenario.to_json().encode())
        return digest.hexdigest()

    def get(self, key: str) -> dict[str, Any] | None:
        """The kept row of ``key``, or None."""
        try:
            with open(self.directory / f"{key}{_SUFFIX}", "rb") as file:
                row = pickle.load(file)
        except FileNotFoundError:
            return None
        self.reused += 1
        return row

    def put(self, key: str, row: dict[str, Any]) -> None:
        """Keep ``row`` as ``key``'s, whole: written aside, then renamed into place."""
        data = pickle.dumps(row, protocol=_PROTOCOL)
        outdir.write_atomic(self.directory / f"{key}{_SUFFIX}", lambda p: p.write_bytes(data))

    def count(self) -> int:
        """How many rows the directory keeps."""
        return sum(1 for _ in self.directory.glob(f"*{_SUFFIX}"))

    def remove(self) -> None:
        """Remove the directory and its rows (the study's output is written)."""
        shutil.rmtree(self.directory, ignore_errors=True)


_ACTIVE: contextvars.ContextVar[KeptRuns | None] = contextvars.ContextVar(
    "dcnsim_kept_runs", default=None
)


@contextmanager
def kept_runs(directory: str | os.PathLike[str]) -> Iterator[KeptRuns]:
    """Keep the rows of the runs inside the block in ``directory`` (created; rows
    already there are reused). A row being written when the process was killed is
    left as a hidden ``.tmp`` file (``outdir.write_atomic``'s), removed here."""
    path = Path(directory)
    path.mkdir(parents=True, exist_ok=True)
    for stale in path.glob(f".*{_SUFFIX}.*.tmp"):
        stale.unlink(missing_ok=True)
    store = KeptRuns(path)
    token = _ACTIVE.set(store)
    try:
        yield store
    finally:
        _ACTIVE.reset(token)


def beside(out: str | os.PathLike[str]) -> Path:
    """Where ``dcnsim study --out OUT`` keeps its finished runs: ``.OUT.runs`` beside
    ``OUT`` (hidden, in the directory its output is written in whole)."""
    path = Path(out)
    return path.parent / f".{path.name}.runs"


@contextmanager
def for_output(out: str | os.PathLike[str] | None) -> Iterator[KeptRuns | None]:
    """The runs of ``dcnsim study --out OUT``, kept in ``beside(OUT)`` (none without
    ``out``). A block stopped by Ctrl-C or SIGTERM with runs kept ends in a
    ``Stopped`` saying how many and where; a directory that keeps none is removed."""
    if out is None:
        yield None
        return
    with kept_runs(beside(out)) as store:
        try:
            yield store
        except KeyboardInterrupt as exc:
            kept = store.count()
            if not kept:
                raise
            raise Stopped(
                f"{ending(exc)[0]}: {kept} finished runs of the study are kept in "
                f"{store.directory}; run the same study again to resume",
                exc,
            ) from None
        finally:
            if not store.count():
                store.remove()


def active() -> KeptRuns | None:
    """The store of the enclosing ``kept_runs`` block, if any."""
    return _ACTIVE.get()


@functools.cache
def _build() -> str:
    """A digest of the installed dcnsim package's files (Python, data and the core)."""
    root = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            digest.update(str(path.relative_to(root)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()
