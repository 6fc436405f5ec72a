"""From the link-level simulations' flow times to each flow's estimated FCT, and the
slowdown percentiles per flow-size bucket.

As Parsimon (§4.4; ``parsimon-core/src/network.rs``, ``DelayNetwork::slowdown``,
``edist.rs``): a link-level simulation's flows give their *packet-normalized delay*,
(FCT - FCT alone) / packets (Parsimon: less the ideal FCT; dcnsim: less the flow's FCT
alone on its path, see ``decompose``); these are bucketed by flow size so that every
bucket holds at least ``B`` flows and spans at least a factor ``X`` of sizes (Parsimon's
defaults, ``BucketOpts { x: 2, b: 100 }``), and (dcnsim's) spans at most a factor
``X_MAX`` of sizes; every link of a cluster takes its representative's buckets.
Parsimon's estimate of a flow is its FCT alone plus, for each link of its path, a delay:
its own in the link's run where the link was simulated itself (dcnsim's choice: the flow
is one of that run's flows), else a delay drawn from the representative's bucket for its
size, times its packets — the links' delays taken as independent. That is dcnsim's first
pass; its estimate takes a flow's delay at its bottleneck only (the link with the
largest expected delay, ``hop_delays``, ``bottlenecks``), in the last of the paced
passes (``pacing_rates``, ``damped``, ``rate_change``; docs/estimate.md). Delays are
never below zero (``FctRecord::delay``). Its slowdown is against its ideal FCT, as a
run's. A flow unfinished at ``stop_time`` in a link-level run gives no delay to the
buckets (censored: a bias towards smaller delays at the very end, docs/estimate.md) and
stays unfinished in the estimate; an estimated flow that would end after ``stop_time``
is reported unfinished, as a run reports it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from dcnsim.estimation.decompose import Drawn

__all__ = [
    "SIZE_BUCKETS",
    "Delays",
    "bottlenecks",
    "bucket_table",
    "damped",
    "delays_of",
    "estimate_flows",
    "hop_delays",
    "pacing_rates",
    "rate_change",
]

#: Parsimon's bucketing: at least B flows and a factor X of sizes per bucket.
X, B = 2.0, 100
#: dcnsim's cap on a bucket: its flows' sizes span at most a factor X_MAX, even where
#: that leaves it fewer than B flows (docs/estimate.md, "Buckets that do not mix sizes").
X_MAX = X * X
#: The size buckets of the percentile tables: (label, lowest size, highest size).
SIZE_BUCKETS = (
    ("<10KB", 0, 10_000),
    ("10KB-100KB", 10_000, 100_000),
    ("100KB-1MB", 100_000, 1_000_000),
    (">1MB", 1_000_000, np.inf),
)


class Delays:
    """One link-level simulation's packet-normalized delays, bucketed by size."""

    def __init__(self, sizes: np.ndarray, delays: np.ndarray) -> None:
        keep = np.isfinite(delays)
        order = np.argsort(sizes[keep], kind="stable")
        self.sizes = sizes[keep][order]
        self.delays = delays[keep][order]
        # Parsimon's ``bucket`` (``parsimon-core/src/edist.rs``): a bucket closes once
        # it holds B flows and its largest size is at least X times its lower bound (0
        # for the first, then one more than the previous bucket's largest), taking the
        # ties of its largest along; dcnsim's cap: it closes too where the next size is
        # more than X_MAX times its smallest.
        n, starts, lows, low, i = len(self.sizes), [0], [0.0], 0.0, 0
        while i < n:
            top = self.sizes[i]
            full = low <= top / X and i + 1 - starts[-1] >= B
            if full or (i + 1 < n and self.sizes[i + 1] > X_MAX * self.sizes[starts[-1]]):
                while i + 1 < n and self.sizes[i + 1] == top:
                    i += 1
                if i + 1 < n:
                    starts.append(i + 1)
                    low = top + 1
                    lows.append(low)
            i += 1
        self.starts = np.array([*starts, n])
        # Sizes beyond the last bucket's take its delays.
        self.lows = np.array(lows)
        self.means = (
            np.add.reduceat(self.delays, self.starts[:-1]) / np.diff(self.starts)
            if n
            else np.array([])
        )

    def sample(self, sizes: np.ndarray, u: np.ndarray) -> np.ndarray:
        """A delay from the bucket of each size, at the uniform draws ``u``."""
        if not len(self.delays):
            return np.full(len(sizes), np.nan)
        b = np.searchsorted(self.lows, sizes, side="right") - 1
        lo, hi = self.starts[b], self.starts[b + 1]
        return self.delays[lo + np.minimum((u * (hi - lo)).astype(np.int64), hi - lo - 1)]

    def mean(self, sizes: np.ndarray) -> np.ndarray:
        """The mean delay of the bucket of each size (Parsimon's ``EDist::mean``)."""
        if not len(self.delays):
            return np.full(len(sizes), np.nan)
        return self.means[np.searchsorted(self.lows, sizes, side="right") - 1]


