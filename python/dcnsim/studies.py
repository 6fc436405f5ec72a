"""Seed experiments, one command each: the seed's numbers beside dcnsim's.

A *study* builds the scenarios of one experiment of a seed paper, runs them (in
parallel worker processes), reduces each run to a few numbers and prints a table
with the seed's reported results next to dcnsim's::

    dcnsim study incast [--quick] [--jobs N] [--out DIR] [--verbose]
    dcnsim study spraying [--quick] ...
    dcnsim study latency-difference [--quick] ...

The same is available from Python: ``run_incast`` / ``incast_summary``,
``run_spraying`` / ``spraying_summary`` and ``run_latency_difference`` /
``latency_summary`` return pandas DataFrames. The scenarios,
the definitions of every column and the interpretation notes are in
``docs/studies.md``. Nothing here tunes the simulator towards the seed's numbers:
where dcnsim disagrees, the table says so.
"""

from __future__ import annotations

import itertools
import multiprocessing
import os
import signal
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dcnsim.results import run
from dcnsim.scenario import Scenario, ScenarioError
from dcnsim.study_pfabric import PFABRIC_TITLE, pfabric_plot, pfabric_tables, run_pfabric

__all__ = [
    "INCAST_FULL",
    "INCAST_QUICK",
    "INCAST_SEED",
    "LATENCY_BUFFERS",
    "LATENCY_FULL",
    "LATENCY_QUICK",
    "LATENCY_SCHEMES",
    "LATENCY_SEED",
    "PFABRIC_TRANSPORT",
    "STUDIES",
    "Study",
    "StudyOutput",
    "format_table",
    "incast_scenario",
    "incast_summary",
    "latency_buffer_table",
    "latency_checks",
    "latency_closed_form_us",
    "latency_packets",
    "latency_scenario",
    "latency_summary",
    "run_incast",
    "run_latency_difference",
    "run_scenarios",
    "run_spraying",
    "run_study",
    "spraying_checks",
    "spraying_scenario",
    "spraying_summary",
    "write_study",
]

#: Called after each finished simulation with (finished, total).
Progress = Callable[[int, int], None]


# --- running many scenarios ---------------------------------------------------------


def run_scenarios(
    tasks: Sequence[tuple[Callable[[Scenario], dict[str, Any]], Scenario]],
    jobs: int | None = None,
    progress: Progress | None = None,
) -> list[dict[str, Any]]:
    """Run each ``(reduce, scenario)``: ``reduce(dcnsim.run(scenario))`` -> a dict of numbers.

    Runs go to ``jobs`` worker processes (default ``os.cpu_count()``; 1 runs them
    here, one after the other). The answers come back in the order of ``tasks``,
    each with ``wall_s``, the wall-clock seconds of its run. ``reduce`` must be a
    module-level function (it is sent to the workers by name).
    """
    jobs = (os.cpu_count() or 1) if jobs is None else jobs
    if jobs < 1:
        raise ValueError(f"jobs must be at least 1, got {jobs}")
    total = len(tasks)
    out: list[dict[str, Any] | None] = [None] * total
    if jobs == 1 or total <= 1:
        for i, (reduce, scenario) in enumerate(tasks):
            out[i] = _checked(_run_one(reduce, scenario))
            if progress:
                progress(i + 1, total)
        return [row for row in out if row is not None]
    # fork: the workers need nothing but the already imported core, and starting
    # them is instant (the core is single-threaded, so forking is safe).
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else None)
    executor = ProcessPoolExecutor(
        max_workers=min(jobs, total), mp_context=context, initializer=_ignore_sigint
    )
    try:
        futures = {
            executor.submit(_run_one, reduce, scenario): i
            for i, (reduce, scenario) in enumerate(tasks)
        }
        for done, future in enumerate(as_completed(futures), start=1):
            out[futures[future]] = _checked(future.result())
            if progress:
                progress(done, total)
    except BaseException:
        # Ctrl-C or a failed run: stop now, not after the runs already handed out.
        _stop(executor)
        raise
    executor.shutdown()
    return [row for row in out if row is not None]


