"""Reducing the latency-difference study's runs: one row per run (the test packets'
latencies and the state of the network), per test packet, and the summaries over seeds.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

from dcnsim.studies.latency_difference.reference import (
    REFERENCE_POINT,
    latency_reference,
    reference_text,
)
from dcnsim.studies.latency_difference.scenario import (
    HOST_DELAY_US,
    LATENCY_FULL,
    LATENCY_OVERSUBSCRIPTIONS,
    LATENCY_QUICK,
    LATENCY_READINGS,
    LATENCY_SCHEMES,
    LATENCY_SEED,
    LATENCY_TRACED_PORTS,
    READING_DEFAULT,
    TEST_PACKET_BYTES,
    VARIANT_OVERSUB,
    hop_us,
    latency_closed_form_us,
    latency_queue,
    latency_scenario,
    micros,
    reading_schemes,
    scheme_parts,
)
from dcnsim.studies.runner import Progress, run_scenarios
from dcnsim.studies.stats import t95_half_width


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
    bound = 2 * HOST_DELAY_US * 1e-6 + 6 * hop_us(TEST_PACKET_BYTES, 1) * 1e-6
    bound += float(wait[ports["port"] == "host0->tor0"].max())
    for a, b in (("tor", "agg"), ("agg", "core"), ("core", "agg"), ("agg", "tor"), ("tor", "host")):
        tier = wait[(kinds[0] == a) & (kinds[2] == b)]
        bound += float(tier.max()) if len(tier) else 0.0
    return bound


def _reduce_latency(results: Any) -> dict[str, Any]:
    scenario = results.scenario
    start = micros(scenario.get("traffic.probes")[0]["time"]) * 1e-6
    stop = micros(scenario.get("stop_time")) * 1e-6
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
        "stop_ms": stop * 1e3,
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
    readings: Iterable[str] | None = None,
    progress: Progress | None = None,
) -> pd.DataFrame:
    """One row per run: the 127 test packets' latencies and the state of the network.

    The grid (``role = "grid"``) is every scheme x oversubscription x load x seed
    under the chosen reading (``LATENCY_FULL``, or ``LATENCY_QUICK`` with ``quick``);
    the named variants (``role = "variant"``, ``readings``: default every one of
    ``LATENCY_READINGS`` but the chosen) run at 64:4:1, at the plan's
    ``variant_loads`` and ``variant_seeds`` (``loads``/``seeds`` when given), each for
    the schemes it changes. ``warmup_ms``: W1's warm-up. Columns: ``scheme, oversub,
    upper_gbps, load, seed, role, reading, buffer, buffer_pkts, warmup_ms, stop_ms,
    test_packets, received, lost, undecided, mean_us, std_us, min_us, max_us,
    flows_started, flows_active_half, flows_active_test, queue_early_pkts,
    queue_late_pkts, switch_drops, drain_bound_ms, sim_time_s, latencies_us, wall_s``
    (``buffer``: every queue's capacity, ``buffer_pkts`` the full packets it holds;
    ``latencies_us``: the 127 latencies in packet order, ``nan`` = lost;
    ``latency_packets`` expands them).
    """
    plan = LATENCY_QUICK if quick else LATENCY_FULL
    # The study's full variant (its own loads and seeds) also runs the reference.
    full_variant = not quick and loads is None and seeds is None
    schemes = list(schemes)
    for scheme in schemes:
        scheme_parts(scheme)
    grid_loads = [float(v) for v in (plan["loads"] if loads is None else loads)]
    oversubs = list(plan["oversubs"] if oversubs is None else oversubs)
    grid_seeds = list(plan["seeds"] if seeds is None else seeds)
    warmup_ms = float(plan["warmup_ms"] if warmup_ms is None else warmup_ms)
    variants = [r for r in LATENCY_READINGS if r != READING_DEFAULT]
    variants = list(variants if readings is None else readings)
    points = [
        (scheme, oversub, load, seed, "grid", READING_DEFAULT)
        for scheme in schemes
        for oversub in oversubs
        for load in grid_loads
        for seed in grid_seeds
    ]
    if VARIANT_OVERSUB in oversubs:
        v_loads = [ld for ld in plan["variant_loads"] if loads is None or ld in grid_loads]
        v_seeds = plan["variant_seeds"] if seeds is None else grid_seeds
        points += [
            (scheme, VARIANT_OVERSUB, load, seed, "variant", reading)
            for reading in variants
            for scheme in reading_schemes(reading, schemes)
            for load in v_loads
            for seed in v_seeds
        ]
    # Busiest runs first (high load, slow upper tiers, warm-ups), so the pool ends evenly.
    order = sorted(
        range(len(points)),
        key=lambda i: (
            -points[i][2]
            * (1 + 10 * (LATENCY_READINGS[points[i][5]]["W"] == "W1"))
            / LATENCY_OVERSUBSCRIPTIONS[points[i][1]]
        ),
    )
    tasks = [
        (_reduce_latency, latency_scenario(*points[i][:4], points[i][5], warmup_ms)) for i in order
    ]
    answers = run_scenarios(tasks, jobs=jobs, progress=progress)
    rows: list[dict[str, Any]] = [{}] * len(points)
    for i, answer in zip(order, answers, strict=True):
        scheme, oversub, load, seed, role, reading = points[i]
        capacity, held = latency_queue(scheme, reading)
        rows[i] = {
            "scheme": scheme,
            "oversub": oversub,
            "upper_gbps": LATENCY_OVERSUBSCRIPTIONS[oversub],
            "load": load,
            "seed": seed,
            "role": role,
            "reading": reading,
            "buffer": capacity,
            "buffer_pkts": held,
            "warmup_ms": warmup_ms if LATENCY_READINGS[reading]["W"] == "W1" else 0.0,
            **answer,
        }
    table = pd.DataFrame(rows)
    scheme, oversub, load = REFERENCE_POINT
    if full_variant and scheme in schemes and oversub in oversubs and load in grid_loads:
        # The full variant's TCP baseline beside ns-2.35 (issue 45 item 4), printed by
        # latency_tables: the text, or why it was not run.
        table.attrs["reference"] = _reference(grid_seeds)
    return table


def _reference(seeds: list[int]) -> str:
    from dcnsim.crosscheck import reference_block

    title = "The seed's FullTcp baseline beside ns-2.35"
    return reference_block("ns2", title, lambda: reference_text(latency_reference(seeds)))


def latency_packets(runs: pd.DataFrame) -> pd.DataFrame:
    """One row per test packet of every run: the run's keys, ``packet`` (0..126, to
    host packet + 1) and ``latency_us`` (NaN = lost)."""
    keys = ["scheme", "oversub", "load", "seed", "role", "reading"]
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
        _, elr = scheme_parts(str(scheme))
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


def latency_variant_table(runs: pd.DataFrame) -> pd.DataFrame:
    """The named variants beside the chosen reading at 64:4:1: per (reading, scheme,
    load > 0) the means over seeds of the runs' mean and std, the largest latency,
    lost test packets per run and switch drops per run (the chosen reading's rows
    from the grid, with the variants' seeds)."""
    columns = ["reading", "scheme", "load", "runs", "mean_us", "std_us", "max_us"]
    columns += ["lost_mean", "switch_drops"]
    variant = runs[runs["role"] == "variant"]
    if not len(variant):
        return pd.DataFrame(columns=columns)
    seeds = set(variant["seed"])
    chosen = runs[
        (runs["role"] == "grid")
        & (runs["oversub"] == VARIANT_OVERSUB)
        & runs["seed"].isin(seeds)
        & runs["load"].isin(set(variant["load"]))
    ]
    both = pd.concat([chosen, variant])
    table = (
        both.groupby(["reading", "scheme", "load"], sort=False)
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
    readings = {r: i for i, r in enumerate(LATENCY_READINGS)}
    schemes = {s: i for i, s in enumerate(LATENCY_SCHEMES)}
    key = {"reading": readings, "scheme": schemes}
    return table.sort_values(
        ["reading", "scheme", "load"], key=lambda c: c.map(key[c.name]) if c.name in key else c
    ).reset_index(drop=True)[columns]