def run_delays(flows: Mapping[str, Any], alone_s: np.ndarray) -> np.ndarray:
    """Each flow's delay in one link-level run's flows table: its FCT less
    ``alone_s``, its FCT alone on its path (in the table's order), never below zero
    (Parsimon's ``FctRecord::delay``); infinite for a flow unfinished at
    ``stop_time`` (it cannot finish in the fabric either)."""
    fct = np.asarray(flows["fct_s"], dtype=float)
    return np.where(np.isnan(fct), np.inf, np.maximum(0.0, fct - alone_s))


def delays_of(flows: Mapping[str, Any], delay_s: np.ndarray, mss: int) -> Delays:
    """The packet-normalized delays of one link-level run (``run_delays``)."""
    size = np.asarray(flows["size_bytes"], dtype=float)
    return Delays(size, delay_s / _packets(size, mss))


def alone(sizes: np.ndarray, solo: Mapping[str, Any]) -> np.ndarray:
    """FCT alone of flows of ``sizes``, interpolated (in log size) in a solo run's
    flows table."""
    grid = np.asarray(solo["size_bytes"], dtype=float)
    fct = np.asarray(solo["fct_s"], dtype=float)
    order = np.argsort(grid)
    return np.interp(np.log(sizes), np.log(grid[order]), fct[order])


def _packets(size: np.ndarray, mss: int) -> np.ndarray:
    return np.maximum(1.0, np.ceil(size / mss))


def hop_delays(
    d: Drawn,
    hop_link: np.ndarray,
    link_delays: Sequence[Delays],
    mss: int,
    seed: int,
    own_s: np.ndarray,
    stream: int = 1,
) -> tuple[np.ndarray, np.ndarray]:
    """Each flattened hop's delay and its expected delay: ``own_s[i]``, the flow's own
    delay at hop ``i`` where its link was simulated itself, for both; else (``own_s``
    NaN) a packet-normalized delay drawn from the bucket of its size in
    ``link_delays[hop_link[i]]`` (the cluster representative's), and that bucket's
    mean, times its packets. ``stream`` (the pass) picks the draws' random stream, so
    each pass draws afresh."""
    rng = np.random.default_rng([seed, 47, stream])
    size = d.flows["size_bytes"].astype(float)
    u = rng.random(len(hop_link))
    delay, expected = own_s.copy(), own_s.copy()
    order = np.argsort(hop_link, kind="stable")
    bounds = np.searchsorted(hop_link[order], np.arange(len(link_delays) + 1))
    drawn = np.isnan(own_s)
    for k, delays in enumerate(link_delays):
        hops = order[bounds[k] : bounds[k + 1]]
        hops = hops[drawn[hops]]
        if len(hops):
            s = size[d.flow[hops]]
            packets = _packets(s, mss)
            delay[hops] = delays.sample(s, u[hops]) * packets
            expected[hops] = delays.mean(s) * packets
    return delay, expected


