"""The QJUMP seed's reading (``qjump.txt``): Linux hosts on one 10 Gbps switch, the
TCP of the Linux kernel its prototype runs in, the switch's marking thresholds as
the seed states them. The ``qjump`` study builds every case from these objects.
"""

from __future__ import annotations

from dcnsim.studies.readings import Reading, frozen, register

#: The hosts' TCP: Linux's (profile ``linux``: 1448 B segments behind a 52 B header
#: with timestamps, initial window 10, delayed ACKs with quick-ACK mode, RTO_min
#: 200 ms, SACK, RACK, PRR), with NewReno's window rule: the seed's prototype is a
#: Linux qdisc (§"Implementation": "the Linux kernel traffic control"), whose kernel
#: defaults to CUBIC, which dcnsim does not model.
TCP = frozen({"profile": "linux", "protocol": "newreno"})

#: Every switch port's buffer: about a port's share of the Arista 7050's 9 MB shared
#: buffer; every NIC: Linux's ``txqueuelen`` of 1000 packets.
SWITCH_BUFFER = "512KB"
NIC_BUFFER = "1000pkt"

#: The marking thresholds the seed states, in packets: WRED's "best compromise was
#: [40, 80]" and DCTCP's "recommended ECN marking thresholds of [65, 65]".
WRED = frozen({"kind": "red", "min": "40pkt", "max": "80pkt"})
DCTCP = frozen({"kind": "threshold", "k": "65pkt"})

#: The hosts' software stack (``network.host_delay``), a **calibration**, not a
#: reading: the seed's memcached and Naiad latencies alone (p99 779 µs and ~500 µs,
#: "QJUMP in Action" 2 and 3) are almost all host software, which dcnsim does not
#: model otherwise. One lognormal per traversal of a stack, the same each way; its
#: two parameters solve the seed's two "alone" numbers in a model of the stacks
#: alone (a request is 4 traversals, client send to client receive; a four-way
#: barrier ends when its 12 messages of 2 traversals each have arrived, each host's
#: stack a FIFO; ``dcnsim.studies.qjump.calibration``), before any run of dcnsim and
#: before any run with Hadoop: median 148 µs, sigma 0.22 give 780 and 501 µs there.
#: Only the ``*_stack`` cases run it (``qjump.scenarios``): PTPd timestamps its
#: messages below the stack, so PTP's offset is read from the cases without it.
HOST_STACK_LEG = frozen({"kind": "lognormal", "median": "148us", "sigma": 0.22})
HOST_STACK = frozen({"send": HOST_STACK_LEG, "receive": HOST_STACK_LEG})

READING = register(
    Reading(
        seed="qjump.txt",
        studies=("qjump",),
        tcp="Linux's TCP (profile linux) with NewReno's window rule (the kernel's "
        "CUBIC is not modelled); ecn and dctcp the same stack with their rule",
        marking="ECN/WRED [40, 80] packets, DCTCP K = 65 packets (the seed's words)",
        buffer="512 KB per switch port (the Arista 7050's 9 MB shared), 1000 packets "
        "per NIC (txqueuelen)",
        header="Linux's: 1448 B payload + 52 B header (timestamps) = 1500 B MTU",
        why="the seed's hosts run Linux (its rate limiter is a Linux qdisc, its "
        "interposition LD_PRELOAD), so its TCP is Linux's",
        variants={
            "dcnsim-tcp": "dcnsim's default TCP (1460 B, no delayed ACKs; RTO_min "
            "200 ms), the study before issue 46",
        },
    )
)
