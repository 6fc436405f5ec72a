"""``[[traffic.flows_file]]``: TCP flows listed in a CSV or Parquet file (a trace).

Each entry names a file (``path``; relative to the scenario file, as a workload's
``cdf``). Its rows become ``[[traffic.flows]]`` entries, after the flows listed in
the scenario, in file order, when the scenario goes to the core (``to_json``); the
scenario itself (and a run's ``scenario.toml``) keeps the entry, not the rows.

Columns (a header row in CSV; names as here, any order):

- ``src``, ``dst`` (required): host indices;
- ``size`` (required): a size with its unit (``"64KB"``), or ``size_bytes``: bytes;
- ``start`` (required): a time with its unit (``"1.5ms"``), or ``start_s``: seconds;
- ``class`` (optional, 0..7) and ``protocol`` (optional): as in ``[[traffic.flows]]``;
  an empty cell takes the default.

Every row is checked as it is read and the first bad one is an error naming the
entry, the file, the row (data rows counted from 1) and the column:
``traffic.flows_file[0] 'trace.csv' row 12: size_bytes: expected a whole number of
bytes, not '1.5'``; so is a value the core refuses (a host out of range), and a
column that is none of these (never silently ignored).
"""

from __future__ import annotations

import copy
import csv
import io
import math
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dcnsim import limits
from dcnsim._core import ScenarioError

__all__ = ["COLUMNS", "anchor", "expand", "where_from"]

#: The columns a flows file may have; ``(size | size_bytes)`` and ``(start | start_s)``
#: are each required once.
COLUMNS = ("src", "dst", "size", "size_bytes", "start", "start_s", "class", "protocol")

#: Where each expanded flow came from: (entry index, path, row number), in order.
Origins = list[tuple[int, str, int]]


def anchor(data: dict[str, Any], base: Path) -> None:
    """Make each relative ``traffic.flows_file[i].path`` relative to ``base`` (the
    scenario file's directory)."""
    for entry in _entries(data):
        path = entry.get("path") if isinstance(entry, dict) else None
        if isinstance(path, str) and path.strip() and not os.path.isabs(path):
            entry["path"] = os.fspath(base / path)


def expand(data: dict[str, Any]) -> tuple[dict[str, Any], int, Origins]:
    """``data`` with its flows files read into ``traffic.flows`` (a copy; ``data`` as
    it is when it has none), the number of flows listed before them, and each added
    flow's origin. Raises ScenarioError for a bad entry, file or row."""
    traffic = data.get("traffic")
    if not isinstance(traffic, dict) or "flows_file" not in traffic:
        return data, 0, []
    entries = traffic["flows_file"]
    if not isinstance(entries, list):
        raise ScenarioError(
            "traffic.flows_file: expected a list of tables ([[traffic.flows_file]])"
        )
    out = copy.deepcopy(data)
    listed = out["traffic"].get("flows", [])
    if not isinstance(listed, list):
        return data, 0, []  # the core names traffic.flows
    first = len(listed)
    origins: Origins = []
    flows = list(listed)
    for i, entry in enumerate(entries):
        where = f"traffic.flows_file[{i}]"
        if not isinstance(entry, dict):
            raise ScenarioError(f"{where}: expected a table with a path")
        unknown = [k for k in entry if k != "path"]
        if unknown:
            raise ScenarioError(f"{where}.{unknown[0]}: unknown key (expected one of `path`)")
        path = entry.get("path")
        if not isinstance(path, str) or not path.strip():
            raise ScenarioError(f"{where}.path: required: the CSV or Parquet file of the flows")
        for number, flow in _read(path, f"{where} '{path}'"):
            flows.append(flow)
            origins.append((i, path, number))
    out["traffic"]["flows"] = flows
    del out["traffic"]["flows_file"]
    return out, first, origins


def where_from(message: str, first: int, origins: Origins) -> str:
    """A core error about an expanded flow (``traffic.flows[K]...``) said of its file
    and row instead; any other message as it is."""
    found = re.match(r"traffic\.flows\[(\d+)\]\.?([^:]*): (.*)", message, re.DOTALL)
    if not found or int(found[1]) < first or int(found[1]) - first >= len(origins):
        return message
    i, path, row = origins[int(found[1]) - first]
    field = f"{found[2]}: " if found[2] else ""
    return f"traffic.flows_file[{i}] '{path}' row {row}: {field}{found[3]}"


# --- reading ------------------------------------------------------------------------


def _entries(data: dict[str, Any]) -> list[Any]:
    traffic = data.get("traffic")
    entries = traffic.get("flows_file") if isinstance(traffic, dict) else None
    return entries if isinstance(entries, list) else []