def bottlenecks(d: Drawn, hop_delay: np.ndarray) -> np.ndarray:
    """Each flow's bottleneck: the hop (flattened index) of its path with the largest
    delay (the estimate passes the expected delays of ``hop_delays``, no random draw),
    an unknown (NaN) or infinite one first; the first of ties."""
    key = np.where(np.isnan(hop_delay), np.inf, hop_delay)
    order = np.lexsort((-key, d.flow))
    return order[d.flows["first_hop"]]


def pacing_rates(size: np.ndarray, alone_s: np.ndarray, delay_s: np.ndarray) -> np.ndarray:
    """The rate (bits/s) of a flow of ``size`` bytes that takes its FCT alone plus
    ``delay_s``: NaN where that delay is zero, unknown or infinite (the flow is not
    paced)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        ok = (delay_s > 0) & np.isfinite(delay_s)
        return np.where(ok, size * 8 / (alone_s + delay_s), np.nan)


def damped(pace_s: np.ndarray, delay_s: np.ndarray) -> np.ndarray:
    """The next pass's pacing delay: half the way from the delay a pass paced at
    (``pace_s``) to the bottleneck delay it gave (``delay_s``), the damped fixed-point
    step x <- (x + f(x)) / 2 (docs/estimate.md, "Iterating the pacing")."""
    return (pace_s + delay_s) / 2


def rate_change(alone_s: np.ndarray, old_s: np.ndarray, new_s: np.ndarray) -> float:
    """The median relative change of the pacing rates, |r_new / r_old - 1| =
    |old - new| / (alone + new), over the flows paced both times (0 if none)."""
    with np.errstate(invalid="ignore"):
        ok = (old_s > 0) & (new_s > 0) & np.isfinite(old_s) & np.isfinite(new_s)
    if not ok.any():
        return 0.0
    return float(np.median(np.abs(old_s[ok] - new_s[ok]) / (alone_s[ok] + new_s[ok])))


def estimate_flows(
    d: Drawn, delay_s: np.ndarray, stop_s: float | None, alone_s: np.ndarray
) -> dict[str, Any]:
    """The estimated flows table: each flow's FCT is ``alone_s`` plus ``delay_s``."""
    size = d.flows["size_bytes"].astype(float)
    fct = alone_s + delay_s
    start = d.flows["start_s"]
    if stop_s is not None:
        fct = np.where(start + fct > stop_s, np.nan, fct)
    return {
        "flow_id": np.arange(len(size), dtype=np.int64),
        "kind": ["tcp"] * len(size),
        "protocol": list(d.flows["protocol"]),
        "src": d.flows["src"],
        "dst": d.flows["dst"],
        "class": d.flows["class"],
        "size_bytes": d.flows["size_bytes"],
        "start_s": start,
        "end_s": start + fct,
        "fct_s": fct,
        "ideal_fct_s": d.flows["ideal_fct_s"],
        "slowdown": fct / d.flows["ideal_fct_s"],
        "goodput_bps": size * 8.0 / fct,
    }


def bucket_table(
    flows: pd.DataFrame | Mapping[str, Any], percentiles: Sequence[float] = (50, 99)
) -> pd.DataFrame:
    """Slowdown percentiles of the finished flows per size bucket (``SIZE_BUCKETS``):
    one row per bucket, columns ``bucket``, ``flows`` and ``pNN``."""
    size = np.asarray(flows["size_bytes"], dtype=float)
    slowdown = np.asarray(flows["slowdown"], dtype=float)
    rows = []
    for label, lo, hi in SIZE_BUCKETS:
        s = slowdown[(size >= lo) & (size < hi) & np.isfinite(slowdown)]
        row: dict[str, Any] = {"bucket": label, "flows": len(s)}
        for p in percentiles:
            row[f"p{p:g}"] = float(np.percentile(s, p)) if len(s) else np.nan
        rows.append(row)
    return pd.DataFrame(rows)
