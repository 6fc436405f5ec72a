"""The latency-difference seed's figures: Figs. 2-5 (each test packet's latency, one
scheme each) and Figs. 6 and 7 (mean and standard deviation against the load)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from dcnsim.studies.figures import pyplot, save, seed_values
from dcnsim.studies.latency_difference.claims import NUMBERED
from dcnsim.studies.latency_difference.reduction import latency_packets
from dcnsim.studies.latency_difference.scenario import LATENCY_OVERSUBSCRIPTIONS, LATENCY_SCHEMES

#: The seed's figures: Figs. 2-5 show one scheme's test packets each, Figs. 6 and 7
#: the mean and the standard deviation against the load.
LATENCY_PACKET_FIGURES = {
    "fig2": "TCP",
    "fig3": "TCP+ELR",
    "fig4": "pFabric",
    "fig5": "pFabric+ELR",
}
LATENCY_STAT_FIGURES = {"fig6": ("mean_us", "mean latency (µs)"), "fig7": ("std_us", "std (µs)")}


def latency_plot(figure: str, runs: pd.DataFrame, summary: pd.DataFrame, path: Path) -> None:
    """The seed's Fig. 6 (mean) or 7 (std) against the load, a panel per
    oversubscription, a line per scheme with 95 % Student-t intervals over seeds."""
    value, label = LATENCY_STAT_FIGURES[figure]
    plt = pyplot()
    oversubs = [o for o in LATENCY_OVERSUBSCRIPTIONS if o in set(summary["oversub"])]
    cols = max(len(oversubs), 1)
    fig, axes = plt.subplots(1, cols, figsize=(4.6 * cols, 4), squeeze=False)
    for ax, oversub in zip(axes[0], oversubs, strict=False):
        for scheme in LATENCY_SCHEMES:
            points = summary[(summary["scheme"] == scheme) & (summary["oversub"] == oversub)]
            if len(points):
                points = points.sort_values("load")
                ax.errorbar(
                    points["load"] * 100, points[value],
                    yerr=points[value.replace("_us", "_ci_us")].fillna(0), marker="o", capsize=3,
                    label=scheme,
                )  # fmt: skip
        ax.set_title(f"{oversub}: {label}, seed {figure.replace('fig', 'Fig. ')}", fontsize=10)
        ax.set_xlabel("background load (%)")
        ax.set_ylabel(label)
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8, title="95 % intervals over seeds", title_fontsize=7)
    save(fig, path)


def latency_packets_plot(
    figure: str, runs: pd.DataFrame, summary: pd.DataFrame, path: Path
) -> None:
    """One of the seed's Figs. 2-5: each test packet's latency against its index for one
    scheme, a panel per oversubscription, a line per load (the first seed's run).
    Nothing is drawn when the scheme was not run."""
    scheme = LATENCY_PACKET_FIGURES[figure]
    grid = runs[(runs["role"] == "grid") & (runs["scheme"] == scheme)]
    if not len(grid):
        return
    grid = grid[grid["seed"] == grid["seed"].min()]
    plt = pyplot()
    oversubs = [o for o in LATENCY_OVERSUBSCRIPTIONS if o in set(grid["oversub"])]
    cols = max(len(oversubs), 1)
    fig, axes = plt.subplots(1, cols, figsize=(4.6 * cols, 3.6), squeeze=False)
    packets = latency_packets(grid)
    for ax, oversub in zip(axes[0], oversubs, strict=False):
        mine = packets[packets["oversub"] == oversub]
        top = mine["latency_us"].max() if mine["latency_us"].notna().any() else 1.0
        for load, one in mine.groupby("load", sort=True):
            (line,) = ax.plot(one["packet"], one["latency_us"], linewidth=0.9, label=f"{load:.0%}")
            lost = one[one["latency_us"].isna()]
            if len(lost):
                ax.scatter(
                    lost["packet"], np.full(len(lost), top * 1.05), marker="x", s=14,
                    color=line.get_color(),
                )  # fmt: skip
            _seed_extremes(ax, scheme, oversub, load, one)
        ax.set_title(f"{scheme}, {oversub} (seed {figure.replace('fig', 'Fig. ')})", fontsize=10)
        ax.set_xlabel("test packet (to host packet + 1)")
        ax.set_ylabel("latency (µs)")
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
        ax.legend(title="load; x = lost", fontsize=7, title_fontsize=7)
    save(fig, path)


def _seed_extremes(ax: object, scheme: str, oversub: str, load: float, one: pd.DataFrame) -> None:
    """The seed's smallest and largest latency of a numbered point (``NUMBERED``, §3),
    drawn at the test packets where ours are smallest and largest."""
    for name, over, at, low, high, _lost in NUMBERED:
        if (name, over) == (scheme, oversub) and np.isclose(at, load):
            got = one.dropna(subset=["latency_us"])
            if len(got):
                where = got["packet"].to_numpy()[
                    [got["latency_us"].argmin(), got["latency_us"].argmax()]
                ]
                seed_values(ax, where, [low, high], f"seed at {load:.0%}: min, max")
