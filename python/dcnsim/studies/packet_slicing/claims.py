"""The seed's simulated and testbed claims (§II.B, §III.C, §IV, §V) beside dcnsim's
numbers; a claim whose experiment was not run (the quick variant) is ``n/a``."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from dcnsim.models import packet_slicing as m
from dcnsim.studies.packet_slicing.scenarios import Y_1G
from dcnsim.studies.text import Claim

#: The tolerance of a count or bound the seed states (no seeds: one deterministic run).
EXACT_RUN = "exact: one deterministic run"

#: The seed's Fig. 10 numbers (30 flows): with slicing every flow is done at about
#: 16 ms (10(a)); the bottleneck queue's peak with and without slicing in KB (10(c)).
FIG10_DONE_MS = 16
FIG10_PEAK_KB = {True: 43, False: 64}


def _allow(words: str) -> str:
    """The tolerance of a number read off a figure or the text: dcnsim's allowance."""
    return f"{words}: dcnsim's allowance for a number read off the seed"


__all__ = ["max_without_timeout", "simulated_claims"]


def _of(runs: pd.DataFrame, experiment: str) -> pd.DataFrame:
    return runs[runs["experiment"] == experiment] if "experiment" in runs else runs.iloc[:0]


def _one(rows: pd.DataFrame, slicing: bool, protocol: str = "dctcp") -> pd.Series | None:
    r = rows[(rows["slicing"] == slicing) & (rows["protocol"] == protocol)]
    return None if r.empty else r.iloc[0]


def max_without_timeout(points: pd.DataFrame) -> tuple[int, bool]:
    """The largest worker count of the grid with no timeout at it or any smaller
    count (0 if the smallest had one), and whether it is the grid's end (a lower
    bound)."""
    points = points.sort_values("workers")
    clean = (points["timeouts"] == 0).to_numpy()
    if clean.all():
        return int(points["workers"].iloc[-1]), True
    first = int(np.argmin(clean))
    return (int(points["workers"].iloc[first - 1]) if first else 0), False


def _fig3(runs: pd.DataFrame) -> list[Claim]:
    rows = _of(runs, "fig3").set_index("workers")
    if not {10, 60} <= set(rows.index):
        return []
    ten, sixty = rows.loc[10], rows.loc[60]
    return [
        Claim(
            "Fig. 3(b): 10 flows: one flow's cwnd mostly 3-4 packets",
            "3-4",
            f"median {ten['cwnd_median_pkts']:.1f}",
            2.5 <= ten["cwnd_median_pkts"] <= 4.5,
            tolerance=_allow("±0.5 packet around 3-4"),
        ),
        Claim(
            "Fig. 3(d): 60 flows: cwnd pinned at 2 packets",
            "2",
            f"median {sixty['cwnd_median_pkts']:.1f}",
            sixty["cwnd_median_pkts"] <= 2.5,
            tolerance=_allow("+0.5 packet"),
        ),
        Claim(
            "Fig. 3(d): 60 flows: the most full-window losses (timeouts) of one flow",
            "5",
            str(int(sixty["max_flow_timeouts"])),
            3 <= sixty["max_flow_timeouts"] <= 7,
            tolerance=_allow("±2 timeouts"),
        ),
    ]


