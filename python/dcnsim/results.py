"""Running a scenario and handling its results: tables, summary, output directory."""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, TextIO

import pandas as pd

from dcnsim import _core, outdir
from dcnsim.memory import check_memory
from dcnsim.scenario import Scenario, as_scenario

__all__ = [
    "OUTPUT_FILES",
    "PCAP_DIR",
    "Results",
    "check_output_dir",
    "format_progress",
    "pcap_file_names",
    "run",
]

#: Every file ``Results.write`` may produce at the top of an output directory; a
#: directory holding anything else is not replaced (it is probably not one of ours).
OUTPUT_FILES = (
    "flows.parquet",
    "probes.parquet",
    "ports.parquet",
    "queues.parquet",
    "rounds.parquet",
    "flow_trace.parquet",
    "summary.json",
)

#: The subdirectory holding one ``<name>.pcap`` per packet capture (``trace.pcap``).
PCAP_DIR = "pcap"


class Results:
    """The records of one run.

    ``flows`` (one row per datagram stream, then one per TCP flow), ``probes``,
    ``ports`` (one row per egress port: counters and the largest queue seen) and
    ``rounds`` (one row per finished incast round) are DataFrames; ``traces`` maps
    a trace name to a DataFrame: ``"queues"`` (``trace.queues``) and ``"flows"``
    (``trace.flows``, cwnd and sequence numbers); ``pcaps`` maps each name of
    ``trace.pcap`` to the bytes of its pcap file; ``summary`` is the run's counters
    and timings. Columns are those of ``docs/scenario.md`` ("Outputs"), in that order.
    """

    def __init__(self, raw: Mapping[str, Any], scenario: Scenario) -> None:
        self.scenario = scenario
        self.summary: dict[str, Any] = dict(raw["summary"])
        self.flows = pd.DataFrame(raw["flows"])
        self.probes = pd.DataFrame(raw["probes"])
        self.ports = pd.DataFrame(raw["ports"])
        self.rounds = pd.DataFrame(raw["rounds"])
        self.traces: dict[str, pd.DataFrame] = {
            "queues": pd.DataFrame(raw["queues"]),
            "flows": pd.DataFrame(raw["flow_trace"]),
        }
        self.pcaps: dict[str, bytes] = {str(k): bytes(v) for k, v in raw["pcaps"].items()}

    def __repr__(self) -> str:
        s = self.summary
        return (
            f"Results(flows={len(self.flows)}, probes={len(self.probes)}, "
            f"rounds={len(self.rounds)}, pcaps={len(self.pcaps)}, "
            f"events={s.get('events')}, packet_hops={s.get('packet_hops')})"
        )

    def write(self, out_dir: str | os.PathLike[str]) -> Path:
        """Write the output files into ``out_dir``, whole or not at all.

        The files are written into a temporary directory beside ``out_dir`` which
        then takes its place; a previous ``out_dir`` is moved away and deleted only
        once the new one is in. A directory holding files other than dcnsim's outputs
        is refused rather than replaced. Returns the output path.
        """
        return outdir.write_whole(out_dir, self._write_files, _foreign_entries)

    def _write_files(self, directory: Path) -> None:
        # flows, probes, ports and summary always; a table the scenario has to ask
        # for (queue or flow trace, incast rounds, captures) when it asked for it,
        # even if the run left it empty.
        self.flows.to_parquet(directory / "flows.parquet", index=False)
        self.probes.to_parquet(directory / "probes.parquet", index=False)
        self.ports.to_parquet(directory / "ports.parquet", index=False)
        optional = (
            (self.traces["queues"], "trace.queues", "queues.parquet"),
            (self.traces["flows"], "trace.flows", "flow_trace.parquet"),
            (self.rounds, "traffic.incast", "rounds.parquet"),
        )
        for table, asked_by, name in optional:
            if len(table) or self.scenario.get(asked_by):
                table.to_parquet(directory / name, index=False)
        if self.pcaps:
            (directory / PCAP_DIR).mkdir()
            for name, file_name in pcap_file_names(self.pcaps).items():
                (directory / PCAP_DIR / file_name).write_bytes(self.pcaps[name])
        with open(directory / "summary.json", "w", encoding="utf-8") as f:
            json.dump(self.summary, f, indent=2, default=_json_default)
            f.write("\n")


