"""Running a scenario and handling its results: tables, summary, output directory.

pandas is imported where the tables are made, not with this module, so the command
line and ``import dcnsim`` start without it; the core writes the Parquet files
(``_core.write_parquet``), so writing them needs neither pandas nor pyarrow.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from collections.abc import Iterable, Iterator, Mapping
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, TextIO

from dcnsim import _core, outdir
from dcnsim.formats import format_count, format_seconds, format_wall
from dcnsim.labels import scenario_line
from dcnsim.limits import check_run_arguments
from dcnsim.memory import check_memory
from dcnsim.notebook import summary_html
from dcnsim.outdir import OutputError
from dcnsim.scenario import Scenario, as_scenario

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "CHUNK_ROWS",
    "OUTPUT_FILES",
    "PCAP_DIR",
    "ROW_WARNING",
    "Results",
    "check_output_dir",
    "format_progress",
    "pcap_file_names",
    "run",
]

# The core's tables are read-only mappings of column name to values.
Mapping.register(_core.Columns)

#: Every file ``Results.write`` may produce at the top of an output directory; a
#: directory holding anything else is not replaced (it is probably not one of ours).
OUTPUT_FILES = (
    "flows.parquet",
    "ops.parquet",
    "probes.parquet",
    "ports.parquet",
    "queues.parquet",
    "rounds.parquet",
    "agent_rows.parquet",
    "flow_trace.parquet",
    "links.parquet",
    "summary.json",
    "scenario.toml",
)

#: The subdirectory holding one ``<name>.pcap`` per packet capture (``trace.pcap``).
PCAP_DIR = "pcap"

#: The tables recorded row by row as a run goes, which a run writing to a directory
#: streams out: the core's name → (file, the scenario key asking for it; ``None``:
#: always written). A table a scenario has to ask for is written when it asks, even
#: if the run left it empty, and whenever the run recorded rows in it.
RECORDED = {
    "probes": ("probes.parquet", None),
    "queues": ("queues.parquet", "trace.queues"),
    "flow_trace": ("flow_trace.parquet", "trace.flows"),
    "links": ("links.parquet", "trace.links"),
}

#: Rows held (in the core, across all recorded tables) before they leave for the
#: output files as one Parquet row group each: 2^18 rows, about 20 MB of probe rows,
#: a few copies of that while a chunk is converted and written. Measured on 19.5 M
#: probe rows: peak RSS 166 / 255 / 404 MB with chunks of 2^16 / 2^18 / 2^20 rows,
#: and probes.parquet 26% / 12% / 0% larger than as one row group.
CHUNK_ROWS = 1 << 18

#: The progress line warns once when a run has recorded this many rows (about
#: 1.6 GB held by a run kept in memory; about 0.2 GB of ``probes.parquet``).
ROW_WARNING = 10_000_000


class Results:
    """The records of one run.

    ``flows`` (one row per datagram stream, then one per TCP flow), ``ops`` (one row
    per operation of an application), ``probes``, ``ports`` (one row per egress port:
    counters and the largest queue seen) and ``rounds`` (one row per finished incast
    round, a view of its operations) are DataFrames; ``traces`` maps
    a trace name to a DataFrame: ``"queues"`` (``trace.queues``) and ``"flows"``
    (``trace.flows``, cwnd and sequence numbers); ``links`` is every port's packets,
    bytes and utilisation per interval of ``trace.links``; ``pcaps`` maps each name of
    ``trace.pcap`` to the bytes of its pcap file; ``summary`` is the run's counters
    and timings. Columns are those of ``docs/scenario.md`` ("Outputs"), in that order.

    Of a run that streamed its rows to an output directory (``run(..., out=DIR)``),
    ``probes`` and ``traces`` are read from that directory when first asked for.
    """

    def __init__(
        self, raw: Mapping[str, Any], scenario: Scenario, held: Iterable[str] = tuple(RECORDED)
    ) -> None:
        """``raw`` is what ``_core.run`` returned; ``held``, the recorded tables it
        holds (a streamed run: those it neither wrote to a file nor dropped)."""
        self.scenario = scenario
        self.summary: dict[str, Any] = dict(raw["summary"])
        self.pcaps: dict[str, bytes] = {str(k): bytes(v) for k, v in raw["pcaps"].items()}
        # Each table as the core returned it (``_core.Columns``: numpy arrays and
        # lists of strings, made when asked for) until it is first asked for as a
        # DataFrame: a run whose caller only reads the summary never imports pandas,
        # nor numpy if it looks at no column.
        self._columns: dict[str, Any] = {
            name: raw[name] for name in ("flows", "ops", "ports", "rounds", "agent_rows", *held)
        }
        # The DataFrames made so far: from `_columns`, or read from the file of a
        # recorded table a streamed run wrote into `out_dir`.
        self._held: dict[str, pd.DataFrame] = {}
        #: The directory a streamed run wrote (``run(..., out=DIR)``), else None.
        self.out_dir: Path | None = None
        #: Count, and mean, spread and range of the latencies, of the probe rows.
        self.probe_latency = LatencyStats(**raw["probe_latency"])

    def columns(self, name: str) -> Mapping[str, Any]:
        """The columns of table ``name`` (``flows``, ``ops``, ``ports``, ``rounds``,
        ``agent_rows``; of a run kept in memory also ``probes``, ``queues``,
        ``flow_trace`` and ``links``) as the core returned them: a mapping of column name to numpy
        array (strings as lists), each made when asked for, with ``rows``, the number
        of rows; no DataFrame made."""
        return self._columns[name]

    @property
    def flows(self) -> pd.DataFrame:
        return self._frame("flows")

    @property
    def ports(self) -> pd.DataFrame:
        return self._frame("ports")

    @property
    def ops(self) -> pd.DataFrame:
        return self._frame("ops")

    @property
    def rounds(self) -> pd.DataFrame:
        return self._frame("rounds")

    @property
    def agent_rows(self) -> pd.DataFrame:
        """Rows switch agents wrote: ``time_s``, ``switch``, ``agent`` (its place among
        the switch's agents), ``key``, ``value``."""
        return self._frame("agent_rows")

    @property
    def probes(self) -> pd.DataFrame:
        return self._recorded("probes")

    @property
    def links(self) -> pd.DataFrame:
        """Every port's packets, bytes and link utilisation per interval of
        ``trace.links`` (no rows without it)."""
        return self._recorded("links")

    @property
    def traces(self) -> dict[str, pd.DataFrame]:
        return {"queues": self._recorded("queues"), "flows": self._recorded("flow_trace")}

    def _frame(self, name: str) -> pd.DataFrame:
        """Table ``name`` as a DataFrame, made from its columns the first time."""
        if name not in self._held:
            import pandas as pd

            self._held[name] = pd.DataFrame(dict(self._columns[name]))
        return self._held[name]

    def _recorded(self, name: str) -> pd.DataFrame:
        if name not in self._held and name not in self._columns:
            if self.out_dir is None:
                raise LookupError(f"{name}: the rows of this run were not kept")
            import pandas as pd

            self._held[name] = pd.read_parquet(self.out_dir / RECORDED[name][0])
        return self._frame(name)

    def __repr__(self) -> str:
        s = self.summary
        return (
            f"Results(flows={len(self.flows)}, probes={self.probe_latency.rows}, "
            f"rounds={len(self.rounds)}, pcaps={len(self.pcaps)}, "
            f"events={s.get('events')}, packet_hops={s.get('packet_hops')})"
        )

    def _repr_html_(self) -> str:
        """A notebook's view (``dcnsim.notebook``): the run's scenario, its summary
        numbers (time, events, packets, probe latency) and its tables with their row
        counts (a table streamed to ``out_dir``: its file)."""
        s = self.summary
        facts: list[tuple[str, Any]] = [
            ("seed", s.get("seed")),
            ("simulated", f"{format_seconds(float(s['sim_time_s']))} in "
                          f"{format_wall(float(s['wall_s']))} wall"),
            ("events", f"{s['events']:,}"),
            ("packet-hops", f"{s['packet_hops']:,} "
                            f"({format_count(float(s['packet_hops_per_s']))} packet-hops/s)"),
            ("packets", f"{s['packets_injected']:,} injected, {s['packets_delivered']:,} "
                        f"delivered, {s['packets_dropped']:,} dropped, "
                        f"{s['packets_in_flight']:,} in flight"),
        ]  # fmt: skip
        latency = self.probe_latency
        if latency.received:
            facts.append(
                ("probe latency", f"mean {latency.mean * 1e6:.2f} µs, std {latency.std * 1e6:.2f}, "
                                  f"min {latency.min * 1e6:.2f}, max {latency.max * 1e6:.2f} "
                                  f"({latency.received:,} received of {latency.rows:,})")
            )  # fmt: skip
        if self.out_dir is not None:
            facts.append(("written to", str(self.out_dir)))
        tables = []
        for name in ("flows", "ops", "ports", "rounds", "agent_rows", *RECORDED):
            held = self._columns.get(name)
            if held is not None:
                tables.append((name, f"{held.rows:,}", ", ".join(held)))
            elif self.out_dir is not None and (self.out_dir / RECORDED[name][0]).is_file():
                rows = f"{latency.rows:,}" if name == "probes" else ""
                tables.append((name, rows, f"in {RECORDED[name][0]}"))
        line = scenario_line(self.scenario.to_dict())
        return summary_html(self.scenario.get("name"), line, facts, tables)

    def write(self, out_dir: str | os.PathLike[str]) -> Path:
        """Write the output files into ``out_dir``, whole or not at all: the run's
        tables as the core returned them (a DataFrame changed since is not written).

        The files are written into a temporary directory beside ``out_dir`` which
        then takes its place; a previous ``out_dir`` is moved away and deleted only
        once the new one is in. A directory holding files other than dcnsim's outputs
        is refused rather than replaced. Returns the output path.
        """
        try:
            return outdir.write_whole(out_dir, self._write_files, _foreign_entries)
        except OSError as exc:
            raise OutputError("out_dir", out_dir, exc) from None

    def _write_files(self, directory: Path) -> None:
        # flows, ops, probes, ports and summary always; a table the scenario has to ask
        # for (queue or flow trace, incast rounds, captures) when it asked for it,
        # even if the run left it empty. The tables are the core's columns as the run
        # returned them; streamed tables are copied from their files.
        write_table(directory / "flows.parquet", self._columns["flows"])
        write_table(directory / "ops.parquet", self._columns["ops"])
        write_table(directory / "ports.parquet", self._columns["ports"])
        optional = [(name, file, asked_by) for name, (file, asked_by) in RECORDED.items()]
        optional.append(("rounds", "rounds.parquet", "traffic.incast"))
        for name, file, asked_by in optional:
            if name not in self._columns:
                if self.out_dir is not None:
                    shutil.copyfile(self.out_dir / file, directory / file)
                continue
            columns = self._columns[name]
            if columns.rows or asked_by is None or self.scenario.get(asked_by):
                write_table(directory / file, columns)
        if self._columns["agent_rows"].rows:
            write_table(directory / "agent_rows.parquet", self._columns["agent_rows"])
        if self.pcaps:
            (directory / PCAP_DIR).mkdir()
            for name, file_name in pcap_file_names(self.pcaps).items():
                (directory / PCAP_DIR / file_name).write_bytes(self.pcaps[name])
        with open(directory / "summary.json", "w", encoding="utf-8") as f:
            json.dump(self.summary, f, indent=2, default=_json_default)
            f.write("\n")
        # The scenario as it ran (after ``--set`` and any change made in Python):
        # ``dcnsim run DIR/scenario.toml`` runs it again, giving the same tables.
        (directory / "scenario.toml").write_text(self.scenario.to_toml(), encoding="utf-8")


class LatencyStats(NamedTuple):
    """Count, mean, standard deviation (population), minimum and maximum of the
    latencies of a run's probe rows, as the core summarized them (also of rows it
    streamed out, chunk by chunk); NaN latencies (dropped or in flight) count as
    rows but not as received. A NamedTuple rather than a dataclass: ``dataclasses``
    imports ``inspect``, a tenth of ``dcnsim list``'s start-up (issue 35)."""

    rows: int
    received: int
    mean: float
    std: float
    min: float
    max: float


def write_table(path: Path, columns: Mapping[str, Any]) -> None:
    """Write a table of the core's columns (float64 or int64 arrays, lists of
    strings) to the Parquet file ``path``, as the core writes the tables it streams:
    no DataFrame made (``Results.write`` and a sweep's store)."""
    _core.write_parquet(path, columns)


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
    memory_limit: int | str | None = None,
    out: str | os.PathLike[str] | None = None,
    chunk_rows: int = CHUNK_ROWS,
) -> Results:
    """Run a scenario (a Scenario, a dict, or a TOML path) and return its Results.

    With ``progress=True`` one updating line on stderr shows the simulated time and
    the packet-hops per wall second. Ctrl-C stops the run (KeyboardInterrupt).
    A run whose estimated memory exceeds ``memory_limit`` bytes (or a size such as
    ``"8GB"``; default: 80% of the memory this process may still take, see
    ``dcnsim.memory``) is refused with a ScenarioError before it starts.

    Without ``out`` every table is returned in memory. With ``out`` the output files
    are written to that directory, whole or not at all (as ``Results.write``), and
    the recorded rows (probes, queue and flow traces) are streamed there in chunks of
    about ``chunk_rows`` rows as the run goes instead of being held, so memory does
    not grow with them; the returned Results read those tables back from ``out``
    when asked for.

    A wrong argument raises ScenarioError naming it, and so does an ``out`` that
    cannot be written (naming the path given).
    """
    memory_limit = check_run_arguments(memory_limit, out, chunk_rows)
    scenario = as_scenario(scenario)
    if out is None:
        return Results(_run_core(scenario, progress, memory_limit), scenario)
    kept: list[Results] = []

    def write(directory: Path) -> None:
        kept.append(_run_streamed(scenario, progress, memory_limit, directory, chunk_rows))
        kept[0]._write_files(directory)

    try:
        path = outdir.write_whole(out, write, _foreign_entries)
    except OSError as exc:
        raise OutputError("out", out, exc) from None
    kept[0].out_dir = path
    return kept[0]