def _fig10(runs: pd.DataFrame) -> list[Claim]:
    rows = _of(runs, "fig10")
    off, on = _one(rows, False), _one(rows, True)
    if off is None or on is None:
        return []
    cut = 1 - on["afct_ms"] / off["afct_ms"]
    return [
        Claim(
            "Fig. 10: 30 flows with slicing: no timeout",
            "0",
            str(int(on["timeouts"])),
            on["timeouts"] == 0,
            tolerance=EXACT_RUN,
        ),
        Claim(
            "Fig. 10(a): without slicing a flow times out and is done after ~200 ms",
            "> 200 ms",
            f"{off['slowest_ms']:.1f} ms, {int(off['max_flow_timeouts'])} timeouts",
            off["max_flow_timeouts"] > 0 and off["slowest_ms"] > 200,
            tolerance=EXACT_RUN + " (200 ms is not more than 200 ms)",
        ),
        Claim(
            f"Fig. 10(a): with slicing every flow is done at about {FIG10_DONE_MS} ms",
            f"~{FIG10_DONE_MS} ms",
            f"{on['slowest_ms']:.1f} ms",
            abs(on["slowest_ms"] - FIG10_DONE_MS) <= 4,
            tolerance=_allow("±4 ms"),
        ),
        Claim(
            "Fig. 10: AFCT reduced by slicing",
            "-71 %",
            f"{-cut:.0%}",
            0.6 <= cut <= 0.8,
            tolerance=_allow("60-80 %"),
        ),
        Claim(
            "Fig. 10(c): queue peak with slicing",
            f"{FIG10_PEAK_KB[True]} KB",
            f"{on['peak_queue_kb']:.1f} KB",
            abs(on["peak_queue_kb"] - FIG10_PEAK_KB[True]) <= 5,
            tolerance=_allow("±5 KB"),
        ),
        Claim(
            f"Fig. 10(c): queue peak without slicing: the {FIG10_PEAK_KB[False]} KB buffer",
            f"{FIG10_PEAK_KB[False]} KB",
            f"{off['peak_queue_kb']:.1f} KB",
            off["peak_queue_kb"] >= 60,
            tolerance=_allow("-4 KB"),
        ),
    ]


def _fig11(runs: pd.DataFrame) -> list[Claim]:
    rows = _of(runs, "fig11")
    if rows.empty:
        return []
    top = int(rows["workers"].max())
    gains, ratios, texts, offs = [], [], [], []
    for protocol, points in rows.groupby("protocol", sort=False):
        off, on = (
            _one(points[points["workers"] == top], False, protocol),
            _one(points[points["workers"] == top], True, protocol),
        )
        gains.append(on["goodput_mbps"] / off["goodput_mbps"])
        max_off, _ = max_without_timeout(points[~points["slicing"]])
        max_on, bound = max_without_timeout(points[points["slicing"]])
        ratios.append(max_on / max(max_off, 1))
        offs.append(max_off)
        texts.append(f"{protocol} {max_off} -> {'>= ' if bound else ''}{max_on}")
    gain = float(np.mean(gains))
    ratio = float(np.mean(ratios))
    falls, fall_texts = [], []
    for protocol, points in rows[rows["slicing"] & (rows["workers"] >= 30)].groupby("protocol"):
        points = points.sort_values("workers")
        if len(points) > 1:
            goodput = points["goodput_mbps"].to_numpy()
            falls.append(bool(np.all(np.diff(goodput) < 0)))
            steps = zip(points["workers"], goodput, strict=True)
            fall_texts.append(f"{protocol} " + ", ".join(f"{int(n)}: {g:.0f}" for n, g in steps))
    claims = [
        Claim(
            "Fig. 11(a): with slicing, goodput decreases with more workers (every step of "
            "the grid from 30 workers)",
            '"the network goodput decreases with more workers in Packet Slicing"',
            "; ".join(fall_texts) + " Mbps" if fall_texts else "-",
            all(falls) if falls else None,
            tolerance=EXACT_RUN + " (a tie is not a decrease); from 30 workers, where the "
            "seed's protocols collapse without slicing; n/a with fewer than two counts",
        ),
        Claim(
            f"Fig. 11(a): goodput gain of slicing at {top} workers (mean of protocols)",
            "26x at 300",
            f"{gain:.1f}x",
            gain >= 20 if top == 300 else None,
            tolerance=_allow("at least 20x") + "; n/a unless the grid reaches 300 workers",
        ),
        Claim(
            "Fig. 11(b): most workers without a timeout, with / without slicing (mean)",
            "> 19x",
            f"{ratio:.1f}x ({'; '.join(texts)})"
            + ("; without slicing the grid's least N already times out" if min(offs) == 0 else ""),
            ratio > 19 if top == 300 and min(offs) > 0 else None,
            tolerance=EXACT_RUN
            + "; n/a unless the grid reaches 300 workers and some N runs clean without slicing",
        ),
    ]
    return claims


