"""The simulated figures of the Packet Slicing study (Figs. 3, 8-13, §IV.B.3), each
written as PNG and SVG; a drawer writes nothing when the runs hold none of its
experiment (the quick variant runs only some)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dcnsim.models import packet_slicing as m
from dcnsim.studies.figures import pyplot, save, seed_values
from dcnsim.studies.packet_slicing.claims import FIG10_DONE_MS, FIG10_PEAK_KB
from dcnsim.studies.packet_slicing.scenarios import Y_1G

__all__ = ["simulated_figures"]


def _label(protocol: str, slicing: bool) -> str:
    names = {"dctcp": "DCTCP", "d2tcp": "D²TCP", "l2dct": "L²DCT", "newreno": "NewReno"}
    return names[protocol] + ("_PS" if slicing else "")


def _of(runs: pd.DataFrame, experiment: str) -> pd.DataFrame:
    return runs[runs["experiment"] == experiment] if "experiment" in runs else runs.iloc[:0]


def _fig3(runs: pd.DataFrame, _table: pd.DataFrame, path: Path) -> None:
    rows = _of(runs, "fig3")
    if rows.empty:
        return
    plt = pyplot()
    fig, axes = plt.subplots(2, 2, figsize=(11, 7))
    for col, (_, row) in enumerate(rows.sort_values("workers").iterrows()):
        s = json.loads(row["series"])
        q, c = np.array(s["queue"]), np.array(s["cwnd"])
        axes[0][col].plot(q[:, 0] * 1e3, q[:, 1] / 1500, linewidth=0.7)
        axes[0][col].set_title(f"({'ac'[col]}) queue, {row['workers']} flows")
        axes[0][col].set_ylabel("queue (1500 B packets)")
        axes[1][col].step(c[:, 0] * 1e3, c[:, 1], where="post", linewidth=0.7)
        axes[1][col].set_title(f"({'bd'[col]}) one flow's cwnd, {row['workers']} flows")
        axes[1][col].set_ylabel("cwnd (packets)")
        for ax in (axes[0][col], axes[1][col]):
            ax.set_xlabel("time (ms)")
    save(fig, path)


def _fig8(runs: pd.DataFrame, _table: pd.DataFrame, path: Path) -> None:
    rows = _of(runs, "fig8")
    if rows.empty:
        return
    plt = pyplot()
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4))
    best_sim, best_model, ns = [], [], []
    for n, points in rows.groupby("workers"):
        points = points.sort_values("k")
        (line,) = a.plot(points["k"], points["goodput_mbps"] / 1e3, marker="o", label=f"n = {n}")
        ks = np.linspace(1, m.k_max(1500), 200)
        a.plot(
            ks,
            [m.approx_goodput(n, 1500, k, Y_1G, 2) for k in ks],
            linestyle="--",
            color=line.get_color(),
        )
        ns.append(n)
        best_sim.append(float(points.loc[points["goodput_mbps"].idxmax(), "k"]))
        best_model.append(m.k_hat(n, 1500, 2, Y_1G))
    a.set_xlabel("slicing ratio k (packets of 1500/k B)")
    a.set_ylabel("goodput (Gbps); dashed: eq. (9)")
    a.set_title("Fig. 8: simulated goodput and the approximation")
    a.legend()
    b.plot(ns, best_sim, marker="o", label="simulation (best k of the grid)")
    b.plot(ns, best_model, marker="s", label="approximation k̂ (eq. 11)")
    b.set_xlabel("flows n")
    b.set_ylabel("optimal k")
    b.set_title("Fig. 9")
    b.legend()
    save(fig, path)


def _fig10(runs: pd.DataFrame, _table: pd.DataFrame, path: Path) -> None:
    rows = _of(runs, "fig10")
    if rows.empty:
        return
    plt = pyplot()
    fig, axes = plt.subplots(2, 2, figsize=(11, 7))
    for _, row in rows.iterrows():
        s = json.loads(row["series"])
        label = _label(row["protocol"], row["slicing"])
        seq, cwnd, q, g = (np.array(s[k]) for k in ("seq", "cwnd", "queue", "goodput"))
        axes[0][0].step(seq[:, 0] * 1e3, seq[:, 1] / 1e3, where="post", label=label)
        axes[0][1].step(cwnd[:, 0] * 1e3, cwnd[:, 1] * 1.46, where="post", label=label)
        axes[1][0].plot(q[:, 0] * 1e3, q[:, 1] / 1e3, linewidth=0.7, label=label)
        axes[1][1].step(g[:, 0] * 1e3, g[:, 1], where="pre", label=label)
        # the seed's numbers: (a) done at ~16 ms with slicing; (c) the queue's peak,
        # drawn at the time of ours
        if row["slicing"]:
            done = f"seed: done at ~{FIG10_DONE_MS} ms"
            seed_values(axes[0][0], FIG10_DONE_MS, seq[-1, 1] / 1e3, done)
        peak = int(np.argmax(q[:, 1]))
        seed_values(axes[1][0], q[peak, 0] * 1e3, FIG10_PEAK_KB[bool(row["slicing"])],
                    "seed: peaks" if row["slicing"] else "_nolegend_")  # fmt: skip
    titles = [
        ("(a) one flow's sequence number (KB acknowledged)", "KB"),
        ("(b) its cwnd (KB)", "KB"),
        ("(c) bottleneck queue (KB)", "KB"),
        (
            "(d) instant goodput of all flows (1 ms bins):\n"
            "acked bytes at or before their ACK, <= link rate",
            "Mbps",
        ),
    ]
    for ax, (title, unit) in zip(axes.flat, titles, strict=True):
        ax.set_title(title)
        ax.set_xlabel("time (ms)")
        ax.set_ylabel(unit)
        ax.set_xscale("symlog", linthresh=20)
        ax.legend()
    save(fig, path)


def _by_workers(ax: Any, rows: pd.DataFrame, column: str, scale: float = 1.0) -> None:
    for (protocol, slicing), points in rows.groupby(["protocol", "slicing"]):
        points = points.sort_values("workers")
        hit = points[points.get("timeouts", pd.Series(0, index=points.index)) > 0]
        ax.plot(
            points["workers"],
            points[column] * scale,
            marker="o",
            label=_label(protocol, slicing),
            linestyle="-" if slicing else "--",
        )
        if column == "goodput_mbps":
            ax.scatter(hit["workers"], hit[column] * scale, marker="x", color="black", zorder=3)
    ax.set_xlabel("workers")
    ax.legend(fontsize=8)


def _fig11(runs: pd.DataFrame, _table: pd.DataFrame, path: Path) -> None:
    rows = _of(runs, "fig11")
    if rows.empty:
        return
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(8, 5))
    _by_workers(ax, rows, "goodput_mbps")
    ax.set_ylabel("total goodput (Mbps); x = a run with a timeout")
    ax.set_title("Fig. 11(a): incast goodput with and without Packet Slicing")
    save(fig, path)


def _fig13(runs: pd.DataFrame, _table: pd.DataFrame, path: Path) -> None:
    rows = _of(runs, "fig13")
    if rows.empty:
        return
    plt = pyplot()
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4))
    _by_workers(a, rows, "srt_ms")
    a.set_ylabel("mean search response time (ms)")
    a.set_title("Fig. 13(a)")
    _by_workers(b, rows, "timeout_fraction")
    b.set_ylabel("fraction of queries with a timeout")
    b.set_title("Fig. 13(b)")
    save(fig, path)


def _sec4b3(runs: pd.DataFrame, _table: pd.DataFrame, path: Path) -> None:
    rows = [(e, _of(runs, e)) for e in ("10g", "spread")]
    if all(r.empty for _, r in rows):
        return
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for ax, (experiment, r) in zip(axes, rows, strict=True):
        if not r.empty:
            _by_workers(ax, r, "goodput_mbps")
        ax.set_xscale("log")
        ax.set_ylabel("goodput (Mbps); x = a run with a timeout")
        ax.set_title(
            {"10g": "§IV.B.3: 10 Gbps", "spread": "§IV.B.3: starts spread over 10 ms"}[experiment]
        )
    save(fig, path)


def _fig12(runs: pd.DataFrame, _table: pd.DataFrame, path: Path) -> None:
    rows = [(e, _of(runs, e)) for e in ("fig12_sru", "fig12_buffer")]
    if all(r.empty for _, r in rows):
        return
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for ax, (experiment, r), column in zip(axes, rows, ("sru_KB", "buffer_KB"), strict=True):
        for slicing, points in r.groupby("slicing"):
            points = points.sort_values(column)
            ax.plot(
                points[column], points["goodput_mbps"], marker="o", label=_label("dctcp", slicing)
            )
        ax.set_xlabel(column.replace("_KB", " (KB)"))
        ax.set_ylabel("goodput (Mbps)")
        ax.set_title(f"Fig. 12: testbed emulated, {'SRU' if 'sru' in experiment else 'buffer'}")
        ax.legend()
    save(fig, path)


def simulated_figures() -> dict[str, object]:
    return {
        "fig3": _fig3,
        "fig8_9": _fig8,
        "fig10": _fig10,
        "fig11": _fig11,
        "fig12": _fig12,
        "fig13": _fig13,
        "sec4b3": _sec4b3,
    }
