"""The first seed's reading (``latency-difference-3tier-pfabric-elr.txt``): the TCP
agent, marking threshold, buffers and header of pFabric's own ns-2 scripts, which the
seed's numbers tie it to (its 0.2 µs link and 2.5 µs host delays are the scripts'
``MEAN_LINK_DELAY`` and ``HOST_DELAY``; notes in ``docs/notes/issue37-readings.md``).
The ``latency-difference`` and ``pfabric`` studies build their transports and queues
from these objects.
"""

from __future__ import annotations

from dcnsim.studies.readings import Reading, frozen, register

#: The segment and its header: ``pktSize 1460`` of payload, FullTcp's 40 B of
#: TCP/IP header (``headersize()``), 1500 B on the wire.
MSS = "1460B"
HEADER = "40B"

#: T1, the TCP baseline of pFabric's scripts (``qjump.tcl``, ``run_baseline.sh``):
#: FullTcp/Sack (the ``ns2_sack`` profile) with 1460 B segments (``pktSize``),
#: ``windowInit_ 12``, ``window_ 1000000`` (hence ssthresh), ``maxcwnd_`` = queue - 1
#: = 149 (a cap on the window: ``rwnd``), ``minrto_`` = ``rtxcur_init_`` = 200 µs,
#: ``maxrto_ 2``, ``tcpTick_`` 1 µs, an ACK per segment, ``dynamic_dupack_ 1000000``
#: (no fast retransmit), and no TCP Small Queues (ns-2 has none).
TCP = frozen(
    {
        "profile": "ns2_sack",
        "mss": MSS,
        "header": HEADER,
        "init_cwnd": 12,
        "initial_ssthresh": "1000000pkt",
        "rwnd": "149pkt",
        "min_rto": "200us",
        "initial_rto": "200us",
        "max_rto": "2s",
        "rto_granularity": "1us",
        "dupack_threshold": 1000000,
        "host_queue_limit": 1000000,
    }
)

#: P1: the constants of pFabric's scripts (``run_pfabric.sh``, ``qjump.tcl``;
#: dcnsim's ``[transport.pfabric]`` defaults are these): init_cwnd 12, max_cwnd 23,
#: a 45 µs RTO, probe mode after 5 timeouts; no TCP Small Queues.
PFABRIC = frozen({"init_cwnd": 12, "max_cwnd": 23, "rto": "45us", "probe_after": 5})

#: B1, the scripts' queues in bytes, as ns-2 counts them, on every port (hosts'
#: too). TCP: RED (``run_baseline.sh``: ``DCTCP_K=10000``, no marking) drops an
#: arrival once the bytes queued reach ``limit_ x mean_pktsize_`` = 150 x 1460
#: (``red.cc``), which holds 146 full packets, as dcnsim's drop-tail does with
#: 219000 B (queued + arrival <= capacity). pFabric: the drop-prio queue
#: (``pfabric.patch``, ``DropTail::enque``) evicts until the bytes are below
#: 24 x 1500, so 35999 B, 23 full packets. (capacity, full packets it holds).
QUEUES = frozen({"TCP": ("219000B", 146), "pFabric": ("35999B", 23)})

#: DCTCP's marking threshold, K = 65 packets (pFabric §5), counted as the same RED
#: queue counts its limit: ``thresh_`` x ``mean_pktsize_`` bytes = 65 x 1460.
DCTCP_K = "94900B"

READING = register(
    Reading(
        seed="latency-difference-3tier-pfabric-elr.txt",
        studies=("latency-difference", "pfabric"),
        tcp="ns-2 FullTcp/Sack as pFabric's scripts set it (T1): 1460 B segments, "
        "initial window 12, window cap 149, RTO 200 µs (min and initial, 1 µs tick, "
        "max 2 s), an ACK per segment, no fast retransmit, no TCP Small Queues; "
        "DCTCP the same agent with protocol dctcp; pFabric's host with the scripts' "
        "constants (P1: 12 / 23 / 45 µs / probe after 5)",
        marking=f"DCTCP at K = 65 x 1460 B = {DCTCP_K} (RED's thresh_ x mean_pktsize_)",
        buffer="the scripts' QUEUE_SIZE in bytes on every port, NICs too (B1): TCP and "
        "DCTCP 219000 B (146 full packets), pFabric 35999 B (23)",
        header="1460 B payload + 40 B TCP/IP header = 1500 B on the wire",
        why="the seed names no TCP, buffer or threshold; its delays and its one "
        "connection per host pair are pFabric's ns-2 scripts', so the scripts decide "
        "(docs/studies.md, latency-difference); the pfabric study is the scripts' own "
        "experiment and runs the same agent, queues and header",
        variants={
            "T2": "the ns2 profile (FullTcp's defaults) with 1460 B segments",
            "T3": "dcnsim's default TCP",
            "B2": "ns-2's default queue limit, 50 packets (49 held)",
            "P2": "pFabric's parameters rescaled to the tree's round trip",
            "previous": "the pfabric study before issue 46: newreno with dcnsim's "
            "defaults (initial window 10, fast retransmit), 150-packet queues, "
            "K = 65 packets, 24-packet pFabric queues",
        },
    )
)