def _ignore_sigint() -> None:
    """Worker processes leave Ctrl-C to the parent, which stops them."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _stop(executor: ProcessPoolExecutor) -> None:
    """Cancel what has not started and end the workers (``shutdown`` alone would wait
    for every run already handed to a worker)."""
    for process in list((getattr(executor, "_processes", None) or {}).values()):
        process.terminate()
    executor.shutdown(wait=True, cancel_futures=True)


def _run_one(reduce: Callable[[Any], dict[str, Any]], scenario: Scenario) -> dict[str, Any]:
    started = time.perf_counter()
    try:
        results = run(scenario)
    except ScenarioError as exc:  # the core's exception class does not pickle
        return {_ERROR: str(exc)}
    row = reduce(results)
    row["wall_s"] = time.perf_counter() - started
    return row


_ERROR = "__scenario_error__"


def _checked(row: dict[str, Any]) -> dict[str, Any]:
    if _ERROR in row:
        raise ScenarioError(row[_ERROR])
    return row


# --- study 1: incast (Packet Slicing seed, §II.C, Fig. 6(b)) --------------------------

#: The seed's maximum number of concurrent workers without incast collapse, by packet
#: size in bytes, and its words. ``None``: the seed gives a lower bound only.
INCAST_SEED: dict[int, tuple[int, str, str]] = {
    1500: (25, "25", '"only 25 concurrent flows induce the TCP Incast throughput collapse"'),
    500: (76, "76", '"the maximum numbers of flows coexisting well without Time-Out" = 76'),
    250: (146, "146", "... = 146 for 250 B"),
    64: (500, "> 500", "no collapse up to 500 workers, but goodput only 570 Mbps"),
}

#: Worker counts per packet size: the full grid and the quick one (a few points
#: bracketing the collapse; 64 B only up to 450, large N at 64 B is slow).
INCAST_FULL: dict[int, list[int]] = {
    1500: list(range(2, 41, 2)),
    500: [20, 30, 40, 50, 56, 60, 64, 68, 72, 76, 80, 90, 100],
    250: [40, 60, 80, 100, 110, 120, 125, 130, 135, 140, 146, 150, 160, 180],
    64: [100, 200, 300, 400, 450, 500, 550, 600, 650, 700],
}
INCAST_QUICK: dict[int, list[int]] = {
    1500: [4, 8, 10, 12, 24],
    500: [40, 64, 68, 80],
    250: [80, 125, 130, 146],
    64: [100, 300, 450],
}

INCAST_ROUNDS = 8


def incast_scenario(size: int, workers: int, rounds: int = INCAST_ROUNDS) -> Scenario:
    """``workers`` DCTCP senders, one 64 KB response each per round, to host 0.

    1 Gbps star, 25 µs per link (100 µs round trip through the switch), 64 KB
    output buffers with DCTCP marking at K = 20 packets, RTO_min 200 ms, packets of
    ``size`` bytes on the wire (payload ``size - 40``), ns-2's initial window of 2,
    persistent connections over ``rounds`` rounds.
    """
    if size <= 40 + 23:
        raise ValueError(f"packet size must leave at least 24 B of payload, got {size} B")
    return Scenario(
        {
            "name": f"incast S={size}B N={workers}",
            "topology": {
                "kind": "star",
                "hosts": workers + 1,
                "link": {"rate": "1Gbps", "delay": "25us"},
            },
            "network": {"queue": {"capacity": "64KB", "aqm": {"kind": "threshold", "k": "20pkt"}}},
            "transport": {
                "protocol": "dctcp",
                "mss": f"{size - 40}B",
                "init_cwnd": 2,
                "min_rto": "200ms",
            },
            "traffic": {
                "incast": [
                    {
                        "aggregator": 0,
                        "workers": "all",
                        "sru": "64KB",
                        "rounds": rounds,
                        "persistent": True,
                    }
                ]
            },
        }
    )


def _reduce_incast(results: Any) -> dict[str, Any]:
    rounds = results.rounds.sort_values("round")
    first, steady = rounds[rounds["round"] == 0], rounds[rounds["round"] > 0]
    flows = results.flows
    tcp = flows[flows["kind"] == "tcp"]
    return {
        "rounds": len(rounds),
        "round0_goodput_mbps": float(first["goodput_bps"].iloc[0]) / 1e6 if len(first) else np.nan,
        "round0_timeout": bool(first["any_timeout"].astype(bool).any()),
        "steady_rounds": len(steady),
        "steady_goodput_mbps": float(steady["goodput_bps"].mean()) / 1e6 if len(steady) else np.nan,
        "steady_timeout_rounds": int(steady["any_timeout"].astype(bool).sum()),
        "steady_timeouts": int(steady["timeouts"].sum()),
        "drops": int(tcp["drops"].sum()),
        "sim_time_s": float(results.summary["sim_time_s"]),
    }


def run_incast(
    quick: bool = False,
    jobs: int | None = None,
    sizes: Iterable[int] | None = None,
    grid: Mapping[int, Sequence[int]] | None = None,
    rounds: int = INCAST_ROUNDS,
    progress: Progress | None = None,
) -> pd.DataFrame:
    """One row per (packet size, workers): steady-state goodput and timeouts.

    ``grid`` (packet size -> worker counts) defaults to ``INCAST_QUICK`` or
    ``INCAST_FULL``; ``sizes`` keeps only some of its sizes. Steady state is rounds
    1..rounds-1 (round 0 is slow start from the initial window and is reported
    apart). Columns: ``size_B, workers, rounds, round0_goodput_mbps,
    round0_timeout, steady_rounds, steady_goodput_mbps, steady_timeout_rounds,
    timeout_fraction, steady_timeouts, drops, sim_time_s, wall_s``.
    """
    if rounds < 2:
        raise ValueError("incast needs at least 2 rounds: round 0 is not steady state")
    grid = dict(grid if grid is not None else (INCAST_QUICK if quick else INCAST_FULL))
    if sizes is not None:
        grid = {s: grid[s] for s in sizes}
    points = [(s, n) for s in grid for n in sorted(grid[s])]
    # Largest runs first: they dominate the wall time, so the pool ends evenly.
    order = sorted(range(len(points)), key=lambda i: -points[i][1] * 1500 / points[i][0])
    tasks = [(_reduce_incast, incast_scenario(*points[i], rounds=rounds)) for i in order]
    answers = run_scenarios(tasks, jobs=jobs, progress=progress)
    rows = [None] * len(points)
    for i, answer in zip(order, answers, strict=True):
        size, workers = points[i]
        rows[i] = {"size_B": size, "workers": workers, **answer}
    table = pd.DataFrame(rows)
    table.insert(
        table.columns.get_loc("steady_timeout_rounds") + 1,
        "timeout_fraction",
        table["steady_timeout_rounds"] / table["steady_rounds"].clip(lower=1),
    )
    return table


def incast_summary(detail: pd.DataFrame) -> pd.DataFrame:
    """Per packet size: the seed's and dcnsim's maximum workers without collapse.

    dcnsim's maximum is the largest N of the grid such that N and every smaller N
    of the grid had no steady-state round with a timeout (NaN if even the smallest
    collapsed). ``goodput_below_mbps`` is the steady goodput at that N,
    ``first_collapse`` the next N of the grid and ``goodput_above_mbps`` its
    goodput (NaN when nothing collapsed: the maximum is then only a lower bound,
    ``bound = ">="``).
    """
    rows = []
    for size, points in detail.groupby("size_B", sort=False):
        points = points.sort_values("workers")
        fine = (points["steady_timeout_rounds"] == 0).to_numpy()
        collapsed = int(np.argmin(fine)) if not fine.all() else len(points)
        below = points.iloc[collapsed - 1] if collapsed > 0 else None
        above = points.iloc[collapsed] if collapsed < len(points) else None
        seed_max, seed_shown, note = INCAST_SEED.get(int(size), (np.nan, "?", ""))
        rows.append(
            {
                "size_B": int(size),
                "seed_max_workers": seed_max,
                "seed_shown": seed_shown,
                "dcnsim_max_workers": int(below["workers"]) if below is not None else np.nan,
                "bound": ">=" if above is None else ("<" if below is None else "="),
                "goodput_below_mbps": below["steady_goodput_mbps"] if below is not None else np.nan,
                "first_collapse": int(above["workers"]) if above is not None else np.nan,
                "goodput_above_mbps": above["steady_goodput_mbps"] if above is not None else np.nan,
                "grid": ",".join(str(n) for n in points["workers"]),
                "seed_note": note,
            }
        )
    return pd.DataFrame(rows)


INCAST_NOTES = [
    "max workers = the largest N of the grid such that N and every smaller N of the grid",
    "  had no timeout in a steady-state round (rounds 1..R-1; round 0 starts from the",
    "  initial window of 2 and is not counted). Goodput = mean of the steady rounds'",
    "  goodput (8 x workers x 64 KB / round time). Collapse need not be monotonic in N:",
    "  a larger N can happen to avoid timeouts (see --verbose); the first timeout counts.",
    "1500 B: dcnsim collapses at far fewer workers than the seed's 25. This is a known",
    "  discrepancy, reported as measured (nothing is tuned to hide it).",
    "64 B: dcnsim's packet size is the wire size including the 40 B TCP/IP header, so a",
    "  64 B packet carries 24 B and goodput is at most 24/64 x 1 Gbps = 375 Mbps. The",
    "  seed's 570 Mbps at 64 B suggests its 64 B was the payload (64/104 x 1 Gbps = 615).",
    "  A 64 B round lasts N x 1.37 ms, longer than RTO_min from N = 150 on, so a round",
    "  with timeouts keeps most of its goodput: there, the timeout is the collapse signal.",
]


def _incast_tables(detail: pd.DataFrame, verbose: bool) -> tuple[pd.DataFrame, str]:
    summary = incast_summary(detail)
    shown = pd.DataFrame(
        {
            "packet size": [f"{s} B" for s in summary["size_B"]],
            "seed: max workers": summary["seed_shown"],
            "dcnsim: max workers": [
                _bound_text(b, m, first)
                for b, m, first in zip(
                    summary["bound"],
                    summary["dcnsim_max_workers"],
                    summary["first_collapse"],
                    strict=True,
                )
            ],
            "first collapse": [_int_text(v) for v in summary["first_collapse"]],
            "goodput below (Mbps)": [_num_text(v, 0) for v in summary["goodput_below_mbps"]],
            "goodput above (Mbps)": [_num_text(v, 0) for v in summary["goodput_above_mbps"]],
            "seed note": summary["seed_note"],
        }
    )
    lines = [
        "Incast: the Packet Slicing seed, §II.C, Fig. 6(b): N DCTCP workers -> 1 aggregator",
        "  1 Gbps star, 100 µs RTT, 64 KB buffer per port, K = 20 packets, RTO_min 200 ms,",
        f"  SRU 64 KB per worker per round, {int(detail['rounds'].max())} rounds, "
        "persistent connections, init_cwnd 2",
        "",
        format_table(shown),
    ]
    if verbose:
        lines += ["", "Per point:", format_table(_incast_detail_view(detail))]
    lines += ["", *INCAST_NOTES]
    return summary, "\n".join(lines)


def _incast_detail_view(detail: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "size": [f"{s} B" for s in detail["size_B"]],
            "N": detail["workers"],
            "round 0 (Mbps)": [_num_text(v, 0) for v in detail["round0_goodput_mbps"]],
            "steady (Mbps)": [_num_text(v, 1) for v in detail["steady_goodput_mbps"]],
            "rounds w/ timeout": [
                f"{t}/{r}"
                for t, r in zip(
                    detail["steady_timeout_rounds"], detail["steady_rounds"], strict=True
                )
            ],
            "timeouts": detail["steady_timeouts"],
            "drops": detail["drops"],
            "sim time (s)": [f"{v:.3f}" for v in detail["sim_time_s"]],
            "wall (s)": [f"{v:.2f}" for v in detail["wall_s"]],
        }
    )


def _incast_plot(detail: pd.DataFrame, summary: pd.DataFrame, path: Path) -> None:
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(8, 5))
    for size, points in detail.groupby("size_B", sort=False):
        points = points.sort_values("workers")
        (line,) = ax.plot(
            points["workers"], points["steady_goodput_mbps"], marker="o", label=f"{size} B"
        )
        hit = points[points["steady_timeout_rounds"] > 0]
        ax.scatter(
            hit["workers"], hit["steady_goodput_mbps"], marker="x", s=60, color="black", zorder=3
        )
        seed = INCAST_SEED.get(int(size))
        if seed and int(size) != 64:
            ax.axvline(seed[0], color=line.get_color(), linestyle=":", linewidth=1)
    ax.set_xscale("log")
    ax.set_xlabel("concurrent workers N")
    ax.set_ylabel("steady-state goodput (Mbps)")
    ax.set_ylim(bottom=0)
    ax.set_title(
        "Incast (Packet Slicing seed Fig. 6b): x = a round with a timeout,\n"
        "dotted = the seed's maximum workers"
    )
    ax.legend(title="packet size")
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


# --- study 2: random packet spraying, static scenario (Figs. 2-4) -------------------------

SPRAYING_POLICIES = ("rps", "single")
SPRAYING_FULL = {"n_long": [0, 1, 2, 3, 4, 5], "seeds": list(range(1, 11))}
SPRAYING_QUICK = {"n_long": [0, 2, 5], "seeds": [1, 2, 3]}
SHORT_FLOW_BYTES = 200_000
LONG_FLOW_BYTES = 10_000_000

SPRAYING_EXPECTATIONS = [
    "Seed's findings (qualitative; the text gives no exact numbers):",
    "  - with rps the short flow's mean FCT is smaller than with single-path TCP, and the",
    "    advantage grows as long flows are added (Fig. 2);",
    "  - with rps the short flow sees out-of-order packets, at about the same percentage",
    "    once there are two or more long flows (Fig. 3);",
    "  - the long flows' mean throughput is slightly larger with rps and bounded by the",
    "    fair share of the bottleneck E7->S15, 1 Gbps / (number of flows to S15) (Fig. 4).",
]


def spraying_scenario(policy: str, n_long: int, seed: int = 1) -> Scenario:
    """k = 4 fat-tree, 1 Gbps, 25 µs links, 1000-packet drop-tail queues, NewReno.

    Long flows of 10 MB from hosts 0..n_long-1 to host 15, then one 200 KB short
    flow from host 0 to host 15 (the last flow); everything starts at time 0.
    """
    if not 0 <= n_long <= 15:
        raise ValueError(f"n_long must be within 0..15, got {n_long}")
    flows = [{"src": i, "dst": 15, "size": "10MB"} for i in range(n_long)]
    flows.append({"src": 0, "dst": 15, "size": "200KB"})
    return Scenario(
        {
            "name": f"spraying policy={policy} long={n_long}",
            "seed": seed,
            "topology": {"kind": "fat_tree", "k": 4, "link": {"rate": "1Gbps", "delay": "25us"}},
            "network": {"queue": {"capacity": "1000pkt"}},
            "forwarding": {"policy": policy},
            "traffic": {"flows": flows},
        }
    )


def _reduce_spraying(results: Any) -> dict[str, Any]:
    tcp = results.flows[results.flows["kind"] == "tcp"].sort_values("flow_id")
    short, long = tcp.iloc[-1], tcp.iloc[:-1]
    return {
        "short_fct_ms": float(short["fct_s"]) * 1e3,
        "short_ooo_packets": int(short["ooo_packets"]),
        "short_packets_delivered": int(short["packets_delivered"]),
        "short_ooo_pct": 100.0
        * int(short["ooo_packets"])
        / max(int(short["packets_delivered"]), 1),
        "short_timeouts": int(short["timeouts"]),
        "long_goodput_mbps": float(long["goodput_bps"].mean()) / 1e6 if len(long) else np.nan,
        "long_goodput_max_mbps": float(long["goodput_bps"].max()) / 1e6 if len(long) else np.nan,
        # The last long flow to finish: all long flows' bytes had to cross the 1 Gbps
        # E7->S15 port before it ended, so it cannot beat the fair share 1000/n_long.
        "long_goodput_min_mbps": float(long["goodput_bps"].min()) / 1e6 if len(long) else np.nan,
        # All long flows' bytes over the time until the last of them finished: what
        # the bottleneck E7->S15 carried for them, at most its 1 Gbps.
        "long_aggregate_mbps": (
            8 * float(long["size_bytes"].sum()) / float(long["end_s"].max()) / 1e6
            if len(long)
            else np.nan
        ),
        "long_timeouts": int(long["timeouts"].sum()),
        "drops": int(tcp["drops"].sum()),
        "unfinished": int(tcp["fct_s"].isna().sum()),
    }


def run_spraying(
    quick: bool = False,
    jobs: int | None = None,
    n_long: Iterable[int] | None = None,
    seeds: Iterable[int] | None = None,
    policies: Iterable[str] = SPRAYING_POLICIES,
    progress: Progress | None = None,
) -> pd.DataFrame:
    """One row per run (policy, n_long, seed) of the static spraying scenario.

    Defaults: n_long 0..5 and seeds 1..10, or with ``quick`` n_long 0, 2, 5 and
    seeds 1..3. Columns: ``policy, n_long, seed, short_fct_ms, short_ooo_packets,
    short_packets_delivered, short_ooo_pct, short_timeouts, long_goodput_mbps,
    long_goodput_max_mbps, long_aggregate_mbps, long_timeouts, drops, unfinished,
    wall_s``.
    """
    plan = SPRAYING_QUICK if quick else SPRAYING_FULL
    n_long = list(plan["n_long"] if n_long is None else n_long)
    seeds = list(plan["seeds"] if seeds is None else seeds)
    points = [(p, n, s) for p in policies for n in n_long for s in seeds]
    order = sorted(range(len(points)), key=lambda i: -points[i][1])  # long runs first
    tasks = [(_reduce_spraying, spraying_scenario(*points[i])) for i in order]
    answers = run_scenarios(tasks, jobs=jobs, progress=progress)
    rows: list[dict[str, Any]] = [{}] * len(points)
    for i, answer in zip(order, answers, strict=True):
        policy, n, seed = points[i]
        rows[i] = {"policy": policy, "n_long": n, "seed": seed, **answer}
    return pd.DataFrame(rows)


def spraying_summary(runs: pd.DataFrame) -> pd.DataFrame:
    """Per (policy, n_long): means over the seeds.

    ``short_fct_ms`` (and its min and max over seeds), ``short_ooo_pct`` (the mean of
    each run's ooo_packets / packets_delivered x 100), ``long_goodput_mbps`` (mean
    over the long flows and seeds), ``long_aggregate_mbps`` (the long flows' bytes over
    the time the last of them ended, mean over seeds), ``long_goodput_min_mbps`` (the
    slowest long flow, max over seeds), ``fair_share_mbps`` = 1000 / n_long (the
    short flow is gone after a few ms), ``runs``.
    """
    grouped = runs.groupby(["policy", "n_long"], sort=False)
    table = grouped.agg(
        runs=("seed", "count"),
        short_fct_ms=("short_fct_ms", "mean"),
        short_fct_min_ms=("short_fct_ms", "min"),
        short_fct_max_ms=("short_fct_ms", "max"),
        short_ooo_pct=("short_ooo_pct", "mean"),
        long_goodput_mbps=("long_goodput_mbps", "mean"),
        long_goodput_max_mbps=("long_goodput_max_mbps", "max"),
        long_goodput_min_mbps=("long_goodput_min_mbps", "max"),
        long_aggregate_mbps=("long_aggregate_mbps", "mean"),
        timeouts=("short_timeouts", "sum"),
    ).reset_index()
    table["fair_share_mbps"] = 1000.0 / table["n_long"].where(table["n_long"] > 0)
    return table


def spraying_wide(summary: pd.DataFrame) -> pd.DataFrame:
    """The summary with one row per n_long and the policies side by side."""
    wide = summary.pivot(index="n_long", columns="policy")
    out = pd.DataFrame(index=wide.index)
    out["fair_share_mbps"] = wide["fair_share_mbps"].iloc[:, 0]
    for column in ("short_fct_ms", "short_ooo_pct", "long_goodput_mbps", "long_aggregate_mbps"):
        for policy in summary["policy"].unique():
            out[f"{policy}_{column}"] = wide[(column, policy)]
    return out.reset_index()


def spraying_checks(runs: pd.DataFrame) -> list[tuple[str, bool | None]]:
    """The seed's claims and two sanity bounds, each with whether the runs agree.

    ``None``: the runs do not have what the check needs (e.g. one policy only).
    """
    summary = spraying_summary(runs)
    by = summary.set_index(["policy", "n_long"])
    checks: list[tuple[str, bool | None]] = []
    policies = set(summary["policy"])
    n_values = sorted(set(summary["n_long"]))
    both = {"rps", "single"} <= policies
    at = [n for n in n_values if n >= 1]
    many = [n for n in n_values if n >= 2]

    def listed(values: Sequence[int]) -> str:
        return ", ".join(map(str, values)) or "-"

    if both and at:
        rps, single = by.loc["rps", "short_fct_ms"], by.loc["single", "short_fct_ms"]
        checks.append(
            (
                f"seed: rps short-flow FCT < single at n_long = {listed(at)}",
                all(rps[n] < single[n] for n in at),
            )
        )
        gain = [single[n] - rps[n] for n in at]
        checks.append(
            (
                "seed: rps's FCT advantage grows with n_long (single - rps, ms: "
                + ", ".join(f"{g:.2f}" for g in gain)
                + ")",
                bool(np.all(np.diff(gain) >= 0)) if len(gain) > 1 else None,
            )
        )
    if "rps" in policies and many:
        checks.append(
            (
                f"seed: rps short flow has out-of-order packets at n_long = {listed(many)}",
                all(by.loc[("rps", n), "short_ooo_pct"] > 0 for n in many),
            )
        )
    if "single" in policies:
        checks.append(
            (
                "single-path short flow has no out-of-order packets",
                bool((by.loc["single", "short_ooo_pct"] == 0).all()),
            )
        )
    with_long = summary[summary["n_long"] > 0]
    if len(with_long):
        checks.append(
            (
                "seed: long flows capped by the fair share at the last hop: the slowest "
                "long flow's goodput <= 1000/n_long in every run",
                bool(
                    (
                        with_long["long_goodput_min_mbps"] <= with_long["fair_share_mbps"] * 1.001
                    ).all()
                ),
            )
        )
    if both and at:
        rps, single = by.loc["rps", "long_goodput_mbps"], by.loc["single", "long_goodput_mbps"]
        checks.append(
            (
                f"seed: long-flow mean goodput with rps >= single (within 0.1 %) at n_long = "
                f"{listed(at)}",
                all(rps[n] >= 0.999 * single[n] for n in at),
            )
        )
    if both and at:
        rps, single = by.loc["rps", "long_aggregate_mbps"], by.loc["single", "long_aggregate_mbps"]
        checks.append(
            (
                f"seed, as aggregate: long flows' aggregate with rps >= single (within 0.1 %) "
                f"at n_long = {listed(at)}",
                all(rps[n] >= 0.999 * single[n] for n in at),
            )
        )
    if len(with_long):
        checks.append(
            (
                "long flows' aggregate <= 1 Gbps in every run",
                bool((runs["long_aggregate_mbps"].dropna() <= 1000.0).all()),
            )
        )
    single_runs = runs[runs["policy"] == "single"]
    if single_runs["seed"].nunique() > 1:
        numbers = single_runs.drop(columns=["seed", "wall_s"]).groupby(["n_long"])
        checks.append(
            (
                "single-path runs are the same for every seed",
                bool((numbers.nunique(dropna=False) <= 1).all().all()),
            )
        )
    return checks


SPRAYING_NOTES = [
    "OOO % = the short flow's ooo_packets / packets_delivered x 100 (data segments arriving",
    "  above the next expected byte, per data segment received), mean over seeds.",
    "fair share = 1000/n_long Mbps: the long flows share E7->S15 (the short flow is gone",
    "  after a few ms). The last long flow to finish cannot beat it; flows that finish",
    "  earlier can, so the mean goodput is above it when flows finish unevenly.",
    "goodput = mean over the long flows and seeds of 10 MB x 8 / FCT (handshake included);",
    "  aggregate = all long flows' bytes over the time the last one ended (<= 1 Gbps).",
    "Why rps is slower for the short flow: reordering across paths makes three duplicate",
    "  ACKs, the fast retransmit is spurious (rps runs retransmit without drops) and halves",
    "  the window; with transport.dupack_threshold = 10 rps is faster (docs/studies.md).",
]


def _spraying_tables(runs: pd.DataFrame, verbose: bool) -> tuple[pd.DataFrame, str]:
    summary = spraying_summary(runs)
    wide = spraying_wide(summary)
    shown = pd.DataFrame({"long flows": wide["n_long"]})
    shown["fair share"] = [_num_text(v, 1) for v in wide["fair_share_mbps"]]
    policies = list(summary["policy"].unique())
    for column, title, digits in (
        ("short_fct_ms", "FCT", 3),
        ("short_ooo_pct", "OOO %", 2),
        ("long_goodput_mbps", "goodput", 1),
        ("long_aggregate_mbps", "aggregate", 1),
    ):
        for policy in policies:
            shown[f"{title} {policy}"] = [_num_text(v, digits) for v in wide[f"{policy}_{column}"]]
    seeds = sorted(set(runs["seed"]))
    lines = [
        "Random packet spraying, static scenario (spraying seed, Figs. 2-4)",
        "  k = 4 fat-tree, 1 Gbps, 25 µs links, drop-tail 1000 packets, TCP NewReno;",
        "  n_long 10 MB flows S0..S(n_long-1) -> S15 and one 200 KB flow S0 -> S15, all at t = 0;",
        f"  seeds {_ranges(seeds)} per point (single-path routing depends on the host pair only)",
        "",
        *SPRAYING_EXPECTATIONS,
        "",
        "FCT: the short flow's mean FCT (ms); OOO %: its out-of-order percentage;",
        "goodput: the long flows' mean goodput (Mbps); aggregate: all long flows' bytes over",
        "the time the last of them ended (Mbps); fair share: 1000/(long flows + 1) Mbps.",
        "",
        format_table(shown),
        "",
        "The seed's claims and two sanity checks, against these numbers:",
    ]
    for text, ok in spraying_checks(runs):
        mark = "n/a" if ok is None else ("yes" if ok else "NO")
        lines.append(f"  [{mark:<3}] {text}")
    if verbose:
        lines += ["", "Per run:", format_table(_spraying_run_view(runs))]
    lines += ["", *SPRAYING_NOTES]
    return wide, "\n".join(lines)


def _spraying_run_view(runs: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "policy": runs["policy"],
            "long": runs["n_long"],
            "seed": runs["seed"],
            "short FCT (ms)": [f"{v:.3f}" for v in runs["short_fct_ms"]],
            "short OOO": [
                f"{o}/{d}"
                for o, d in zip(
                    runs["short_ooo_packets"], runs["short_packets_delivered"], strict=True
                )
            ],
            "long goodput (Mbps)": [_num_text(v, 1) for v in runs["long_goodput_mbps"]],
            "long aggregate (Mbps)": [_num_text(v, 1) for v in runs["long_aggregate_mbps"]],
            "drops": runs["drops"],
            "timeouts": runs["short_timeouts"] + runs["long_timeouts"],
            "wall (s)": [f"{v:.2f}" for v in runs["wall_s"]],
        }
    )


def _spraying_plot(runs: pd.DataFrame, summary_wide: pd.DataFrame, path: Path) -> None:
    plt = _pyplot()
    from matplotlib.ticker import MaxNLocator

    summary = spraying_summary(runs)
    fig, axes = plt.subplots(1, 3, figsize=(14, 4.2))
    for policy, points in summary.groupby("policy", sort=False):
        axes[0].plot(points["n_long"], points["short_fct_ms"], marker="o", label=policy)
        axes[1].plot(points["n_long"], points["short_ooo_pct"], marker="o", label=policy)
        with_long = points[points["n_long"] > 0]
        axes[2].plot(with_long["n_long"], with_long["long_goodput_mbps"], marker="o", label=policy)
    with_long = summary_wide[summary_wide["n_long"] > 0]
    axes[2].plot(
        with_long["n_long"],
        with_long["fair_share_mbps"],
        "k--",
        linewidth=1,
        label="fair share 1000/n",
    )
    titles = (
        ("short flow: mean FCT (ms)", "Fig. 2"),
        ("short flow: out-of-order packets (%)", "Fig. 3"),
        ("long flows: mean goodput (Mbps)", "Fig. 4"),
    )
    for ax, (title, figure) in zip(axes, titles, strict=True):
        ax.set_title(f"{title} (seed {figure})", fontsize=10)
        ax.set_xlabel("number of long flows")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
        ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


# --- study 3: the difference of packet latencies (latency-difference seed, §3, Figs. 2-7) --


#: The four schemes of the seed: transport, switch queues and routing.
LATENCY_SCHEMES = ("TCP", "TCP+ELR", "pFabric", "pFabric+ELR")
#: Oversubscription (hosts : ToR : aggregation) -> rate of the ToR-agg and agg-core links
#: in Gbps; host links are 1 Gbps.
LATENCY_OVERSUBSCRIPTIONS: dict[str, int] = {"64:4:1": 1, "32:4:1": 2, "16:4:1": 4}
LATENCY_LOADS = (0.0, 0.1, 0.5, 0.9)
LATENCY_FULL: dict[str, Any] = {
    "loads": list(LATENCY_LOADS),
    "oversubs": list(LATENCY_OVERSUBSCRIPTIONS),
    "seeds": [1, 2, 3, 4, 5],
    "warmup_ms": 50.0,
}
LATENCY_QUICK: dict[str, Any] = {
    "loads": [0.0, 0.1, 0.9],
    "oversubs": ["64:4:1", "16:4:1"],
    "seeds": [1],
    "warmup_ms": 10.0,
}

TEST_PACKETS = 127  # host 0 to each of the other 127 hosts
TEST_PACKET_BYTES = 1500
HOST_DELAY_US = 2.5
LINK_DELAY_US = 0.2
ACK_BYTES = 40
#: The test packets leave host 0 back to back: one every serialization time of a
#: 1500 B packet on its 1 Gbps link.
TEST_INTERVAL_US = TEST_PACKET_BYTES * 8 / 1e3  # 12 µs
#: Drop-tail switch buffer of the TCP schemes: pFabric's TCP-DropTail baseline,
#: 225 KB = 150 packets of 1500 B per port.
DROPTAIL_BUFFER_PKTS = 150
#: pFabric switch (and NIC) buffer: pFabric's 36 KB = 24 packets per port.
PFABRIC_BUFFER_PKTS = 24
#: The buffer-size sensitivity runs: one point, three sizes per queue kind.
LATENCY_BUFFERS: dict[str, Any] = {
    "load": 0.1,
    "oversub": "64:4:1",
    "droptail": [50, DROPTAIL_BUFFER_PKTS, 600],
    "pfabric": [12, PFABRIC_BUFFER_PKTS, 48],
}
#: Switch ports whose queues are traced: the first two upward hops of host 0.
LATENCY_TRACED_PORTS = ["tor0->agg0", "agg0->core0"]


def _hop_us(size: int, rate_gbps: float) -> float:
    """One store-and-forward hop: serialization plus propagation, in µs."""
    return size * 8 / (rate_gbps * 1e3) + LINK_DELAY_US


def latency_closed_form_us(dst: int, oversub: str, elr: bool = False, size: int = 1500) -> float:
    """Zero-load latency (µs) of a ``size``-byte packet from host 0 to host ``dst``.

    2 host delays, two host-link hops, and 0, 2 or 4 upper-tier hops (same ToR,
    same aggregation switch, through the core; always 4 with ELR).
    """
    upper = LATENCY_OVERSUBSCRIPTIONS[oversub]
    if not 1 <= dst < 128:
        raise ValueError(f"dst must be within 1..127, got {dst}")
    upper_hops = 4 if elr or dst >= 64 else (2 if dst >= 16 else 0)
    return 2 * HOST_DELAY_US + 2 * _hop_us(size, 1) + upper_hops * _hop_us(size, upper)


#: pFabric's host parameters, scaled the way its authors chose them (init_cwnd = one
#: bandwidth-delay product, rto about 3 round trips; at 10 Gbps: 12 packets and 45 µs
#: for a 14.7 µs fabric round trip) to this tree's longest round trip: a full packet
#: through the core at 64:4:1 (78.2 µs) plus its 40 B ACK back (8.12 µs) = 86.32 µs.
PFABRIC_RTT_US = latency_closed_form_us(64, "64:4:1") + latency_closed_form_us(
    64, "64:4:1", size=ACK_BYTES
)
_PFABRIC_BDP_PKTS = PFABRIC_RTT_US * 1e3 / (TEST_PACKET_BYTES * 8)  # 7.19 at 1 Gbps
PFABRIC_TRANSPORT: dict[str, Any] = {
    "init_cwnd": round(_PFABRIC_BDP_PKTS),  # 7 (pFabric: 12)
    "max_cwnd": 2 * round(_PFABRIC_BDP_PKTS) - 1,  # 13 (pFabric: 23 = 2 x 12 - 1)
    "rto": f"{round(3 * PFABRIC_RTT_US)}us",  # 259 µs (pFabric: 45 µs)
    "probe_after": 5,  # pFabric's default
}

#: What the seed reports in its text (the rest is in its Figures 2-7, not in numbers),
#: by (scheme, oversubscription, load).
LATENCY_SEED: dict[tuple[str, str, float], str] = {
    ("TCP", "64:4:1", 0.0): "29-78 µs, mean 63.1, std 16.7",
    ("TCP+ELR", "64:4:1", 0.0): "all 78 µs, std 0",
    ("pFabric", "64:4:1", 0.0): "29-78 µs, as TCP",
    ("pFabric+ELR", "64:4:1", 0.0): "all 78 µs",
    ("TCP", "64:4:1", 0.1): "29-829 µs",
    ("TCP+ELR", "64:4:1", 0.1): "83-853 µs, 8 lost",
}
LATENCY_SEED_ZERO_LOAD = (63.1, 16.7)  # mean and std (µs) at 0 % load, 64:4:1, no ELR

LATENCY_EXPECTATIONS = [
    "Seed's findings (Figs. 2-7; numbers in the text only where the table shows them):",
    "  1. TCP: mean and standard deviation of the test packets' latency grow with the",
    "     load and with the oversubscription;",
    "  2. TCP+ELR: equal path lengths do not shrink the spread once there is load;",
    "  3. pFabric: mean and spread far below TCP's, no test packet lost;",
    "  4. pFabric+ELR: the smallest spread of all, a mean slightly above pFabric's.",
]


def _scheme_parts(scheme: str) -> tuple[bool, bool]:
    """(pfabric, elr) of a scheme name."""
    if scheme not in LATENCY_SCHEMES:
        raise ValueError(f"scheme must be one of {', '.join(LATENCY_SCHEMES)}, got {scheme!r}")
    return scheme.startswith("pFabric"), scheme.endswith("+ELR")


def latency_default_buffer(scheme: str) -> int:
    """The switch buffer (packets per port) of a scheme unless one is given."""
    pfabric, _ = _scheme_parts(scheme)
    return PFABRIC_BUFFER_PKTS if pfabric else DROPTAIL_BUFFER_PKTS


def latency_timing_us(warmup_ms: float, buffer_pkts: int) -> tuple[int, int]:
    """(first test packet, stop time) in µs.

    The run stops 2 ms plus five full 1 Gbps switch queues (5 x buffer x 12 µs, the
    switch ports of the longest path) after the last test packet was sent.
    """
    start = round(warmup_ms * 1e3)
    train = round((TEST_PACKETS - 1) * TEST_INTERVAL_US)
    margin = round(5 * buffer_pkts * TEST_INTERVAL_US) + 2000
    return start, start + train + margin


def latency_scenario(
    scheme: str,
    oversub: str,
    load: float,
    seed: int = 1,
    warmup_ms: float = LATENCY_FULL["warmup_ms"],
    buffer_pkts: int | None = None,
) -> Scenario:
    """The seed's tree with all-to-all background load and 127 test packets from host 0.

    1 core, 2 aggregation switches, 8 ToRs, 16 hosts per ToR; 1 Gbps host links, the
    upper tiers at 1, 2 or 4 Gbps (``oversub`` 64:4:1, 32:4:1, 16:4:1); 0.2 µs per
    link, 2.5 µs host delay. Background: every host opens TCP flows (DeTail-style
    sizes) to every other host at ``load`` of its link from time 0 (none at load 0).
    The test: one 1500 B packet from host 0 to each other host, back to back, from
    ``warmup_ms`` on. ``scheme``: ``TCP`` (NewReno, drop-tail), ``pFabric``
    (pFabric transport and queues), either with ``+ELR``.
    """
    pfabric, elr = _scheme_parts(scheme)
    if oversub not in LATENCY_OVERSUBSCRIPTIONS:
        raise ValueError(
            f"oversub must be one of {', '.join(LATENCY_OVERSUBSCRIPTIONS)}, got {oversub!r}"
        )
    if not 0 <= load <= 1:
        raise ValueError(f"load must be within 0..1, got {load}")
    buffer_pkts = latency_default_buffer(scheme) if buffer_pkts is None else buffer_pkts
    start, stop = latency_timing_us(warmup_ms, buffer_pkts)
    upper = {"rate": f"{LATENCY_OVERSUBSCRIPTIONS[oversub]}Gbps"}
    queue = {"kind": "pfabric" if pfabric else "droptail", "capacity": f"{buffer_pkts}pkt"}
    network: dict[str, Any] = {"host_delay": f"{HOST_DELAY_US}us", "queue": queue}
    if pfabric:
        # pFabric's priority queues are on every port, the hosts' NICs too.
        network["nic_queue"] = dict(queue)
        transport: dict[str, Any] = {
            "protocol": "pfabric",
            "priority": "remaining",
            "pfabric": dict(PFABRIC_TRANSPORT),
        }
    else:
        transport = {"protocol": "newreno"}
    traffic: dict[str, Any] = {
        "probes": [
            {
                "src": 0,
                "dst": "all",
                "size": f"{TEST_PACKET_BYTES}B",
                "time": f"{start}us",
                "interval": f"{TEST_INTERVAL_US:g}us",
            }
        ]
    }
    if load > 0:
        traffic["workloads"] = [{"src": "all", "dst": "all", "cdf": "detail", "load": load}]
    return Scenario(
        {
            "name": f"latency-difference {scheme} {oversub} load={load:g}",
            "seed": seed,
            "stop_time": f"{stop}us",
            "topology": {
                "kind": "tree3",
                "cores": 1,
                "aggs": 2,
                "tors": 8,
                "hosts_per_tor": 16,
                "link": {"rate": "1Gbps", "delay": f"{LINK_DELAY_US}us"},
                "tor_agg_link": upper,
                "agg_core_link": dict(upper),
            },
            "network": network,
            "forwarding": {"policy": "elr" if elr else "ecmp"},
            "transport": transport,
            "traffic": traffic,
            "trace": {"queues": list(LATENCY_TRACED_PORTS)},
        }
    )


def _micros(text: str) -> float:
    """Seconds from one of this study's own ``"<n>us"`` strings."""
    if not text.endswith("us"):
        raise ValueError(f"expected a time in us, got {text!r}")
    return float(text[:-2]) * 1e-6


