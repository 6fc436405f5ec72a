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
from dcnsim.studies.readings import first_seed, thawed


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
    "warmup_ms": 50.0,  # W1's warm-up
    "variant_loads": [0.1, 0.5, 0.9],
    "variant_seeds": [1, 2, 3],
}
LATENCY_QUICK: dict[str, Any] = {
    "loads": [0.0, 0.1, 0.9],
    "oversubs": ["64:4:1", "16:4:1"],
    "seeds": [1],
    "warmup_ms": 10.0,
    "variant_loads": [0.1],
    "variant_seeds": [1],
}
#: The oversubscription the named variants run at: the seed's numbered one.
VARIANT_OVERSUB = "64:4:1"

#: The readings of the seed (docs/studies.md, "Readings of the seed"), one letter
#: per question: A load, C connections, W when the test leaves, B buffers, E ELR,
#: T TCP, P pFabric. ``default`` is the one the seed's text and pFabric's ns-2
#: scripts support; each named variant changes one question, ``previous`` is the
#: study before issue 37.
READING_DEFAULT = "default"
_CHOSEN = {"A": "A1", "C": "C1", "W": "W0", "B": "B1", "E": "E1", "T": "T1", "P": "P1"}
LATENCY_READINGS: dict[str, dict[str, str]] = {
    READING_DEFAULT: _CHOSEN,
    **{code: {**_CHOSEN, code[0]: code} for code in ("A2", "C3", "W1", "B2", "E2", "T2")},
    **{code: {**_CHOSEN, code[0]: code} for code in ("T3", "P2")},
    "previous": {"A": "A1", "C": "C3", "W": "W1", "B": "Bp", "E": "E2", "T": "T3", "P": "P2"},
}
LATENCY_READING_TEXT: dict[str, str] = {
    READING_DEFAULT: "A1 C1 W0 B1 E1 T1 P1: the seed's text and pFabric's ns-2 scripts",
    "A2": "load a fraction of the agg->core link",
    "C3": "a connection with handshake and FIN per flow",
    "W1": "the test after a warm-up in which the queues fill",
    "B2": "ns-2's default queue limit, 50 packets (49 held)",
    "E2": "ELR for every packet",
    "T2": "the ns2 profile (FullTcp's defaults) with 1460 B segments",
    "T3": "dcnsim's default TCP",
    "P2": "pFabric's parameters rescaled to this tree's round trip",
    "previous": "the study before issue 37: A1 C3 W1, 150/24-packet queues, E2 T3 P2",
}


def reading_schemes(reading: str, schemes: list[str]) -> list[str]:
    """The schemes of ``schemes`` a reading changes (all for ``default``)."""
    if reading not in LATENCY_READINGS:
        raise ValueError(f"reading must be one of {', '.join(LATENCY_READINGS)}, got {reading!r}")
    only = {"T2": "TCP", "T3": "TCP", "P2": "pFabric", "E2": "+ELR"}.get(reading)
    if only is None:
        return schemes
    return [s for s in schemes if (s.endswith(only) if only == "+ELR" else s.startswith(only))]


TEST_PACKETS = 127  # host 0 to each of the other 127 hosts
TEST_PACKET_BYTES = 1500
HOST_DELAY_US = micros(BACKGROUND.get("network.host_delay"))  # 2.5
LINK_DELAY_US = micros(BACKGROUND.get("topology.link.delay"))  # 0.2
ACK_BYTES = 40
#: The test packets leave host 0 back to back: one every serialization time of a
#: 1500 B packet on its 1 Gbps link.
TEST_INTERVAL_US = TEST_PACKET_BYTES * 8 / 1e3  # 12 µs
#: Drop-tail switch buffer of the TCP schemes before issue 37 (``previous``):
#: pFabric's TCP-DropTail baseline, 225 KB = 150 packets of 1500 B per port.
DROPTAIL_BUFFER_PKTS = int(BACKGROUND.get("network.queue.capacity").removesuffix("pkt"))  # 150
#: pFabric switch (and NIC) buffer: pFabric's 36 KB = 24 packets per port.
PFABRIC_BUFFER_PKTS = 24
#: B1, pFabric's scripts' queues in bytes on every port: the seed's reading
#: (``readings.first_seed.QUEUES``, shared with the pfabric study).
SCRIPT_QUEUES = first_seed.QUEUES
#: B2, ns-2's default ``Queue set limit_ 50`` in packets: ``drop-tail.cc`` drops
#: when ``q_->length() + 1 >= qlim_``, so 49 are held.
NS2_DEFAULT_QUEUE = ("49pkt", 49)
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

#: T1 and P1, the seed's reading (``readings.first_seed``, shared with the pfabric
#: study): FullTcp/Sack as pFabric's scripts set it, and pFabric's host constants.
TCP_SCRIPTS = first_seed.TCP
#: T2: the ``ns2`` profile (ns-2.35 FullTcp's defaults) with the seed's 1460 B segments.
TCP_NS2: dict[str, Any] = {"profile": "ns2", "mss": first_seed.MSS}
PFABRIC_SCRIPTS = first_seed.PFABRIC
#: The test packets' traffic class, the one ELR routes under E1.
TEST_CLASS = 1

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


