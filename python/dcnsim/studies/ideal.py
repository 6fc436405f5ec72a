"""pFabric's "Ideal": the flows of a run scheduled by a central SRPT scheduler.

The pFabric paper (Alizadeh et al., SIGCOMM 2013) plots every scheme beside
"Ideal", its Algorithm 1 (ideal flow scheduling) run as a flow-level simulation on
the same flow arrivals as the packet-level runs: the fabric is one big switch whose
ports are the host links, and each time a flow arrives or finishes a central
scheduler goes through the flows in increasing order of remaining size and
schedules each one whose ingress (source) and egress (destination) ports are both
still free, at line rate.

Reading chosen where the paper is silent: the schedule decides when a flow's bytes
(on the wire: payload plus 40 B per segment) cross the host links; a flow's Ideal
FCT is its FCT alone on the idle fabric (``ideal_fct_s`` of ``flows.parquet``:
handshake, serialization, link and host delays, which is also what the paper
normalizes by) plus the time the schedule keeps it waiting, so its slowdown is 1 on
an idle fabric.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

__all__ = ["greedy", "ideal_bins", "ideal_slowdowns", "srpt_completions"]


def srpt_completions(
    start: np.ndarray, src: np.ndarray, dst: np.ndarray, duration: np.ndarray
) -> np.ndarray:
    """When each flow finishes under Algorithm 1: flow i arrives at ``start[i]`` and
    needs ``duration[i]`` seconds of its source's and its destination's port."""
    order = [int(i) for i in np.argsort(start, kind="stable")]
    arrivals = [float(start[i]) for i in order]
    src, dst = [int(v) for v in src], [int(v) for v in dst]
    left = [float(v) for v in duration]
    done = np.full(len(order), np.nan)
    active: list[int] = []  # the flows not finished, by remaining size
    served: list[int] = []
    now, k = 0.0, 0
    while k < len(order) or active:
        arrival = arrivals[k] if k < len(order) else math.inf
        finish = now + min(left[i] for i in served) if served else math.inf
        then = min(arrival, finish)
        for i in served:
            left[i] -= then - now
        now = then
        if then == finish:
            ended = {i for i in served if left[i] <= 1e-15 * (1 + now)}
            done[list(ended)] = now
            active = [i for i in active if i not in ended]
        while k < len(order) and arrivals[k] <= now:
            active.append(order[k])
            k += 1
        active.sort(key=left.__getitem__)  # nearly sorted already: linear
        served = greedy(active, src, dst)
    return done


def greedy(ranked: list[int], src: list[int], dst: list[int]) -> list[int]:
    """Algorithm 1's pass over the flows ``ranked`` (smallest remaining size first): each
    flow whose source and destination ports are both still free is scheduled."""
    busy_src: set[int] = set()
    busy_dst: set[int] = set()
    served = []
    for i in ranked:
        if src[i] not in busy_src and dst[i] not in busy_dst:
            served.append(i)
            busy_src.add(src[i])
            busy_dst.add(dst[i])
    return served


def ideal_slowdowns(flows: pd.DataFrame, rate_bps: float, wire_bytes: np.ndarray) -> pd.Series:
    """Each flow's slowdown under Ideal (see the module): (``ideal_fct_s`` + its wait
    in the schedule) / ``ideal_fct_s``, ``wire_bytes`` the flows' bytes on the wire,
    host links of ``rate_bps``."""
    duration = np.asarray(wire_bytes, dtype=float) * 8 / rate_bps
    start = flows["start_s"].to_numpy(dtype=float)
    done = srpt_completions(start, flows["src"].to_numpy(), flows["dst"].to_numpy(), duration)
    wait = done - start - duration
    ideal = flows["ideal_fct_s"].to_numpy(dtype=float)
    return pd.Series((ideal + wait) / ideal, index=flows.index)


def ideal_bins(
    flows: pd.DataFrame,
    counted: pd.DataFrame,
    bins: Sequence[tuple[str, float, float]],
    rate_bps: float,
    wire_bytes: Callable[[pd.Series], np.ndarray],
) -> dict[str, float]:
    """Ideal's mean and 99th-percentile slowdown (``ideal_<bin>_mean``,
    ``ideal_<bin>_p99``) of the ``counted`` flows per size bin (name, lower bound
    exclusive, upper inclusive), scheduling all ``flows``; NaN where a bin holds none
    (``flows`` empty: every bin NaN). ``wire_bytes``: a flow's bytes on the wire from
    its size."""
    slow = ideal_slowdowns(flows, rate_bps, wire_bytes(flows["size_bytes"]))
    out = {}
    for name, lo, hi in bins:
        size = counted["size_bytes"]
        picked = slow.reindex(counted.index[(size > lo) & (size <= hi)]).dropna().to_numpy()
        out[f"ideal_{name}_mean"] = float(picked.mean()) if len(picked) else np.nan
        out[f"ideal_{name}_p99"] = float(np.percentile(picked, 99)) if len(picked) else np.nan
    return out
