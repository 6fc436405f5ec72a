"""The study's runs: every experiment's scenarios, each reduced to one row.

A row has ``experiment`` (``fig3``, ``fig8``, ``fig10``, ``fig11``, ``fig12_sru``,
``fig12_buffer``, ``fig13``, ``10g``, ``spread``), the point (``protocol``,
``slicing``, ``workers``, ``packet_B``, ``sru_KB``, ``buffer_KB``) and what was
measured; time series (queue, one flow's window and sequence numbers) travel as
JSON in ``series`` for the figures.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
import pandas as pd

from dcnsim.formats import rate_bps
from dcnsim.scenario import Scenario
from dcnsim.studies.packet_slicing.scenarios import (
    incast_scenario,
    testbed_scenario,
    web_search_scenario,
)
from dcnsim.studies.readings.packet_slicing import VARIANTS
from dcnsim.studies.runner import Progress, run_scenarios

__all__ = ["GRIDS", "run_packet_slicing"]

PROTOCOLS = ("dctcp", "d2tcp", "l2dct")

#: Per experiment: the full grid and the quick one.
GRIDS: dict[str, dict[str, Any]] = {
    "fig3": {"full": [10, 60], "quick": [10, 60]},
    "fig10": {"full": [30], "quick": [30]},
    "fig11": {
        "full": [10, 20, 30, 40, 50, 60, 80, 100, 150, 200, 250, 300],
        "quick": [10, 40],
        "protocols": {"full": PROTOCOLS, "quick": ("dctcp",)},
        "rounds": {"full": 5, "quick": 2},
    },
    "fig8": {
        "full": [40, 80, 120],
        "quick": [40],
        "k": {"full": [1, 1.5, 2, 3, 4, 6, 8, 12, 16, 23.4], "quick": [1, 2, 4]},
    },
    "fig13": {
        "full": [1, 5, 10, 13, 15, 20, 25, 28, 30, 40, 50, 60, 70, 80, 90],
        "quick": [10, 40],
        "queries": {"full": 20, "quick": 2},
    },
    "10g": {"full": [20, 30, 40, 45, 50, 60, 100, 200, 400, 600, 900], "quick": []},
    "spread": {"full": [20, 30, 37, 40, 50, 100, 200, 400, 720], "quick": []},
    "fig12_sru": {"full": [32, 64, 128, 256], "quick": []},
    "fig12_buffer": {"full": [32, 48, 64, 96, 128], "quick": []},
    # The other readings of the seed's TCP (``readings.packet_slicing.VARIANTS``), DCTCP.
    "fig10_variant": {"full": [30], "quick": [30]},
    "fig11_variant": {"full": [10, 20, 30, 40, 50, 60, 80, 100, 150, 200, 250, 300], "quick": []},
}

#: Fig. 12's worker count (the seed does not give it; chosen well above DCTCP's
#: collapse on the testbed).
FIG12_WORKERS = 40


def _series(x: Any, y: Any, most: int = 1500) -> list[list[float]]:
    """Up to ``most`` evenly spaced (x, y) points."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    step = max(1, len(x) // most)
    return [[float(a), float(b)] for a, b in zip(x[::step], y[::step], strict=True)]


def reduce_incast(results: Any) -> dict[str, Any]:
    """Goodput over all rounds, timeouts, the responses (flow-rounds) with a timeout,
    mean response time, peak queue."""
    flows = results.flows
    tcp = flows[flows["kind"] == "tcp"]
    ops = results.ops
    start, end = float(ops["start_s"].min()), float(ops["end_s"].max())
    total = float(ops["bytes"].sum())
    ports = results.ports.set_index("port")
    rounds = results.rounds
    return {
        "goodput_mbps": total * 8 / (end - start) / 1e6 if end > start else np.nan,
        "timeouts": int(tcp["timeouts"].sum()),
        "timeout_rounds": int(rounds["any_timeout"].sum()),
        "flow_rounds": len(ops),
        "timeout_flow_rounds": int((ops["outcome"] == "timeout").sum()),
        "rounds_done": len(rounds),
        "afct_ms": float((ops["end_s"] - ops["start_s"]).mean()) * 1e3,
        "peak_queue_kb": float(ports.loc["sw0->host0", "max_queue_bytes"]) / 1e3,
        "drops": int(tcp["drops"].sum()),
    }


