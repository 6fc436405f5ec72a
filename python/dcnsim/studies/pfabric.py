"""The pFabric study: pFabric against DCTCP and TCP on the paper's own setup.

Alizadeh et al., "pFabric: Minimal Near-Optimal Datacenter Transport", SIGCOMM 2013,
§5: a leaf-spine fabric of 9 leaves x 16 hosts and 4 spines (10 Gbps host links,
40 Gbps fabric links), Poisson all-to-all flow arrivals with web-search or
data-mining sizes at loads 0.1-0.8, and three transports: pFabric (24-packet
priority ports, remaining-bytes priority, fixed 45 µs RTO), DCTCP (ECN marking at
K = 65 packets) and TCP on drop-tail queues, under the first seed's reading of
pFabric's scripts (``readings.first_seed``). The metric is each flow's
slowdown (FCT / the FCT it would have on an idle fabric), mean and 99th percentile,
for flows of (0, 100 KB], (100 KB, 10 MB] and > 10 MB.

``dcnsim study pfabric`` runs it (``run_pfabric`` / ``pfabric_summary`` /
``pfabric_checks`` from Python); the scenario, the run lengths and every choice are
in ``docs/studies.md``. The paper's claims are checked as stated and printed
``yes``, ``NO`` or ``within noise`` (decided on the 95 % interval over the seeds,
paired by seed): nothing here is tuned towards them.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dcnsim.studies.figures import pyplot, save
from dcnsim.studies.ideal import ideal_bins
from dcnsim.studies.pfabric_setup import (
    HOST_RATE_BPS,
    HOSTS_PER_LEAF,
    MSS,
    PFABRIC_FULL,
    PFABRIC_QUICK,
    PFABRIC_SCHEMES,
    PfabricPlan,
    pfabric_scenario,
    pfabric_window,
    run_length,
)
from dcnsim.studies.readings import first_seed, reading_lines
from dcnsim.studies.runner import Progress, run_scenarios
from dcnsim.studies.stats import by_seed, paired_difference, t95_half_width
from dcnsim.studies.study import Study
from dcnsim.studies.text import Claim, claim_lines, compare, decided, every, format_table, interval

__all__ = [
    "PFABRIC_BINS",
    "PFABRIC_FIGURES",
    "PFABRIC_FULL",
    "PFABRIC_QUICK",
    "PFABRIC_SCHEMES",
    "PFABRIC_TITLE",
    "SMALL_NEAR_ONE",
    "STUDY",
    "PfabricPlan",
    "pfabric_checks",
    "pfabric_plot",
    "pfabric_scenario",
    "pfabric_summary",
    "pfabric_tables",
    "pfabric_window",
    "run_pfabric",
    "slowdown_bins",
]

PFABRIC_TITLE = (
    "pFabric paper §5 (SIGCOMM 2013): slowdown by flow size, pFabric vs DCTCP vs TCP, leaf-spine"
)

SCHEME_LABELS = {"pfabric": "pFabric", "dctcp": "DCTCP", "tcp": "TCP"}

#: Flow-size bins of the paper's Figs. 4 and 5: (name, lower bound exclusive, upper
#: bound inclusive), in bytes of application data.
PFABRIC_BINS: tuple[tuple[str, float, float], ...] = (
    ("small", 0.0, 100e3),
    ("medium", 100e3, 10e6),
    ("large", 10e6, math.inf),
)
BIN_LABELS = {"small": "(0, 100KB]", "medium": "(100KB, 10MB]", "large": "> 10MB"}

#: Claim 1's "near 1": pFabric's mean slowdown of (0, 100 KB] flows at most this.
SMALL_NEAR_ONE = 1.5
#: Claim 2 is about "high load": loads at or above this.
HIGH_LOAD = 0.6

# --- reducing one run --------------------------------------------------------------------


def _wire_bytes(payload: pd.Series | np.ndarray) -> np.ndarray:
    """Payload plus 40 B per segment: how the workload generator counts load."""
    payload = np.asarray(payload, dtype=float)
    return payload + 40.0 * np.ceil(payload / MSS)


def slowdown_bins(
    flows: pd.DataFrame, window: tuple[float, float], stop_s: float
) -> dict[str, Any]:
    """Per size bin, over the TCP flows that arrived in ``window``: how many finished
    (``_n``) and did not (``_unfinished``), the finished flows' mean and 99th
    percentile slowdown, and ``_mean_lb``, the mean with every unfinished flow
    counted at its lower bound ``(stop_s - start) / ideal``."""
    start, end = window
    tcp = flows[flows["kind"] == "tcp"]
    counted = tcp[(tcp["start_s"] >= start) & (tcp["start_s"] < end)]
    out: dict[str, Any] = {"counted": len(counted)}
    for name, lo, hi in PFABRIC_BINS:
        size = counted["size_bytes"]
        flows_in = counted[(size > lo) & (size <= hi)]
        done = flows_in[flows_in["fct_s"].notna()]
        open_ = flows_in[flows_in["fct_s"].isna()]
        slow = done["slowdown"].to_numpy(dtype=float)
        bound = ((stop_s - open_["start_s"]) / open_["ideal_fct_s"]).to_numpy(dtype=float)
        both = np.concatenate([slow, bound])
        out[f"{name}_n"] = len(done)
        out[f"{name}_unfinished"] = len(open_)
        out[f"{name}_mean"] = float(slow.mean()) if len(slow) else np.nan
        out[f"{name}_p99"] = float(np.percentile(slow, 99)) if len(slow) else np.nan
        out[f"{name}_mean_lb"] = float(both.mean()) if len(both) else np.nan
    return out


def _reduce_pfabric(
    results: Any, window: tuple[float, float], stop_s: float, hosts: int, ideal: bool
) -> dict[str, Any]:
    flows = results.flows
    tcp = flows[flows["kind"] == "tcp"]
    row = slowdown_bins(flows, window, stop_s)
    start, end = window
    counted = tcp[(tcp["start_s"] >= start) & (tcp["start_s"] < end)]
    capacity_bytes = hosts * HOST_RATE_BPS / 8 * stop_s
    row.update(
        {
            "flows": len(tcp),
            "timeouts": int(counted["timeouts"].sum()),
            "retransmits": int(counted["retransmits"].sum()),
            "drops": int(counted["drops"].sum()),
            # What arrived and what got through, as a share of all host links over
            # the whole run (the first flows arrive one random gap after 0).
            "offered_load": float(_wire_bytes(tcp["size_bytes"]).sum()) / capacity_bytes,
            "carried_load": float(_wire_bytes(tcp["bytes_delivered"]).sum()) / capacity_bytes,
            "sim_time_s": float(results.summary["sim_time_s"]),
            "packet_hops": int(results.summary["packet_hops"]),
        }
    )
    # The paper's Ideal on this run's arrivals, which every scheme of a point shares:
    # computed for one of them only (NaN in the others' rows).
    ideal_of = tcp if ideal else tcp.iloc[:0]
    row.update(ideal_bins(ideal_of, counted, PFABRIC_BINS, HOST_RATE_BPS, _wire_bytes))
    return row


# --- running the study ----------------------------------------------------------------------


def run_pfabric(
    quick: bool = False,
    jobs: int | None = None,
    workloads: Iterable[str] | None = None,
    loads: Iterable[float] | None = None,
    schemes: Iterable[str] = PFABRIC_SCHEMES,
    seeds: Iterable[int] | None = None,
    progress: Progress | None = None,
) -> pd.DataFrame:
    """One row per run (workload, load, scheme, seed).

    Defaults come from ``PFABRIC_QUICK`` or ``PFABRIC_FULL``. Columns: ``workload,
    load, scheme, seed, hosts, length_s, window_start_s, window_end_s, counted``, then per
    bin (``small``, ``medium``, ``large``) ``_n, _unfinished, _mean, _p99,
    _mean_lb``, then ``flows, timeouts, retransmits, drops, offered_load,
    carried_load, sim_time_s, packet_hops``, then per bin ``ideal_<bin>_mean`` and
    ``ideal_<bin>_p99`` (the paper's Ideal on the run's arrivals: ``dcnsim.studies.ideal``;
    in the first scheme's rows only, NaN in the others), then ``wall_s``.
    """
    plan = PFABRIC_QUICK if quick else PFABRIC_FULL
    workloads = list(plan.workloads if workloads is None else workloads)
    loads = list(plan.loads if loads is None else loads)
    seeds = list(plan.seeds if seeds is None else seeds)
    schemes = list(schemes)
    hosts = plan.leaves * HOSTS_PER_LEAF
    points = [
        (w, load, s, seed) for w in workloads for load in loads for s in schemes for seed in seeds
    ]
    tasks = []
    for workload, load, scheme, seed in points:
        length = run_length(plan, workload, load)
        window = pfabric_window(length)
        first = scheme == schemes[0]
        reduce = partial(_reduce_pfabric, window=window, stop_s=length, hosts=hosts, ideal=first)
        tasks.append((reduce, pfabric_scenario(scheme, workload, load, seed, quick, length)))
    # The costliest runs first (cost grows with load x length), so the pool ends evenly.
    cost = [p[1] * run_length(plan, p[0], p[1]) for p in points]
    order = sorted(range(len(points)), key=lambda i: -cost[i])
    answers = run_scenarios([tasks[i] for i in order], jobs=jobs, progress=progress)
    rows: list[dict[str, Any]] = [{}] * len(points)
    for i, answer in zip(order, answers, strict=True):
        workload, load, scheme, seed = points[i]
        length = run_length(plan, workload, load)
        start, end = pfabric_window(length)
        rows[i] = {
            "workload": workload,
            "load": load,
            "scheme": scheme,
            "seed": seed,
            "hosts": hosts,
            "length_s": length,
            "window_start_s": start,
            "window_end_s": end,
            **answer,
        }
    return pd.DataFrame(rows)


# --- summary and the paper's claims ---------------------------------------------------------


def pfabric_summary(runs: pd.DataFrame) -> pd.DataFrame:
    """One row per (workload, load, scheme): flows counted per bin (``_n``,
    ``_unfinished``: sums over seeds), ``_mean``, ``_p99`` and ``_mean_lb`` (means
    over seeds; ``_mean_ci`` and ``_p99_ci`` the half-widths of their 95 % intervals),
    ``timeouts`` and ``drops`` (sums), ``offered_load`` and
    ``carried_load`` (means), ``runs`` and ``wall_s`` (sum)."""
    spec: dict[str, tuple[str, str]] = {"runs": ("seed", "count")}
    for name, _, _ in PFABRIC_BINS:
        spec[f"{name}_n"] = (f"{name}_n", "sum")
        spec[f"{name}_unfinished"] = (f"{name}_unfinished", "sum")
        for stat in ("mean", "p99", "mean_lb"):
            spec[f"{name}_{stat}"] = (f"{name}_{stat}", "mean")
        for stat in ("mean", "p99"):
            spec[f"{name}_{stat}_ci"] = (f"{name}_{stat}", t95_half_width)
    spec.update(
        {
            "timeouts": ("timeouts", "sum"),
            "drops": ("drops", "sum"),
            "offered_load": ("offered_load", "mean"),
            "carried_load": ("carried_load", "mean"),
            "wall_s": ("wall_s", "sum"),
        }
    )
    grouped = runs.groupby(["workload", "load", "scheme"], sort=False)
    table = grouped.agg(**spec).reset_index()
    rank = {s: i for i, s in enumerate(PFABRIC_SCHEMES)}
    table["_rank"] = table["scheme"].map(rank)
    workloads = {w: i for i, w in enumerate(dict.fromkeys(runs["workload"]))}
    table["_w"] = table["workload"].map(workloads)
    return (
        table.sort_values(["_w", "load", "_rank"])
        .drop(columns=["_rank", "_w"])
        .reset_index(drop=True)
    )


def _metric(summary: pd.DataFrame, workload: str, column: str) -> pd.DataFrame:
    """``column`` of one workload as a load x scheme table."""
    part = summary[summary["workload"] == workload]
    return part.pivot(index="load", columns="scheme", values=column).sort_index()


def _pairs(values: Sequence[tuple[float, float, float]]) -> str:
    return ", ".join(f"{load:g}: {a:.2f} vs {b:.2f}" for load, a, b in values)


def pfabric_checks(runs: pd.DataFrame) -> list[Claim]:
    """The paper's claims, each with whether the runs agree (``None``: the runs lack
    what the claim needs, e.g. a scheme or a high load); comparisons are decided on
    the 95 % interval over seeds of the difference (paired by seed: the schemes see
    the same arrivals), exactly with one seed.

    Per workload: (1) pFabric's mean slowdown of (0, 100 KB] flows is at most
    ``SMALL_NEAR_ONE`` at every load, and (1b) the lowest of the three schemes at
    every load; (2) pFabric's > 10 MB mean slowdown is no worse than DCTCP's at every
    load >= ``HIGH_LOAD``; (3) pFabric's (0, 100 KB] 99th percentile is the lowest of
    the three at every load. A check (not a claim of the paper) repeats (2) with
    unfinished flows counted at their lower bound: it tells whether survivor bias
    decides (2).
    """
    summary = pfabric_summary(runs)
    checks: list[Claim] = []
    ci = interval(runs)
    for workload in dict.fromkeys(summary["workload"]):
        schemes = set(summary.loc[summary["workload"] == workload, "scheme"])
        mean = _metric(summary, workload, "small_mean")
        tag = f"[{workload}]"

        def below(column: str, load: float, other: str | float, strict: bool = True,
                  workload: str = workload) -> bool | None:  # fmt: skip
            """pFabric's ``column`` below ``other``'s at ``load`` (``other`` a scheme, or a
            number: a bound)."""
            pf = by_seed(runs, column, workload=workload, load=load, scheme="pfabric")
            if isinstance(other, str):
                them = by_seed(runs, column, workload=workload, load=load, scheme=other)
                return compare(*paired_difference(them, pf), strict)
            return compare(other - pf.mean(), t95_half_width(pf), strict)

        if "pfabric" in schemes:
            numbers = ", ".join(f"{load:g}: {v:.2f}" for load, v in mean["pfabric"].items())
            decisions = [below("small_mean", ld, SMALL_NEAR_ONE, False) for ld in mean.index]
            checks.append(
                Claim(
                    f"paper: pFabric's {BIN_LABELS['small']} mean slowdown <= {SMALL_NEAR_ONE:g} "
                    f"at every load {tag}",
                    "near 1 (Figs. 4-5)",
                    f"by load: {numbers}",
                    tolerance=f"the paper's 'near 1' read as <= {SMALL_NEAR_ONE:g}; {ci}",
                    **(decided(every(decisions)) if len(mean) else {"ok": None}),
                )
            )
        if set(PFABRIC_SCHEMES) <= schemes:
            for column, what in (("small_mean", "mean"), ("small_p99", "99th percentile")):
                frame = _metric(summary, workload, column)
                others = frame[["dctcp", "tcp"]].min(axis=1)
                values = [(load, frame.loc[load, "pfabric"], others[load]) for load in frame.index]
                decisions = [below(column, ld, o) for ld in frame.index for o in ("dctcp", "tcp")]
                checks.append(
                    Claim(
                        f"paper: pFabric's {BIN_LABELS['small']} {what} slowdown is the lowest of "
                        f"the three at every load {tag}",
                        "lowest of the three (Figs. 4-5)",
                        f"pFabric vs the better of DCTCP/TCP: {_pairs(values)}",
                        tolerance=ci,
                        **decided(every(decisions)),
                    )
                )
        if {"pfabric", "dctcp"} <= schemes:
            large = _metric(summary, workload, "large_mean")
            high = [load for load in large.index if load >= HIGH_LOAD - 1e-9]
            bound = " [unfinished at their lower bound]"
            for column, what in (("large_mean", ""), ("large_mean_lb", bound)):
                frame = _metric(summary, workload, column)
                values = [
                    (load, frame.loc[load, "pfabric"], frame.loc[load, "dctcp"]) for load in high
                ]
                decisions = [below(column, load, "dctcp", strict=False) for load in high]
                prefix = "paper" if not what else "check"
                checks.append(
                    Claim(
                        f"{prefix}: pFabric's {BIN_LABELS['large']} mean slowdown <= DCTCP's at "
                        f"load >= {HIGH_LOAD:g}{what} {tag}",
                        "no worse than DCTCP at high load (Figs. 4-5)",
                        f"pFabric vs DCTCP: {_pairs(values) or '-'}",
                        tolerance=ci,
                        check=bool(what),
                        **(decided(every(decisions)) if high else {"ok": None}),
                    )
                )
    return checks


# --- printing ---------------------------------------------------------------------------------

PFABRIC_PAPER = [
    "The paper's findings (§5.2, Figs. 4 and 5; read from its plots, which give no table):",
    "  - pFabric's (0, 100KB] flows finish close to the ideal (normalized FCT near 1), on",
    "    average and at the 99th percentile, at every load and for both workloads, while",
    "    DCTCP and TCP-DropTail slow down several-fold as the load grows;",
    "  - pFabric's > 10MB flows do no worse than DCTCP's, also at high load: prioritizing",
    "    short flows does not starve the long ones on average.",
]

PFABRIC_NOTES = [
    "slowdown = FCT / ideal FCT (flows.parquet): the ideal is the same flow alone on the idle",
    "  fabric (handshake, serialization at 10 Gbps, delays). Counted: flows that arrived after",
    "  the warm-up (15 % of the run) and before 75 % of it; the rest of the run lets them finish.",
    "  Means and percentiles are over the counted flows that finished; 'unfinished' counts the",
    "  others (the > 10MB means are biased towards the flows that finished: see the last check,",
    "  which counts every unfinished flow at its lower bound (run end - start) / ideal).",
    f"'near 1' = at most {SMALL_NEAR_ONE:g}: a (0, 100KB] flow's ideal FCT is ~15-105 µs here, so",
    "  1.5 allows a few full packets of queueing per hop (1.2 µs each at 10 Gbps) but not one",
    "  pFabric timeout (45 µs) per flow on average, nor DCTCP's standing queue at K = 65 (~78 µs).",
    "offered/carried load (--verbose): wire bytes of every flow that arrived / delivered, over",
    "  all host links and the whole run. Data mining's sizes are heavy-tailed (1 % of the flows,",
    "  100 MB-1 GB, carry ~70 % of the bytes), so a run of ~1 s offers less than the",
    "  nominal load and its > 10MB bin holds few, mostly the smaller, large flows.",
    "DCTCP marks at K = 65 x 1460 B on every port, the 40 Gbps fabric ports too (one queue",
    "  setting for all switch ports); most queueing is at the 10 Gbps leaf->host ports.",
]


def _cells(frame: pd.DataFrame, load: float, digits: int) -> str:
    values = []
    for scheme in PFABRIC_SCHEMES:
        if scheme in frame.columns:
            v = frame.loc[load, scheme]
            values.append("-" if pd.isna(v) else f"{v:.{digits}f}")
    return "  ".join(values)


def _counts(frame: pd.DataFrame, load: float) -> str:
    return " ".join(str(int(frame.loc[load, s])) for s in PFABRIC_SCHEMES if s in frame.columns)


def _workload_table(summary: pd.DataFrame, workload: str) -> pd.DataFrame:
    part = summary[summary["workload"] == workload]
    schemes = [s for s in PFABRIC_SCHEMES if s in set(part["scheme"])]
    names = "/".join(SCHEME_LABELS[s] for s in schemes)
    frames = {
        column: _metric(summary, workload, column)
        for column in (
            "small_mean",
            "small_p99",
            "medium_mean",
            "large_mean",
            "large_n",
            "small_unfinished",
            "medium_unfinished",
            "large_unfinished",
        )
    }
    unfinished = (
        frames["small_unfinished"] + frames["medium_unfinished"] + frames["large_unfinished"]
    )
    loads = list(frames["small_mean"].index)
    return pd.DataFrame(
        {
            "load": [f"{load:g}" for load in loads],
            f"small mean ({names})": [_cells(frames["small_mean"], x, 2) for x in loads],
            "small p99": [_cells(frames["small_p99"], x, 2) for x in loads],
            "medium mean": [_cells(frames["medium_mean"], x, 2) for x in loads],
            "large mean": [_cells(frames["large_mean"], x, 2) for x in loads],
            "large finished": [_counts(frames["large_n"], x) for x in loads],
            "unfinished": [_counts(unfinished, x) for x in loads],
        }
    )


def pfabric_tables(runs: pd.DataFrame, verbose: bool) -> tuple[pd.DataFrame, str]:
    """The summary (one row per workload, load and scheme) and the printed text."""
    summary = pfabric_summary(runs)
    hosts = int(runs["hosts"].iloc[0]) if "hosts" in runs.columns else None
    lines = [
        "pFabric (Alizadeh et al., SIGCOMM 2013, §5): slowdown by flow size, "
        "pFabric vs DCTCP vs TCP",
        f"  leaf-spine, {hosts if hosts else '?'} hosts ({_leaves_text(runs)} leaves x 16, "
        "4 spines), 10 Gbps host and 40 Gbps fabric links,",
        "  0.2 µs per link, 2.5 µs per host (14.6 µs RTT across the spine), per-flow ECMP;",
        "  Poisson arrivals, all to all. "
        + f"Seeds {', '.join(map(str, sorted(set(runs['seed']))))}.",
        *reading_lines(first_seed.READING),
        "",
        *PFABRIC_PAPER,
        "",
        "Cells hold pFabric, DCTCP and TCP in that order. small = (0, 100KB], medium =",
        "(100KB, 10MB], large = > 10MB; 'large finished' and 'unfinished' (all bins) count flows.",
    ]
    for workload in dict.fromkeys(summary["workload"]):
        part = runs[runs["workload"] == workload]
        lengths = ", ".join(
            f"{load:g}: {length * 1e3:.0f}"
            for load, length in part.groupby("load")["length_s"].first().items()
        )
        lines += [
            "",
            f"{workload}: run length in ms per load: {lengths}",
            format_table(_workload_table(summary, workload)),
        ]
    lines += ["", "The paper's claims, against these numbers:"]
    lines += claim_lines(pfabric_checks(runs))
    if verbose:
        lines += ["", "Per run:", format_table(_run_view(runs))]
    lines += ["", *PFABRIC_NOTES]
    return summary, "\n".join(lines)


def _leaves_text(runs: pd.DataFrame) -> str:
    if "hosts" not in runs.columns:
        return "?"
    return str(int(runs["hosts"].iloc[0]) // HOSTS_PER_LEAF)


def _run_view(runs: pd.DataFrame) -> pd.DataFrame:
    def num(values: Iterable[Any], digits: int) -> list[str]:
        return ["-" if pd.isna(v) else f"{float(v):.{digits}f}" for v in values]

    return pd.DataFrame(
        {
            "workload": runs["workload"],
            "load": [f"{v:g}" for v in runs["load"]],
            "scheme": runs["scheme"],
            "seed": runs["seed"],
            "length (ms)": num(runs["length_s"] * 1e3, 0),
            "counted": runs["counted"],
            "small n/unf": [
                f"{n}/{u}" for n, u in zip(runs["small_n"], runs["small_unfinished"], strict=True)
            ],
            "medium n/unf": [
                f"{n}/{u}" for n, u in zip(runs["medium_n"], runs["medium_unfinished"], strict=True)
            ],
            "large n/unf": [
                f"{n}/{u}" for n, u in zip(runs["large_n"], runs["large_unfinished"], strict=True)
            ],
            "timeouts": runs["timeouts"],
            "drops": runs["drops"],
            "offered": num(runs["offered_load"], 3),
            "carried": num(runs["carried_load"], 3),
            "wall (s)": num(runs["wall_s"], 1),
        }
    )


#: The paper's figures, one per workload.
PFABRIC_FIGURES = {"fig4": "websearch", "fig5": "datamining"}


def pfabric_plot(figure: str, runs: pd.DataFrame, summary: pd.DataFrame, path: Path) -> None:
    """The paper's Fig. 4 (web search) or 5 (data mining): small mean, small p99, medium
    mean, large mean against the load, a line per scheme (log scale, 95 % intervals over
    seeds), the paper's Ideal (``ideal_*`` of the runs) and the 'near 1' bound; the
    paper's PDQ is named as absent. Nothing is drawn when the workload was not run."""
    from matplotlib.ticker import FuncFormatter

    workload = PFABRIC_FIGURES[figure]
    part = summary[summary["workload"] == workload]
    if not len(part):
        return
    plt = pyplot()
    plain = FuncFormatter(lambda value, _: f"{value:g}")
    panels = (
        ("small_mean", "(0, 100KB]: mean"),
        ("small_p99", "(0, 100KB]: 99th percentile"),
        ("medium_mean", "(100KB, 10MB]: mean"),
        ("large_mean", "> 10MB: mean"),
    )
    ideal = runs[runs["workload"] == workload].groupby("load")
    fig, axes = plt.subplots(1, len(panels), figsize=(16, 3.9), squeeze=False)
    for ax, (column, title) in zip(axes[0], panels, strict=True):
        for scheme in PFABRIC_SCHEMES:
            points = part[part["scheme"] == scheme]
            if len(points):
                ax.errorbar(
                    points["load"], points[column], yerr=points[f"{column}_ci"].fillna(0),
                    marker="o", capsize=3, label=SCHEME_LABELS[scheme],
                )  # fmt: skip
        line = ideal[f"ideal_{column}"].mean().dropna()
        if len(line):
            ax.plot(line.index, line, "k--", marker=".", label="Ideal (SRPT, flow level)")
        if column == "small_mean":
            ax.axhline(
                SMALL_NEAR_ONE, color="k", linestyle=":", linewidth=1,
                label=f"near 1 (<= {SMALL_NEAR_ONE:g})",
            )  # fmt: skip
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(plain)
        ax.yaxis.set_minor_formatter(plain)
        ax.set_title(f"{workload}, {title}", fontsize=10)
        ax.set_xlabel("load (fraction of host link rate)")
        ax.set_ylabel("slowdown (FCT / ideal FCT)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(
        f"pFabric study, {workload} (paper's {figure.replace('fig', 'Fig. ')}; its PDQ series "
        "is absent: dcnsim has no PDQ)"
    )
    save(fig, path)


STUDY = Study(
    name="pfabric",
    title=PFABRIC_TITLE,
    seed="pFabric (Alizadeh et al., SIGCOMM 2013), §5, Figs. 4-5",
    runs=run_pfabric,
    tables=pfabric_tables,
    claims=pfabric_checks,
    figures={name: partial(pfabric_plot, name) for name in PFABRIC_FIGURES},
)
