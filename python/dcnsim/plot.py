"""``dcnsim plot DIR``: the figures of one run's output directory.

What an ns-3 or htsim user draws first from a run, each written as PNG (300 dpi),
SVG and PDF (``studies.figures.save``) into ``DIR/plots/`` (or ``--out``):

- ``fct_cdf`` and ``slowdown_cdf``: the CDFs of the TCP flows' completion time and
  slowdown, a line per flow-size bucket (``BUCKETS``, the pFabric and HPCC papers'
  short / medium / long split). Unfinished flows are counted in their bucket and lie
  above every value: a curve stops at the share that finished, and its legend says
  how many did not (``dcnsim.unfinished``);
- ``latency_cdf``: the CDF of the probe packets' one-way latency (``probes.parquet``),
  a line per number of hops; a packet lost or still in flight lies above the curve;
- ``queues``: the queue length of every port of ``trace.queues`` over time
  (``queues.parquet``), a step line per port;
- ``link_utilisation``: the utilisation of the links over time (``links.parquet``,
  ``trace.links``): above, a step line per port for the busiest ports
  (``BUSIEST``, by bytes sent over the run), the line rate dashed at 1; below, every
  port as a row of a heat map, busiest at the top, so a fat-tree's hundreds of
  links fit one picture.

A figure whose table is missing or empty is skipped, and the command says so.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

from dcnsim.columns import display_unit
from dcnsim.studies.figures import pyplot, save

__all__ = ["BUCKETS", "BUSIEST", "plot_run"]

#: Flow-size buckets (upper bounds in bytes, names): short flows up to 100 KB, medium
#: up to 10 MB, long beyond (pFabric, SIGCOMM 2013, Fig. 4; HPCC's FCT scripts).
BUCKETS = ((100e3, "< 100 KB"), (10e6, "100 KB - 10 MB"), (np.inf, ">= 10 MB"))


#: Ports drawn one line each in ``link_utilisation``'s upper panel.
BUSIEST = 8


def plot_run(
    run_dir: str | os.PathLike[str], out: str | os.PathLike[str] | None = None
) -> tuple[list[Path], list[str]]:
    """Draw the figures of the run in ``run_dir`` into ``out`` (default
    ``run_dir/plots``); returns the files written and a line per figure skipped."""
    run_dir = Path(run_dir)
    if not (run_dir / "summary.json").is_file():
        raise FileNotFoundError(f"{run_dir}: no summary.json: not a run's output directory")
    target = run_dir / "plots" if out is None else Path(out)
    target.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    skipped: list[str] = []
    flows = _table(run_dir, "flows")
    tcp = flows[flows["kind"] == "tcp"] if flows is not None else None
    if tcp is None or not len(tcp):
        skipped.append("fct_cdf, slowdown_cdf: the run has no TCP flows")
    else:
        written += _cdf_by_size(tcp, "fct_s", "flow completion time", target / "fct_cdf.png")
        written += _cdf_by_size(
            tcp, "slowdown", "slowdown (FCT / ideal FCT)", target / "slowdown_cdf.png"
        )
    probes = _table(run_dir, "probes")
    if probes is None or not len(probes):
        skipped.append("latency_cdf: no probes.parquet rows (the run sent no probe packet)")
    else:
        written += _latency(probes, target / "latency_cdf.png")
    queues = _table(run_dir, "queues")
    if queues is None or not len(queues):
        skipped.append("queues: no queues.parquet rows (the scenario's trace.queues names ports)")
    else:
        written += _queues(queues, target / "queues.png")
    links = _table(run_dir, "links")
    if links is None or not len(links):
        skipped.append("link_utilisation: no links.parquet rows (the scenario's trace.links)")
    else:
        written += _links(links, target / "link_utilisation.png")
    return written, skipped


def _table(run_dir: Path, name: str) -> pd.DataFrame | None:
    path = run_dir / f"{name}.parquet"
    return pd.read_parquet(path) if path.is_file() else None


def _cdf_by_size(tcp: pd.DataFrame, column: str, label: str, path: Path) -> list[Path]:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    finite = tcp[column].dropna()
    factor, unit = (
        (1.0, "")
        if column == "slowdown"
        else display_unit("s", float(finite.max()) if len(finite) else 0.0)
    )
    lower = 0.0
    for upper, name in BUCKETS:
        rows = tcp[(tcp["size_bytes"] >= lower) & (tcp["size_bytes"] < upper)]
        lower = upper
        if not len(rows):
            continue
        done = np.sort(rows[column].dropna().to_numpy(dtype=float))
        missing = len(rows) - len(done)
        # Unfinished flows lie above every value: the curve reaches done / all.
        probability = np.arange(1, len(done) + 1) / len(rows)
        text = f"{name}: {len(rows):,} flows" + (
            f", {missing:,} unfinished (above the curve)" if missing else ""
        )
        ax.step(done / factor, probability, where="post", label=text)
    ax.set_xscale("log")
    ax.set_xlabel(f"{label}" + (f" ({unit})" if unit else ""))
    ax.set_ylabel("fraction of the bucket's flows at or below")
    ax.set_ylim(0, 1.02)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="best")
    ax.set_title(f"CDF of {column} by flow size, TCP flows", fontsize=10)
    return save(fig, path)


def _latency(probes: pd.DataFrame, path: Path) -> list[Path]:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    received = probes["latency_s"].dropna()
    factor, unit = display_unit("s", float(received.max()) if len(received) else 0.0)
    for hops, rows in probes.groupby("hops", sort=True):
        done = np.sort(rows["latency_s"].dropna().to_numpy(dtype=float))
        lost = len(rows) - len(done)
        text = f"{hops} hops: {len(rows):,} packets" + (f", {lost:,} lost" if lost else "")
        ax.step(done / factor, np.arange(1, len(done) + 1) / len(rows), where="post", label=text)
    ax.set_xlabel(f"one-way latency ({unit})")
    ax.set_ylabel("fraction of the probe packets at or below")
    ax.set_ylim(0, 1.02)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8, loc="best")
    ax.set_title("CDF of the probe packets' latency, by path length", fontsize=10)
    return save(fig, path)


def _queues(queues: pd.DataFrame, path: Path) -> list[Path]:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    factor, unit = display_unit("s", float(queues["time_s"].max()))
    for port, rows in queues.groupby("port", sort=True):
        ax.step(rows["time_s"] / factor, rows["packets"], where="post", label=str(port), lw=0.8)
    ax.set_xlabel(f"time ({unit})")
    ax.set_ylabel("queue length (packets)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title("queue length of the traced ports (trace.queues)", fontsize=10)
    return save(fig, path)


def _links(links: pd.DataFrame, path: Path) -> list[Path]:
    plt = pyplot()
    fig, (lines, heat) = plt.subplots(
        2, 1, figsize=(6.4, 6.4), sharex=True, gridspec_kw={"height_ratios": [1, 1.2]}
    )
    end = float((links["time_s"] + links["interval_s"]).max())
    factor, unit = display_unit("s", end)
    # Ports by bytes sent over the run, busiest first (ties: ports.parquet's order).
    order = (
        links.groupby("port", sort=False)["bytes"].sum().sort_values(ascending=False, kind="stable")
    )
    for port in order.index[:BUSIEST]:
        rows = links[links["port"] == port]
        # One step per interval, drawn to its end (the last may be shorter).
        edges = np.append(rows["time_s"].to_numpy(), end) / factor
        values = rows["utilisation"].to_numpy()
        lines.stairs(values, edges, label=str(port), lw=0.9)
    lines.axhline(1.0, color="black", ls="--", lw=0.7, label="line rate")
    # Room above the line rate for the legend, off the lines.
    lines.set_ylim(0, 1.5)
    lines.set_yticks([0, 0.2, 0.4, 0.6, 0.8, 1.0])
    lines.set_ylabel("utilisation")
    lines.grid(True, alpha=0.3)
    shown = min(BUSIEST, len(order))
    lines.legend(fontsize=7, loc="upper center", ncol=3)
    lines.set_title(
        f"link utilisation per {_interval(links)} interval: "
        f"the {shown} busiest of {len(order):,} ports",
        fontsize=10,
    )
    grid = links.pivot(index="port", columns="time_s", values="utilisation").loc[order.index]
    edges = np.append(grid.columns.to_numpy(), end) / factor
    image = heat.pcolormesh(
        edges, np.arange(len(grid) + 1), grid.to_numpy(), vmin=0.0, vmax=1.0, cmap="viridis"
    )
    heat.invert_yaxis()
    heat.set_ylabel("ports, busiest at the top")
    if len(grid) <= 24:
        heat.set_yticks(np.arange(len(grid)) + 0.5, [str(p) for p in grid.index], fontsize=6)
    heat.set_xlabel(f"time ({unit})")
    # Below the map, so both panels keep the same time axis.
    fig.colorbar(image, ax=heat, label="utilisation", orientation="horizontal", aspect=40)
    return save(fig, path)


def _interval(links: pd.DataFrame) -> str:
    """The interval of ``trace.links`` (the first row's: ``200 µs``)."""
    seconds = float(links["interval_s"].iloc[0])
    factor, unit = display_unit("s", seconds)
    return f"{seconds / factor:.6g} {unit}"