def summarize(
    scenario: Scenario, progress: bool = False, memory_limit: int | None = None
) -> Results:
    """Run a scenario keeping none of its recorded rows (only the summary, flows,
    ops, ports, rounds and the probe latency statistics): ``dcnsim run`` without
    ``--out``."""
    return _run_streamed(scenario, progress, memory_limit, None, CHUNK_ROWS)


def _run_streamed(
    scenario: Scenario,
    progress: bool,
    memory_limit: int | None,
    directory: Path | None,
    chunk_rows: int,
) -> Results:
    """A run whose recorded rows leave the core in chunks: to their files in
    ``directory`` (each table always written, or when the scenario asks for it, or
    when it has rows; the others are held, empty), or dropped without one."""
    files = {
        name: (directory / file, asked_by is None or bool(scenario.get(asked_by)))
        for name, (file, asked_by) in RECORDED.items()
        if directory is not None
    }
    raw = _run_core(scenario, progress, memory_limit, chunk_rows, files)
    held = [name for name in files if name not in raw["written"]]
    return Results(raw, scenario, held)


def _run_core(
    scenario: Scenario,
    progress: bool,
    memory_limit: int | None,
    chunk_rows: int | None = None,
    files: Mapping[str, tuple[Path, bool]] | None = None,
) -> dict[str, Any]:
    """``_core.run``: the scenario parsed once, its memory estimate checked on the way."""
    check = partial(check_memory, limit=memory_limit)
    reporter = (
        _ProgressLine(sys.stderr, streamed=chunk_rows is not None, eta=lasts_to_stop_time(scenario))
        if progress
        else None
    )
    try:
        raw = _core.run(scenario.to_json(), reporter, check, chunk_rows, files)
        if reporter is not None:
            reporter.done(raw["summary"])
        return raw
    finally:
        if reporter is not None:
            reporter.close()


