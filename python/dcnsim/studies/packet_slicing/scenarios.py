"""The Packet Slicing seed's scenarios (§II.B, §IV, §V), as dcnsim scenarios.

Shared settings (§IV: "other simulation settings are as same as that in Section
II.B"): a star, workers answering one aggregator (host 0), 1500 B packets (1460 B
payload + 40 B header), RTO_min 200 ms, 100 µs round-trip propagation (25 µs per
link); TCP, K and the 64 KB buffer are the seed's one reading
(``dcnsim.studies.readings.packet_slicing.TCP``, shared with the ``incast`` study:
FullTcp/Sack without limited transmit, K = 20 payloads in bytes, DCTCP's window
floored at 1), with the handshake on, since the switch counts flows by their SYN and
FIN; ``reading=`` runs a named variant. Packet Slicing is the ``packet_slicing``
agent at the switch, with the seed's rule for ŵ (2 when n > Y/(2s)) and the passive
estimator below it.
"""

from __future__ import annotations

from typing import Any

from dcnsim.models.packet_slicing import capacity_y
from dcnsim.scenario import Scenario
from dcnsim.studies.readings.packet_slicing import BUFFER_BYTES, TCP, TESTBED, Ns2Reading

__all__ = [
    "RTT_MIN",
    "Y_1G",
    "incast_scenario",
    "testbed_scenario",
    "web_search_scenario",
]

#: Round-trip propagation through the switch: 4 links of 25 µs.
RTT_MIN = "100us"

#: Eq. (5) for the seed's simulations: 64 KB + 1 Gbps x 100 µs.
Y_1G = capacity_y(BUFFER_BYTES, 1e9, 100e-6)

#: D²TCP's deadline for each response (relative to its round's start): with 64 KB
#: responses of a few ms it puts the deadline imminence factor d inside the seed's
#: [0.5, 2.0] range as flows progress.
D2TCP_DEADLINE = "20ms"


def _agent(size: int) -> dict[str, Any]:
    return {
        "kind": "packet_slicing",
        "switches": "all",
        "rtt_min": RTT_MIN,
        "packet": f"{size}B",
    }


def incast_scenario(
    workers: int,
    protocol: str = "dctcp",
    slicing: bool = False,
    *,
    rate: str = "1Gbps",
    rounds: int = 1,
    sru: str = "64KB",
    size: int = 1500,
    buffer: str = "64KB",
    spread: str | None = None,
    trace: bool = False,
    aggregator_rate: str | None = None,
    reading: Ns2Reading = TCP,
) -> Scenario:
    """``workers`` hosts answer host 0 with ``sru`` each per round (§IV's incast).

    ``size``: packets on the wire without slicing; ``spread``: each worker starts at a
    uniform time within it (§IV.B.3); ``trace``: the bottleneck's queue and every flow's
    window are recorded; ``aggregator_rate``: the bottleneck's rate when it differs
    from the others' (the testbed's 100 Mbps); ``reading``: the seed's TCP, K and
    buffer convention (``dcnsim.studies.readings.packet_slicing``: its one reading, or a
    named variant).
    """
    topology: dict[str, Any] = {
        "kind": "star",
        "hosts": workers + 1,
        "link": {"rate": rate, "delay": "25us"},
    }
    if aggregator_rate is not None:
        topology["host_rates"] = [aggregator_rate] + [rate] * workers
    incast: dict[str, Any] = {
        "aggregator": 0,
        "workers": "all",
        "sru": sru,
        "rounds": rounds,
        "persistent": True,
    }
    if spread is not None:
        incast["spread"] = spread
    if protocol == "d2tcp":
        incast["deadline"] = D2TCP_DEADLINE
    sc: dict[str, Any] = {
        "name": f"packet-slicing {protocol}{'_PS' if slicing else ''} N={workers}",
        "topology": topology,
        "network": {"queue": reading.queue(size, buffer)},
        "transport": reading.transport(protocol, size),
        "traffic": {"incast": [incast]},
    }
    if slicing:
        sc["agents"] = [_agent(size)]
    if trace:
        sc["trace"] = {"queues": ["sw0->host0"], "flows": list(range(workers))}
    return Scenario(sc)


def testbed_scenario(
    workers: int, slicing: bool, sru: str = "64KB", buffer: str = "48KB", rounds: int = 5
) -> Scenario:
    """§II.B / §V's testbed emulated: workers at 1 Gbps, the switch's port to the
    aggregator limited to 100 Mbps, a buffer of 32 packets (48 KB, counted in bytes so
    sliced packets fit more), K = 20, ~100 µs round trip, ``rounds`` rounds of ``sru``;
    TCP as the seed's reading but for DCTCP's least window, 2 as Linux keeps it
    (``TESTBED``).

    The seed's testbed has one server open every flow; here each flow has its own
    worker host, so the bottleneck sees the same flows from several 1 Gbps links.
    """
    return incast_scenario(
        workers,
        "dctcp",
        slicing,
        rounds=rounds,
        sru=sru,
        buffer=buffer,
        aggregator_rate="100Mbps",
        trace=True,
        reading=TESTBED,
    )


def web_search_scenario(
    workers: int, protocol: str, slicing: bool, queries: int, total: str = "500KB"
) -> Scenario:
    """§V.C, Fig. 13: the testbed's web search, ``queries`` queries one after another,
    each answered with ``total`` / n bytes per worker."""
    sc = testbed_scenario(workers, slicing).to_dict()
    sc["name"] = f"web-search {protocol}{'_PS' if slicing else ''} N={workers}"
    sc["transport"]["protocol"] = protocol
    if protocol != "dctcp":
        sc["transport"].pop("dctcp", None)
    sc["traffic"] = {
        "web_search": [
            {
                "aggregator": 0,
                "workers": "all",
                "total": total,
                "queries": queries,
                "gap": "1ms",
            }
        ]
    }
    sc.pop("trace")
    return Scenario(sc)
