"""The BOTCP seed's scenarios (``botcp.txt`` §5): its fabric, its three schemes and
the three experiments run on them.

The fabric (§5): a 6 x 6 leaf-spine, 32 hosts per leaf (192 hosts), 10 Gbps host
links, 40 Gbps leaf-spine links, 128 KB per switch port (the seed's "~87 packets" of
1500 B is 128 KiB = 131,072 B), 1500-byte packets, TCP-ECN's marking threshold and
DCTCP's K = 20 packets, Bl, Bs, Bm = 20, 40, 60, X = 10 KB, min RTO 0.2 ms. What the
seed does not give is chosen here and said in ``docs/studies.md``: 1 µs per link, no
host delay, per-flow ECMP, the initial RTO equal to the minimum (the seed gives only
minRTO; RFC 6298's 1 s, or ns-2.35's default ``rtxcur_init_`` of 3 s, would make one
lost SYN cost seconds), an initial window of 2 segments for TCP-ECN and DCTCP
(ns-2.35's default ``windowInit_``, tcl/lib/ns-default.tcl; BOTCP starts at 1
segment, §3.2), and the MSS:
1460 B, or 1456 B for BOTCP, whose 4-byte IP option keeps its packets at 1500 B
(§4.4: "4/1456").

Figs. 8-10 take seeds too (issue 46; decided before their first seeded run). Their
flows start at fixed times, so one run per scheme has no interval. Seed ``s`` adds
to every flow's start (0 for the long flows, 0.5 ms for the short ones, k x 200 µs
for burst k) an offset drawn uniformly from [0, ``START_JITTER_NS``) = [0, 8 µs),
to the nanosecond, from ``np.random.default_rng([46, s])`` as the QJUMP study's
offsets; the scenario's seed is ``s`` as well, which salts ECMP's hash, so the
flows' spine paths vary with it. The three schemes of a seed share both (compared
paired by seed). 8 µs is the propagation round trip of a cross-leaf path (four
links of 1 µs, there and back), chosen from the seed's text: its bursts are
synchronized ("20 flows ... are injected ... every 200 µsec"; "then, five new short
flows join"), and flows started within one round trip still send their first
windows in the same round. A burst's first round of 20 flows at 1-2 segments is
24-48 µs of the 10 Gbps bottleneck's time (1.2 µs a 1500 B packet), three to six
times the span, so its packets still meet in the bottleneck's queue; 8 µs is 4 % of
the 200 µs between bursts and of the 200 µs RTO, the timescale of Figs. 9-10. In
Fig. 8 the short flows still join together, at a point of the long flows' window
cycle the seed does not fix. A span of one packet's serialization (1.2 µs) would
only reorder simultaneous events; one of the burst gap would undo the burst. Seed 1
draws as the others: the old zero offsets (simultaneous starts, ties broken by flow
order) are not a draw of the distribution, and a mean's interval needs runs of one
distribution; their numbers stay in ``docs/studies.md`` as the run before seeds.
The seeds are the plans' (full 1-5, quick 1-3), the load runs' own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from dcnsim.scenario import Scenario

__all__ = [
    "BOTCP_FULL",
    "BOTCP_QUICK",
    "BOTTLENECK",
    "INIT_CWND",
    "IW_VARIANT",
    "SCHEMES",
    "START_JITTER_NS",
    "BotcpPlan",
    "bandwidth_scenario",
    "extreme_scenario",
    "load_scenario",
    "start_offsets_ns",
]

#: The three schemes, in the order they are printed.
SCHEMES = ("botcp", "tcp_ecn", "dctcp")
LABELS = {"botcp": "BOTCP", "tcp_ecn": "TCP-ECN", "dctcp": "DCTCP"}

LEAVES = 6
SPINES = 6
HOSTS_PER_LEAF = 32
LINK_DELAY = "1us"
BUFFER = "128KiB"
K = "20pkt"
MIN_RTO = "200us"
HOST_RATE_BPS = 10e9

#: Where Figs. 8-10's flows meet: the port from host 0's leaf down to host 0.
BOTTLENECK = "leaf0->host0"


@dataclass(frozen=True)
class BotcpPlan:
    """What one variant of the study runs (Figs. 6, 7 and 11: web-search flows).

    Flows arrive (Poisson, all to all) during ``arrivals_s``; those that arrive after
    ``warmup_s`` are counted, and the run goes on to ``stop_s`` so that they finish.
    """

    leaves: int
    spines: int
    hosts_per_leaf: int
    loads: tuple[float, ...]
    seeds: tuple[int, ...]
    warmup_s: float
    arrivals_s: float
    stop_s: float


#: Seeds, of every experiment: each draws the load run's arrivals and sizes, shared
#: by the schemes of a load, and Figs. 8-10's start offsets (``start_offsets_ns``),
#: shared by their schemes, so the schemes are compared paired by seed on the 95 %
#: interval of the difference (issue 46). Five in the full variant, as the QJUMP
#: study's; three in the quick one, as the spraying studies' quick variants.
#: ``--seeds N`` runs 1..N instead.
BOTCP_FULL = BotcpPlan(
    leaves=LEAVES,
    spines=SPINES,
    hosts_per_leaf=HOSTS_PER_LEAF,
    loads=(0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9),
    seeds=(1, 2, 3, 4, 5),
    warmup_s=0.005,
    arrivals_s=0.05,
    stop_s=0.15,
)
#: The quick variant: 2 leaves x 8 hosts and 2 spines (the same rates, buffers and
#: settings), loads 0.3 and 0.7, seeds 1-3, 10 ms of arrivals.
BOTCP_QUICK = BotcpPlan(
    leaves=2,
    spines=2,
    hosts_per_leaf=8,
    loads=(0.3, 0.7),
    seeds=(1, 2, 3),
    warmup_s=0.001,
    arrivals_s=0.01,
    stop_s=0.04,
)


def _check_scheme(scheme: str) -> None:
    if scheme not in SCHEMES:
        raise ValueError(f"scheme must be one of {', '.join(SCHEMES)}, got {scheme!r}")


def _network(scheme: str) -> dict[str, Any]:
    if scheme == "botcp":
        # Drop-tail ports; every switch port stamps its occupancy (§4.1).
        return {
            "queue": {"capacity": BUFFER},
            "stages": [{"kind": "max_occupancy", "ports": "switches"}],
        }
    return {"queue": {"capacity": BUFFER, "aqm": {"kind": "threshold", "k": K}}}


#: The initial-window reading: BOTCP starts at 1 segment, the seed's words (§3.2: "The
#: initial sending rate of both types of flows is 1 MSS"; the seed has no public
#: code), TCP-ECN and DCTCP at ns-2.35's ``windowInit_`` of 2 (tcl/lib/ns-default.tcl:
#: "default changed on 2001/5/26"), the agent the seed's ns-2 runs would have used
#: unchanged. Its named variant, run beside it in the load experiment: TCP-ECN
#: starting at BOTCP's 1 segment (``init_cwnd``), which measures how much of BOTCP's
#: short-flow gap to TCP-ECN the initial window is.
INIT_CWND = {"tcp_ecn": 2, "dctcp": 2}
IW_VARIANT = ("tcp_ecn", 1)


def _transport(scheme: str, init_cwnd: int | None = None) -> dict[str, Any]:
    common = {"min_rto": MIN_RTO, "initial_rto": MIN_RTO}
    if scheme == "botcp":
        return {
            "protocol": "botcp",
            "mss": "1456B",
            **common,
            "botcp": {"bl": 20, "bs": 40, "bm": 60, "x": "10KB"},
        }
    protocol = {"tcp_ecn": "ecn", "dctcp": "dctcp"}[scheme]
    iw = INIT_CWND[scheme] if init_cwnd is None else init_cwnd
    return {"protocol": protocol, "mss": "1460B", "init_cwnd": iw, **common}


def _fabric(
    scheme: str,
    plan: BotcpPlan,
    name: str,
    stop_s: float,
    seed: int,
    init_cwnd: int | None = None,
) -> dict[str, Any]:
    _check_scheme(scheme)
    return {
        "name": name,
        "seed": seed,
        "stop_time": f"{round(stop_s * 1e6)}us",
        "topology": {
            "kind": "leaf_spine",
            "leaves": plan.leaves,
            "spines": plan.spines,
            "hosts_per_leaf": plan.hosts_per_leaf,
            "host_link": {"rate": "10Gbps", "delay": LINK_DELAY},
            "fabric_link": {"rate": "40Gbps", "delay": LINK_DELAY},
        },
        "network": _network(scheme),
        "forwarding": {"policy": "ecmp"},
        "transport": _transport(scheme, init_cwnd),
    }


def load_scenario(
    scheme: str, load: float, seed: int = 1, quick: bool = False, init_cwnd: int | None = None
) -> Scenario:
    """Figs. 6, 7 and 11: web-search flow sizes, Poisson arrivals from every host to
    uniformly random others at ``load`` of its link (the seed names neither the
    workload's source nor its loads: its intro cites web search, and the loads span
    0.1-0.9). ``init_cwnd``: TCP-ECN's or DCTCP's initial window instead of the
    reading's (``INIT_CWND``; BOTCP's is 1 whatever it says)."""
    if not 0 < load <= 1:
        raise ValueError(f"load must be in (0, 1], got {load}")
    if init_cwnd is not None and scheme == "botcp":
        raise ValueError("BOTCP's initial window is 1 segment (§3.2); init_cwnd is TCP-ECN's")
    plan = BOTCP_QUICK if quick else BOTCP_FULL
    iw = "" if init_cwnd is None else f" init_cwnd={init_cwnd}"
    name = f"botcp study: {scheme} load={load:g}{iw}"
    data = _fabric(scheme, plan, name, plan.stop_s, seed, init_cwnd)
    data["traffic"] = {
        "workloads": [
            {
                "src": "all",
                "dst": "random",
                "cdf": "websearch",
                "load": load,
                "stop": f"{round(plan.arrivals_s * 1e6)}us",
            }
        ]
    }
    return Scenario(data)


#: Figs. 8-10's start offsets are drawn within this: the propagation round trip of a
#: cross-leaf path, four links of ``LINK_DELAY`` there and back (module doc: why).
START_JITTER_NS = 2 * 4 * 1000


def start_offsets_ns(seed: int, flows: int) -> list[int]:
    """Figs. 8-10: each of ``flows`` flows' start offset for ``seed``, in ns, uniform
    in [0, ``START_JITTER_NS``) (the same for every scheme of the seed)."""
    rng = np.random.default_rng([46, seed])
    return [int(x) for x in rng.integers(0, START_JITTER_NS, size=flows)]


def _starts(base_us: list[float], seed: int) -> list[str]:
    """The flows' start times: ``base_us`` (the seed's) plus the seed's offsets."""
    offsets = start_offsets_ns(seed, len(base_us))
    return [f"{round(b * 1e3) + o}ns" for b, o in zip(base_us, offsets, strict=True)]