def _time_average(times: np.ndarray, values: np.ndarray, a: float, b: float) -> float:
    """Mean over [a, b) of a step function that is ``values[i]`` from ``times[i]`` on (0 before)."""
    if b <= a:
        return np.nan
    if len(times) == 0:
        return 0.0
    inside = times[(times > a) & (times < b)]
    edges = np.concatenate(([a], inside, [b]))
    at = np.searchsorted(times, edges[:-1], side="right") - 1
    level = np.where(at >= 0, values[np.clip(at, 0, None)], 0.0)
    return float(np.sum(level * np.diff(edges)) / (b - a))


_PORT = r"^([a-z]+)(\d+)->([a-z]+)(\d+)$"


def _drain_bound_s(ports: pd.DataFrame) -> float:
    """An upper bound on any test packet's latency in this run, from its largest queues.

    The zero-load latency through the core at 1 Gbps everywhere, plus, for host 0's
    NIC and for each tier of switch ports (ToR up, agg up, core down, agg down, ToR
    down), the longest wait the run's largest queue of that tier could cause (its
    bytes plus one packet in service, at the port's rate). Exact for FIFO queues; a
    pFabric queue may let later packets of higher priority overtake a test packet.
    """
    kinds = ports["port"].str.extract(_PORT)
    wait = (ports["max_queue_bytes"] + TEST_PACKET_BYTES) * 8 / ports["rate_bps"]
    bound = 2 * HOST_DELAY_US * 1e-6 + 6 * _hop_us(TEST_PACKET_BYTES, 1) * 1e-6
    bound += float(wait[ports["port"] == "host0->tor0"].max())
    for a, b in (("tor", "agg"), ("agg", "core"), ("core", "agg"), ("agg", "tor"), ("tor", "host")):
        tier = wait[(kinds[0] == a) & (kinds[2] == b)]
        bound += float(tier.max()) if len(tier) else 0.0
    return bound


