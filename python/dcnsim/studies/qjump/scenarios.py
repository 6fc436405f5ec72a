"""The QJUMP study's scenarios: the seed's testbed stand-in, its applications and
the cases of its Figures 1 and 3, and the level sweep over f.

The seed ran on a 10 Gbps testbed of one switch. dcnsim's stand-in: 12 hosts on one
switch (a star), 10 Gbps links of 1 µs; the TCP, buffers and marking thresholds are
the seed's reading (``dcnsim.studies.readings.qjump``: Linux's TCP, 512 KB per
switch port, 1000-packet NICs). Host roles:

- PTPd (``periodic``): server host 11 sends a 90 B sync message to hosts 0-10
  every millisecond (PTPd's default is one per second; more samples per run);
- memcached (``request_response``): server host 0, clients hosts 1-4, closed
  loop, 64 B gets for 1024 B values, 50 µs think time;
- Naiad (``barrier``): hosts 8-11, a four-way barrier of 64 B messages every
  100 µs;
- Hadoop (``shuffle``): every host maps and reduces, all to all, back-to-back
  jobs.

The three latency-sensitive applications run together in every case: their own
load is under 1 % of a link, so "alone" is their run without the shuffle. The
testbed's runs are deterministic in dcnsim (a star, no random choice), so a seed
draws each application's start offset: within one of its periods (PTPd's 1 ms,
Naiad's and memcached's 100 µs) and Hadoop's within 1 ms; the seeds' runs give the
interval of every comparison.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dcnsim.scenario import Scenario
from dcnsim.studies.readings import qjump as reading
from dcnsim.studies.readings import thawed

HOSTS = 12
RATE = "10Gbps"
LINK = {"rate": RATE, "delay": "1us"}
SWITCH_BUFFER = reading.SWITCH_BUFFER
NIC_BUFFER = reading.NIC_BUFFER
P = 1500
#: The network epoch 2nP/R of the stand-in, in seconds.
EPOCH_S = 2 * HOSTS * P * 8 / 10e9

PTP_SERVER, PTP_CLIENTS = 11, list(range(11))
MEMCACHED_SERVER, MEMCACHED_CLIENTS = 0, [1, 2, 3, 4]
NAIAD_HOSTS = [8, 9, 10, 11]

#: QJUMP levels (class, f) in the seed's spirit: PTPd at the top (f = 1), Naiad and
#: memcached below with room for their bursts (a four-way barrier's 3 messages and
#: their ACKs; 4 responses and ACKs at the server), Hadoop at the bottom with the
#: qdisc's default factor for its lowest band (sch_qjump.c: p7rate 10000), which
#: does not limit it.
LEVELS = {"ptp": (7, 1), "naiad": (6, 2), "memcached": (5, 8), "hadoop": (0, 10000)}

#: Figure 3's cases: the ideal (each alone), and the shared network five ways.
FIG3_CASES = ["alone", "hadoop_alone", "contended", "pause", "ecn_wred", "dctcp", "qjump"]
SHARED = ["contended", "pause", "ecn_wred", "dctcp", "qjump"]
#: Figure 1's memcached and Naiad with the calibrated host stack (``reading.HOST_STACK``):
#: ``<case>_stack`` is ``<case>`` with it.
STACK_CASES = ["alone_stack", "contended_stack", "qjump_stack"]
CASES = FIG3_CASES + STACK_CASES

#: The sweep over f (the seed's 1 <= f <= n).
FACTORS = [1, 2, 3, 6, 12]


def duration_s(quick: bool) -> float:
    return 0.04 if quick else 0.5


def shuffle_bytes(quick: bool) -> int:
    """Bytes per (mapper, reducer) pair: a job of about 9 ms (quick) or 35 ms."""
    return 1_000_000 if quick else 4_000_000


#: Each application's start offset is drawn uniformly within this, per seed (µs).
OFFSET_US = {"ptp": 1000.0, "memcached": 100.0, "naiad": 100.0, "hadoop": 1000.0}


def start_offsets(seed: int) -> dict[str, str]:
    """Each application's start time for ``seed``: uniform within ``OFFSET_US``, to the
    nanosecond (PTPd's first round no earlier than 0.5 ms, as before)."""
    rng = np.random.default_rng([46, seed])
    drawn = {app: float(rng.uniform(0.0, span)) for app, span in OFFSET_US.items()}
    drawn["ptp"] += 500.0
    return {app: f"{round(us * 1e3)}ns" for app, us in drawn.items()}


def _apps(case: str, duration: float, quick: bool, seed: int) -> dict[str, Any]:
    classes = {a: (LEVELS[a][0] if case == "qjump" else 0) for a in LEVELS}
    start = start_offsets(seed)
    traffic: dict[str, Any] = {}
    if case != "hadoop_alone":
        traffic["periodic"] = [
            {
                "server": PTP_SERVER,
                "clients": PTP_CLIENTS,
                "interval": "1ms",
                "start": start["ptp"],
                "class": classes["ptp"],
            }
        ]
        traffic["request_response"] = [
            {
                "servers": [MEMCACHED_SERVER],
                "clients": MEMCACHED_CLIENTS,
                "think": "50us",
                "start": start["memcached"],
                "class": classes["memcached"],
            }
        ]
        traffic["barrier"] = [
            {
                "hosts": NAIAD_HOSTS,
                "iterations": int(duration / 100e-6),
                "gap": "100us",
                "start": start["naiad"],
                "class": classes["naiad"],
            }
        ]
    if case != "alone":
        job_s = HOSTS * shuffle_bytes(quick) * 8 / 10e9
        traffic["shuffle"] = [
            {
                "mappers": "all",
                "reducers": "all",
                "bytes": f"{shuffle_bytes(quick)}B",
                "jobs": int(duration / job_s) + 1,
                "start": start["hadoop"],
                "class": classes["hadoop"],
            }
        ]
    return traffic


def case_scenario(case: str, quick: bool, seed: int = 1) -> Scenario:
    """One case of Figures 1 and 3 on the stand-in testbed, the applications' start
    offsets drawn from ``seed``; ``<case>_stack`` adds the calibrated host stack."""
    if case not in CASES:
        raise ValueError(f"qjump case {case!r}: not one of {', '.join(CASES)}")
    stack = case.endswith("_stack")
    case = case.removesuffix("_stack")
    duration = duration_s(quick)
    queue: dict[str, Any] = {"kind": "droptail", "capacity": SWITCH_BUFFER}
    nic_queue: dict[str, Any] = {"kind": "droptail", "capacity": NIC_BUFFER}
    transport: dict[str, Any] = thawed(reading.TCP)
    network: dict[str, Any] = {"host_delay": thawed(reading.HOST_STACK)} if stack else {}
    agents: list[dict[str, Any]] = []
    if case == "ecn_wred":
        queue["aqm"] = thawed(reading.WRED)
        transport["protocol"] = "ecn"
    elif case == "dctcp":
        queue["aqm"] = thawed(reading.DCTCP)
        transport["protocol"] = "dctcp"
    elif case == "pause":
        agents.append({"kind": "pause", "switches": "all", "xoff": "100KB"})
    elif case == "qjump":
        queue["kind"] = nic_queue["kind"] = "priority"
        network["stages"] = [
            {
                "kind": "qjump",
                "ports": "nics",
                "levels": [{"class": c, "f": f} for c, f in LEVELS.values()],
            }
        ]
    spec: dict[str, Any] = {
        "name": f"qjump {case}{' with host stack' if stack else ''} seed={seed}",
        "seed": seed,
        "stop_time": f"{duration}s",
        "topology": {"kind": "star", "hosts": HOSTS, "link": LINK},
        "network": {"queue": queue, "nic_queue": nic_queue, **network},
        "transport": transport,
        "traffic": _apps(case, duration, quick, seed),
    }
    if agents:
        spec["agents"] = agents
    return Scenario(spec)


def level_rate_bps(f: float) -> float:
    """A level's rate f·P per epoch = f·R/2n."""
    return f * P * 8 / EPOCH_S


def level_scenario(f: float, quick: bool, seed: int = 1) -> Scenario:
    """Every host offers 1.25 times a QJUMP level's rate (at most 10 Gbps) of 1500 B
    datagrams, Poisson, to random hosts at the level (factor ``f``, class 5,
    overflow dropped): the level admits f·P bytes
    per epoch per host, so its rate is f·R/2n, and the more it admits, the more its
    packets meet others at a destination (the seed's "Latency Variance vs.
    Throughput")."""
    stop = 0.01 if quick else 0.05
    return Scenario(
        {
            "name": f"qjump level f={f} seed={seed}",
            "seed": seed,
            "stop_time": f"{stop}s",
            "topology": {"kind": "star", "hosts": HOSTS, "link": LINK},
            "network": {
                "queue": {"kind": "priority", "capacity": SWITCH_BUFFER},
                "nic_queue": {"kind": "priority", "capacity": NIC_BUFFER},
                "stages": [{"kind": "qjump", "ports": "nics", "levels": [{"class": 5, "f": f}]}],
            },
            "traffic": {
                "streams": [
                    {
                        "src": "all",
                        "dst": "random",
                        "rate": f"{int(min(10e9, 1.25 * level_rate_bps(f)))}bps",
                        "size": f"{P}B",
                        "class": 5,
                        "record": True,
                    }
                ]
            },
        }
    )


#: The worst case's top level and the saturating level below it.
WORST_CLASS, WORST_BELOW = 7, 0


def worst_case_scenario(quick: bool, seed: int = 1) -> Scenario:
    """The f = 1 bound in its worst case (the seed's Equation 2: "all hosts transmit
    to one destination at the worst time"): hosts 1-11 each send the top level's full
    rate, one P-byte packet per epoch, to host 0, all in phase (every host's packet
    reaches the switch at once, every epoch), while each of them also sends a lower
    level (class 0, not rate-limited) to host 0 at its link rate, Poisson, filling
    its NIC, the switch port and the buffers (the lower level's phase differs per
    seed). QJUMP's promise: no top-level packet waits more than one epoch."""
    stop = 0.005 if quick else 0.02
    senders = list(range(1, HOSTS))
    top = [
        {
            "src": h,
            "dst": 0,
            "rate": f"{round(level_rate_bps(1))}bps",
            "pattern": "constant",
            "size": f"{P}B",
            "class": WORST_CLASS,
            "record": True,
        }
        for h in senders
    ]
    below = [
        {"src": h, "dst": 0, "load": 1.0, "size": f"{P}B", "class": WORST_BELOW} for h in senders
    ]
    levels = [{"class": WORST_CLASS, "f": 1}, {"class": WORST_BELOW, "f": 10000}]
    return Scenario(
        {
            "name": f"qjump f=1 worst case seed={seed}",
            "seed": seed,
            "stop_time": f"{stop}s",
            "topology": {"kind": "star", "hosts": HOSTS, "link": LINK},
            "network": {
                "queue": {"kind": "priority", "capacity": SWITCH_BUFFER},
                "nic_queue": {"kind": "priority", "capacity": NIC_BUFFER},
                "stages": [{"kind": "qjump", "ports": "nics", "levels": levels}],
            },
            "traffic": {"streams": top + below},
        }
    )