def _fig8(runs: pd.DataFrame) -> list[Claim]:
    rows = _of(runs, "fig8")
    if rows.empty or rows["k"].nunique() < 5:
        return []
    out = []
    for n, points in rows.groupby("workers"):
        best = float(points.loc[points["goodput_mbps"].idxmax(), "k"])
        k_hat = m.k_hat(n, 1500, 2, Y_1G)
        out.append(
            Claim(
                f"Fig. 9: n = {n}: the best k simulated follows k̂ (eq. 11)",
                "close",
                f"best k {best:g} vs k̂ {k_hat:.2f}",
                abs(np.log(best / k_hat)) <= np.log(2),
                tolerance='within a factor 2 of k̂: dcnsim\'s reading of "close"',
            )
        )
    return out


def _fig13(runs: pd.DataFrame) -> list[Claim]:
    rows = _of(runs, "fig13")
    if rows.empty:
        return []
    full = rows["workers"].max() >= 90

    def pick(protocol: str, slicing: bool) -> pd.DataFrame:
        r = rows[(rows["protocol"] == protocol) & (rows["slicing"] == slicing)]
        return r.sort_values("workers")

    def first_timeout(r: pd.DataFrame) -> str:
        hit = r[r["timeout_fraction"] > 0]
        return "none" if hit.empty else str(int(hit["workers"].iloc[0]))

    def brackets(r: pd.DataFrame, n: int) -> bool:
        """Whether the seed's first n with a timeout lies in the grid step where
        dcnsim's first timeout is: above the last clean count, at most the first
        count with a timeout (the grid's own resolution, nothing coarser)."""
        workers = list(r["workers"])
        hit = r[r["timeout_fraction"] > 0]
        if hit.empty:
            return False
        at = workers.index(int(hit["workers"].iloc[0]))
        below = workers[at - 1] if at else 0
        return bool(below < n <= workers[at])

    dps, nps = pick("dctcp", True), pick("newreno", True)
    d, n = pick("dctcp", False), pick("newreno", False)
    return [
        Claim(
            "Fig. 13(a): DCTCP_PS search response time at every n",
            "53-61 ms",
            f"{dps['srt_ms'].min():.1f}-{dps['srt_ms'].max():.1f} ms",
            bool(dps["srt_ms"].between(53, 61).all()),
            tolerance="the seed's stated range; " + EXACT_RUN,
        ),
        Claim(
            "Fig. 13(a): NewReno_PS search response time at most",
            "75 ms",
            f"{nps['srt_ms'].max():.1f} ms",
            bool(nps["srt_ms"].max() <= 75),
            tolerance=EXACT_RUN,
        ),
        Claim(
            "Fig. 13(a): DCTCP and NewReno without slicing: SRT above 200 ms",
            "> 200 ms",
            f"DCTCP {d['srt_ms'].max():.0f}, NewReno {n['srt_ms'].max():.0f} ms",
            bool(min(d["srt_ms"].max(), n["srt_ms"].max()) > 200),
            tolerance=EXACT_RUN + " (200 ms is not above 200 ms)",
        ),
        Claim(
            "Fig. 13(b): NewReno's first n with a timeout",
            "13",
            first_timeout(n),
            brackets(n, 13) if full else None,
            tolerance="13 within the grid step that holds dcnsim's first timeout (above the "
            "last clean n, at most the first n with one); " + EXACT_RUN + "; n/a unless the "
            "grid reaches 90 workers",
        ),
        Claim(
            "Fig. 13(b): DCTCP's first n with a timeout",
            "28",
            first_timeout(d),
            brackets(d, 28) if full else None,
            tolerance="28 within the grid step that holds dcnsim's first timeout (above the "
            "last clean n, at most the first n with one); " + EXACT_RUN + "; n/a unless the "
            "grid reaches 90 workers",
        ),
        Claim(
            "Fig. 13(b): DCTCP_PS: no timeout at any n",
            "0",
            f"{dps['timeout_fraction'].max():.2f}",
            bool(dps["timeout_fraction"].max() == 0),
            tolerance=EXACT_RUN,
        ),
        Claim(
            "Fig. 13(b): NewReno_PS: a very small timeout ratio",
            "small",
            f"{nps['timeout_fraction'].max():.2f}",
            bool(nps["timeout_fraction"].max() <= 0.1),
            tolerance='at most 10 % of queries: dcnsim\'s reading of "very small"',
        ),
    ]


