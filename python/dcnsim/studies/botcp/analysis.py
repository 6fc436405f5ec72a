"""Running the BOTCP study and reducing each run to the numbers of the seed's figures;
the seed's claims against them.

A run is one row: ``experiment`` (``load``: Figs. 6, 7 and 11; ``bandwidth``: Fig. 8;
``extreme``: Figs. 9 and 10), ``scheme``, ``load`` (NaN but for ``load``), ``seed``,
then the experiment's numbers. The time series a figure draws (throughput per flow,
the bottleneck's queue, the completion times) are lists in their cells.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial
from itertools import combinations
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
    LABELS,
    LONG_SENDERS,
    SCHEMES,
    bandwidth_scenario,
    extreme_scenario,
    load_scenario,
)
from dcnsim.studies.runner import Progress, run_scenarios
from dcnsim.studies.stats import by_seed, paired_difference
from dcnsim.studies.text import EXACT, Claim, compare, decided, every, interval, within

__all__ = [
    "LONG_FLOW_BYTES",
    "botcp_checks",
    "run_botcp",
    "summary",
]

#: §4.3: short flows are 1-100 KB, long flows ≥ 100 KB.
LONG_FLOW_BYTES = 100_000
#: Fig. 8's throughput bins.
BIN_S = 25e-6
#: Fig. 9's queue is shown as the largest occupancy in each bin.
QUEUE_BIN_S = 5e-6
#: Fig. 11's "not much difference": the slowest long-flow mean within this factor of
#: the fastest.
ABOUT_EQUAL = 1.2
#: Fig. 8's "regain all the link capacity": the long flows' goodput, over the 0.5 ms
#: after the last short flow finished, at least this share of the 10 Gbps link.
REGAIN_SHARE = 0.85
#: Fig. 9's "around 60 x 1500/1024 ≅ 89 Kb": within this share of 89 KiB.
NEAR = 0.15
SEED_QUEUE_KIB = 60 * 1500 / 1024
#: The seed's minRTO for all three schemes (§5).
MIN_RTO_S = 200e-6


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


def run_botcp(
    quick: bool = False,
    jobs: int | None = None,
    loads: Iterable[float] | None = None,
    schemes: Iterable[str] = SCHEMES,
    seeds: Iterable[int] | None = None,
    progress: Progress | None = None,
) -> pd.DataFrame:
    """One row per run: the load runs of ``BOTCP_QUICK`` or ``BOTCP_FULL`` (Figs. 6,
    7, 11; ``experiment`` ``"load"``, and ``"load_iw"`` for the initial-window
    variant, ``IW_VARIANT``) and, for each scheme, the Fig. 8 and Figs. 9-10 runs (the same in both
    variants: they are small)."""
    plan = BOTCP_QUICK if quick else BOTCP_FULL
    loads = list(plan.loads if loads is None else loads)
    seeds = list(plan.seeds if seeds is None else seeds)
    schemes = list(schemes)
    keys: list[dict[str, Any]] = []
    tasks = []
    reduce_load = partial(_reduce_load, warmup_s=plan.warmup_s, arrivals_s=plan.arrivals_s)
    # The costliest runs first, so the pool ends evenly.
    for load in sorted(loads, reverse=True):
        for scheme in schemes:
            for seed in seeds:
                keys.append({"experiment": "load", "scheme": scheme, "load": load, "seed": seed})
                tasks.append((reduce_load, load_scenario(scheme, load, seed, quick)))
        # The initial-window reading's variant (``IW_VARIANT``), beside the reading.
        variant, iw = IW_VARIANT
        for seed in seeds if variant in schemes else ():
            keys.append({"experiment": "load_iw", "scheme": variant, "load": load, "seed": seed})
            tasks.append((reduce_load, load_scenario(variant, load, seed, quick, init_cwnd=iw)))
    for scheme in schemes:
        keys.append({"experiment": "extreme", "scheme": scheme, "load": np.nan, "seed": 1})
        tasks.append((_reduce_extreme, extreme_scenario(scheme)))
        keys.append({"experiment": "bandwidth", "scheme": scheme, "load": np.nan, "seed": 1})
        tasks.append((_reduce_bandwidth, bandwidth_scenario(scheme)))
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


def _by_scheme(runs: pd.DataFrame, experiment: str) -> dict[str, pd.Series]:
    part = runs[runs["experiment"] == experiment]
    return {row["scheme"]: row for _, row in part.iterrows()}


def _faster(load_runs: pd.DataFrame, column: str, load: float, a: str, b: str) -> bool | None:
    """Whether ``a``'s ``column`` is below ``b``'s at ``load``: the difference paired by
    seed, outside its 95 % interval (a tie is not below; one seed: exact)."""
    at = load_runs[load_runs["load"] == load]
    return compare(
        *paired_difference(
            by_seed(at, column, scheme=b),
            by_seed(at, column, scheme=a),
        )
    )


def _lowest(frame: pd.DataFrame, load_runs: pd.DataFrame, column: str) -> tuple[bool | None, str]:
    values = [
        f"{load:g}: " + "/".join(f"{frame.loc[load, s]:.3f}" for s in SCHEMES)
        for load in frame.index
    ]
    ok = every(
        [
            _faster(load_runs, column, load, "botcp", other)
            for load in frame.index
            for other in ("tcp_ecn", "dctcp")
        ]
    )
    return ok, "; ".join(values)


def botcp_checks(runs: pd.DataFrame) -> list[Claim]:
    """The seed's claims, each with dcnsim's numbers and a verdict (``None`` when the
    runs lack a scheme the claim compares)."""
    checks: list[Claim] = []
    table = summary(runs)
    schemes = set(table["scheme"])
    full = set(SCHEMES) <= schemes
    names = "BOTCP/TCP-ECN/DCTCP"
    load_runs = runs[runs["experiment"] == "load"]
    # Figs. 6, 7: the 95 % interval over the seeds (paired by seed), or exact with one.
    over_seeds = interval(load_runs) if len(load_runs) else EXACT
    for column, fig, what in (("short_mean_ms", "6", "average"), ("short_p99_ms", "7", "p99")):
        frame = table.pivot(index="load", columns="scheme", values=column)
        source = column.replace("_ms", "_s")
        ok, text = _lowest(frame, load_runs, source) if full else (None, "-")
        checks.append(
            Claim(
                f"Fig. {fig}: BOTCP's short-flow {what} FCT is the lowest at every load",
                "BOTCP improves average and 99th percentile of FCT of short flows over both "
                "TCP and DCTCP (§5.1)",
                f"{what} FCT in ms ({names}) by load: {text}",
                tolerance=over_seeds,
                **decided(ok),
            )
        )
    drops = table.pivot(index="load", columns="scheme", values="drops")
    if full and len(drops):
        fewer = every(
            [
                _faster(load_runs, "drops", load, "botcp", other)
                for load in drops.index
                for other in ("tcp_ecn", "dctcp")
            ]
        )
        checks.append(
            Claim(
                "§5.1, §5.3: BOTCP drops fewer packets than TCP-ECN and DCTCP at every load",
                "BOTCP uses this information to opportunely adjust the sending rates and hence "
                "minimizes the chances of packet drops (§5.1); both TCP and DCTCP suffer from "
                "packet drops due to an inherently weak congestion signal (§5.3)",
                f"packets dropped per run ({names}) by load: "
                + "; ".join(
                    f"{load:g}: " + "/".join(f"{drops.loc[load, s]:.0f}" for s in SCHEMES)
                    for load in drops.index
                ),
                tolerance=over_seeds,
                **decided(fewer),
            )
        )
    mean = table.pivot(index="load", columns="scheme", values="short_mean_ms")
    if full and len(mean):
        for load, better, worse, words in (
            (mean.index.min(), "tcp_ecn", "dctcp", "Under lighter loads, TCP performs better"),
            (mean.index.max(), "dctcp", "tcp_ecn", "Under heavier loads DCTCP performs better"),
        ):
            a, b = mean.loc[load, better], mean.loc[load, worse]
            checks.append(
                Claim(
                    f"Fig. 6: at load {load:g} {LABELS[better]}'s short-flow average FCT is "
                    f"below {LABELS[worse]}'s",
                    f"{words} (§5.1)",
                    f"{LABELS[better]} {a:.3f} ms vs {LABELS[worse]} {b:.3f} ms",
                    tolerance=over_seeds,
                    **decided(_faster(load_runs, "short_mean_s", load, better, worse)),
                )
            )
    long_ = table.pivot(index="load", columns="scheme", values="long_mean_ms")
    if full and len(long_):
        ratio = long_.max(axis=1) / long_.min(axis=1)
        text = "; ".join(
            f"{load:g}: " + "/".join(f"{long_.loc[load, s]:.2f}" for s in SCHEMES)
            for load in long_.index
        )
        # Each pair of schemes within the factor: |log ratio| <= log factor, on the 95 %
        # interval of the log ratio paired by seed (exact with one seed).
        logs = load_runs.assign(log_long=np.log(load_runs["long_mean_s"]))
        decisions = [
            within(
                *paired_difference(
                    by_seed(logs[logs["load"] == load], "log_long", scheme=a),
                    by_seed(logs[logs["load"] == load], "log_long", scheme=b),
                ),
                np.log(ABOUT_EQUAL),
            )
            for load in long_.index
            for a, b in combinations(SCHEMES, 2)
        ]
        checks.append(
            Claim(
                f"Fig. 11: long flows' average FCT about equal (slowest within "
                f"{ABOUT_EQUAL:g}x the fastest) at every load",
                "There is not much difference in the three schemes in terms of average FCT of "
                "long flows (§5.4)",
                f"ms ({names}): {text}; largest ratio {ratio.max():.2f}",
                tolerance=f"{ABOUT_EQUAL:g}x: dcnsim's reading of the seed's words, on each "
                f"pair's log ratio; {over_seeds}",
                **decided(every(decisions)),
            )
        )
    bw = _by_scheme(runs, "bandwidth")
    if set(SCHEMES) <= set(bw):
        fct = [bw[s]["short_mean_s"] * 1e3 for s in SCHEMES]
        checks.append(
            Claim(
                "Fig. 8: short flows finish first with BOTCP, second with TCP-ECN, last with DCTCP",
                "Short flows of TCP finish second ... Short flows of DCTCP finish last (§5.2)",
                f"short flows' mean FCT in ms ({names}): " + "/".join(f"{v:.3f}" for v in fct),
                bool(fct[0] < fct[1] < fct[2]),
                tolerance="exact: one deterministic run per scheme (a tie is not first)",
            )
        )
        share = [bw[s]["long_after_share"] for s in SCHEMES]
        checks.append(
            Claim(
                f"Fig. 8: the long flows regain the link (≥ {REGAIN_SHARE:.0%} of 10 Gbps in "
                "the 0.5 ms after the short flows finish)",
                "After the short flows finish, the long flows regain all the link capacity (§5.2)",
                f"long flows' share ({names}): " + "/".join(f"{v:.2f}" for v in share),
                bool(min(share) >= REGAIN_SHARE),
                tolerance=f'{REGAIN_SHARE:.0%} of the link: dcnsim\'s reading of "all"',
            )
        )
    ex = _by_scheme(runs, "extreme")
    if "botcp" in ex:
        b = ex["botcp"]
        checks.append(
            Claim(
                "Fig. 9: BOTCP drops nothing at the bottleneck and never times out",
                "BOTCP ... keep[s] Bcr around Bm until the flow load decreases; all hundred "
                "flows continue to send data (§5.3)",
                f"drops {b['drops']}, timeouts {b['timeouts']}, largest queue "
                f"{b['max_queue_kib']:.1f} KiB of 128",
                bool(b["drops"] == 0 and b["timeouts"] == 0),
                tolerance="exact: counts of one deterministic run",
            )
        )
        q = b["extreme_queue_kib"]
        checks.append(
            Claim(
                f"Fig. 9: BOTCP's queue during the extreme load is about {SEED_QUEUE_KIB:.0f} "
                f"KiB (within {NEAR:.0%})",
                "the queue length is kept around 60 x 1500/1024 ≅ 89 Kb for the duration of "
                "the extreme flow load (§5.3)",
                f"mean {q:.1f} KiB while more than 87 flows are open "
                f"({b['extreme_from_s'] * 1e3:.2f}-{b['extreme_to_s'] * 1e3:.2f} ms)",
                bool(abs(q - SEED_QUEUE_KIB) <= NEAR * SEED_QUEUE_KIB) if np.isfinite(q) else None,
                tolerance=f"±{NEAR:.0%} of the seed's 89 KiB: dcnsim's reading of \"around\"",
            )
        )
    if set(SCHEMES) <= set(ex):
        others = [ex[s] for s in ("tcp_ecn", "dctcp")]
        checks.append(
            Claim(
                "Fig. 9: TCP-ECN and DCTCP drop at the bottleneck and back off for the RTO",
                "both TCP and DCTCP cannot reduce the congestion window below 1 MSS even when "
                "packet drops occur; ... The flows that suffer from packet drop back off for "
                "the duration of RTO (§5.3)",
                "drops/timeouts (TCP-ECN, DCTCP): "
                + ", ".join(f"{o['drops']}/{o['timeouts']}" for o in others),
                bool(all(o["drops"] > 0 and o["timeouts"] > 0 for o in others)),
                tolerance="exact: counts of one deterministic run",
            )
        )
        late = [(o["timed_out_median_fct_s"] - o["clean_median_fct_s"]) * 1e3 for o in others]
        checks.append(
            Claim(
                "Fig. 9: with TCP-ECN and DCTCP the blocked flows resume after the RTO (the "
                "flows with a timeout finish at least RTO_min = "
                f"{MIN_RTO_S * 1e3:g} ms after those without, medians)",
                "In TCP and DCTCP, the blocked flows resume after the expiry of the RTO ... "
                "and finish after the expiry of the RTO (§5.3)",
                "median FCT of the flows with a timeout minus that of the flows without, ms "
                "(TCP-ECN, DCTCP): " + ", ".join(f"{v:.3f}" for v in late),
                bool(all(v >= MIN_RTO_S * 1e3 for v in late)),
                tolerance="exact: one deterministic run per scheme",
            )
        )
        med = [ex[s]["median_fct_s"] * 1e3 for s in SCHEMES]
        checks.append(
            Claim(
                "Fig. 10: with TCP-ECN and DCTCP the flows that keep sending finish earlier "
                "than with BOTCP (median FCT below BOTCP's)",
                "The remaining flows continue and finish earlier than in the case of BOTCP (§5.3)",
                f"median FCT in ms ({names}): " + "/".join(f"{v:.3f}" for v in med),
                bool(med[1] < med[0] and med[2] < med[0]),
                tolerance="exact: one deterministic run per scheme (a tie is not earlier)",
            )
        )
    return checks
