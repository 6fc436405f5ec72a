"""The spraying seed's reading (``packet-spraying-fat-tree.txt``): ns-3.23's TCP, as
the seed's Table 1 names its simulator, with the seed's 1500 B packets and queues.
The ``spraying`` and ``spraying-random`` studies build their fat-tree's transport and
queues from these objects.
"""

from __future__ import annotations

from dcnsim.studies.readings import Reading, frozen, register

#: ns-3.23's TcpNewReno (profile ``ns3``: 128 KiB socket buffers, initial window 1,
#: delayed ACKs, RTO_min 1 s) with the seed's 1500 B packets: MSS 1460 B and a 40 B
#: header (the profile's 52 B, with ns-3.23's timestamp option, would make them 1512 B).
TCP = frozen({"profile": "ns3", "mss": "1460B", "header": "40B"})

#: Every port's queue: drop-tail, "a buffer size equal to 1000 packets, where each
#: packet is 1500-bytes long" (the seed's §3).
QUEUE = frozen({"capacity": "1000pkt"})

READING = register(
    Reading(
        seed="packet-spraying-fat-tree.txt",
        studies=("spraying", "spraying-random"),
        tcp="ns-3.23's TcpNewReno (profile ns3: initial window 1, delayed ACKs, "
        "RTO_min 1 s, 128 KiB buffers, fast retransmit on the third duplicate ACK)",
        marking="none (drop-tail; the seed has no ECN)",
        buffer="1000-packet drop-tail queue on every port",
        header="1460 B payload + 40 B header = the seed's 1500 B packets (no timestamp option)",
        why="the seed's Table 1 names ns-3.23 and 1500 B packets; ns-3.23's only TCP "
        "with fast recovery is TcpNewReno",
        variants={
            "sack, rack, dsack_undo, eifel": "how TCP tolerates reordering "
            "(spraying-random's tolerance runs, beside the seed's dupack3)",
        },
    )
)