def _reduce_latency(results: Any) -> dict[str, Any]:
    scenario = results.scenario
    start = _micros(scenario.get("traffic.probes")[0]["time"])
    stop = _micros(scenario.get("stop_time"))
    probes = results.probes.sort_values("probe_id")
    latency = probes["latency_s"].to_numpy(dtype=float) * 1e6
    lost = np.isnan(latency)
    bound = _drain_bound_s(results.ports)
    undecided = int((lost & (probes["sent_s"].to_numpy() + bound >= stop)).sum())
    flows = results.flows[results.flows["kind"] == "tcp"]
    begun, ended = flows["start_s"].to_numpy(), flows["end_s"].to_numpy()

    def active(t: float) -> int:
        return int(((begun <= t) & ~(ended <= t)).sum())

    queues = results.traces["queues"]
    early = late = 0.0
    for port in LATENCY_TRACED_PORTS:
        q = queues[queues["port"] == port].sort_values("time_s", kind="stable")
        times, packets = q["time_s"].to_numpy(), q["packets"].to_numpy(dtype=float)
        early += _time_average(times, packets, start / 2, 3 * start / 4)
        late += _time_average(times, packets, 3 * start / 4, start)
    got = latency[~lost]
    switch_ports = ~results.ports["port"].str.startswith("host")
    return {
        "test_packets": len(latency),
        "received": int((~lost).sum()),
        "lost": int(lost.sum()),
        "undecided": undecided,
        "mean_us": float(got.mean()) if len(got) else np.nan,
        "std_us": float(got.std(ddof=0)) if len(got) else np.nan,
        "min_us": float(got.min()) if len(got) else np.nan,
        "max_us": float(got.max()) if len(got) else np.nan,
        "flows_started": int((begun <= start).sum()),
        "flows_active_half": active(start / 2),
        "flows_active_test": active(start),
        "queue_early_pkts": early,
        "queue_late_pkts": late,
        "switch_drops": int(results.ports.loc[switch_ports, "packets_dropped"].sum()),
        "drain_bound_ms": bound * 1e3,
        "sim_time_s": float(results.summary["sim_time_s"]),
        "latencies_us": " ".join("nan" if np.isnan(v) else f"{v:.4f}" for v in latency),
    }


