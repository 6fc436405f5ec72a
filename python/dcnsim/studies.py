"""Seed experiments, one command each: the seed's numbers beside dcnsim's.

A *study* builds the scenarios of one experiment of a seed paper, runs them (in
parallel worker processes), reduces each run to a few numbers and prints a table
with the seed's reported results next to dcnsim's::

    dcnsim study incast [--quick] [--jobs N] [--out DIR] [--verbose]
    dcnsim study spraying [--quick] ...

The same is available from Python: ``run_incast`` / ``incast_summary`` and
``run_spraying`` / ``spraying_summary`` return pandas DataFrames. The scenarios,
the definitions of every column and the interpretation notes are in
``docs/studies.md``. Nothing here tunes the simulator towards the seed's numbers:
where dcnsim disagrees, the table says so.
"""

from __future__ import annotations

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
    "STUDIES",
    "Study",
    "StudyOutput",
    "format_table",
    "incast_scenario",
    "incast_summary",
    "run_incast",
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


# --- the registry used by the CLI ---------------------------------------------------------


@dataclass(frozen=True)
class StudyOutput:
    """What a study hands back: the printed text, the main table and the raw rows."""

    text: str
    table: pd.DataFrame
    detail: pd.DataFrame
    plot: Callable[[Path], None]


@dataclass(frozen=True)
class Study:
    name: str
    title: str
    runs: Callable[..., pd.DataFrame]
    tables: Callable[[pd.DataFrame, bool], tuple[pd.DataFrame, str]]
    plot: Callable[[pd.DataFrame, pd.DataFrame, Path], None]


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
    return StudyOutput(text, table, detail, lambda path: study.plot(detail, table, path))


def write_study(output: StudyOutput, out_dir: str | os.PathLike[str]) -> list[Path]:
    """Write ``study.csv`` (the main table), ``runs.csv`` (every run) and ``study.png``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = [out / "study.csv", out / "runs.csv", out / "study.png"]
    output.table.to_csv(written[0], index=False)
    output.detail.to_csv(written[1], index=False)
    output.plot(written[2])
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