def latency_queue(scheme: str, reading: str = READING_DEFAULT) -> tuple[str, int]:
    """(capacity, full packets it holds) of every queue of ``scheme`` under ``reading``."""
    pfabric, _ = scheme_parts(scheme)
    buffers = LATENCY_READINGS[reading]["B"]
    if buffers == "B1":
        return SCRIPT_QUEUES["pFabric" if pfabric else "TCP"]
    if buffers == "B2":
        return NS2_DEFAULT_QUEUE
    size = PFABRIC_BUFFER_PKTS if pfabric else DROPTAIL_BUFFER_PKTS
    return f"{size}pkt", size


def latency_timing_us(warmup_ms: float, buffer_pkts: int) -> tuple[int, int]:
    """(first test packet, stop time) in µs.

    The run stops 2 ms plus five full 1 Gbps switch queues (5 x buffer x 12 µs, the
    switch ports of the longest path) after the last test packet was sent.
    """
    start = round(warmup_ms * 1e3)
    train = round((TEST_PACKETS - 1) * TEST_INTERVAL_US)
    margin = round(5 * buffer_pkts * TEST_INTERVAL_US) + 2000
    return start, start + train + margin


def latency_host_load(load: float, oversub: str, reading: str = READING_DEFAULT) -> float:
    """Each host's background load (a fraction of its link) for the seed's ``load``:
    the same under A1; under A2 what offers ``load`` of an agg->core link (64 hosts
    send 64/127 of their traffic through it)."""
    if LATENCY_READINGS[reading]["A"] == "A1":
        return load
    return load * LATENCY_OVERSUBSCRIPTIONS[oversub] * 127 / (64 * 64)


def latency_scenario(
    scheme: str,
    oversub: str,
    load: float,
    seed: int = 1,
    reading: str = READING_DEFAULT,
    warmup_ms: float = LATENCY_FULL["warmup_ms"],
) -> Scenario:
    """The seed's tree with all-to-all background load and 127 test packets from host 0.

    1 core, 2 aggregation switches, 8 ToRs, 16 hosts per ToR; 1 Gbps host links, the
    upper tiers at 1, 2 or 4 Gbps (``oversub`` 64:4:1, 32:4:1, 16:4:1); 0.2 µs per
    link, 2.5 µs host delay. Background: every host opens TCP flows (DeTail-style
    sizes) to every other host at ``load`` from time 0 (none at load 0). The test:
    one 1500 B packet from host 0 to each other host, back to back. ``scheme``:
    ``TCP`` (drop-tail), ``pFabric`` (pFabric transport and queues), either with
    ``+ELR``. ``reading``: one of ``LATENCY_READINGS`` (docs/studies.md);
    ``warmup_ms`` is when the test leaves under W1 (under W0 it leaves at 0).
    """
    pfabric, elr = scheme_parts(scheme)
    if oversub not in LATENCY_OVERSUBSCRIPTIONS:
        raise ValueError(
            f"oversub must be one of {', '.join(LATENCY_OVERSUBSCRIPTIONS)}, got {oversub!r}"
        )
    if not 0 <= load <= 1:
        raise ValueError(f"load must be within 0..1, got {load}")
    reading_schemes(reading, [scheme])
    parts = LATENCY_READINGS[reading]
    capacity, held = latency_queue(scheme, reading)
    start, stop = latency_timing_us(warmup_ms if parts["W"] == "W1" else 0.0, held)
    upper = {"rate": f"{LATENCY_OVERSUBSCRIPTIONS[oversub]}Gbps"}
    queue = {"kind": "pfabric" if pfabric else "droptail", "capacity": capacity}
    data = BACKGROUND.to_dict()
    data.update(
        name=f"latency-difference {scheme} {oversub} load={load:g} reading={reading}",
        seed=seed,
        stop_time=f"{stop}us",
    )
    data["topology"].update(tor_agg_link=upper, agg_core_link=dict(upper))
    data["network"]["queue"] = queue
    if pfabric or reading != "previous":
        # pFabric's scripts give every link, the hosts' too, the same queue.
        data["network"]["nic_queue"] = dict(queue)
    transport: dict[str, Any] = {}
    if pfabric:
        transport = {
            "protocol": "pfabric",
            "priority": "remaining",
            "pfabric": dict(PFABRIC_TRANSPORT if parts["P"] == "P2" else PFABRIC_SCRIPTS),
        }
        if reading != "previous":
            transport["host_queue_limit"] = TCP_SCRIPTS["host_queue_limit"]
    elif parts["T"] == "T1":
        transport = thawed(TCP_SCRIPTS)
    elif parts["T"] == "T2":
        transport = dict(TCP_NS2)
    if transport or parts["C"] == "C1":
        data["transport"] = {**data.get("transport", {}), **transport}
    if parts["C"] == "C1":
        data["transport"]["handshake"] = False
    probe = {
        "src": 0,
        "dst": "all",
        "size": f"{TEST_PACKET_BYTES}B",
        "time": f"{start}us",
        "interval": f"{TEST_INTERVAL_US:g}us",
    }
    if elr:
        data["forwarding"]["policy"] = "elr"
        if parts["E"] == "E1":
            data["forwarding"]["elr_classes"] = [TEST_CLASS]
            probe["class"] = TEST_CLASS
    host_load = latency_host_load(load, oversub, reading)
    workloads = [{**w, "load": host_load} for w in data["traffic"]["workloads"]]
    data["traffic"] = {"probes": [probe]}
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