def run_latency_difference(
    quick: bool = False,
    jobs: int | None = None,
    schemes: Iterable[str] = LATENCY_SCHEMES,
    loads: Iterable[float] | None = None,
    oversubs: Iterable[str] | None = None,
    seeds: Iterable[int] | None = None,
    warmup_ms: float | None = None,
    buffers: bool = True,
    progress: Progress | None = None,
) -> pd.DataFrame:
    """One row per run: the 127 test packets' latencies and the state of the network.

    The grid (``role = "grid"``) is every scheme x oversubscription x load x seed with
    the default buffers (``LATENCY_FULL``, or ``LATENCY_QUICK`` with ``quick``);
    with ``buffers`` the buffer-size sensitivity runs (``role = "buffer"``) add the
    other sizes of ``LATENCY_BUFFERS`` at its one point, when that point is in the
    grid. Columns: ``scheme, oversub, upper_gbps, load, seed, role, buffer_pkts,
    warmup_ms, stop_ms, test_packets, received, lost, undecided, mean_us, std_us,
    min_us, max_us, flows_started, flows_active_half, flows_active_test,
    queue_early_pkts, queue_late_pkts, switch_drops, drain_bound_ms, sim_time_s,
    latencies_us, wall_s`` (``latencies_us``: the 127 latencies in packet order,
    ``nan`` = lost; ``latency_packets`` expands them).
    """
    plan = LATENCY_QUICK if quick else LATENCY_FULL
    schemes = list(schemes)
    for scheme in schemes:
        _scheme_parts(scheme)
    loads = [float(v) for v in (plan["loads"] if loads is None else loads)]
    oversubs = list(plan["oversubs"] if oversubs is None else oversubs)
    seeds = list(plan["seeds"] if seeds is None else seeds)
    warmup_ms = float(plan["warmup_ms"] if warmup_ms is None else warmup_ms)
    points = [
        (scheme, oversub, load, seed, "grid", latency_default_buffer(scheme))
        for scheme in schemes
        for oversub in oversubs
        for load in loads
        for seed in seeds
    ]
    at = (LATENCY_BUFFERS["oversub"], LATENCY_BUFFERS["load"])
    if buffers and at[0] in oversubs and at[1] in loads:
        for scheme in schemes:
            sizes = LATENCY_BUFFERS["pfabric" if scheme.startswith("pFabric") else "droptail"]
            for size in sizes:
                if size != latency_default_buffer(scheme):
                    points += [(scheme, *at, seed, "buffer", size) for seed in seeds]
    # Busiest runs first (high load, slow upper tiers, deep buffers), so the pool ends evenly.
    order = sorted(
        range(len(points)),
        key=lambda i: (
            -points[i][2] * (1 + points[i][5] / 100) / LATENCY_OVERSUBSCRIPTIONS[points[i][1]]
        ),
    )
    tasks = [
        (
            _reduce_latency,
            latency_scenario(
                points[i][0], points[i][1], points[i][2], points[i][3], warmup_ms, points[i][5]
            ),
        )
        for i in order
    ]
    answers = run_scenarios(tasks, jobs=jobs, progress=progress)
    rows: list[dict[str, Any]] = [{}] * len(points)
    for i, answer in zip(order, answers, strict=True):
        scheme, oversub, load, seed, role, size = points[i]
        start, stop = latency_timing_us(warmup_ms, size)
        rows[i] = {
            "scheme": scheme,
            "oversub": oversub,
            "upper_gbps": LATENCY_OVERSUBSCRIPTIONS[oversub],
            "load": load,
            "seed": seed,
            "role": role,
            "buffer_pkts": size,
            "warmup_ms": start / 1e3,
            "stop_ms": stop / 1e3,
            **answer,
        }
    return pd.DataFrame(rows)


