"""The Packet Slicing seed's reading (``packet-slicing-incast.txt``): the TCP,
marking threshold, buffer and header convention of its ns-2 simulations (§II.C,
Fig. 6(b); §IV, Figs. 8-11), shared by the ``incast`` and ``packet-slicing`` studies,
and the other readings as named variants.

Decided from the seed's text and the reference code before any run (the reasoning,
with its sources, in docs/studies.md, "The Packet Slicing seed's reading"):

- **TCP agent**: ns-2.35's ``Agent/TCP/FullTcp/Sack`` at both ends (``profile =
  "ns2_sack"``): the default of ns-2.35's DCTCP example (tcl/ex/dctcp-example.tcl,
  ``DC-TCP-Sack``); the seed traces sequence numbers "on bytes" (Fig. 10(a)), which
  FullTcp counts; slicing changes a flow's packet size mid-connection, which needs a
  byte sequence space. FullTcp has **no limited transmit** (``singledup_`` is read
  by the one-way ``TcpAgent`` only).
- **DCTCP's window floor: 1 segment**, the DCTCP authors' ns-2 code
  (``TcpAgent::slowdown``: ``if (cwnd_ < 1) cwnd_ = 1``). The seed's model takes 2 as
  the least window (eq. 3) and its Fig. 10(b) shows windows of 2 and 3: those are the
  model's assumption and the simulation's output, not its code.
- **K** = 20 packets of the payload, counted in bytes (ns-2's byte-mode RED compares
  the queue with ``thresh_ x mean_pktsize_``, ``mean_pktsize_`` = ``packetSize``,
  queue/red.cc): 20 x (S - 40) B for packets of S bytes, fixed in bytes when slicing
  shrinks the packets.
- **Buffer** 64 KB = 64,000 B, counted in bytes: the seed writes "1.5KB" for its
  1500 B packets, so its KB is 1000 B.
- **Headers**: the seed's sizes are on the wire (L_D = 1460, L_H = 40, eq. 8): a
  packet of S bytes carries S - 40 of payload.
- DCTCP's alpha starts at 0 (ns-2.35's ``dctcp_alpha_ 0.0``), g = 1/16 (the seed);
  RTO_min 200 ms; initial window 2 (ns-2.35's ``windowInit_``).

``TCP`` is the reading's ns-2 setup (an ``Ns2Reading``: it builds each study's
``[transport]`` and queue), ``READING`` what the studies print of it.
``VARIANTS`` are the other readings, run beside the chosen one where a study prints
them: ``floor2`` keeps everything but floors DCTCP's window at 2 (chosen by the
packet-slicing study before issue 46 *because* it reproduces Fig. 10(b), says so);
``former`` is that study's former reading whole (plain FullTcp, ``profile = "ns2"``,
with limited transmit forced on, K = 20 packets whatever their size, floor 2, DCTCP's
alpha starting at dcnsim's default 1).
``TESTBED`` is the emulated Linux testbed's (§II.B, §V): the agent of the reading with
what Linux's DCTCP fixes (floor 2, limited transmit, alpha from 1) and K in packets.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from dcnsim.studies.readings import Reading, register

__all__ = [
    "BUFFER",
    "BUFFER_BYTES",
    "HEADER",
    "READING",
    "TCP",
    "TESTBED",
    "VARIANTS",
    "Ns2Reading",
]

#: The switch's output buffer as scenarios write it, and in bytes (KB = 1000 B).
BUFFER = "64KB"
BUFFER_BYTES = 64_000
#: TCP/IP header bytes of every packet (L_H, eq. 8).
HEADER = 40
#: The marking threshold in packets of the payload (the seed, after DCTCP's paper).
K_PACKETS = 20


@dataclass(frozen=True)
class Ns2Reading:
    """One reading of the seed's ns-2 TCP: the profile, DCTCP's window floor, whether
    limited transmit is forced on, and whether K counts packets of any size
    (``k_in_packets``) or bytes of ``K_PACKETS`` full payloads."""

    name: str
    profile: str
    ecn_floor: int
    limited_transmit: bool = False
    k_in_packets: bool = False
    #: DCTCP's initial alpha: ns-2.35's ``dctcp_alpha_ 0.0``; ``None``: dcnsim's default,
    #: RFC 8257's 1.
    alpha_init: float | None = 0.0

    def transport(self, protocol: str, size: int) -> dict[str, Any]:
        """``[transport]`` for ``protocol`` with packets of ``size`` bytes on the wire."""
        t: dict[str, Any] = {
            "profile": self.profile,
            "protocol": protocol,
            "mss": f"{size - HEADER}B",
            "min_rto": "200ms",
            "ecn_floor": self.ecn_floor,
        }
        if protocol == "dctcp" and self.alpha_init is not None:
            t["dctcp"] = {"alpha_init": self.alpha_init}
        if self.limited_transmit:
            t["limited_transmit"] = True
        return t

    def k(self, size: int) -> str:
        """DCTCP's marking threshold for packets of ``size`` bytes (before slicing)."""
        if self.k_in_packets:
            return f"{K_PACKETS}pkt"
        return f"{K_PACKETS * (size - HEADER)}B"

    def queue(self, size: int, buffer: str = BUFFER) -> dict[str, Any]:
        """``network.queue``: ``buffer`` bytes, marking at ``k(size)``."""
        return {"capacity": buffer, "aqm": {"kind": "threshold", "k": self.k(size)}}


