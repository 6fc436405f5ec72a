"""The difference of packet latencies: the latency-difference seed, §3, Figs. 2-7.

127 test packets cross a 3-tier tree under all-to-all background load, with TCP or
pFabric, with or without equal-length routing (ELR); the study compares their
latencies' mean and spread with the seed's. ``run_latency_difference`` /
``latency_summary`` / ``latency_checks`` from Python.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dcnsim.scenario import Scenario
from dcnsim.studies.figures import pyplot, save
from dcnsim.studies.runner import Progress, run_scenarios
from dcnsim.studies.stats import t95_half_width
from dcnsim.studies.study import Study
from dcnsim.studies.text import Claim, claim_lines, format_table, num_text, ranges

__all__ = [
    "LATENCY_BUFFERS",
    "LATENCY_FULL",
    "LATENCY_OVERSUBSCRIPTIONS",
    "LATENCY_QUICK",
    "LATENCY_SCHEMES",
    "LATENCY_SEED",
    "PFABRIC_RTT_US",
    "PFABRIC_TRANSPORT",
    "STUDY",
    "latency_buffer_table",
    "latency_checks",
    "latency_closed_form_us",
    "latency_offered",
    "latency_packets",
    "latency_scenario",
    "latency_summary",
    "run_latency_difference",
]


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


def latency_checks(runs: pd.DataFrame) -> list[Claim]:
    """The closed forms at 0 % load and the seed's four claims, each with whether the
    grid runs agree (``None``: the runs lack what the check needs)."""
    summary = latency_summary(runs)
    checks: list[Claim] = []
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
            Claim(
                "0 % load: every test packet at its closed-form latency (no ELR: 29.4, 53.8, "
                "78.2 µs at 64:4:1; ELR: 78.2 µs for all)",
                "29-78 µs (no ELR), 78 µs (ELR)",
                f"{sum(exact)} of {len(exact)} (scheme, oversubscription) exact to 1 ns",
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
            Claim(
                f"seed: 0 % load, 64:4:1, no ELR: mean {seed_mean} µs (+-0.2), std {seed_std} µs "
                f"(+-0.2) (dcnsim: mean {means[0]:.2f}, std {stds[0]:.2f} µs)",
                f"mean {seed_mean} µs, std {seed_std} µs",
                f"mean {means[0]:.2f} µs, std {stds[0]:.2f} µs",
                all(abs(m - seed_mean) <= 0.2 for m in means)
                and all(abs(s - seed_std) <= 0.2 for s in stds),
            )
        )
    elr = [s for s in ("TCP+ELR", "pFabric+ELR") if s in zero.index]
    if elr:
        low = min(zero.loc[s, "min_us"] for s in elr)
        high = max(zero.loc[s, "max_us"] for s in elr)
        checks.append(
            Claim(
                "seed: 0 % load, 64:4:1, ELR: every test packet 78.2 µs, std 0",
                "all 78 µs, std 0",
                f"{low:.2f}-{high:.2f} µs",
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


def _claim_tcp_grows(summary: pd.DataFrame) -> Claim:
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
    return Claim(text, "both grow (Figs. 6, 7)", "; ".join(parts), all(steps) if steps else None)


def _claim_elr_spread(summary: pd.DataFrame) -> Claim:
    points = _loaded_points(summary, "TCP", "TCP+ELR")
    tcp, elr = _by_point(summary, "TCP"), _by_point(summary, "TCP+ELR")
    ratios = [elr.loc[p, "std_us"] / tcp.loc[p, "std_us"] for p in points]
    shown = (
        ", ".join(f"{_point_text(p)} {r:.2f}" for p, r in zip(points, ratios, strict=True)) or "-"
    )
    text = (
        "seed: ELR does not shrink TCP's spread under load (TCP+ELR std >= 3/4 of TCP's at "
        "every load > 0); TCP+ELR/TCP std: " + shown
    )
    return Claim(
        text,
        "spread not smaller (Fig. 7)",
        f"TCP+ELR/TCP std: {shown}",
        all(r >= 0.75 for r in ratios) if ratios else None,
    )


def _claim_pfabric_below(summary: pd.DataFrame, grid: pd.DataFrame) -> Claim:
    points = _loaded_points(summary, "TCP", "pFabric")
    tcp, pf = _by_point(summary, "TCP"), _by_point(summary, "pFabric")
    mean_r = [pf.loc[p, "mean_us"] / tcp.loc[p, "mean_us"] for p in points]
    std_r = [pf.loc[p, "std_us"] / tcp.loc[p, "std_us"] for p in points]
    lost = int(grid.loc[grid["scheme"] == "pFabric", "lost"].sum())
    numbers = (
        "pFabric/TCP mean: "
        + (
            ", ".join(f"{_point_text(p)} {r:.2f}" for p, r in zip(points, mean_r, strict=True))
            or "-"
        )
        + "; std: "
        + (", ".join(f"{r:.2f}" for r in std_r) or "-")
        + f"; pFabric test packets lost: {lost}"
    )
    text = (
        "seed: pFabric's mean and std far below TCP's (at most half at every load > 0) and "
        "no test packet lost; " + numbers
    )
    ok = all(r <= 0.5 for r in mean_r + std_r) and lost == 0 if points else None
    return Claim(text, "far below TCP, none lost (Figs. 4, 6, 7)", numbers, ok)


def _claim_pfabric_elr(summary: pd.DataFrame) -> Claim:
    points = _loaded_points(summary, *LATENCY_SCHEMES)
    seed = "smallest spread, mean slightly above pFabric's (Figs. 5-7)"
    if not points:
        return Claim(
            "seed: pFabric+ELR has the smallest std and a mean slightly above pFabric's: "
            "needs all four schemes",
            seed,
            "-",
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
    return Claim(
        "seed: pFabric+ELR has the smallest std of the four schemes and a mean above "
        "pFabric's by at most 50 % (at every load > 0); µs: " + "; ".join(parts),
        seed,
        "; ".join(parts) + " µs",
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
            "mean (µs)": [num_text(v, 1) for v in summary["mean_us"]],
            "+-95%": [num_text(v, 1) for v in summary["mean_ci_us"]],
            "std (µs)": [num_text(v, 1) for v in summary["std_us"]],
            "+-95% ": [num_text(v, 1) for v in summary["std_ci_us"]],
            "min": [num_text(v, 1) for v in summary["min_us"]],
            "max": [num_text(v, 1) for v in summary["max_us"]],
            "lost/run": [num_text(v, 1) for v in summary["lost_mean"]],
            "seed": summary["seed"],
        }
    )
    seeds = sorted(set(runs["seed"])) if len(runs) else []
    lines = [
        "Difference of packet latencies (latency-difference seed, §3, Figs. 2-7)",
        "  3-tier tree: 1 core, 2 agg, 8 ToR, 128 hosts; 1 Gbps host links, upper tiers",
        "  1/2/4 Gbps (64:4:1, 32:4:1, 16:4:1); 0.2 µs links, 2.5 µs host delay, 1500 B packets;",
        "  background: every host to every other host, DeTail-style flow sizes, at the load;",
        f"  seeds {ranges(seeds)} per point",
        "",
        *LATENCY_EXPECTATIONS,
        "",
        format_table(shown),
        "",
        "Closed forms and the seed's claims, against these numbers:",
    ]
    lines += claim_lines(latency_checks(runs))
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
                        "mean (µs)": [num_text(v, 1) for v in buffers["mean_us"]],
                        "std (µs)": [num_text(v, 1) for v in buffers["std_us"]],
                        "max (µs)": [num_text(v, 1) for v in buffers["max_us"]],
                        "lost/run": [num_text(v, 1) for v in buffers["lost_mean"]],
                        "switch drops/run": [num_text(v, 0) for v in buffers["switch_drops"]],
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
            "mean (µs)": [num_text(v, 1) for v in runs["mean_us"]],
            "std (µs)": [num_text(v, 1) for v in runs["std_us"]],
            "min": [num_text(v, 1) for v in runs["min_us"]],
            "max": [num_text(v, 1) for v in runs["max_us"]],
            "lost": runs["lost"],
            "flows W/2": runs["flows_active_half"],
            "flows W": runs["flows_active_test"],
            "queue early": [num_text(v, 1) for v in runs["queue_early_pkts"]],
            "queue late": [num_text(v, 1) for v in runs["queue_late_pkts"]],
            "wall (s)": [f"{v:.2f}" for v in runs["wall_s"]],
        }
    )


#: The seed's figures: Figs. 2-5 show one scheme's test packets each, Figs. 6 and 7
#: the mean and the standard deviation against the load.
LATENCY_PACKET_FIGURES = {
    "fig2": "TCP",
    "fig3": "TCP+ELR",
    "fig4": "pFabric",
    "fig5": "pFabric+ELR",
}
LATENCY_STAT_FIGURES = {"fig6": ("mean_us", "mean latency (µs)"), "fig7": ("std_us", "std (µs)")}


def _latency_plot(figure: str, runs: pd.DataFrame, summary: pd.DataFrame, path: Path) -> None:
    """The seed's Fig. 6 (mean) or 7 (std) against the load, a panel per
    oversubscription, a line per scheme with 95 % Student-t intervals over seeds."""
    value, label = LATENCY_STAT_FIGURES[figure]
    plt = pyplot()
    oversubs = [o for o in LATENCY_OVERSUBSCRIPTIONS if o in set(summary["oversub"])]
    cols = max(len(oversubs), 1)
    fig, axes = plt.subplots(1, cols, figsize=(4.6 * cols, 4), squeeze=False)
    for ax, oversub in zip(axes[0], oversubs, strict=False):
        for scheme in LATENCY_SCHEMES:
            points = summary[(summary["scheme"] == scheme) & (summary["oversub"] == oversub)]
            if len(points):
                points = points.sort_values("load")
                ax.errorbar(
                    points["load"] * 100, points[value],
                    yerr=points[value.replace("_us", "_ci_us")].fillna(0), marker="o", capsize=3,
                    label=scheme,
                )  # fmt: skip
        ax.set_title(f"{oversub}: {label}, seed {figure.replace('fig', 'Fig. ')}", fontsize=10)
        ax.set_xlabel("background load (%)")
        ax.set_ylabel(label)
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8, title="95 % intervals over seeds", title_fontsize=7)
    save(fig, path, dpi=110)


def _latency_packets_plot(
    figure: str, runs: pd.DataFrame, summary: pd.DataFrame, path: Path
) -> None:
    """One of the seed's Figs. 2-5: each test packet's latency against its index for one
    scheme, a panel per oversubscription, a line per load (the first seed's run).
    Nothing is drawn when the scheme was not run."""
    scheme = LATENCY_PACKET_FIGURES[figure]
    grid = runs[(runs["role"] == "grid") & (runs["scheme"] == scheme)]
    if not len(grid):
        return
    grid = grid[grid["seed"] == grid["seed"].min()]
    plt = pyplot()
    oversubs = [o for o in LATENCY_OVERSUBSCRIPTIONS if o in set(grid["oversub"])]
    cols = max(len(oversubs), 1)
    fig, axes = plt.subplots(1, cols, figsize=(4.6 * cols, 3.6), squeeze=False)
    packets = latency_packets(grid)
    for ax, oversub in zip(axes[0], oversubs, strict=False):
        mine = packets[packets["oversub"] == oversub]
        top = mine["latency_us"].max() if mine["latency_us"].notna().any() else 1.0
        for load, one in mine.groupby("load", sort=True):
            (line,) = ax.plot(one["packet"], one["latency_us"], linewidth=0.9, label=f"{load:.0%}")
            lost = one[one["latency_us"].isna()]
            if len(lost):
                ax.scatter(
                    lost["packet"], np.full(len(lost), top * 1.05), marker="x", s=14,
                    color=line.get_color(),
                )  # fmt: skip
        ax.set_title(f"{scheme}, {oversub} (seed {figure.replace('fig', 'Fig. ')})", fontsize=10)
        ax.set_xlabel("test packet (to host packet + 1)")
        ax.set_ylabel("latency (µs)")
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
        ax.legend(title="load; x = lost", fontsize=7, title_fontsize=7)
    save(fig, path, dpi=110)


def _latency_extras(runs: pd.DataFrame, summary: pd.DataFrame, out: Path) -> list[Path]:
    path = out / "buffers.csv"
    latency_buffer_table(runs).to_csv(path, index=False)
    return [path]


STUDY = Study(
    name="latency-difference",
    title="latency-difference seed §3, Figs. 2-7: test-packet latency in a 3-tier tree, "
    "TCP/pFabric with and without ELR",
    seed="the difference of packet latencies in a 3-tier tree (pFabric, ELR), §3, Figs. 2-7",
    runs=run_latency_difference,
    tables=_latency_tables,
    claims=latency_checks,
    figures={
        **{name: partial(_latency_packets_plot, name) for name in LATENCY_PACKET_FIGURES},
        **{name: partial(_latency_plot, name) for name in LATENCY_STAT_FIGURES},
    },
    extras=_latency_extras,
)
