"""``dcnsim plot DIR``: the figures of one run's output directory.

What an ns-3 or htsim user draws first from a run, each written as PNG (300 dpi),
SVG and PDF (``studies.figures.save``) into ``DIR/plots/`` (or ``--out``):

- ``fct_cdf`` and ``slowdown_cdf``: the CDFs of the TCP flows' completion time and
  slowdown, a line per flow-size bucket (``BUCKETS``, the pFabric and HPCC papers'
  short / medium / long split). Unfinished flows are counted in their bucket and lie
  above every value: a curve stops at the share that finished, and its legend says
  how many did not (``dcnsim.unfinished``);
- ``queues``: the queue length of every port of ``trace.queues`` over time
  (``queues.parquet``), a step line per port;
- ``links``: each port's utilisation over time (``links.parquet``, written with
  ``trace.links``): bytes sent in each interval over what its link could send, the
  ``LINKS_SHOWN`` busiest ports, never above 1 by construction of the counter.

A figure whose table is missing or empty is skipped, and the command says so.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

from dcnsim.columns import display_unit
from dcnsim.formats import format_seconds
from dcnsim.studies.figures import pyplot, save

__all__ = ["BUCKETS", "LINKS_SHOWN", "plot_run"]

#: Flow-size buckets (upper bounds in bytes, names): short flows up to 100 KB, medium
#: up to 10 MB, long beyond (pFabric, SIGCOMM 2013, Fig. 4; HPCC's FCT scripts).
BUCKETS = ((100e3, "< 100 KB"), (10e6, "100 KB - 10 MB"), (np.inf, ">= 10 MB"))

#: Ports drawn in ``links``: the busiest by bytes sent (a fat tree has hundreds).
LINKS_SHOWN = 8


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
    queues = _table(run_dir, "queues")
    if queues is None or not len(queues):
        skipped.append("queues: no queues.parquet rows (the scenario's trace.queues names ports)")
    else:
        written += _queues(queues, target / "queues.png")
    links = _table(run_dir, "links")
    if links is None or not len(links):
        skipped.append('links: no links.parquet rows (set trace.links, e.g. "100us")')
    else:
        written += _links(links, target / "links.png")
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
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    interval = float(links["interval_s"].iloc[0])
    busiest = links.groupby("port")["bytes"].sum().nlargest(LINKS_SHOWN).index
    factor, unit = display_unit("s", float(links["time_s"].max() + interval))
    for port in busiest:
        rows = links[links["port"] == port].sort_values("time_s")
        use = rows["bytes"] * 8 / (rows["rate_bps"] * interval)
        ax.step(rows["time_s"] / factor, use, where="post", label=str(port), lw=0.8)
    ax.set_ylim(0, 1.05)
    ax.set_xlabel(f"time ({unit}), start of each {format_seconds(interval)} interval")
    ax.set_ylabel("utilisation (bytes sent / link capacity)")
    ax.grid(True, alpha=0.3)
    shown = min(LINKS_SHOWN, links["port"].nunique())
    ax.legend(
        fontsize=7,
        ncol=2,
        title=f"{shown} busiest of {links['port'].nunique()} ports",
        title_fontsize=7,
    )
    ax.set_title("link utilisation over time (links.parquet)", fontsize=10)
    return save(fig, path)