def _sec4b3(runs: pd.DataFrame) -> list[Claim]:
    out = []
    for experiment, seed_off, seed_on, words in (
        ("10g", 45, 900, "10 Gbps"),
        ("spread", 37, 720, "starts spread over 10 ms"),
    ):
        rows = _of(runs, experiment)
        if rows.empty:
            continue
        max_off, _ = max_without_timeout(rows[~rows["slicing"]])
        max_on, bound = max_without_timeout(rows[rows["slicing"]])
        out.append(
            Claim(
                f"§IV.B.3 {words}: DCTCP's most flows without a timeout",
                f"~{seed_off}",
                str(max_off),
                abs(max_off - seed_off) <= 10,
                tolerance=_allow("±10 flows around the seed's ~"),
            )
        )
        out.append(
            Claim(
                f"§IV.B.3 {words}: with slicing",
                f"> {seed_on}",
                f"{'>= ' if bound else ''}{max_on}",
                _more(max_on, bound, seed_on),
                tolerance=EXACT_RUN + "; n/a when no timeout up to a grid that ends at the "
                "seed's number (it cannot show more)",
            )
        )
    return out


def _fig12(runs: pd.DataFrame) -> list[Claim]:
    out = []
    for experiment, column in (("fig12_sru", "sru_KB"), ("fig12_buffer", "buffer_KB")):
        rows = _of(runs, experiment)
        if rows.empty:
            continue
        wide = rows.pivot(index=column, columns="slicing", values="goodput_mbps")
        better = bool((wide[True] > wide[False]).all())
        out.append(
            Claim(
                f"Fig. 12: DCTCP_PS above DCTCP at every {column[:-3]} size",
                "higher at every size",
                ", ".join(f"{i}: {r[True]:.0f} vs {r[False]:.0f}" for i, r in wide.iterrows()),
                better,
                tolerance=EXACT_RUN + " (a tie is not above)",
            )
        )
    return out


def _more(most: int, grid_end: bool, seed: int) -> bool | None:
    """Whether the most flows without a timeout are more than the seed's ``seed``:
    ``None`` when no run timed out and the grid ends at ``seed`` or below (a lower
    bound that cannot show more)."""
    if most > seed:
        return True
    return None if grid_end else False


def simulated_claims(runs: pd.DataFrame) -> list[Claim]:
    """Every simulated claim, verdicts as plain ``bool`` (or ``None``: not run)."""
    return [replace(c, ok=None if c.ok is None else bool(c.ok)) for c in _simulated_claims(runs)]


def _simulated_claims(runs: pd.DataFrame) -> list[Claim]:
    return [
        *_fig10(runs),
        *_fig11(runs),
        *_fig3(runs),
        *_fig13(runs),
        *_fig8(runs),
        *_sec4b3(runs),
        *_fig12(runs),
        Claim(
            "Fig. 14: switch and host hardware (interrupt rate, I/O)",
            "measured",
            "out of scope: dcnsim models no hardware",
            None,
            tolerance="-",
        ),
    ]