def latency_packets(runs: pd.DataFrame) -> pd.DataFrame:
    """One row per test packet of every run: the run's keys, ``packet`` (0..126, to
    host packet + 1) and ``latency_us`` (NaN = lost)."""
    keys = ["scheme", "oversub", "load", "seed", "role", "buffer_pkts"]
    frames = []
    for _, run_row in runs.iterrows():
        values = np.array(str(run_row["latencies_us"]).split(), dtype=float)
        frame = pd.DataFrame({"packet": np.arange(len(values)), "latency_us": values})
        for key in reversed(keys):
            frame.insert(0, key, run_row[key])
        frames.append(frame)
    if not frames:
        return pd.DataFrame(columns=[*keys, "packet", "latency_us"])
    return pd.concat(frames, ignore_index=True)


#: Two-sided 95 % quantiles of Student's t for 1..30 degrees of freedom.
_T95 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
)  # fmt: skip


def t95_half_width(values: Iterable[float]) -> float:
    """Half-width of the 95 % confidence interval of the mean of ``values`` (Student t;
    NaN for fewer than two values; 1.96 beyond 30 degrees of freedom)."""
    x = np.asarray([v for v in values if not pd.isna(v)], dtype=float)
    if len(x) < 2:
        return np.nan
    t = _T95[len(x) - 2] if len(x) - 1 <= len(_T95) else 1.96
    return float(t * x.std(ddof=1) / np.sqrt(len(x)))


def latency_summary(runs: pd.DataFrame) -> pd.DataFrame:
    """Per (scheme, oversubscription, load) of the grid runs: means over the seeds.

    ``mean_us`` and ``std_us`` are the means over the seeds of each run's mean and
    (population) standard deviation of its received test packets' latencies, with the
    half-widths ``mean_ci_us`` and ``std_ci_us`` of their 95 % Student-t confidence
    intervals; ``min_us`` and ``max_us`` over all runs; ``lost_mean`` lost test
    packets per run, ``lost_total`` and ``undecided_total`` over the runs;
    ``zero_load_mean_us`` the closed-form mean at 0 % load; the steady-state
    columns ``flows_active_half``, ``flows_active_test``, ``queue_early_pkts``,
    ``queue_late_pkts`` (means over seeds); ``seed`` the seed's numbers, if any.
    """
    grid = runs[runs["role"] == "grid"]
    rows = []
    for (scheme, oversub, load), group in grid.groupby(["scheme", "oversub", "load"], sort=False):
        _, elr = _scheme_parts(str(scheme))
        zero = np.mean([latency_closed_form_us(d, str(oversub), elr) for d in range(1, 128)])
        rows.append(
            {
                "scheme": scheme,
                "oversub": oversub,
                "load": load,
                "runs": len(group),
                "mean_us": group["mean_us"].mean(),
                "mean_ci_us": t95_half_width(group["mean_us"]),
                "std_us": group["std_us"].mean(),
                "std_ci_us": t95_half_width(group["std_us"]),
                "min_us": group["min_us"].min(),
                "max_us": group["max_us"].max(),
                "lost_mean": group["lost"].mean(),
                "lost_total": int(group["lost"].sum()),
                "undecided_total": int(group["undecided"].sum()),
                "zero_load_mean_us": zero,
                "flows_active_half": group["flows_active_half"].mean(),
                "flows_active_test": group["flows_active_test"].mean(),
                "queue_early_pkts": group["queue_early_pkts"].mean(),
                "queue_late_pkts": group["queue_late_pkts"].mean(),
                "seed": LATENCY_SEED.get((str(scheme), str(oversub), float(load)), ""),
            }
        )
    return pd.DataFrame(rows)


def latency_buffer_table(runs: pd.DataFrame) -> pd.DataFrame:
    """The buffer-size sensitivity point: per (scheme, buffer) the means over seeds of
    the runs' mean and std, the largest latency and lost test packets per run."""
    oversub, load = LATENCY_BUFFERS["oversub"], LATENCY_BUFFERS["load"]
    point = runs[(runs["oversub"] == oversub) & (runs["load"] == load)]
    if not (point["role"] == "buffer").any():
        return pd.DataFrame(
            columns=[
                *("scheme", "buffer_pkts", "default", "runs", "mean_us", "std_us", "max_us"),
                *("lost_mean", "switch_drops"),
            ]
        )
    table = (
        point.groupby(["scheme", "buffer_pkts"], sort=False)
        .agg(
            runs=("seed", "count"),
            mean_us=("mean_us", "mean"),
            std_us=("std_us", "mean"),
            max_us=("max_us", "max"),
            lost_mean=("lost", "mean"),
            switch_drops=("switch_drops", "mean"),
        )
        .reset_index()
    )
    table.insert(
        2,
        "default",
        [
            latency_default_buffer(s) == b
            for s, b in zip(table["scheme"], table["buffer_pkts"], strict=True)
        ],
    )
    order = {s: i for i, s in enumerate(LATENCY_SCHEMES)}
    return table.sort_values(
        ["scheme", "buffer_pkts"], key=lambda c: c.map(order) if c.name == "scheme" else c
    ).reset_index(drop=True)


def latency_checks(runs: pd.DataFrame) -> list[tuple[str, bool | None]]:
    """The closed forms at 0 % load and the seed's four claims, each with whether the
    grid runs agree (``None``: the runs lack what the check needs)."""
    summary = latency_summary(runs)
    checks: list[tuple[str, bool | None]] = []
    grid = runs[runs["role"] == "grid"]
    packets = latency_packets(grid[grid["load"] == 0])
    if len(packets):
        exact = []
        for (scheme, oversub), group in packets.groupby(["scheme", "oversub"], sort=False):
            _, elr = _scheme_parts(str(scheme))
            expected = np.array(
                [latency_closed_form_us(p + 1, str(oversub), elr) for p in group["packet"]]
            )
            exact.append(bool(np.all(np.abs(group["latency_us"].to_numpy() - expected) < 1e-3)))
        checks.append(
            (
                "0 % load: every test packet at its closed-form latency (no ELR: 29.4, 53.8, "
                "78.2 µs at 64:4:1; ELR: 78.2 µs for all)",
                all(exact),
            )
        )
    zero = summary[(summary["load"] == 0) & (summary["oversub"] == "64:4:1")].set_index("scheme")
    plain = [s for s in ("TCP", "pFabric") if s in zero.index]
    if plain:
        seed_mean, seed_std = LATENCY_SEED_ZERO_LOAD
        means = [zero.loc[s, "mean_us"] for s in plain]
        stds = [zero.loc[s, "std_us"] for s in plain]
        checks.append(
            (
                f"seed: 0 % load, 64:4:1, no ELR: mean {seed_mean} µs (+-0.2), std {seed_std} µs "
                f"(+-0.2) (dcnsim: mean {means[0]:.2f}, std {stds[0]:.2f} µs)",
                all(abs(m - seed_mean) <= 0.2 for m in means)
                and all(abs(s - seed_std) <= 0.2 for s in stds),
            )
        )
    elr = [s for s in ("TCP+ELR", "pFabric+ELR") if s in zero.index]
    if elr:
        checks.append(
            (
                "seed: 0 % load, 64:4:1, ELR: every test packet 78.2 µs, std 0",
                all(
                    abs(zero.loc[s, "min_us"] - 78.2) < 1e-3
                    and abs(zero.loc[s, "max_us"] - 78.2) < 1e-3
                    for s in elr
                ),
            )
        )
    checks += [_claim_tcp_grows(summary), _claim_elr_spread(summary)]
    checks += [_claim_pfabric_below(summary, grid), _claim_pfabric_elr(summary)]
    return checks


def _by_point(summary: pd.DataFrame, scheme: str) -> pd.DataFrame:
    return summary[summary["scheme"] == scheme].set_index(["oversub", "load"])


def _loaded_points(summary: pd.DataFrame, *schemes: str) -> list[tuple[str, float]]:
    """(oversub, load > 0) points that every one of ``schemes`` has."""
    sets = [set(_by_point(summary, s).index) for s in schemes]
    common = set.intersection(*sets) if sets else set()
    order = {o: i for i, o in enumerate(LATENCY_OVERSUBSCRIPTIONS)}
    return sorted(((o, ld) for o, ld in common if ld > 0), key=lambda p: (order[p[0]], p[1]))


def _point_text(point: tuple[str, float]) -> str:
    return f"{point[0]} {point[1]:.0%}"


def _claim_tcp_grows(summary: pd.DataFrame) -> tuple[str, bool | None]:
    tcp = _by_point(summary, "TCP")
    oversubs = [o for o in LATENCY_OVERSUBSCRIPTIONS if o in set(tcp.index.get_level_values(0))]
    loads = sorted(set(tcp.index.get_level_values(1)))
    steps: list[bool] = []
    parts = []
    for oversub in oversubs:
        row = [ld for ld in loads if (oversub, ld) in tcp.index]
        m = [tcp.loc[(oversub, ld), "mean_us"] for ld in row]
        s = [tcp.loc[(oversub, ld), "std_us"] for ld in row]
        steps += [b > a for a, b in itertools.pairwise(m)]
        steps += [b > a for a, b in itertools.pairwise(s)]
        means, stds = "/".join(f"{v:.0f}" for v in m), "/".join(f"{v:.0f}" for v in s)
        parts.append(f"{oversub}: mean {means}, std {stds}")
    for load in [ld for ld in loads if ld > 0]:
        col = [o for o in oversubs if (o, load) in tcp.index]  # most oversubscribed first
        for key in ("mean_us", "std_us"):
            v = [tcp.loc[(o, load), key] for o in col]
            steps += [a > b for a, b in itertools.pairwise(v)]
    text = (
        "seed: TCP's mean and std grow with load (each step up, loads "
        + "/".join(f"{ld:.0%}" for ld in loads)
        + ") and with oversubscription (at each load > 0); µs: "
        + "; ".join(parts)
    )
    return text, (all(steps) if steps else None)


