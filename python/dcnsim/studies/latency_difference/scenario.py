"""The latency-difference study's scenarios: the seed's tree, its four schemes, the
test packets and their closed-form latencies, and what the seed reports.

Every scenario is built from the flow-heavy benchmark (``dcnsim bench flowheavy``,
``BENCH_SCENARIOS`` in the core): the seed's tree with its TCP background at 64:4:1,
whose host delay, link delay and drop-tail buffer are the study's.
"""

from __future__ import annotations

from typing import Any

from dcnsim.bench import bench_scenario
from dcnsim.scenario import Scenario


def micros(text: str) -> float:
    """µs from a ``"<n>us"`` time string of this study's scenarios."""
    if not text.endswith("us"):
        raise ValueError(f"expected a time in us, got {text!r}")
    return float(text[:-2])


#: The TCP scheme's background at 64:4:1 and 50 % load, without the test packets: the
#: scenario every one of the study's scenarios is built from.
BACKGROUND = bench_scenario("flowheavy")


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
HOST_DELAY_US = micros(BACKGROUND.get("network.host_delay"))  # 2.5
LINK_DELAY_US = micros(BACKGROUND.get("topology.link.delay"))  # 0.2
ACK_BYTES = 40
#: The test packets leave host 0 back to back: one every serialization time of a
#: 1500 B packet on its 1 Gbps link.
TEST_INTERVAL_US = TEST_PACKET_BYTES * 8 / 1e3  # 12 µs
#: Drop-tail switch buffer of the TCP schemes: pFabric's TCP-DropTail baseline,
#: 225 KB = 150 packets of 1500 B per port.
DROPTAIL_BUFFER_PKTS = int(BACKGROUND.get("network.queue.capacity").removesuffix("pkt"))  # 150
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


def hop_us(size: int, rate_gbps: float) -> float:
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
    return 2 * HOST_DELAY_US + 2 * hop_us(size, 1) + upper_hops * hop_us(size, upper)


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


def scheme_parts(scheme: str) -> tuple[bool, bool]:
    """(pfabric, elr) of a scheme name."""
    if scheme not in LATENCY_SCHEMES:
        raise ValueError(f"scheme must be one of {', '.join(LATENCY_SCHEMES)}, got {scheme!r}")
    return scheme.startswith("pFabric"), scheme.endswith("+ELR")


def latency_default_buffer(scheme: str) -> int:
    """The switch buffer (packets per port) of a scheme unless one is given."""
    pfabric, _ = scheme_parts(scheme)
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
    pfabric, elr = scheme_parts(scheme)
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
    data = BACKGROUND.to_dict()
    data.update(
        name=f"latency-difference {scheme} {oversub} load={load:g}",
        seed=seed,
        stop_time=f"{stop}us",
    )
    data["topology"].update(tor_agg_link=upper, agg_core_link=dict(upper))
    data["network"]["queue"] = queue
    if pfabric:
        # pFabric's priority queues are on every port, the hosts' NICs too.
        data["network"]["nic_queue"] = dict(queue)
        data["transport"] = {
            "protocol": "pfabric",
            "priority": "remaining",
            "pfabric": dict(PFABRIC_TRANSPORT),
        }
    if elr:
        data["forwarding"]["policy"] = "elr"
    workloads = [{**w, "load": load} for w in data["traffic"]["workloads"]]
    data["traffic"] = {
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
        data["traffic"]["workloads"] = workloads
    data["trace"] = {"queues": list(LATENCY_TRACED_PORTS)}
    return Scenario(data)


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
