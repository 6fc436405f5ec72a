"""Digests of every output table of the examples, the benchmarks and the studies.

A refactoring that must not change behaviour is checked by running this before and
after it and comparing: every column of every table (flows, probes, queues, ports,
rounds, flow traces, any table a run returns) of every run is hashed, in the order
the runs happen, per case (an example file, a benchmark's quick run, a study's quick
variant run with one job so its runs happen in a fixed order); and every column of
every file an example writes (``run(..., out=DIR)``), as pyarrow reads it back::

    python scripts/table_digests.py --out before.json
    ... change ...
    python scripts/table_digests.py --out after.json --against before.json

The summary is digested too, without what depends on the machine or on how the
loop schedules its work (wall times, rates, memory, event counts); event counts are
reported beside, since a change to how events are scheduled may change them
deliberately without changing a table.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

import dcnsim
from dcnsim import _core

ROOT = Path(__file__).resolve().parent.parent

#: Summary keys that vary with the machine or with event scheduling, not the model.
UNSTABLE = ("wall", "per_s", "rss", "memory", "events", "elapsed", "bytes_estimate")


def _column_digest(values: Any) -> str:
    h = hashlib.sha256()
    if isinstance(values, np.ndarray):
        h.update(str(values.dtype).encode())
        h.update(np.ascontiguousarray(values).tobytes())
    else:
        h.update(json.dumps(list(values), default=str).encode())
    return h.hexdigest()[:16]


def _table_digest(columns: dict[str, Any]) -> dict[str, str]:
    return {name: _column_digest(v) for name, v in sorted(columns.items())}


def _summary_digest(summary: dict[str, Any]) -> str:
    kept = {k: v for k, v in summary.items() if not any(u in k for u in UNSTABLE)}
    return hashlib.sha256(json.dumps(kept, sort_keys=True, default=str).encode()).hexdigest()[:16]


class Recorder:
    """Wraps ``_core.run``: every run's tables digested under the current case."""

    def __init__(self) -> None:
        self.cases: dict[str, list[dict[str, Any]]] = {}
        self.case = ""
        self._run = _core.run

    def __call__(self, text: str, *args: Any, **kwargs: Any) -> Any:
        raw = self._run(text, *args, **kwargs)
        entry: dict[str, Any] = {"summary": _summary_digest(raw["summary"])}
        entry["events"] = raw["summary"].get("events")
        for name, value in sorted(raw.items()):
            if name in ("summary", "probe_latency"):  # the latter: statistics, not a table
                continue
            if name == "pcaps":
                entry[name] = {
                    k: hashlib.sha256(bytes(b)).hexdigest()[:16] for k, b in sorted(value.items())
                }
            elif isinstance(value, Mapping):
                entry[name] = _table_digest(value)
        self.cases.setdefault(self.case, []).append(entry)
        return raw


def _file_digests(directory: Path) -> dict[str, dict[str, str]]:
    """Every column of every Parquet file in ``directory``: its Arrow type and values
    as pyarrow reads them back."""
    import pyarrow.parquet as pq

    files = {}
    for path in sorted(directory.glob("*.parquet")):
        table = pq.read_table(path)
        files[path.name] = {
            field.name: _column_digest([str(field.type), table[field.name].to_pylist()])
            for field in table.schema
        }
    return files


def _example_files() -> dict[str, Callable[[], None]]:
    """Each example run with ``out``: the files it writes, read back."""

    def case(path: Path) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            dcnsim.run(dcnsim.Scenario.from_toml(path), out=Path(tmp) / "out")
            recorder = _core.run
            assert isinstance(recorder, Recorder)
            recorder.cases[recorder.case].append(_file_digests(Path(tmp) / "out"))

    return {
        f"files of {path.name}": lambda p=path: case(p)
        for path in sorted((ROOT / "examples").glob("*.toml"))
    }


def _examples() -> dict[str, Callable[[], None]]:
    cases = {}
    for path in sorted((ROOT / "examples").glob("*.toml")):
        cases[f"example {path.name}"] = lambda p=path: dcnsim.run(dcnsim.Scenario.from_toml(p))
    return cases


def _benchmarks() -> dict[str, Callable[[], None]]:
    from dcnsim.bench import bench_scenario

    names = _core.bench_names()
    return {f"bench {n}": lambda n=n: dcnsim.run(bench_scenario(n, quick=True)) for n in names}


def _studies() -> dict[str, Callable[[], None]]:
    from dcnsim.studies import STUDIES, run_study

    return {
        f"study {name}": lambda s=study: run_study(s, quick=True, jobs=1)
        for name, study in STUDIES.items()
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, help="where to write the digests (JSON)")
    parser.add_argument("--against", help="digests to compare with (JSON)")
    parser.add_argument("--only", help="run only cases whose name contains this text")
    args = parser.parse_args()

    recorder = Recorder()
    _core.run = recorder
    cases = {**_examples(), **_example_files(), **_benchmarks(), **_studies()}
    for name, run_case in cases.items():
        if args.only and args.only not in name:
            continue
        recorder.case = name
        print(f"running {name}", file=sys.stderr, flush=True)
        run_case()
    Path(args.out).write_text(json.dumps(recorder.cases, indent=1, sort_keys=True))
    if not args.against:
        return 0
    before = json.loads(Path(args.against).read_text())
    if args.only:
        before = {k: v for k, v in before.items() if args.only in k}
    return compare(before, recorder.cases)


def compare(before: dict[str, Any], after: dict[str, Any]) -> int:
    """Print what differs; 0 when every table of every common case is identical.

    A table only the new build returns is listed as new, not as a difference."""
    differ = 0
    for case in sorted(set(before) | set(after)):
        if case not in before or case not in after:
            print(f"{case}: only {'after' if case in after else 'before'}")
            continue
        b, a = before[case], after[case]
        if len(b) != len(a):
            print(f"{case}: {len(b)} runs before, {len(a)} after")
            differ += 1
            continue
        bad = []
        events = []
        new = set()
        for i, (rb, ra) in enumerate(zip(b, a, strict=True)):
            for key in sorted(set(rb) | set(ra)):
                if key not in rb:
                    new.add(key)
                elif key == "events":
                    if rb.get(key) != ra.get(key):
                        events.append(f"run {i}: {rb.get(key)} -> {ra.get(key)}")
                elif rb.get(key) != ra.get(key):
                    cols = ""
                    if isinstance(rb.get(key), dict) and isinstance(ra.get(key), dict):
                        changed = [
                            c
                            for c in sorted(set(rb[key]) | set(ra[key]))
                            if rb[key].get(c) != ra[key].get(c)
                        ]
                        cols = f" ({', '.join(changed)})"
                    bad.append(f"run {i} {key}{cols}")
        status = "identical" if not bad else "DIFFER: " + "; ".join(bad[:8])
        if bad:
            differ += 1
        note = f"; events {', '.join(events[:3])}" if events else ""
        note += f"; new tables {', '.join(sorted(new))}" if new else ""
        print(f"{case}: {len(a)} runs, tables {status}{note}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
