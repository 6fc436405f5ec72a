"""The study's runs: every experiment's scenarios, each reduced to one row.

A row has ``experiment`` (``fig3``, ``fig8``, ``fig10``, ``fig11``, ``fig12_sru``,
``fig12_buffer``, ``fig13``, ``10g``, ``spread``), the point (``protocol``,
``slicing``, ``workers``, ``packet_B``, ``sru_KB``, ``buffer_KB``) and what was
measured; time series (queue, one flow's window and sequence numbers) travel as
JSON in ``series`` for the figures.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pandas as pd

from dcnsim.studies.packet_slicing.scenarios import (
    incast_scenario,
    testbed_scenario,
    web_search_scenario,
)
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
}

#: Fig. 12's worker count (the seed does not give it; chosen well above DCTCP's
#: collapse on the testbed).
FIG12_WORKERS = 40


def _series(x: Any, y: Any, most: int = 1500) -> list[list[float]]:
    """Up to ``most`` evenly spaced (x, y) points."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    step = max(1, len(x) // most)
    return [[float(a), float(b)] for a, b in zip(x[::step], y[::step], strict=True)]


def _incast_numbers(results: Any) -> dict[str, Any]:
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
        "rounds_done": len(rounds),
        "afct_ms": float((ops["end_s"] - ops["start_s"]).mean()) * 1e3,
        "peak_queue_kb": float(ports.loc["sw0->host0", "max_queue_bytes"]) / 1e3,
        "drops": int(tcp["drops"].sum()),
    }


def reduce_incast(results: Any) -> dict[str, Any]:
    """Goodput over all rounds, timeouts, mean response time, peak queue."""
    return _incast_numbers(results)


def reduce_traced(results: Any) -> dict[str, Any]:
    """As ``reduce_incast``, with one flow's window, sequence numbers and timeouts and
    the bottleneck's queue over time. The flow shown is the first that had a timeout
    (the seed's Figs. 3(d) and 10 show one that did), else flow 0."""
    row = _incast_numbers(results)
    flows = results.flows
    hit = flows[flows["timeouts"] > 0]
    shown = hit.iloc[0] if len(hit) else flows[flows["flow_id"] == 0].iloc[0]
    queues = results.traces["queues"]
    trace = results.traces["flows"]
    trace = trace[trace["flow_id"] == shown["flow_id"]]
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


def _points(quick: bool) -> list[tuple[dict[str, Any], Any, Any]]:
    """(the row's point, reducer, scenario) of every run."""
    v = "quick" if quick else "full"
    out: list[tuple[dict[str, Any], Any, Any]] = []
    for n in GRIDS["fig3"][v]:
        point = {"experiment": "fig3", "protocol": "dctcp", "slicing": False, "workers": n}
        out.append((point, reduce_traced, testbed_scenario(n, False)))
    for n in GRIDS["fig10"][v]:
        for ps in (False, True):
            point = {"experiment": "fig10", "protocol": "dctcp", "slicing": ps, "workers": n}
            out.append((point, reduce_traced, incast_scenario(n, "dctcp", ps, trace=True)))
    g = GRIDS["fig11"]
    for protocol in g["protocols"][v]:
        for n in g[v]:
            for ps in (False, True):
                point = {"experiment": "fig11", "protocol": protocol, "slicing": ps, "workers": n}
                sc = incast_scenario(n, protocol, ps, rounds=g["rounds"][v])
                out.append((point, reduce_incast, sc))
    g = GRIDS["fig13"]
    for protocol in ("dctcp", "newreno"):
        for n in g[v]:
            for ps in (False, True):
                point = {"experiment": "fig13", "protocol": protocol, "slicing": ps, "workers": n}
                sc = web_search_scenario(n, protocol, ps, g["queries"][v])
                out.append((point, reduce_web_search, sc))
    g = GRIDS["fig8"]
    for n in g[v]:
        for k in g["k"][v]:
            size = round(1500 / k)
            point = {"experiment": "fig8", "protocol": "dctcp", "slicing": False, "workers": n}
            point |= {"k": k, "packet_B": size}
            out.append((point, reduce_incast, incast_scenario(n, size=size, rounds=5)))
    for experiment, options in (("10g", {"rate": "10Gbps"}), ("spread", {"spread": "10ms"})):
        for n in GRIDS[experiment][v]:
            for ps in (False, True):
                point = {"experiment": experiment, "protocol": "dctcp", "slicing": ps}
                sc = incast_scenario(n, "dctcp", ps, rounds=3, **options)
                out.append((point | {"workers": n}, reduce_incast, sc))
    for sru in GRIDS["fig12_sru"][v]:
        for ps in (False, True):
            point = {"experiment": "fig12_sru", "protocol": "dctcp", "slicing": ps}
            point |= {"workers": FIG12_WORKERS, "sru_KB": sru}
            sc = testbed_scenario(FIG12_WORKERS, ps, sru=f"{sru}KB")
            out.append((point, reduce_incast, sc))
    for buffer in GRIDS["fig12_buffer"][v]:
        for ps in (False, True):
            point = {"experiment": "fig12_buffer", "protocol": "dctcp", "slicing": ps}
            point |= {"workers": FIG12_WORKERS, "buffer_KB": buffer}
            sc = testbed_scenario(FIG12_WORKERS, ps, buffer=f"{buffer}KB")
            out.append((point, reduce_incast, sc))
    return out


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
