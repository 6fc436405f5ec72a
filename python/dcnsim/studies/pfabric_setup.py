"""The pFabric study's setup: the paper's fabric, workloads and three transports.

Alizadeh et al., "pFabric: Minimal Near-Optimal Datacenter Transport", SIGCOMM 2013,
§5: a leaf-spine fabric of 9 leaves x 16 hosts and 4 spines (10 Gbps host links,
40 Gbps fabric links), Poisson all-to-all flows of web-search or data-mining sizes,
and pFabric, DCTCP and TCP under the first seed's reading of pFabric's scripts
(``readings.first_seed``): what one run of the study (``studies/pfabric.py``) is, and
how long it lasts. Every choice is in ``docs/studies.md``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dcnsim.scenario import Scenario
from dcnsim.studies.readings import first_seed, thawed

#: The three transports, in the order they are printed.
PFABRIC_SCHEMES = ("pfabric", "dctcp", "tcp")

#: Every link's propagation delay and the per-host delay (applied on send and on
#: receive): a 4-hop round trip is 8 x 0.2 + 4 x 2.5 = 11.6 µs of delays plus one
#: full-packet serialization per hop, 14.6 µs in all, the paper's figure.
LINK_DELAY = "0.2us"
HOST_DELAY = "2.5us"
HOST_RATE_BPS = 10e9
MSS = 1460


@dataclass(frozen=True)
class PfabricPlan:
    """What one variant of the study runs.

    A run at load L lasts ``min(length_at_08 * 0.8 / L, max_length)`` simulated
    seconds for its workload: the same expected number of flow arrivals at every
    load (so the same wall time), capped. Flows are counted when they arrive in
    ``[WARMUP x length, WINDOW_END x length)``; the rest of the run lets them finish.
    """

    leaves: int
    workloads: tuple[str, ...]
    loads: tuple[float, ...]
    seeds: tuple[int, ...]
    #: workload -> (simulated seconds at load 0.8, cap in seconds)
    lengths: dict[str, tuple[float, float]]


SPINES = 4
HOSTS_PER_LEAF = 16
WARMUP = 0.15
WINDOW_END = 0.75

#: Seeds: each draws the run's arrivals and sizes, shared by the three schemes of a
#: point, so the schemes are compared paired by seed on the 95 % interval of the
#: difference (issue 46). Five in the full variant, as the QJUMP study's; three in the
#: quick one, as the spraying studies' quick variants (the fewest that give an
#: interval with more than one degree of freedom). ``--seeds N`` runs 1..N instead.
PFABRIC_FULL = PfabricPlan(
    leaves=9,
    workloads=("websearch", "datamining"),
    loads=(0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8),
    seeds=(1, 2, 3, 4, 5),
    lengths={"websearch": (0.24, 2.0), "datamining": (1.2, 1.2)},
)
#: The quick variant: a smaller leaf-spine (4 leaves x 16 hosts, 4 spines, the same
#: rates and delays, still full bisection), web search only, loads 0.2 and 0.6, seeds
#: 1-3, runs as long as the full variant's but capped at 400 ms (shorter runs held too
#: few large flows to decide the large-flow claim).
PFABRIC_QUICK = PfabricPlan(
    leaves=4,
    workloads=("websearch",),
    loads=(0.2, 0.6),
    seeds=(1, 2, 3),
    lengths={"websearch": (0.24, 0.4)},
)


def run_length(plan: PfabricPlan, workload: str, load: float) -> float:
    """Simulated seconds of the run of ``workload`` at ``load`` in ``plan``."""
    if workload not in plan.lengths:
        raise ValueError(
            f"the plan has no run length for workload {workload!r} "
            f"(it has {', '.join(plan.lengths)}); pass length_s to pfabric_scenario"
        )
    at_08, cap = plan.lengths[workload]
    return min(at_08 * 0.8 / load, cap)


def pfabric_window(length_s: float) -> tuple[float, float]:
    """The arrival window whose flows are counted: (after the warm-up, end)."""
    return WARMUP * length_s, WINDOW_END * length_s


def _queue(scheme: str) -> dict[str, Any]:
    """Every port's queue under the seed's reading (``readings.first_seed``): the
    scripts' buffers in bytes, DCTCP marking at K = 65 x 1460 B."""
    if scheme == "pfabric":
        return {"kind": "pfabric", "capacity": first_seed.QUEUES["pFabric"][0]}
    if scheme == "dctcp":
        aqm = {"kind": "threshold", "k": first_seed.DCTCP_K}
        return {"capacity": first_seed.QUEUES["TCP"][0], "aqm": aqm}
    if scheme == "tcp":
        return {"capacity": first_seed.QUEUES["TCP"][0]}
    raise ValueError(f"scheme must be one of {', '.join(PFABRIC_SCHEMES)}, got {scheme!r}")


def _transport(scheme: str) -> dict[str, Any]:
    """The seed's reading (``readings.first_seed``): pFabric's host with the scripts'
    constants; DCTCP and TCP the scripts' FullTcp/Sack (T1), RTO 200 µs from the first
    segment (``rtxcur_init_``), without TCP Small Queues."""
    if scheme == "pfabric":
        return {
            "protocol": "pfabric",
            "priority": "remaining",
            "host_queue_limit": first_seed.TCP["host_queue_limit"],
            "pfabric": thawed(first_seed.PFABRIC),
        }
    protocol = {"dctcp": "dctcp", "tcp": "newreno"}[scheme]
    return {"protocol": protocol, **thawed(first_seed.TCP)}


def pfabric_scenario(
    scheme: str,
    workload: str,
    load: float,
    seed: int = 1,
    quick: bool = False,
    length_s: float | None = None,
) -> Scenario:
    """One run: ``scheme`` (``pfabric``, ``dctcp`` or ``tcp``) carrying ``workload``
    (a shipped CDF: ``websearch`` or ``datamining``) at ``load``.

    Leaf-spine with 4 spines and 16 hosts per leaf, 9 leaves (4 with ``quick``),
    10 Gbps host links and 40 Gbps fabric links of 0.2 µs, 2.5 µs per host; every
    port (switch and NIC) has the scheme's queue; per-flow ECMP. Poisson arrivals
    from every host to uniformly random other hosts at ``load`` of its link, for
    ``length_s`` simulated seconds (default: the plan's run length).
    """
    if scheme not in PFABRIC_SCHEMES:
        raise ValueError(f"scheme must be one of {', '.join(PFABRIC_SCHEMES)}, got {scheme!r}")
    if not 0 < load <= 1:
        raise ValueError(f"load must be in (0, 1], got {load}")
    plan = PFABRIC_QUICK if quick else PFABRIC_FULL
    if length_s is None:
        length_s = run_length(plan, workload, load)
    stop_us = round(length_s * 1e6)
    queue = _queue(scheme)
    return Scenario(
        {
            "name": f"pfabric study: {scheme} {workload} load={load:g} seed={seed}",
            "seed": seed,
            "stop_time": f"{stop_us}us",
            "topology": {
                "kind": "leaf_spine",
                "leaves": plan.leaves,
                "spines": SPINES,
                "hosts_per_leaf": HOSTS_PER_LEAF,
                "host_link": {"rate": "10Gbps", "delay": LINK_DELAY},
                "fabric_link": {"rate": "40Gbps", "delay": LINK_DELAY},
            },
            "network": {"host_delay": HOST_DELAY, "queue": queue, "nic_queue": dict(queue)},
            "forwarding": {"policy": "ecmp"},
            "transport": _transport(scheme),
            "traffic": {
                "workloads": [{"src": "all", "dst": "random", "cdf": workload, "load": load}]
            },
        }
    )