#: Fig. 8: two long flows, then five short ones, all to host 0 from other leaves.
LONG_SENDERS = (32, 64)
SHORT_SENDERS = (96, 128, 160, 33, 65)
LONG_BYTES = 4_000_000
SHORT_BYTES = 50_000
SHORT_START_S = 0.0005
BANDWIDTH_STOP_S = 0.012


def bandwidth_scenario(scheme: str, seed: int = 1) -> Scenario:
    """Fig. 8 (§5.2): two long flows of 4 MB start at 0; five short flows of 50 KB
    (the seed gives no sizes) join at 0.5 ms; all cross ``BOTTLENECK``, each start
    shifted by ``seed``'s offset (``start_offsets_ns``). Their windows and
    acknowledged bytes are traced."""
    senders = [(s, LONG_BYTES, 0.0) for s in LONG_SENDERS]
    senders += [(s, SHORT_BYTES, SHORT_START_S * 1e6) for s in SHORT_SENDERS]
    starts = _starts([us for _, _, us in senders], seed)
    flows = [
        {"src": src, "dst": 0, "size": f"{size}B", "start": start}
        for (src, size, _), start in zip(senders, starts, strict=True)
    ]
    data = _fabric(scheme, BOTCP_FULL, f"botcp study: {scheme} fig8", BANDWIDTH_STOP_S, seed)
    data["traffic"] = {"flows": flows}
    data["trace"] = {"flows": list(range(len(flows)))}
    return Scenario(data)


#: Figs. 9-10 (§5.3): 20 flows of 50 KB every 200 µs until 100 share the bottleneck.
BURSTS = 5
BURST_FLOWS = 20
BURST_GAP_US = 200
EXTREME_BYTES = 50_000
EXTREME_STOP_S = 0.05


def extreme_scenario(scheme: str, seed: int = 1) -> Scenario:
    """Figs. 9-10: 20 flows of 50 KB to host 0 every 200 µs, from hosts of the other
    leaves (32, 33, ...), until 100 flows, each start shifted by ``seed``'s offset
    (``start_offsets_ns``); ``BOTTLENECK``'s queue is traced."""
    n = BURSTS * BURST_FLOWS
    starts = _starts([float(BURST_GAP_US * (i // BURST_FLOWS)) for i in range(n)], seed)
    flows = [
        {"src": 32 + i, "dst": 0, "size": f"{EXTREME_BYTES}B", "start": start}
        for i, start in enumerate(starts)
    ]
    data = _fabric(scheme, BOTCP_FULL, f"botcp study: {scheme} fig9", EXTREME_STOP_S, seed)
    data["traffic"] = {"flows": flows}
    data["trace"] = {"queues": [BOTTLENECK]}
    return Scenario(data)