def pcap_file_names(names: Iterable[str]) -> dict[str, str]:
    """A distinct, filesystem-safe file name for each capture name, in order.

    ``"sw0->host3"`` becomes ``"sw0-to-host3.pcap"`` and ``"host3"`` ``"host3.pcap"``;
    any character other than letters, digits, ``.``, ``_`` and ``-`` becomes ``_``,
    a leading ``.`` too, and a name that would repeat an earlier one gets ``-2``,
    ``-3``, ... (compared without case, for case-insensitive file systems).
    """
    files: dict[str, str] = {}
    taken: set[str] = set()
    for name in names:
        if name in files:
            continue
        stem = _UNSAFE.sub("_", name.strip().replace("->", "-to-")) or "capture"
        if stem.startswith("."):
            stem = "_" + stem[1:]
        file_name, n = f"{stem}.pcap", 1
        while file_name.lower() in taken:
            n += 1
            file_name = f"{stem}-{n}.pcap"
        taken.add(file_name.lower())
        files[name] = file_name
    return files


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


def run(
    scenario: Scenario | Mapping[str, Any] | str | os.PathLike[str],
    progress: bool = False,
    memory_limit: int | None = None,
) -> Results:
    """Run a scenario (a Scenario, a dict, or a TOML path) and return its Results.

    With ``progress=True`` one updating line on stderr shows the simulated time and
    the packet-hops per wall second. Ctrl-C stops the run (KeyboardInterrupt).
    A run whose estimated memory exceeds ``memory_limit`` bytes (default: 80% of the
    memory available) is refused with a ScenarioError before it starts.
    """
    scenario = as_scenario(scenario)
    text = scenario.to_json()
    check_memory(text, memory_limit)
    if not progress:
        return Results(_core.run(text, None), scenario)
    reporter = _ProgressLine(sys.stderr)
    try:
        raw = _core.run(text, reporter)
    finally:
        reporter.close()
    return Results(raw, scenario)


# --- progress -----------------------------------------------------------------------


def format_progress(info: Mapping[str, Any]) -> str:
    """One status line from a progress report of the core."""
    sim = float(info["sim_time_s"])
    stop = info.get("stop_time_s")
    wall = float(info["wall_s"])
    line = f"simulated {format_seconds(sim)}"
    if stop:
        done = sim / float(stop)
        line += f" of {format_seconds(float(stop))} ({100.0 * done:5.1f}%)"
    line += f" | {format_count(float(info['packet_hops_per_s']))} packet-hops/s"
    line += f" | wall {wall:.1f} s"
    if stop and 0 < done < 1:
        # Assumes the rest runs at the speed so far.
        line += f" | about {format_seconds(wall * (1 - done) / done)} left"
    return line


class _ProgressLine:
    """Rewrites one stderr line on each report; ends it with a newline on close."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.width = 0

    def __call__(self, info: Mapping[str, Any]) -> None:
        line = format_progress(info)
        self.stream.write("\r" + line.ljust(self.width))
        self.stream.flush()
        self.width = len(line)

    def close(self) -> None:
        if self.width:
            self.stream.write("\n")
            self.stream.flush()


# --- formatting shared with the CLI ---------------------------------------------------


def format_seconds(seconds: float) -> str:
    """``0.0123`` -> ``"12.300 ms"``."""
    magnitude = abs(seconds)
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9)):
        if magnitude >= scale:
            return f"{seconds / scale:.3f} {unit}"
    return f"{seconds / 1e-9:.3f} ns" if seconds else "0 s"


def format_rate(bps: float) -> str:
    """``812_300_000`` -> ``"812.30 Mbps"``."""
    for suffix, scale in (("Tbps", 1e12), ("Gbps", 1e9), ("Mbps", 1e6), ("Kbps", 1e3)):
        if abs(bps) >= scale:
            return f"{bps / scale:.2f} {suffix}"
    return f"{bps:.0f} bps"


def format_count(value: float) -> str:
    """``3_700_000`` -> ``"3.70 M"``."""
    for suffix, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(value) >= scale:
            return f"{value / scale:.2f} {suffix}"
    return f"{value:.0f}"


# --- output directory -------------------------------------------------------------------


def check_output_dir(out_dir: str | os.PathLike[str]) -> Path:
    """The output path, if ``Results.write`` may create or replace it; else OSError."""
    return outdir.check_output_dir(out_dir, _foreign_entries)


def _foreign_entries(out: Path) -> Iterator[str]:
    """Entries of an existing output directory that ``Results.write`` does not make."""
    for p in out.iterdir():
        if p.name == PCAP_DIR and p.is_dir() and not p.is_symlink():
            for q in p.iterdir():
                if q.suffix != ".pcap" or q.is_symlink() or not q.is_file():
                    yield f"{PCAP_DIR}/{q.name}"
        elif p.name not in OUTPUT_FILES or p.is_symlink() or not p.is_file():
            yield p.name


def _json_default(value: Any) -> Any:
    item = getattr(value, "item", None)  # numpy scalar
    if callable(item):
        return item()
    raise TypeError(f"{type(value).__name__} is not JSON serializable")