#: The reading every ns-2 run of the seed uses.
TCP = Ns2Reading("seed", "ns2_sack", ecn_floor=1)
#: The other readings, by name.
VARIANTS: dict[str, Ns2Reading] = {
    "floor2": replace(TCP, name="floor2", ecn_floor=2),
    "former": Ns2Reading(
        "former", "ns2", ecn_floor=2, limited_transmit=True, k_in_packets=True, alpha_init=None
    ),
}
#: The emulated testbed's (§II.B, §V: Linux 2.6.38 with DCTCP, an emulated switch
#: marking at 20 packets): what Linux's code fixes — the least window 2
#: (``dctcp_ssthresh``), limited transmit (duplicate ACKs counted as ``sacked_out``),
#: alpha starting at 1 (``dctcp_alpha_on_init``) — and K in packets; the rest as the
#: reading (a simplification: dcnsim's ``linux`` profile would also change the
#: initial window, delayed ACKs and more, which the seed does not give).
TESTBED = Ns2Reading(
    "testbed", "ns2_sack", ecn_floor=2, limited_transmit=True, k_in_packets=True, alpha_init=None
)

READING = register(
    Reading(
        seed="packet-slicing-incast.txt",
        studies=("incast", "packet-slicing"),
        tcp="ns-2.35 FullTcp/Sack (profile ns2_sack) without limited transmit, DCTCP's "
        "least window 1 segment, alpha from 0, g = 1/16, RTO_min 200 ms, initial window 2",
        marking=f"DCTCP K = {K_PACKETS} payloads counted in bytes ({K_PACKETS} x 1460 B), "
        "fixed when slicing shrinks the packets",
        buffer=f"{BUFFER} = {BUFFER_BYTES:,} B per port, counted in bytes (the seed's KB is "
        "1000 B)",
        header=f"sizes on the wire: a packet of S bytes carries S - {HEADER} (eq. 8)",
        why="ns-2.35's DCTCP example runs FullTcp/Sack; the seed counts sequence numbers "
        "in bytes and changes packet sizes mid-connection; the least window of 1 is the "
        "DCTCP authors' ns-2 code (TcpAgent::slowdown)",
        variants={
            "floor2": "DCTCP's least window 2 (chosen before issue 46 because it "
            "reproduces Fig. 10(b))",
            "former": "the packet-slicing study's reading before issue 46: plain FullTcp "
            "with limited transmit, K = 20 packets, floor 2, alpha from 1",
            "testbed": "the emulated Linux testbed's (Figs. 3, 12, 13): floor 2, limited "
            "transmit, alpha from 1, K = 20 packets",
        },
    )
)
