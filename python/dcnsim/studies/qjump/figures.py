"""The QJUMP study's figures, as PNG and SVG: the seed's Figure 1 (PTP offset over
time, memcached latency CDF, Naiad sync-time CDF), Figure 3 (normalised RMS per
case) and a level's latency and throughput over f."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from dcnsim.studies.figures import pyplot, save, seed_values
from dcnsim.studies.qjump import samples
from dcnsim.studies.qjump.claims import MC_P99_US, NAIAD_P99_US

FIG1_CASES = {"alone": "alone", "contended": "with Hadoop", "qjump": "with Hadoop + QJUMP"}


def _cases(runs: pd.DataFrame) -> dict[str, pd.Series]:
    cases = runs[runs["kind"] == "case"]
    return {row["case"]: samples.decode(row) for _, row in cases.iterrows()}


def _cdf(ax, values: np.ndarray, label: str) -> None:
    x = np.sort(values) * 1e6
    ax.plot(x, np.arange(1, len(x) + 1) / max(len(x), 1), label=label)


def draw_fig1(runs: pd.DataFrame, _table: pd.DataFrame, path: Path) -> None:
    cases = _cases(runs)
    if not all(c in cases for c in FIG1_CASES):
        return
    plt = pyplot()
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.5))
    for case, label in FIG1_CASES.items():
        r = cases[case]
        one = r["ptp_host"] == 0  # one client's timeline
        axes[0].plot(r["ptp_t"][one] * 1e3, r["ptp"][one] * 1e6, label=label)
        _cdf(axes[1], r["memcached"], label)
        _cdf(axes[2], r["naiad"], label)
    # the seed's p99s (§2), at 0.99 on the CDFs
    seed_values(axes[1], list(MC_P99_US.values()), [0.99] * 2, "seed p99 (alone, with Hadoop)")
    naiad = [NAIAD_P99_US["alone"], *NAIAD_P99_US["contended"]]
    seed_values(axes[2], naiad, [0.99] * 3, "seed p99 (alone; with Hadoop 1.1-1.5 ms)")
    axes[0].set(xlabel="time (ms)", ylabel="offset error (µs)", title="(a) PTP, client 0")
    axes[1].set(xlabel="request latency (µs)", ylabel="CDF", title="(b) memcached", xscale="log")
    axes[2].set(xlabel="sync time (µs)", ylabel="CDF", title="(c) Naiad barrier", xscale="log")
    for ax in axes:
        ax.grid(True, alpha=0.3)
        ax.legend()
    save(fig, path)


def draw_fig3(_runs: pd.DataFrame, table: pd.DataFrame, path: Path) -> None:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(9, 4.5))
    apps = ["hadoop", "ptp", "memcached", "naiad"]
    width = 0.8 / len(apps)
    x = np.arange(len(table))
    for i, app in enumerate(apps):
        ax.bar(x + i * width, table[app], width, label=app)
    ax.axhline(1, color="black", linewidth=1)
    ax.set_xticks(x + width * (len(apps) - 1) / 2, table["case"])
    ax.set(ylabel="RMS / RMS alone (log)", yscale="log", title="Fig. 3: normalised RMS")
    ax.legend()
    ax.grid(True, axis="y", alpha=0.3)
    save(fig, path)


def draw_levels(runs: pd.DataFrame, _table: pd.DataFrame, path: Path) -> None:
    levels = runs[runs["kind"] == "level"].sort_values("f")
    if levels.empty:
        return
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    ax.plot(levels["f"], levels["throughput_bps"] / 1e6, marker="o", label="throughput / host")
    ax.set(xlabel="throughput factor f", ylabel="Mbps", xscale="log")
    other = ax.twinx()
    other.plot(levels["f"], levels["latency_std_s"] * 1e6, marker="s", color="C1")
    other.set_ylabel("latency std (µs)", color="C1")
    ax.set_title("A QJUMP level: throughput and latency variance over f")
    ax.grid(True, alpha=0.3)
    save(fig, path)