def _claim_elr_spread(summary: pd.DataFrame) -> tuple[str, bool | None]:
    points = _loaded_points(summary, "TCP", "TCP+ELR")
    tcp, elr = _by_point(summary, "TCP"), _by_point(summary, "TCP+ELR")
    ratios = [elr.loc[p, "std_us"] / tcp.loc[p, "std_us"] for p in points]
    text = (
        "seed: ELR does not shrink TCP's spread under load (TCP+ELR std >= 3/4 of TCP's at "
        "every load > 0); TCP+ELR/TCP std: "
        + (
            ", ".join(f"{_point_text(p)} {r:.2f}" for p, r in zip(points, ratios, strict=True))
            or "-"
        )
    )
    return text, (all(r >= 0.75 for r in ratios) if ratios else None)


def _claim_pfabric_below(summary: pd.DataFrame, grid: pd.DataFrame) -> tuple[str, bool | None]:
    points = _loaded_points(summary, "TCP", "pFabric")
    tcp, pf = _by_point(summary, "TCP"), _by_point(summary, "pFabric")
    mean_r = [pf.loc[p, "mean_us"] / tcp.loc[p, "mean_us"] for p in points]
    std_r = [pf.loc[p, "std_us"] / tcp.loc[p, "std_us"] for p in points]
    lost = int(grid.loc[grid["scheme"] == "pFabric", "lost"].sum())
    text = (
        "seed: pFabric's mean and std far below TCP's (at most half at every load > 0) and "
        "no test packet lost; pFabric/TCP mean: "
        + (
            ", ".join(f"{_point_text(p)} {r:.2f}" for p, r in zip(points, mean_r, strict=True))
            or "-"
        )
        + "; std: "
        + (", ".join(f"{r:.2f}" for r in std_r) or "-")
        + f"; pFabric test packets lost: {lost}"
    )
    if not points:
        return text, None
    return text, all(r <= 0.5 for r in mean_r + std_r) and lost == 0


def _claim_pfabric_elr(summary: pd.DataFrame) -> tuple[str, bool | None]:
    points = _loaded_points(summary, *LATENCY_SCHEMES)
    if not points:
        return (
            "seed: pFabric+ELR has the smallest std and a mean slightly above pFabric's: "
            "needs all four schemes",
            None,
        )
    by = {s: _by_point(summary, s) for s in LATENCY_SCHEMES}
    ok = True
    parts = []
    for p in points:
        std = {s: by[s].loc[p, "std_us"] for s in LATENCY_SCHEMES}
        mine, base = by["pFabric+ELR"].loc[p, "mean_us"], by["pFabric"].loc[p, "mean_us"]
        smallest = std["pFabric+ELR"] <= min(v for s, v in std.items() if s != "pFabric+ELR")
        slightly = base < mine <= 1.5 * base
        ok = ok and smallest and slightly
        parts.append(
            f"{_point_text(p)} std {std['pFabric+ELR']:.1f} vs pFabric {std['pFabric']:.1f}, "
            f"mean {mine:.1f} vs {base:.1f}"
        )
    return (
        "seed: pFabric+ELR has the smallest std of the four schemes and a mean above "
        "pFabric's by at most 50 % (at every load > 0); µs: " + "; ".join(parts),
        ok,
    )


def latency_offered(load: float, oversub: str, elr: bool = False) -> dict[str, float]:
    """Offered background load / capacity of a ToR uplink and an agg->core link.

    All-to-all at ``load`` of each 1 Gbps host link: a ToR's 16 hosts send 112/127
    of their traffic up (all of it with ELR), an aggregation switch's 64 hosts send
    64/127 through the core (all of it with ELR).
    """
    upper = LATENCY_OVERSUBSCRIPTIONS[oversub]
    up = 16 * load * (1 if elr else 112 / 127)
    core = 64 * load * (1 if elr else 64 / 127)
    return {"tor_agg": up / upper, "agg_core": core / upper}


def latency_notes(runs: pd.DataFrame) -> list[str]:
    """How to read the table, with the numbers of these runs."""
    grid = runs[runs["role"] == "grid"]
    loaded = grid[grid["load"] > 0]
    warm = float(runs["warmup_ms"].iloc[0]) if len(runs) else np.nan
    lines = [
        f"Test: 127 packets of 1500 B from host 0 to hosts 1..127, back to back (one per "
        f"{TEST_INTERVAL_US:g} µs), from t = {warm:g} ms",
        "  (the warm-up); latency = probes' latency_s (host delays included), lost = never",
        "  received; std = population standard deviation over the received packets of a run;",
        "  mean/std columns = means over seeds, +-95% = Student-t half-width over seeds.",
        "Overload: offered background / capacity of an agg->core link, without (with) ELR:",
        "  "
        + ", ".join(
            f"{o} {ld:.0%}: {latency_offered(ld, o)['agg_core']:.2f} "
            f"({latency_offered(ld, o, elr=True)['agg_core']:.2f})"
            for o in LATENCY_OVERSUBSCRIPTIONS
            for ld in (0.1, 0.9)
        )
        + ".",
        "  Every loaded point but 10 % at 16:4:1 without ELR offers more than the core carries,",
        "  so the number of unfinished background flows grows for the whole run: there is no",
        "  steady state of the flow count, only of the queues (TCP keeps the bottlenecks full).",
    ]
    if len(loaded):
        half, test = loaded["flows_active_half"].sum(), loaded["flows_active_test"].sum()
        early, late = loaded["queue_early_pkts"].mean(), loaded["queue_late_pkts"].mean()
        lines += [
            "  Here: flows in progress at the test / at half the warm-up (W): "
            f"{test / max(half, 1):.2f} (all loaded runs); queue of",
            f"  {' + '.join(LATENCY_TRACED_PORTS)}, mean over [W/2, 3W/4) vs [3W/4, W): "
            f"{early:.1f} vs {late:.1f} packets (mean over loaded runs).",
        ]
    undecided = int(runs["undecided"].sum()) if len(runs) else 0
    lines += [
        f"Lost vs still in flight: each run lasts 2 ms + 5 full switch queues after the last test"
        f" packet; {undecided} lost test packet(s)",
        "  could still have been in flight by the run's own queue bound (drain_bound_ms).",
        f"TCP: NewReno, drop-tail {DROPTAIL_BUFFER_PKTS} packets (225 KB, pFabric's TCP-DropTail"
        " buffer) per switch port, dcnsim's transport defaults.",
        f"pFabric: pFabric queues of {PFABRIC_BUFFER_PKTS} packets (36 KB) on every port, "
        f"init_cwnd {PFABRIC_TRANSPORT['init_cwnd']}, max_cwnd {PFABRIC_TRANSPORT['max_cwnd']}, "
        f"rto {PFABRIC_TRANSPORT['rto']},",
        f"  probe_after {PFABRIC_TRANSPORT['probe_after']}: pFabric's rules (BDP, 3 RTTs) at this "
        f"tree's round trip of {PFABRIC_RTT_US:.2f} µs (docs/studies.md).",
    ]
    return lines


def _latency_tables(runs: pd.DataFrame, verbose: bool) -> tuple[pd.DataFrame, str]:
    summary = latency_summary(runs)
    shown = pd.DataFrame(
        {
            "scheme": summary["scheme"],
            "oversub": summary["oversub"],
            "load": [f"{v:.0%}" for v in summary["load"]],
            "mean (µs)": [_num_text(v, 1) for v in summary["mean_us"]],
            "+-95%": [_num_text(v, 1) for v in summary["mean_ci_us"]],
            "std (µs)": [_num_text(v, 1) for v in summary["std_us"]],
            "+-95% ": [_num_text(v, 1) for v in summary["std_ci_us"]],
            "min": [_num_text(v, 1) for v in summary["min_us"]],
            "max": [_num_text(v, 1) for v in summary["max_us"]],
            "lost/run": [_num_text(v, 1) for v in summary["lost_mean"]],
            "seed": summary["seed"],
        }
    )
    seeds = sorted(set(runs["seed"])) if len(runs) else []
    lines = [
        "Difference of packet latencies (latency-difference seed, §3, Figs. 2-7)",
        "  3-tier tree: 1 core, 2 agg, 8 ToR, 128 hosts; 1 Gbps host links, upper tiers",
        "  1/2/4 Gbps (64:4:1, 32:4:1, 16:4:1); 0.2 µs links, 2.5 µs host delay, 1500 B packets;",
        "  background: every host to every other host, DeTail-style flow sizes, at the load;",
        f"  seeds {_ranges(seeds)} per point",
        "",
        *LATENCY_EXPECTATIONS,
        "",
        format_table(shown),
        "",
        "Closed forms and the seed's claims, against these numbers:",
    ]
    for text, ok in latency_checks(runs):
        mark = "n/a" if ok is None else ("yes" if ok else "NO")
        lines.append(f"  [{mark:<3}] {text}")
    buffers = latency_buffer_table(runs)
    if len(buffers):
        lines += [
            "",
            f"Buffer size (packets per switch port) at {LATENCY_BUFFERS['oversub']}, "
            f"{LATENCY_BUFFERS['load']:.0%} load (* = the study's default):",
            format_table(
                pd.DataFrame(
                    {
                        "scheme": buffers["scheme"],
                        "buffer": [
                            f"{b}{'*' if d else ''}"
                            for b, d in zip(buffers["buffer_pkts"], buffers["default"], strict=True)
                        ],
                        "mean (µs)": [_num_text(v, 1) for v in buffers["mean_us"]],
                        "std (µs)": [_num_text(v, 1) for v in buffers["std_us"]],
                        "max (µs)": [_num_text(v, 1) for v in buffers["max_us"]],
                        "lost/run": [_num_text(v, 1) for v in buffers["lost_mean"]],
                        "switch drops/run": [_num_text(v, 0) for v in buffers["switch_drops"]],
                    }
                )
            ),
        ]
    if verbose:
        lines += ["", "Per run:", format_table(_latency_run_view(runs))]
    lines += ["", *latency_notes(runs)]
    return summary, "\n".join(lines)


