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
    link order, as Parsimon's (``greedy.rs``: a representative takes every unclustered
    link close enough to it).

    Parsimon compares each representative with every unclustered link (in parallel),
    O(links x clusters): at k = 64 over 100 ms (393 k links, tens of thousands of
    clusters) that is hours. Here the comparison is the same, but only against the
    links a k-d tree (``scipy.spatial.cKDTree``) finds in an L1 ball that holds every
    link close enough: the three conditions together imply

        |sizes - sizes_r|_1 + a |load - load_r| + b |fan_in - fan_in_r|
            <= tol * (sum(sizes_r) + a load_r + b fan_in_r)

    for any a, b > 0 (a, b scale load and fan-in to the size quantiles' magnitude), so
    the ball is a superset of the cluster and the result is the exhaustive greedy
    pass's, link for link (``test_clustering_is_the_exhaustive_greedy_pass``).
    """
    from scipy.spatial import cKDTree

    rep = np.full(len(feat.load), -1)
    for s in np.unique(feat.shape):
        links = np.flatnonzero(feat.shape == s)
        load, fan_in, sizes = feat.load[links], feat.fan_in[links], feat.sizes[links]
        total = sizes.sum(axis=1)
        a = _scale(total, load)
        b = _scale(total, fan_in)
        points = np.column_stack([sizes, a * load, b * fan_in])
        # A hair wider than the bound, for the rounding of the tree's sums.
        radius = tolerance * (total + a * load + b * fan_in) * (1 + 1e-9) + 1e-9
        tree = cKDTree(points)
        mine = np.full(len(links), -1)
        for r in range(len(links)):
            if mine[r] >= 0:
                continue
            near = np.asarray(tree.query_ball_point(points[r], radius[r], p=1), dtype=np.int64)
            near = near[mine[near] < 0]
            close = (
                (np.abs(load[near] - load[r]) <= tolerance * load[r])
                & (np.abs(sizes[near] - sizes[r]).sum(axis=1) <= tolerance * total[r])
                & (np.abs(fan_in[near] - fan_in[r]) <= tolerance * fan_in[r])
            )
            mine[near[close]] = r
            mine[r] = r
        rep[links] = links[mine]
    return rep


def _scale(total: np.ndarray, x: np.ndarray) -> float:
    """A factor that brings ``x`` to the magnitude of ``total`` (1 if ``x`` is all 0)."""
    mean = float(x.mean())
    return float(total.mean()) / mean if mean > 0 else 1.0