# --- progress -----------------------------------------------------------------------


def lasts_to_stop_time(scenario: Scenario) -> bool:
    """Whether the run certainly goes on until its ``stop_time``: some stream or
    workload sends until then (it has no ``stop`` of its own, or the same one). A run
    whose traffic is finite (listed flows, probes, incast rounds, sources that stop
    sooner) ends once its last packet is done, which may be long before."""
    traffic = scenario.get("traffic") or {}
    stop_time = scenario.get("stop_time")
    sources = [*traffic.get("streams", []), *traffic.get("workloads", [])]
    return stop_time is not None and any(s.get("stop", stop_time) == stop_time for s in sources)


def format_progress(info: Mapping[str, Any], eta: bool = True) -> str:
    """One status line from a progress report of the core. With ``eta`` (the run
    lasts until ``stop_time``: ``lasts_to_stop_time``) it says about how long is left;
    without, the stop time is only an upper bound and no time left is guessed."""
    sim = float(info["sim_time_s"])
    stop = info.get("stop_time_s")
    wall = float(info["wall_s"])
    line = f"simulated {format_seconds(sim)}"
    if stop:
        done = sim / float(stop)
        bound = "" if eta else "at most "
        line += f" of {bound}{format_seconds(float(stop))} ({100.0 * done:5.1f}%)"
    line += f" | {format_count(float(info['packet_hops_per_s']))} packet-hops/s"
    line += f" | wall {format_wall(wall)}"
    if eta and stop and 0 < done < 1:
        # Assumes the rest runs at the speed so far.
        line += f" | about {format_wall(wall * (1 - done) / done)} left"
    return line


