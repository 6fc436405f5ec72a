"""Clustering links whose workloads are alike, so that one link-level simulation serves
them all (Parsimon §4.3; ``clustering-impls/src/greedy.rs``, ``feature.rs``).

Parsimon's greedy clustering takes an unclustered link as a cluster's representative
and puts in its cluster every unclustered link close enough to it, then repeats. Its
features are a link's load and the quantiles of its flows' sizes and inter-arrival
times. dcnsim's features are those the decomposition's error depends on (docs/
estimate.md): the link's load, its size mix (20 quantiles of the flows' sizes) and its
fan-in (the number of source hosts, each an access link in the link-level scenario);
links are alike when they have the same shape (a NIC, a last hop or a link between
switches; the same rate) and

    |load - load_r| <= tol * load_r,   WMAPE(size quantiles) <= tol,
    |fan_in - fan_in_r| <= tol * fan_in_r,

where WMAPE is sum |q - q_r| / sum q_r (Parsimon's closeness, ``is_close_enough``).
``tolerance = 0`` clusters only identical features: every link is simulated.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dcnsim.estimation.decompose import Drawn, LinkFlows

__all__ = ["Features", "cluster", "features"]

#: Quantiles of the size mix compared.
QUANTILES = np.linspace(0.025, 0.975, 20)


@dataclass(frozen=True)
class Features:
    """One row per port with traffic (``LinkFlows.ports`` order)."""

    shape: np.ndarray  # int: (nic, last hop, rate) as one key
    load: np.ndarray
    sizes: np.ndarray  # (links, len(QUANTILES))
    fan_in: np.ndarray


def features(d: Drawn, lf: LinkFlows) -> Features:
    """Every link's features at once (no loop over links): the hops sorted by port and
    size give each link's sizes in order, whose quantiles are interpolated as
    ``np.quantile``'s default (linear) method does."""
    size = d.flows["size_bytes"].astype(float)
    rate = d.ports["rate_bps"].astype(float)
    p = lf.ports
    counts = np.diff(lf.starts)
    link = np.repeat(np.arange(len(p)), counts)  # each hop's link, in ``lf.order``
    hop_size = size[d.flow[lf.order]]
    order = np.lexsort((hop_size, link))
    ordered = hop_size[order]
    load = np.bincount(link, weights=hop_size, minlength=len(p)) * 8.0 / d.span_s / rate[p]
    at = (counts[:, None] - 1) * QUANTILES[None, :]
    low = np.floor(at).astype(np.int64)
    high = np.minimum(low + 1, counts[:, None] - 1)
    start = lf.starts[:-1, None]
    a, b = ordered[start + low], ordered[start + high]
    sizes = a + (b - a) * (at - low)
    src = d.flows["src"][d.flow[lf.order]].astype(np.int64)
    pairs = np.unique(link.astype(np.int64) * (int(src.max()) + 1) + src)
    fan_in = np.bincount(pairs // (int(src.max()) + 1), minlength=len(p)).astype(float)
    _, shape = np.unique(
        np.stack([d.ports["node_is_host"][p], d.ports["peer_is_host"][p], d.ports["rate_bps"][p]]),
        axis=1,
        return_inverse=True,
    )
    return Features(shape.ravel(), load, sizes, fan_in)


def cluster(feat: Features, tolerance: float) -> np.ndarray:
    """The representative of each link (an index into the features' rows): greedy, in
    link order, as Parsimon's."""
    n = len(feat.load)
    rep = np.full(n, -1)
    for r in range(n):
        if rep[r] >= 0:
            continue
        rest = np.flatnonzero((rep < 0) & (feat.shape == feat.shape[r]))
        close = (
            (np.abs(feat.load[rest] - feat.load[r]) <= tolerance * feat.load[r])
            & (
                np.abs(feat.sizes[rest] - feat.sizes[r]).sum(axis=1)
                <= tolerance * feat.sizes[r].sum()
            )
            & (np.abs(feat.fan_in[rest] - feat.fan_in[r]) <= tolerance * feat.fan_in[r])
        )
        rep[rest[close]] = r
        rep[r] = r
    return rep