def _latency_run_view(runs: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "scheme": runs["scheme"],
            "oversub": runs["oversub"],
            "load": [f"{v:.0%}" for v in runs["load"]],
            "seed": runs["seed"],
            "buffer": runs["buffer_pkts"],
            "mean (µs)": [_num_text(v, 1) for v in runs["mean_us"]],
            "std (µs)": [_num_text(v, 1) for v in runs["std_us"]],
            "min": [_num_text(v, 1) for v in runs["min_us"]],
            "max": [_num_text(v, 1) for v in runs["max_us"]],
            "lost": runs["lost"],
            "flows W/2": runs["flows_active_half"],
            "flows W": runs["flows_active_test"],
            "queue early": [_num_text(v, 1) for v in runs["queue_early_pkts"]],
            "queue late": [_num_text(v, 1) for v in runs["queue_late_pkts"]],
            "wall (s)": [f"{v:.2f}" for v in runs["wall_s"]],
        }
    )


def _latency_plot(runs: pd.DataFrame, summary: pd.DataFrame, path: Path) -> None:
    """The seed's Figures 6 and 7: mean and std against load, a panel per oversubscription."""
    plt = _pyplot()
    oversubs = [o for o in LATENCY_OVERSUBSCRIPTIONS if o in set(summary["oversub"])]
    fig, axes = plt.subplots(
        2, max(len(oversubs), 1), figsize=(4.6 * max(len(oversubs), 1), 7.5), squeeze=False
    )
    for j, oversub in enumerate(oversubs):
        for scheme in LATENCY_SCHEMES:
            points = summary[(summary["scheme"] == scheme) & (summary["oversub"] == oversub)]
            if not len(points):
                continue
            points = points.sort_values("load")
            x = points["load"] * 100
            for i, (value, ci) in enumerate((("mean_us", "mean_ci_us"), ("std_us", "std_ci_us"))):
                axes[i][j].errorbar(
                    x, points[value], yerr=points[ci].fillna(0), marker="o", capsize=3, label=scheme
                )
        for i, what in enumerate(
            ("mean latency (µs), seed Fig. 6", "std of latency (µs), seed Fig. 7")
        ):
            ax = axes[i][j]
            ax.set_title(f"{oversub}: {what}", fontsize=10)
            ax.set_xlabel("background load (%)")
            ax.set_ylim(bottom=0)
            ax.grid(True, alpha=0.3)
            ax.legend(fontsize=8)
    fig.suptitle("95 % Student-t intervals over seeds", fontsize=9)
    fig.tight_layout(rect=(0, 0, 1, 0.97))
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _latency_packets_plot(runs: pd.DataFrame, path: Path) -> None:
    """The seed's Figures 2-5: each test packet's latency against its index, one row per
    scheme, one panel per oversubscription, one line per load (the first seed's run)."""
    plt = _pyplot()
    grid = runs[runs["role"] == "grid"]
    grid = grid[grid["seed"] == grid["seed"].min()] if len(grid) else grid
    schemes = [s for s in LATENCY_SCHEMES if s in set(grid["scheme"])]
    oversubs = [o for o in LATENCY_OVERSUBSCRIPTIONS if o in set(grid["oversub"])]
    rows, cols = max(len(schemes), 1), max(len(oversubs), 1)
    fig, axes = plt.subplots(rows, cols, figsize=(4.6 * cols, 3.4 * rows), squeeze=False)
    figure = {"TCP": 2, "TCP+ELR": 3, "pFabric": 4, "pFabric+ELR": 5}
    packets = latency_packets(grid)
    for i, scheme in enumerate(schemes):
        for j, oversub in enumerate(oversubs):
            ax = axes[i][j]
            mine = packets[(packets["scheme"] == scheme) & (packets["oversub"] == oversub)]
            top = mine["latency_us"].max() if mine["latency_us"].notna().any() else 1.0
            for load, one in mine.groupby("load", sort=True):
                (line,) = ax.plot(
                    one["packet"], one["latency_us"], linewidth=0.9, label=f"{load:.0%}"
                )
                lost = one[one["latency_us"].isna()]
                if len(lost):
                    ax.scatter(
                        lost["packet"],
                        np.full(len(lost), top * 1.05),
                        marker="x",
                        s=14,
                        color=line.get_color(),
                    )
            ax.set_title(f"{scheme}, {oversub} (seed Fig. {figure[scheme]})", fontsize=10)
            ax.set_xlabel("test packet (to host packet + 1)")
            ax.set_ylabel("latency (µs)")
            ax.set_ylim(bottom=0)
            ax.grid(True, alpha=0.3)
            ax.legend(title="load", fontsize=7, title_fontsize=7)
    fig.suptitle("x at the top = a lost test packet", fontsize=9)
    fig.tight_layout(rect=(0, 0, 1, 0.97))
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _latency_extras(runs: pd.DataFrame, summary: pd.DataFrame, out: Path) -> list[Path]:
    written = [out / "packets.png", out / "buffers.csv"]
    _latency_packets_plot(runs, written[0])
    latency_buffer_table(runs).to_csv(written[1], index=False)
    return written


# --- the registry used by the CLI ---------------------------------------------------------


@dataclass(frozen=True)
class StudyOutput:
    """What a study hands back: the printed text, the main table and the raw rows."""

    text: str
    table: pd.DataFrame
    detail: pd.DataFrame
    plot: Callable[[Path], None]
    #: Writes a study's further files into a directory and returns their paths.
    extras: Callable[[Path], list[Path]] | None = None


@dataclass(frozen=True)
class Study:
    name: str
    title: str
    runs: Callable[..., pd.DataFrame]
    tables: Callable[[pd.DataFrame, bool], tuple[pd.DataFrame, str]]
    plot: Callable[[pd.DataFrame, pd.DataFrame, Path], None]
    #: Further files beside study.csv, runs.csv and study.png: (detail, table, dir) -> paths.
    extras: Callable[[pd.DataFrame, pd.DataFrame, Path], list[Path]] | None = None


STUDIES: dict[str, Study] = {
    "incast": Study(
        "incast",
        "Packet Slicing seed §II.C, Fig. 6(b): max workers without incast collapse, by packet size",
        run_incast,
        _incast_tables,
        _incast_plot,
    ),
    "spraying": Study(
        "spraying",
        "random packet spraying seed, static scenario (Figs. 2-4): rps vs single-path TCP",
        run_spraying,
        _spraying_tables,
        _spraying_plot,
    ),
    "latency-difference": Study(
        "latency-difference",
        "latency-difference seed §3, Figs. 2-7: test-packet latency in a 3-tier tree, "
        "TCP/pFabric with and without ELR",
        run_latency_difference,
        _latency_tables,
        _latency_plot,
        _latency_extras,
    ),
    "pfabric": Study("pfabric", PFABRIC_TITLE, run_pfabric, pfabric_tables, pfabric_plot),
}


def run_study(
    name: str,
    quick: bool = False,
    jobs: int | None = None,
    verbose: bool = False,
    progress: Progress | None = None,
) -> StudyOutput:
    """Run the study ``name`` (a key of ``STUDIES``) and format its tables."""
    study = STUDIES[name]
    detail = study.runs(quick=quick, jobs=jobs, progress=progress)
    table, text = study.tables(detail, verbose)
    extras = study.extras
    return StudyOutput(
        text,
        table,
        detail,
        lambda path: study.plot(detail, table, path),
        None if extras is None else (lambda out: extras(detail, table, out)),
    )


def write_study(output: StudyOutput, out_dir: str | os.PathLike[str]) -> list[Path]:
    """Write ``study.csv`` (the main table), ``runs.csv`` (every run) and ``study.png``,
    then the study's further files, if any (``latency-difference``: ``packets.png``
    and ``buffers.csv``)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = [out / "study.csv", out / "runs.csv", out / "study.png"]
    output.table.to_csv(written[0], index=False)
    output.detail.to_csv(written[1], index=False)
    output.plot(written[2])
    if output.extras is not None:
        written += output.extras(out)
    return written


# --- formatting ---------------------------------------------------------------------------


def format_table(table: pd.DataFrame) -> str:
    """A plain-text table: a header row, a rule, one line per row; numbers to the right."""
    columns = [str(c) for c in table.columns]
    cells = [[_cell(v) for v in row] for row in table.itertuples(index=False)]
    numeric = [
        all(_looks_numeric(row[j]) for row in cells) and len(cells) > 0 for j in range(len(columns))
    ]
    widths = [max([len(c), *(len(row[j]) for row in cells)]) for j, c in enumerate(columns)]

    def line(values: Sequence[str]) -> str:
        parts = [
            v.rjust(w) if num else v.ljust(w)
            for v, w, num in zip(values, widths, numeric, strict=True)
        ]
        return "  ".join(parts).rstrip()

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(columns), rule, *(line(row) for row in cells)])


def _cell(value: Any) -> str:
    if isinstance(value, float | np.floating):
        return "-" if np.isnan(value) else f"{value:g}"
    return str(value)


def _looks_numeric(text: str) -> bool:
    if text in ("-", ""):
        return True
    try:
        float(text.lstrip("<>=≥ ").removesuffix("%"))
    except ValueError:
        return False
    return True


def _num_text(value: Any, digits: int) -> str:
    return "-" if value is None or pd.isna(value) else f"{float(value):.{digits}f}"


def _int_text(value: Any) -> str:
    return "-" if value is None or pd.isna(value) else str(int(value))


def _bound_text(bound: str, value: Any, first_collapse: Any) -> str:
    if bound == "<":
        return f"< {_int_text(first_collapse)}"
    if bound == ">=":
        return f">= {_int_text(value)}"
    return _int_text(value)


def _ranges(values: Sequence[int]) -> str:
    if values and list(values) == list(range(values[0], values[-1] + 1)) and len(values) > 2:
        return f"{values[0]}..{values[-1]}"
    return ", ".join(map(str, values))


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt
