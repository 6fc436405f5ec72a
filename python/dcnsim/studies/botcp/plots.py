"""The BOTCP seed's Figs. 6-11 from the study's runs, each as PNG and SVG."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from dcnsim.studies.botcp.analysis import summary
from dcnsim.studies.botcp.scenarios import (
    BOTTLENECK,
    LABELS,
    LONG_SENDERS,
    SCHEMES,
    SHORT_START_S,
)
from dcnsim.studies.figures import mean_over_seeds, pyplot, save

__all__ = ["FIGURES"]


def _fct_by_load(column: str, title: str, runs: pd.DataFrame, _t: pd.DataFrame, path: Path) -> None:
    """The runs' ``column`` (seconds) in ms against the load, a line per scheme: the
    mean over seeds with its 95 % interval (``mean_over_seeds``)."""
    load = runs[runs["experiment"] == "load"]
    if not len(load):
        return
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 4))
    for scheme in SCHEMES:
        part = load[load["scheme"] == scheme]
        if len(part):
            mean_over_seeds(ax, part, "load", column, 1e3, marker="o", label=LABELS[scheme])
    ax.set_xlabel("load (fraction of host link rate)")
    ax.set_ylabel("FCT (ms); bars: 95 % interval over seeds")
    ax.set_title(title, fontsize=10)
    ax.grid(True, alpha=0.3)
    ax.legend()
    save(fig, path)


def fig11(runs: pd.DataFrame, _t: pd.DataFrame, path: Path) -> None:
    """Average FCT of long flows (≥ 100 KB): bars per load and scheme."""
    table = summary(runs)
    if not len(table):
        return
    plt = pyplot()
    loads = sorted(set(table["load"]))
    fig, ax = plt.subplots(figsize=(max(6, len(loads)), 4))
    width = 0.8 / len(SCHEMES)
    for i, scheme in enumerate(SCHEMES):
        part = table[table["scheme"] == scheme].set_index("load")
        if len(part):
            x = np.arange(len(loads)) + (i - 1) * width
            ax.bar(x, [part["long_mean_ms"].get(x_, np.nan) for x_ in loads], width,
                   label=LABELS[scheme])  # fmt: skip
    ax.set_xticks(np.arange(len(loads)), [f"{x:g}" for x in loads])
    ax.set_xlabel("load")
    ax.set_ylabel("average FCT of long flows (ms)")
    ax.set_title("Fig. 11: long flows (≥ 100 KB), web search", fontsize=10)
    ax.legend()
    save(fig, path)


def _rows(runs: pd.DataFrame, experiment: str) -> list[tuple[str, pd.Series]]:
    """The representative run of each scheme: its lowest seed's (a time series does not
    average over seeds; the claims use them all)."""
    part = runs[runs["experiment"] == experiment]
    part = part[part["seed"] == part["seed"].min()]
    by = {row["scheme"]: row for _, row in part.iterrows()}
    return [(s, by[s]) for s in SCHEMES if s in by]


def _seed_note(runs: pd.DataFrame, experiment: str) -> str:
    seeds = sorted(set(runs.loc[runs["experiment"] == experiment, "seed"].astype(int)))
    return f"seed {seeds[0]} of {len(seeds)}" if len(seeds) > 1 else f"seed {seeds[0]}"


def fig8(runs: pd.DataFrame, _t: pd.DataFrame, path: Path) -> None:
    """Throughput of each flow over time, one panel per scheme, one above the other."""
    rows = _rows(runs, "bandwidth")
    if not rows:
        return
    plt = pyplot()
    fig, axes = plt.subplots(len(rows), 1, figsize=(8, 2.6 * len(rows)), sharex=True, squeeze=False)
    for ax, (scheme, row) in zip(axes[:, 0], rows, strict=True):
        end = row["short_last_end_s"] + 1e-3
        for i, series in enumerate(row["tput_gbps"]):
            t = np.arange(len(series)) * row["bin_s"]
            keep = t <= end
            kind = "long" if i < len(LONG_SENDERS) else "short"
            ax.plot(t[keep] * 1e3, np.asarray(series)[keep], linewidth=1,
                    linestyle="-" if kind == "long" else "--", label=f"{kind} {i}")  # fmt: skip
        ax.axvline(SHORT_START_S * 1e3, color="k", linestyle=":", linewidth=1)
        ax.set_ylabel("Gbps")
        ax.set_title(f"{LABELS[scheme]}", fontsize=10)
        ax.grid(True, alpha=0.3)
    axes[0, 0].legend(fontsize=7, ncol=4)
    axes[-1, 0].set_xlabel("time (ms)")
    fig.suptitle(
        "Fig. 8: two long flows, then five short flows, at one bottleneck "
        f"({_seed_note(runs, 'bandwidth')})"
    )
    save(fig, path)


def fig9(runs: pd.DataFrame, _t: pd.DataFrame, path: Path) -> None:
    """The bottleneck's queue over time (largest in each 5 µs), one line per scheme."""
    rows = _rows(runs, "extreme")
    if not rows:
        return
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(8, 4))
    for scheme, row in rows:
        ax.plot(np.asarray(row["queue_t_s"]) * 1e3, row["queue_kib"], linewidth=0.8,
                label=LABELS[scheme])  # fmt: skip
    ax.axhline(128, color="k", linestyle=":", linewidth=1, label="buffer (128 KiB)")
    ax.axhline(60 * 1500 / 1024, color="grey", linestyle="--", linewidth=1,
               label="seed: BOTCP near 89 KiB")  # fmt: skip
    ax.set_xlabel("time (ms)")
    ax.set_ylabel(f"queue at {BOTTLENECK} (KiB)")
    ax.set_title(
        "Fig. 9: extreme flow load, 20 flows of 50 KB every 200 µs to 100 "
        f"({_seed_note(runs, 'extreme')})",
        fontsize=10,
    )
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    save(fig, path)


def fig10(runs: pd.DataFrame, _t: pd.DataFrame, path: Path) -> None:
    """The CDF of the 100 flows' completion times, one colour per scheme: every seed's
    run, the lowest seed's bold, the others thin (the spread over seeds)."""
    part = runs[runs["experiment"] == "extreme"]
    if not len(part):
        return
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 4))
    first = part["seed"].min()
    for i, scheme in enumerate(s for s in SCHEMES if s in set(part["scheme"])):
        for _, row in part[part["scheme"] == scheme].sort_values("seed").iterrows():
            fct = np.sort(np.asarray(row["fct_s"], dtype=float)) * 1e3
            bold = row["seed"] == first
            ax.step(fct, np.arange(1, len(fct) + 1) / len(fct), where="post", color=f"C{i}",
                    linewidth=1.5 if bold else 0.6, alpha=1.0 if bold else 0.5,
                    label=LABELS[scheme] if bold else None)  # fmt: skip
    ax.set_xlabel("flow completion time (ms)")
    ax.set_ylabel("CDF")
    seeds = part["seed"].nunique()
    ax.set_title(f"Fig. 10: extreme flow load ({seeds} seeds; bold: seed {first})", fontsize=10)
    ax.grid(True, alpha=0.3)
    ax.legend()
    save(fig, path)


def _fig6(runs: pd.DataFrame, t: pd.DataFrame, path: Path) -> None:
    _fct_by_load("short_mean_s", "Fig. 6: average FCT of short flows (< 100 KB)", runs, t, path)


def _fig7(runs: pd.DataFrame, t: pd.DataFrame, path: Path) -> None:
    _fct_by_load("short_p99_s", "Fig. 7: 99th percentile FCT of short flows", runs, t, path)


#: The seed's figures, by file stem.
FIGURES = {
    "fig6": _fig6,
    "fig7": _fig7,
    "fig8": fig8,
    "fig9": fig9,
    "fig10": fig10,
    "fig11": fig11,
}
