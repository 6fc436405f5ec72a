"""Running the BOTCP study and reducing each run to the numbers of the seed's figures
(the claims against them: ``claims``).

A run is one row: ``experiment`` (``load``: Figs. 6, 7 and 11; ``bandwidth``: Fig. 8;
``extreme``: Figs. 9 and 10), ``scheme``, ``load`` (NaN but for ``load``), ``seed``,
then the experiment's numbers. The time series a figure draws (throughput per flow,
the bottleneck's queue, the completion times) are lists in their cells.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial
from typing import Any

import numpy as np
import pandas as pd

from dcnsim.studies.botcp.scenarios import (
    BOTCP_FULL,
    BOTCP_QUICK,
    BOTTLENECK,
    BURST_GAP_US,
    HOST_RATE_BPS,
    IW_VARIANT,
    LONG_SENDERS,
    SCHEMES,
    bandwidth_scenario,
    extreme_scenario,
    load_scenario,
)
from dcnsim.studies.runner import Progress, run_scenarios

__all__ = [
    "EXPERIMENTS",
    "LONG_FLOW_BYTES",
    "run_botcp",
    "summary",
]

#: §4.3: short flows are 1-100 KB, long flows ≥ 100 KB.
LONG_FLOW_BYTES = 100_000
#: Fig. 8's throughput bins.
BIN_S = 25e-6
#: Fig. 9's queue is shown as the largest occupancy in each bin.
QUEUE_BIN_S = 5e-6


def _fct_stats(flows: pd.DataFrame, prefix: str) -> dict[str, Any]:
    done = flows[flows["fct_s"].notna()]["fct_s"].to_numpy(dtype=float)
    return {
        f"{prefix}_n": len(done),
        f"{prefix}_unfinished": int(flows["fct_s"].isna().sum()),
        f"{prefix}_mean_s": float(done.mean()) if len(done) else np.nan,
        f"{prefix}_p99_s": float(np.percentile(done, 99)) if len(done) else np.nan,
    }


def _reduce_load(results: Any, warmup_s: float, arrivals_s: float) -> dict[str, Any]:
    flows = results.flows
    tcp = flows[flows["kind"] == "tcp"]
    counted = tcp[(tcp["start_s"] >= warmup_s) & (tcp["start_s"] < arrivals_s)]
    short = counted[counted["size_bytes"] < LONG_FLOW_BYTES]
    long_ = counted[counted["size_bytes"] >= LONG_FLOW_BYTES]
    return {
        **_fct_stats(short, "short"),
        **_fct_stats(long_, "long"),
        "drops": int(tcp["drops"].sum()),
        "timeouts": int(tcp["timeouts"].sum()),
        "packet_hops": int(results.summary["packet_hops"]),
    }


def _reduce_bandwidth(results: Any) -> dict[str, Any]:
    flows = results.flows.sort_values("flow_id")
    trace = results.traces["flows"]
    long_ids = list(range(len(LONG_SENDERS)))
    short = flows[~flows["flow_id"].isin(long_ids)]
    last_short = float(short["end_s"].max())
    edges = np.arange(0.0, float(results.summary["sim_time_s"]) + BIN_S, BIN_S)
    series = []
    acked_at = {}
    for flow_id in flows["flow_id"]:
        rows = trace[trace["flow_id"] == flow_id]
        times = rows["time_s"].to_numpy(dtype=float)
        una = np.maximum.accumulate(rows["snd_una"].to_numpy(dtype=float))

        def acked(t: np.ndarray, times: np.ndarray = times, una: np.ndarray = una) -> np.ndarray:
            at = np.searchsorted(times, t, side="right") - 1
            return np.where(at >= 0, una[np.maximum(at, 0)], 0.0)

        acked_at[flow_id] = acked
        series.append((np.diff(acked(edges)) * 8 / BIN_S / 1e9).round(3).tolist())
    after = np.array([last_short, last_short + 5e-4])
    regained = sum(float(np.diff(acked_at[i](after))[0]) for i in long_ids) * 8 / 5e-4
    return {
        "bin_s": BIN_S,
        "tput_gbps": series,
        "short_fct_s": short["fct_s"].tolist(),
        "short_mean_s": float(short["fct_s"].mean()),
        "short_last_end_s": last_short,
        "long_after_share": regained / HOST_RATE_BPS,
        "drops": int(flows["drops"].sum()),
        "timeouts": int(flows["timeouts"].sum()),
    }


def _reduce_extreme(results: Any) -> dict[str, Any]:
    flows = results.flows
    ports = results.ports
    queue = results.traces["queues"]
    times = queue["time_s"].to_numpy(dtype=float)
    kib = queue["bytes"].to_numpy(dtype=float) / 1024
    end = float(results.summary["sim_time_s"])
    bins = np.floor(times / QUEUE_BIN_S).astype(int)
    shown = pd.Series(kib).groupby(bins).max()
    # The extreme flow load (§3.2, §5.3): from the fourth burst on, while more flows
    # are open than the port holds packets.
    starts = flows["start_s"].to_numpy(dtype=float)
    ends = flows["end_s"].fillna(end).to_numpy(dtype=float)
    grid = np.arange(3 * BURST_GAP_US * 1e-6, end, 1e-6)
    open_ = (starts[None, :] <= grid[:, None]).sum(axis=1) - (ends[None, :] <= grid[:, None]).sum(
        axis=1
    )
    extreme = grid[open_ > 87]
    at = np.searchsorted(times, extreme, side="right") - 1
    held = kib[np.maximum(at, 0)] if len(extreme) else np.array([np.nan])
    drops = ports.loc[ports["port"] == BOTTLENECK, "packets_dropped"]
    return {
        "queue_t_s": (shown.index.to_numpy() * QUEUE_BIN_S).round(9).tolist(),
        "queue_kib": shown.round(2).tolist(),
        "fct_s": sorted(flows["fct_s"].dropna().tolist()),
        "median_fct_s": float(flows["fct_s"].median()),
        "timed_out_median_fct_s": float(flows[flows["timeouts"] > 0]["fct_s"].median()),
        "clean_median_fct_s": float(flows[flows["timeouts"] == 0]["fct_s"].median()),
        "unfinished": int(flows["fct_s"].isna().sum()),
        "extreme_from_s": float(extreme[0]) if len(extreme) else np.nan,
        "extreme_to_s": float(extreme[-1]) if len(extreme) else np.nan,
        "extreme_queue_kib": float(np.mean(held)),
        "max_queue_kib": float(kib.max()) if len(kib) else 0.0,
        "drops": int(drops.iloc[0]),
        "timeouts": int(flows["timeouts"].sum()),
    }


#: The experiments ``run_botcp`` can run alone (``experiments=``), by the value of
#: their rows' ``experiment`` column (``load`` brings its ``load_iw`` variant).
EXPERIMENTS = ("load", "bandwidth", "extreme")


def run_botcp(
    quick: bool = False,
    jobs: int | None = None,
    loads: Iterable[float] | None = None,
    schemes: Iterable[str] = SCHEMES,
    seeds: Iterable[int] | None = None,
    progress: Progress | None = None,
    experiments: Iterable[str] = EXPERIMENTS,
) -> pd.DataFrame:
    """One row per run: the load runs of ``BOTCP_QUICK`` or ``BOTCP_FULL`` (Figs. 6,
    7, 11; ``experiment`` ``"load"``, and ``"load_iw"`` for the initial-window
    variant, ``IW_VARIANT``) and, for each scheme, the Fig. 8 (``"bandwidth"``) and
    Figs. 9-10 (``"extreme"``) runs, on the full fabric in both variants (they are
    small); every experiment over the plan's seeds. ``experiments``: those of
    ``EXPERIMENTS`` to run."""
    plan = BOTCP_QUICK if quick else BOTCP_FULL
    loads = list(plan.loads if loads is None else loads)
    seeds = list(plan.seeds if seeds is None else seeds)
    schemes = list(schemes)
    experiments = list(experiments)
    unknown = sorted(set(experiments) - set(EXPERIMENTS))
    if unknown:
        raise ValueError(f"experiments must be among {', '.join(EXPERIMENTS)}, got {unknown}")
    keys: list[dict[str, Any]] = []
    tasks = []
    reduce_load = partial(_reduce_load, warmup_s=plan.warmup_s, arrivals_s=plan.arrivals_s)
    # The costliest runs first, so the pool ends evenly.
    for load in sorted(loads, reverse=True) if "load" in experiments else ():
        for scheme in schemes:
            for seed in seeds:
                keys.append({"experiment": "load", "scheme": scheme, "load": load, "seed": seed})
                tasks.append((reduce_load, load_scenario(scheme, load, seed, quick)))
        # The initial-window reading's variant (``IW_VARIANT``), beside the reading.
        variant, iw = IW_VARIANT
        for seed in seeds if variant in schemes else ():
            keys.append({"experiment": "load_iw", "scheme": variant, "load": load, "seed": seed})
            tasks.append((reduce_load, load_scenario(variant, load, seed, quick, init_cwnd=iw)))
    small = {"extreme": (_reduce_extreme, extreme_scenario),
             "bandwidth": (_reduce_bandwidth, bandwidth_scenario)}  # fmt: skip
    for experiment in [e for e in small if e in experiments]:
        reduce, scenario = small[experiment]
        for scheme in schemes:
            for seed in seeds:
                keys.append(
                    {"experiment": experiment, "scheme": scheme, "load": np.nan, "seed": seed}
                )
                tasks.append((reduce, scenario(scheme, seed)))
    answers = run_scenarios(tasks, jobs=jobs, progress=progress)
    rows = [{**key, **answer} for key, answer in zip(keys, answers, strict=True)]
    hosts = plan.leaves * plan.hosts_per_leaf
    return pd.DataFrame(rows).assign(hosts=hosts)


def summary(runs: pd.DataFrame) -> pd.DataFrame:
    """Figs. 6, 7 and 11 as one row per (load, scheme): short- and long-flow mean and
    99th-percentile FCT in ms, drops and timeouts per run (means over seeds), flows
    counted and unfinished (sums over seeds)."""
    load = runs[runs["experiment"] == "load"]
    table = (
        load.groupby(["load", "scheme"], sort=False)
        .agg(
            short_mean_ms=("short_mean_s", "mean"),
            short_p99_ms=("short_p99_s", "mean"),
            long_mean_ms=("long_mean_s", "mean"),
            short_n=("short_n", "sum"),
            long_n=("long_n", "sum"),
            long_unfinished=("long_unfinished", "sum"),
            drops=("drops", "mean"),
            timeouts=("timeouts", "mean"),
        )
        .reset_index()
    )
    for column in ("short_mean_ms", "short_p99_ms", "long_mean_ms"):
        table[column] *= 1e3
    rank = {s: i for i, s in enumerate(SCHEMES)}
    table["_rank"] = table["scheme"].map(rank)
    return table.sort_values(["load", "_rank"]).drop(columns="_rank").reset_index(drop=True)