class _ProgressLine:
    """The run's progress on ``stream`` in the style of the studies' and sweeps' bars
    (tqdm, ``studies.runner.progress_bar``): the share of ``stop_time`` simulated as a
    bar, then ``format_progress``'s text (with ``eta``, the time left), rewritten on
    each report and ended with a newline on close; without a ``stop_time``, the text
    alone. Once the run has recorded ``ROW_WARNING`` rows it prints one warning line."""

    def __init__(self, stream: TextIO, streamed: bool, eta: bool) -> None:
        self.stream = stream
        self.streamed = streamed
        self.eta = eta
        self.warned = False
        self.bar: Any = None

    def __call__(self, info: Mapping[str, Any]) -> None:
        if self.bar is None:
            from tqdm import tqdm

            stop = info.get("stop_time_s")
            shape = "{percentage:3.0f}%|{bar:20}| {desc}" if stop else "{desc}"
            self.bar = tqdm(
                total=float(stop) if stop else None, file=self.stream, bar_format=shape,
                mininterval=0, dynamic_ncols=False,
            )  # fmt: skip
        rows = int(info.get("recorded_rows", 0))
        if rows >= ROW_WARNING and not self.warned:
            self.warned = True
            where = (
                "streamed out as the run goes"
                if self.streamed
                else "held in memory until the run ends"
            )
            warning = f"warning: {rows:,} rows recorded (probes, traces), {where}"
            self.bar.write(warning, self.stream)
        if self.bar.total:
            self.bar.n = min(float(info["sim_time_s"]), self.bar.total)
        self.bar.set_description_str(format_progress(info, self.eta))

    def done(self, summary: Mapping[str, Any]) -> None:
        """The run ended (not interrupted): the bar full, and the line says so, and
        whether the traffic ended before ``stop_time`` (a bar left at 9 % reads as an
        aborted run)."""
        if self.bar is None:
            return
        if self.bar.total:
            self.bar.n = self.bar.total
        early = "" if summary.get("stopped_at_stop_time") else ", traffic done before stop_time"
        self.bar.set_description_str(
            f"done: simulated {format_seconds(float(summary['sim_time_s']))}{early} | "
            f"{format_count(float(summary['packet_hops_per_s']))} packet-hops/s | "
            f"wall {format_wall(float(summary['wall_s']))}"
        )

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


# --- output directory -------------------------------------------------------------------


def check_output_dir(out_dir: str | os.PathLike[str]) -> Path:
    """The output path, if ``Results.write`` may create or replace it; else OSError."""
    return outdir.check_output_dir(out_dir, _foreign_entries)


def _foreign_entries(out: Path) -> Iterator[str]:
    """Entries of an existing output directory that ``Results.write`` does not make."""
    for p in out.iterdir():
        if p.name in _OWN_DIRS and p.is_dir() and not p.is_symlink():
            for q in p.iterdir():
                if q.suffix not in _OWN_DIRS[p.name] or q.is_symlink() or not q.is_file():
                    yield f"{p.name}/{q.name}"
        elif p.name not in OUTPUT_FILES or p.is_symlink() or not p.is_file():
            yield p.name


#: The subdirectories of a run's output and the files they may hold: its captures,
#: and the figures ``dcnsim plot`` draws there (a rerun replaces them with the rest).
_OWN_DIRS = {PCAP_DIR: (".pcap",), "plots": (".png", ".svg", ".pdf")}


def _json_default(value: Any) -> Any:
    item = getattr(value, "item", None)  # numpy scalar
    if callable(item):
        return item()
    raise TypeError(f"{type(value).__name__} is not JSON serializable")