def _instant_goodput(
    trace: pd.DataFrame, link_bps: float, bin_s: float = 1e-3
) -> list[list[float]]:
    """The goodput of all traced flows together through a bottleneck of ``link_bps``,
    in Mbps per ``bin_s`` bin (at the bin's end): the bytes the receiver got, placed
    in time from the senders' ``snd_una``.

    The flow trace records the senders, not the receiver: a byte is acknowledged at
    or after it arrived, and the bottleneck delivers at most ``link_bps`` x ``bin_s``
    per bin. So each bin's newly acknowledged bytes go into that bin up to the link's
    capacity, and what is over it (a cumulative ACK after a retransmission fills a
    hole also acknowledges the bytes that arrived out of order before it) into the
    latest earlier bins with room: they arrived before their ACK, at most at the
    link's rate. Never above the link; the bytes in total are those acknowledged.
    """
    trace = trace.sort_values("time_s", kind="stable")
    acked = trace.groupby("flow_id")["snd_una"].diff().fillna(0.0).clip(lower=0.0).cumsum()
    times = trace["time_s"].to_numpy()
    edges = np.arange(0.0, times[-1] + bin_s, bin_s)
    at = np.searchsorted(times, edges, side="right")
    per_bin = np.diff(np.concatenate([[0.0], acked.to_numpy()])[at])
    room = link_bps * bin_s / 8
    received, over = np.zeros_like(per_bin), 0.0
    for i in range(len(per_bin) - 1, -1, -1):  # latest first: the excess moves earlier
        received[i] = min(per_bin[i] + over, room)
        over = per_bin[i] + over - received[i]
    return _series(edges[1:], received * 8 / bin_s / 1e6)


def bottleneck_bps(scenario: Scenario) -> float:
    """The rate of the aggregator's (host 0's) link in ``incast_scenario``'s star."""
    rates = scenario.get("topology.host_rates") or [scenario.get("topology.link.rate")]
    return rate_bps(rates[0])


def reduce_traced(results: Any) -> dict[str, Any]:
    """As ``reduce_incast``, with one flow's window, sequence numbers and timeouts, the
    bottleneck's queue and all flows' goodput over time. The flow shown is the first
    that had a timeout (the seed's Figs. 3(d) and 10 show one that did), else flow 0."""
    row = reduce_incast(results)
    flows = results.flows
    hit = flows[flows["timeouts"] > 0]
    shown = hit.iloc[0] if len(hit) else flows[flows["flow_id"] == 0].iloc[0]
    queues = results.traces["queues"]
    every = results.traces["flows"]
    trace = every[every["flow_id"] == shown["flow_id"]]
    # In packets of the default 1460 B payload: exact without slicing (Fig. 3); with
    # it the window keeps its count of segments as they shrink, and this is its bytes.
    cwnd_pkts = trace["cwnd_bytes"].to_numpy() / 1460.0
    sent = trace["snd_una"].to_numpy() > 1
    row.update(
        {
            "shown_flow": int(shown["flow_id"]),
            "flow_timeouts": int(shown["timeouts"]),
            "flow_end_ms": float(shown["end_s"]) * 1e3,
            "max_flow_timeouts": int(flows["timeouts"].max()),
            "slowest_ms": float(flows["end_s"].max()) * 1e3,
            "cwnd_median_pkts": float(np.median(cwnd_pkts[sent])) if sent.any() else np.nan,
            "series": json.dumps(
                {
                    "queue": _series(queues["time_s"], queues["bytes"]),
                    "cwnd": _series(trace["time_s"], cwnd_pkts),
                    "seq": _series(trace["time_s"], trace["snd_una"]),
                    "goodput": _instant_goodput(every, bottleneck_bps(results.scenario)),
                }
            ),
        }
    )
    return row


def reduce_web_search(results: Any) -> dict[str, Any]:
    """Search response time (mean, largest) and the fraction of queries with a
    timeout."""
    ops = results.ops
    srt = (ops["end_s"] - ops["start_s"]) * 1e3
    return {
        "srt_ms": float(srt.mean()),
        "srt_max_ms": float(srt.max()),
        "queries_done": len(ops),
        "timeout_fraction": float((ops["outcome"] == "timeout").mean()),
    }


#: A run: its row's point, its reducer and its scenario.
Run = tuple[dict[str, Any], Callable[[Any], dict[str, Any]], Scenario]


