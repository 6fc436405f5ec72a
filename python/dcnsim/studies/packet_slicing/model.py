"""Figs. 4-7 and 9's approximation: the seed's analytic model
(``dcnsim.models.packet_slicing``), drawn and checked, with no simulation.

Settings as the seed gives them: Fig. 4 is its worked example (40 flows, a buffer of
60 packets, windows of 4); Fig. 5 has B = 64 KB and s = 1 KB for 40 flows; Fig. 6(a)
is eq. (2) with w = 2 (the model's minimum window) and B = 64 KB (64 000 B, the seed's
KB being 1000 B: ``readings.packet_slicing``); Fig. 7 has B = 64 KB, s = 1.5 KB, Y of a
1 Gbps link with 100 µs round trips, and eq. (7)'s window condition at w = 2.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from dcnsim.models import packet_slicing as m
from dcnsim.studies.figures import pyplot, save
from dcnsim.studies.packet_slicing.scenarios import Y_1G
from dcnsim.studies.readings.packet_slicing import BUFFER_BYTES
from dcnsim.studies.text import EXACT, Claim

__all__ = ["model_claims", "model_figures"]

#: The seed's 64 KB and 1 KB, in its reading's unit (KB = 1000 B, ``readings.packet_slicing``).
B_64K = BUFFER_BYTES
S_1K = 1000
#: The tolerance of a probability the seed prints with two decimals.
TWO_DECIMALS = "the seed's two decimals (rounded): its equations, exact"


def _fig4(_runs: pd.DataFrame, _table: pd.DataFrame, path: Path) -> None:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 4))
    cases = {
        "(a) w = 4": m.incast_probability(40, 1, 4, 60),
        "(b) w halved": m.incast_probability_cut_window(40, 1, 4, 2, 60),
        "(c) s halved": m.incast_probability_cut_packet(40, 1, 4, 2, 60),
    }
    ax.bar(list(cases), list(cases.values()), color=["grey", "tab:blue", "tab:orange"])
    for i, v in enumerate(cases.values()):
        ax.text(i, v + 0.02, f"P = {v:.2f}", ha="center")
    ax.set_ylabel("Incast probability P (eq. 2)")
    ax.set_ylim(0, 1.15)
    ax.set_title("Fig. 4: 40 flows, 60-packet buffer")
    save(fig, path)


def _fig5(_runs: pd.DataFrame, _table: pd.DataFrame, path: Path) -> None:
    plt = pyplot()
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4))
    ws = np.arange(1, 21)
    for k in (2, 4):
        a.plot(
            ws,
            [m.incast_probability_cut_window(40, S_1K, w, k, B_64K) for w in ws],
            label=f"cut w, k = {k}",
        )
        a.plot(
            ws,
            [m.incast_probability_cut_packet(40, S_1K, w, k, B_64K) for w in ws],
            linestyle="--",
            label=f"cut s, k = {k}",
        )
    a.set_xlabel("congestion window w (packets)")
    a.set_ylabel("Incast probability")
    a.set_title("Fig. 5(a): n = 40, B = 64 KB, s = 1 KB")
    a.legend()
    ks = np.linspace(1, 8, 71)
    for w in (2, 5):
        b.plot(
            ks,
            [m.incast_probability_cut_window(40, S_1K, w, k, B_64K) for k in ks],
            label=f"cut w, w = {w}",
        )
        b.plot(
            ks,
            [m.incast_probability_cut_packet(40, S_1K, w, k, B_64K) for k in ks],
            linestyle="--",
            label=f"cut s, w = {w}",
        )
    b.set_xlabel("slicing ratio k")
    b.set_title("Fig. 5(b)")
    b.legend()
    save(fig, path)


def _fig6a(_runs: pd.DataFrame, _table: pd.DataFrame, path: Path) -> None:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 4))
    ns = np.arange(1, 701)
    for s in (1500, 500, 250, 64):
        ax.plot(ns, [m.incast_probability(n, s, 2, B_64K) for n in ns], label=f"{s} B")
    ax.set_xscale("log")
    ax.set_xlabel("flows n")
    ax.set_ylabel("Incast probability (eq. 2, w = 2)")
    ax.set_title("Fig. 6(a): B = 64 KB (Fig. 6(b): dcnsim study incast)")
    ax.legend(title="packet size")
    save(fig, path)


def _fig7(_runs: pd.DataFrame, _table: pd.DataFrame, path: Path) -> None:
    plt = pyplot()
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4))
    ks = np.linspace(1, m.k_max(1500), 221)
    for n in (40, 60, 80, 100, 120):
        a.plot(ks, [m.throughput(n, 1500, k, Y_1G, 2) for k in ks], label=f"n = {n}")
        b.plot(ks, [m.goodput(n, 1500, k, Y_1G, 2) for k in ks], label=f"n = {n}")
    a.set_title("Fig. 7(a): throughput T (eq. 7)")
    b.set_title("Fig. 7(b): goodput G (eq. 8)")
    for ax in (a, b):
        ax.set_xlabel("slicing ratio k")
        ax.legend()
    save(fig, path)


def model_figures() -> dict[str, object]:
    return {"fig4": _fig4, "fig5": _fig5, "fig6a": _fig6a, "fig7": _fig7}


def _first_n(s: int, level: float) -> int:
    return next(n for n in range(1, 100_000) if m.incast_probability(n, s, 2, B_64K) >= level)


def model_claims() -> list[Claim]:
    """The model's own statements (§II.C, §III.B-C), from its equations."""
    p = m.timeout_probability(40, 1, 4, 60)
    big = m.incast_probability(40, 1, 4, 60)
    cw = m.incast_probability_cut_window(40, 1, 4, 2, 60)
    ps = m.incast_probability_cut_packet(40, 1, 4, 2, 60)
    cw_large = [m.incast_probability_cut_window(40, S_1K, w, 2, B_64K) for w in range(6, 21)]
    ps_k4 = [m.incast_probability_cut_packet(40, S_1K, w, 4, B_64K) for w in range(1, 21)]
    n1500, n64 = _first_n(1500, 0.99), _first_n(64, 0.99)
    g = {n: [m.goodput(n, 1500, k, Y_1G, 2) for k in np.linspace(1, 23, 221)] for n in (40, 120)}
    falls = bool(all(np.argmax(v) < len(v) - 1 for v in g.values()))
    return [
        Claim(
            "Fig. 4: p of a flow, 40 flows, 60-packet buffer, w = 4",
            "0.15",
            f"{p:.3f}",
            bool(round(p, 2) == 0.15),
            tolerance=TWO_DECIMALS,
        ),
        Claim(
            "Fig. 4: Incast probability P",
            "0.99",
            f"{big:.4f}",
            big >= 0.985,
            tolerance=TWO_DECIMALS + " (0.99 also reads as 'at least')",
        ),
        Claim(
            "Fig. 4(b): windows halved: P",
            "0.92",
            f"{cw:.3f}",
            round(cw, 2) == 0.92,
            tolerance=TWO_DECIMALS,
        ),
        Claim(
            "Fig. 4(c): packets halved: P",
            "0.14",
            f"{ps:.3f}",
            int(ps * 100) == 14,
            tolerance="the seed's two decimals, truncated (its text: 0.14)",
        ),
        Claim(
            "Fig. 5(a): w > 5: cutting w leaves P near 1 (n = 40, k = 2)",
            "ineffective",
            f"P_cw >= {min(cw_large):.2f} for w = 6..20",
            min(cw_large) > 0.9,
            tolerance='above 0.9: dcnsim\'s reading of "near 1"',
        ),
        Claim(
            "Fig. 5(a): k = 4: cutting s leaves P almost 0 for all w",
            "~0",
            f"P_ps <= {max(ps_k4):.3f} for w = 1..20",
            max(ps_k4) < 0.05,
            tolerance='below 0.05: dcnsim\'s reading of "almost 0"',
        ),
        Claim(
            "Fig. 6(a): 1500 B: P reaches 1 at n = 25 (eq. 2, w = 2)",
            "25",
            f"P >= 0.99 from n = {n1500}; P(25) = {m.incast_probability(25, 1500, 2, B_64K):.2f}",
            abs(n1500 - 25) <= 3,
            tolerance="±3 flows: a number read off the seed's figure",
        ),
        Claim(
            "Fig. 6(a): 64 B: P reaches 1 at n = 540",
            "540",
            f"P >= 0.99 from n = {n64}",
            abs(n64 - 540) <= 30,
            tolerance="±30 flows: a number read off the seed's figure",
        ),
        Claim(
            "Fig. 7(b): G is not always increasing in k (n = 40, 120)",
            "peaks",
            "peaks inside 1..23" if falls else "rises to k = 23",
            falls,
            tolerance=EXACT,
        ),
    ]