def _read(path: str, where: str) -> list[tuple[int, dict[str, Any]]]:
    """The flows of one file, each with its row number."""
    try:
        raw = limits.read_small_file(path)
    except OSError as exc:
        raise ScenarioError(f"{where}: cannot read: {exc.strerror or exc}") from None
    suffix = Path(path).suffix.lower()
    if suffix == ".csv":
        header, rows = _csv_rows(raw, where)
    elif suffix == ".parquet":
        header, rows = _parquet_rows(raw, where)
    else:
        raise ScenarioError(f"{where}: expected a .csv or .parquet file, not '{suffix or path}'")
    _check_header(header, where)
    return [(n, _flow(row, f"{where} row {n}")) for n, row in enumerate(rows, start=1)]


def _csv_rows(raw: bytes, where: str) -> tuple[list[str], list[dict[str, Any]]]:
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ScenarioError(f"{where}: not UTF-8 text ({exc.reason})") from None
    reader = csv.reader(io.StringIO(text))
    lines = [row for row in reader if any(cell.strip() for cell in row)]
    if not lines:
        raise ScenarioError(f"{where}: empty: expected a header row (src,dst,size,start)")
    header = [h.strip() for h in lines[0]]
    rows = []
    for n, cells in enumerate(lines[1:], start=1):
        if len(cells) != len(header):
            raise ScenarioError(
                f"{where} row {n}: {len(cells)} cells, the header has {len(header)}"
            )
        rows.append({h: c.strip() for h, c in zip(header, cells, strict=True) if c.strip()})
    return header, rows


def _parquet_rows(raw: bytes, where: str) -> tuple[list[str], list[dict[str, Any]]]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(pa.BufferReader(raw))
    except (pa.ArrowException, OSError) as exc:
        raise ScenarioError(f"{where}: not a Parquet file ({' '.join(str(exc).split())})") from None
    rows = [{k: v for k, v in row.items() if v is not None} for row in table.to_pylist()]
    return list(table.column_names), rows


def _check_header(header: list[str], where: str) -> None:
    unknown = [h for h in header if h not in COLUMNS]
    if unknown:
        raise ScenarioError(
            f"{where}: column '{unknown[0]}': unknown (expected {', '.join(COLUMNS)})"
        )
    if len(set(header)) != len(header):
        raise ScenarioError(f"{where}: a column named twice")
    for need in (("src",), ("dst",), ("size", "size_bytes"), ("start", "start_s")):
        present = [h for h in need if h in header]
        if len(present) != 1:
            raise ScenarioError(f"{where}: needs exactly one column of {' or '.join(need)}")


def _flow(row: dict[str, Any], where: str) -> dict[str, Any]:
    """One row as a ``[[traffic.flows]]`` entry; the core checks the values further."""
    flow: dict[str, Any] = {}
    for column, convert in _CONVERT.items():
        if column not in row:
            if column in ("src", "dst"):
                raise ScenarioError(f"{where}: {column}: required")
            continue
        try:
            key, value = convert(row[column])
        except ValueError as exc:
            raise ScenarioError(f"{where}: {column}: {exc}") from None
        flow[key] = value
    for need in (("size", "size_bytes"), ("start", "start_s")):
        if not any(c in row for c in need):
            raise ScenarioError(f"{where}: {need[0]}: required")
    return flow


def _whole(value: Any, what: str) -> int:
    if isinstance(value, bool):
        raise ValueError(f"expected {what}, not {value!r}")
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, int):
        return value
    text = str(value).strip()
    if re.fullmatch(r"[+-]?\d+", text):
        return int(text)
    raise ValueError(f"expected {what}, not {text!r}")


def _seconds(value: Any) -> str:
    if isinstance(value, bool):
        raise ValueError(f"expected a number of seconds, not {value!r}")
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"expected a number of seconds, not {str(value)!r}") from None
    if not math.isfinite(seconds) or seconds < 0:
        raise ValueError(f"expected a number of seconds at least 0, not {value!r}")
    return f"{str(value).strip() if isinstance(value, str) else repr(seconds)}s"


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise ValueError(f"expected {what}, not {value!r}")
    return value


_CONVERT: dict[str, Callable[[Any], tuple[str, Any]]] = {
    "src": lambda v: ("src", _whole(v, "a host index")),
    "dst": lambda v: ("dst", _whole(v, "a host index")),
    "size": lambda v: ("size", _text(v, "a size with its unit (64KB)")),
    "size_bytes": lambda v: ("size", f"{_whole(v, 'a whole number of bytes')}B"),
    "start": lambda v: ("start", _text(v, "a time with its unit (1.5ms)")),
    "start_s": lambda v: ("start", _seconds(v)),
    "class": lambda v: ("class", _whole(v, "an integer 0..7")),
    "protocol": lambda v: ("protocol", _text(v, "a protocol name")),
}