def _grid(
    experiment: str,
    reduce: Callable[[Any], dict[str, Any]],
    build: Callable[..., Scenario],
    workers: Iterable[int],
    protocols: Iterable[str] = ("dctcp",),
    settings: Iterable[dict[str, Any]] = ({},),
    slicing: Iterable[bool] = (False, True),
) -> list[Run]:
    """One run per protocol, worker count, setting and slicing (in that order, the
    last innermost): the point ``experiment, protocol, slicing, workers`` and the
    setting's own keys, and the scenario ``build(protocol, workers, slicing,
    **setting)``."""
    return [
        (
            {"experiment": experiment, "protocol": p, "slicing": ps, "workers": n} | s,
            reduce,
            build(p, n, ps, **s),
        )
        for p in protocols
        for n in workers
        for s in settings
        for ps in slicing
    ]


def _points(quick: bool) -> list[Run]:
    """Every run of the variant."""
    v = "quick" if quick else "full"
    g = {name: grid[v] for name, grid in GRIDS.items()}
    fig8, fig11, fig13 = GRIDS["fig8"], GRIDS["fig11"], GRIDS["fig13"]
    return [
        *_grid(
            "fig3",
            reduce_traced,
            lambda p, n, ps: testbed_scenario(n, ps),
            g["fig3"],
            slicing=(False,),
        ),
        *_grid(
            "fig10",
            reduce_traced,
            lambda p, n, ps: incast_scenario(n, p, ps, trace=True),
            g["fig10"],
        ),
        *_grid(
            "fig11",
            reduce_incast,
            lambda p, n, ps: incast_scenario(n, p, ps, rounds=fig11["rounds"][v]),
            g["fig11"],
            fig11["protocols"][v],
        ),
        *_grid(
            "fig13",
            reduce_web_search,
            lambda p, n, ps: web_search_scenario(n, p, ps, fig13["queries"][v]),
            g["fig13"],
            ("dctcp", "newreno"),
        ),
        *_grid(
            "fig8",
            reduce_incast,
            lambda p, n, ps, k, packet_B: incast_scenario(n, size=packet_B, rounds=5),
            g["fig8"],
            settings=[{"k": k, "packet_B": round(1500 / k)} for k in fig8["k"][v]],
            slicing=(False,),
        ),
        *_grid(
            "10g",
            reduce_incast,
            lambda p, n, ps: incast_scenario(n, p, ps, rounds=3, rate="10Gbps"),
            g["10g"],
        ),
        *_grid(
            "spread",
            reduce_incast,
            lambda p, n, ps: incast_scenario(n, p, ps, rounds=3, spread="10ms"),
            g["spread"],
        ),
        *_grid(
            "fig10_variant",
            reduce_traced,
            lambda p, n, ps, reading: incast_scenario(
                n, p, ps, trace=True, reading=VARIANTS[reading]
            ),
            g["fig10_variant"],
            settings=[{"reading": name} for name in VARIANTS],
        ),
        *_grid(
            "fig11_variant",
            reduce_incast,
            lambda p, n, ps, reading: incast_scenario(
                n, p, ps, rounds=fig11["rounds"][v], reading=VARIANTS[reading]
            ),
            g["fig11_variant"],
            settings=[{"reading": name} for name in VARIANTS],
        ),
        *_grid(
            "fig12_sru",
            reduce_incast,
            lambda p, n, ps, sru_KB: testbed_scenario(n, ps, sru=f"{sru_KB}KB"),
            [FIG12_WORKERS],
            settings=[{"sru_KB": sru} for sru in g["fig12_sru"]],
        ),
        *_grid(
            "fig12_buffer",
            reduce_incast,
            lambda p, n, ps, buffer_KB: testbed_scenario(n, ps, buffer=f"{buffer_KB}KB"),
            [FIG12_WORKERS],
            settings=[{"buffer_KB": b} for b in g["fig12_buffer"]],
        ),
    ]


def run_packet_slicing(
    quick: bool = False, jobs: int | None = None, progress: Progress | None = None
) -> pd.DataFrame:
    """Every run of the study, one row each (the columns above)."""
    points = _points(quick)
    # Largest runs first: they dominate the wall time, so the pool ends evenly.
    order = sorted(range(len(points)), key=lambda i: -points[i][0]["workers"])
    answers = run_scenarios(
        [(points[i][1], points[i][2]) for i in order], jobs=jobs, progress=progress
    )
    rows: list[dict[str, Any]] = [{}] * len(points)
    for i, answer in zip(order, answers, strict=True):
        rows[i] = points[i][0] | answer
    return pd.DataFrame(rows)
