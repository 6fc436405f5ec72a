"""Bad input: one clear line naming the field, from Python and from the CLI alike.

The catalogue below holds bad inputs for every section of ``docs/scenario.md``, keyed
by the section's heading, each with the field its error must name and a part of the
reason it must give: wrong types, values out of range, misspelt (unknown) keys,
missing required keys, bad units and inconsistent combinations. Every case is
checked through ``dcnsim.validate`` and ``dcnsim.run``; the first case of each
section also through ``dcnsim validate FILE`` (exit 2, one line on stderr, the same
message). ``test_the_catalogue_covers_every_section`` keeps it in step with the
reference: a new section needs at least two cases here.

| section of docs/scenario.md | cases |
|---|---|
| Units | 15 |
| Files and values | 7 |
| Top level | 8 |
| Topology | 7 |
| `kind = "star"` / `"tree3"` / `"fat_tree"` / `"leaf_spine"` / `"edges"` | 6 / 7 / 5 / 4 / 14 |
| Network / Strict priority / AQM / Outages | 10 / 9 / 14 / 7 |
| Switch agents / `kind = "pause"` / `kind = "packet_slicing"` | 9 / 13 / 6 |
| Forwarding | 5 |
| Transport / Profiles | 32 / 3 |
| Traffic / probes / streams / flows / workloads | 3 / 12 / 14 / 14 / 15 |
| incast / periodic / request_response / barrier / shuffle / web_search | 15 / 2 / 2 / 2 / 2 / 3 |
| Flow numbering / Trace | 2 / 9 |
| Outputs (``--out``, CLI only) | 2 |

Sections that describe output files only (`flows.parquet`, Other files) take no input.
"""

from __future__ import annotations

import re

import pytest

import dcnsim
from dcnsim import ScenarioError
from dcnsim.suggest import with_hint
from simhelp import EXAMPLES, REPO, assert_one_error_line, cli


def base() -> dict:
    return {
        "topology": {"kind": "star", "hosts": 4},
        "traffic": {"probes": [{"src": 0, "dst": 1}]},
    }


def with_(path: str, value, data: dict | None = None) -> dict:
    """``data`` with ``path`` set, unchecked: the catalogue's errors are the core's."""
    return dcnsim.Scenario(data or base()).set(path, value, check=False).to_dict()


class Toml(str):
    """A case written as TOML text (what only a file can say: a key twice, bad syntax)."""


FLOW = {"src": 0, "dst": 1, "size": "10KB"}
WORKLOAD = {"src": 0, "dst": "random", "cdf": "websearch", "load": 0.5, "stop": "1ms"}
STREAM = {"src": 0, "dst": 1, "load": 0.5, "stop": "1ms"}
INCAST = {"aggregator": 0, "workers": [1, 2], "sru": "1KB"}
PRIORITY = {"kind": "priority", "capacity": "100pkt"}
PAUSE = {"kind": "pause", "switches": "all", "xoff": "20pkt"}
SLICING = {"kind": "packet_slicing", "switches": "all", "rtt_min": "100us"}
WEB_SEARCH = {"aggregator": 0, "workers": [1, 2], "total": "10KB"}
PERIODIC = {"server": 0, "clients": [1, 2], "interval": "1ms"}
QJUMP = {"kind": "qjump", "ports": "nics", "levels": [{"class": 3, "f": 4}]}
REQUEST_RESPONSE = {"servers": [0], "clients": [1, 2]}
BARRIER = {"hosts": [0, 1, 2], "iterations": 2}
SHUFFLE = {"mappers": [0, 1], "reducers": [2, 3], "bytes": "10KB"}
TREE3 = {"kind": "tree3", "aggs": 2, "tors": 2, "hosts_per_tor": 2}
LEAF_SPINE = {"kind": "leaf_spine", "leaves": 2, "spines": 2, "hosts_per_leaf": 2}
EDGES_NODES = [
    {"name": "h0", "kind": "host"},
    {"name": "h1", "kind": "host"},
    {"name": "s0", "kind": "switch"},
]
EDGES_LINKS = [{"a": "h0", "b": "s0"}, {"a": "h1", "b": "s0"}]


def edges(nodes=EDGES_NODES, links=EDGES_LINKS) -> dict:
    return with_("topology", {"kind": "edges", "nodes": nodes, "links": links})


def queue(**table) -> dict:
    return with_("network.queue", {"capacity": "100pkt", **table})


def aqm(**table) -> dict:
    return queue(aqm=table)


def without(table: dict, key: str) -> dict:
    return {k: v for k, v in table.items() if k != key}


def nested(depth: int) -> dict:
    deep: dict = {}
    node = deep
    for _ in range(depth):
        node["x"] = {}
        node = node["x"]
    return deep


DISCONNECTED = {
    "kind": "edges",
    "nodes": [*EDGES_NODES, {"name": "s1", "kind": "switch"}],
    "links": [{"a": "h0", "b": "s0"}, {"a": "h1", "b": "s1"}],
}
TWO_HOST_STAR = '[topology]\nkind = "star"\nhosts = 2\n'

# Section heading of docs/scenario.md -> [(case id, scenario, field, part of the reason)].
# The first case of each section is also run through the CLI, so it must be writable
# as a TOML file.
CATALOGUE: dict[str, list[tuple[str, dict | Toml, str, str]]] = {
    "Bounds": [
        ("zero-length-run", with_("stop_time", "0us"), "stop_time", "zero length"),
        ("link-delay-of-197-days", with_("topology.link.delay", "17020800s"),
         "topology.link.delay", "beyond the 1 s bound"),
        ("rwnd-below-one-segment", with_("transport.rwnd", "1B"), "transport.rwnd",
         "smaller than one segment"),
        ("queue-below-one-packet", with_("network.queue", {"capacity": "1B"}),
         "network.queue.capacity", "holds no full packet"),
        ("probe-of-one-byte", with_("traffic.probes[0].size", "1B"), "traffic.probes[0].size",
         "smaller than its own headers"),
        ("stream-faster-than-its-link",
         with_("traffic.streams", [{"src": 0, "dst": 1, "rate": "1000Tbps", "stop": "1ms"}]),
         "traffic.streams[0].rate", "faster than host 0's link"),
        ("flow-after-the-stop-time",
         with_("stop_time", "1ms", with_("traffic.flows", [{"src": 0, "dst": 1, "size": "1KB",
                                                            "start": "2ms"}])),
         "traffic.flows[0].start", "not before the run's stop_time"),
        # Issue 48: the applications', stages' and agents' sizes and times.
        ("periodic-message-of-10-bytes", with_("traffic.periodic", [PERIODIC | {"size": "10B"}]),
         "traffic.periodic[0].size", "smaller than its own headers"),
        ("periodic-message-of-100-KB", with_("traffic.periodic", [PERIODIC | {"size": "100KB"}]),
         "traffic.periodic[0].size", "exceeds the maximum of 65535 B"),
        ("periodic-interval-of-1-ps", with_("traffic.periodic", [PERIODIC | {"interval": "1ps"}]),
         "traffic.periodic[0].interval",
         "0.000001us is shorter than the 0.144us the server's 10Gbps link takes to send one "
         "message to each of the 2 clients"),
        ("qjump-packet-of-1-byte", with_("network.stages", [QJUMP | {"packet": "1B"}]),
         "network.stages[0].packet", "must be from 64 B (the Ethernet minimum) to 65535 B"),
        ("qjump-packet-of-100-KB", with_("network.stages", [QJUMP | {"packet": "100KB"}]),
         "network.stages[0].packet", "got 100000 B"),
        ("qjump-epoch-of-1e7-s", with_("network.stages", [QJUMP | {"epoch": "1e7s"}]),
         "network.stages[0].epoch", "a delay of 10000000 s is beyond the 1 s bound"),
        ("slicing-rtt-min-of-1e7-s", with_("agents", [SLICING | {"rtt_min": "1e7s"}]),
         "agents[0].rtt_min", "a delay of 10000000 s is beyond the 1 s bound"),
        ("pause-refresh-of-1-ps", with_("agents", [PAUSE | {"refresh": "1ps"}]),
         "agents[0].refresh",
         "0.000001us is shorter than one pause quantum (512 bit times, 0.0512us at"),
        ("pause-refresh-of-1e7-s", with_("agents", [PAUSE | {"refresh": "1e7s"}]),
         "agents[0].refresh", "beyond the 1 s bound"),
        ("letflow-gap-of-1e7-s",
         with_("forwarding", {"policy": "letflow", "flowlet_gap": "1e7s"}),
         "forwarding.flowlet_gap", "a delay of 10000000 s is beyond the 1 s bound"),
        ("letflow-gap-of-zero", with_("forwarding", {"policy": "letflow", "flowlet_gap": "0us"}),
         "forwarding.flowlet_gap", "must be positive"),
        # Issue 48: start times before stop_time, stops after their start.
        ("probe-after-the-stop-time",
         with_("stop_time", "1ms", with_("traffic.probes[0].time", "2ms")),
         "traffic.probes[0].time", "the probe starts at 2000us, not before the run's stop_time"),
        ("periodic-after-the-stop-time",
         with_("stop_time", "1ms", with_("traffic.periodic", [PERIODIC | {"start": "2ms"}])),
         "traffic.periodic[0].start", "not before the run's stop_time"),
        ("incast-after-the-stop-time",
         with_("stop_time", "1ms", with_("traffic.incast", [INCAST | {"start": "2ms"}])),
         "traffic.incast[0].start", "the incast starts at 2000us, not before the run's stop_time"),
        ("web-search-after-the-stop-time",
         with_("stop_time", "1ms", with_("traffic.web_search", [WEB_SEARCH | {"start": "2ms"}])),
         "traffic.web_search[0].start", "not before the run's stop_time"),
        ("periodic-stops-before-it-starts",
         with_("traffic.periodic", [PERIODIC | {"start": "2ms", "stop": "1ms"}]),
         "traffic.periodic[0].stop", "must be after start"),
        ("request-response-stops-before-it-starts",
         with_("traffic.request_response",
               [REQUEST_RESPONSE | {"requests": 5, "start": "2ms", "stop": "1ms"}]),
         "traffic.request_response[0].stop", "must be after start"),
        # Issue 48: sizes a flow or an application sends, at most the CDF's 1 TB.
        ("flow-of-2-TB", with_("traffic.flows", [FLOW | {"size": "2000GB"}]),
         "traffic.flows[0].size", "2000000000000 B exceeds the maximum of 1e12 B"),
        ("workload-flows-of-2-TB",
         with_("traffic.workloads", [without(WORKLOAD, "cdf") | {"size": "2000GB"}]),
         "traffic.workloads[0].size", "2000000000000 B exceeds the maximum of 1e12 B"),
        ("incast-sru-of-2-TB", with_("traffic.incast", [INCAST | {"sru": "2000GB"}]),
         "traffic.incast[0].sru", "2000000000000 B exceeds the maximum of 1e12 B"),
        ("incast-total-of-2-TB",
         with_("traffic.incast", [without(INCAST, "sru") | {"total": "2000GB"}]),
         "traffic.incast[0].total", "2000000000000 B exceeds the maximum of 1e12 B"),
        ("request-of-2-TB",
         with_("traffic.request_response", [REQUEST_RESPONSE | {"request": "2000GB"}]),
         "traffic.request_response[0].request", "2000000000000 B exceeds the maximum of 1e12 B"),
        ("response-of-2-TB",
         with_("traffic.request_response", [REQUEST_RESPONSE | {"response": "2000GB"}]),
         "traffic.request_response[0].response", "2000000000000 B exceeds the maximum of 1e12 B"),
        ("barrier-message-of-2-TB", with_("traffic.barrier", [BARRIER | {"size": "2000GB"}]),
         "traffic.barrier[0].size", "2000000000000 B exceeds the maximum of 1e12 B"),
        ("shuffle-of-2-TB", with_("traffic.shuffle", [SHUFFLE | {"bytes": "2000GB"}]),
         "traffic.shuffle[0].bytes", "2000000000000 B exceeds the maximum of 1e12 B"),
        ("web-search-answer-of-2-TB",
         with_("traffic.web_search", [WEB_SEARCH | {"total": "2000GB"}]),
         "traffic.web_search[0].total", "2000000000000 B exceeds the maximum of 1e12 B"),
        # Issue 48: Packet Slicing's sizes and interval, pFabric's timeout.
        ("slicing-packet-of-100-KB", with_("agents", [SLICING | {"packet": "100KB"}]),
         "agents[0].packet", "must be from 64 B to 65535 B, got 100000 B"),
        ("slicing-floor-of-100-KB",
         with_("agents", [SLICING | {"packet": "9000B", "floor": "100KB"}]),
         "agents[0].floor", "to packet (9000 B), got 100000 B"),
        ("slicing-interval-of-1e7-s", with_("agents", [SLICING | {"interval": "1e7s"}]),
         "agents[0].interval", "a delay of 10000000 s is beyond the 1 s bound"),
        ("incast-spread-of-1e7-s", with_("traffic.incast", [INCAST | {"spread": "1e7s"}]),
         "traffic.incast[0].spread", "a delay of 10000000 s is beyond the 1 s bound"),
        ("pfabric-rto-of-1000-s", with_("transport.pfabric", {"rto": "1000s"}),
         "transport.pfabric.rto", "(120 s, Linux's TCP_RTO_MAX), got"),
        # Issue 48: the last keys without a bound (round 3).
        ("outage-after-the-stop-time",
         with_("stop_time", "1ms", with_("network.outages",
                                         [{"port": "sw0->host1", "start": "2ms", "stop": "3ms"}])),
         "network.outages[0].start", "the outage starts at 2000us, not before the run's stop_time"),
        ("pause-xoff-beyond-the-switch", with_("agents", [PAUSE | {"xoff": "1000000pkt"}]),
         "agents[0].xoff", "is not below what the largest switch holds (4004pkt"),
        ("pause-xoff-in-bytes-beyond-the-switch",
         with_("agents", [PAUSE | {"xoff": "1000GB", "xon": "1KB"}]),
         "agents[0].xoff", "1000000000000B is not below what the largest switch holds"),
        ("pause-headroom-beyond-a-port",
         with_("agents", [PAUSE | {"xoff": "100KB", "headroom": "100MB"}]),
         "agents[0].headroom", "must be below the switch ports' buffer"),
        ("pause-buffer-beyond-the-switch",
         with_("agents", [without(PAUSE, "xoff") | {"alpha": 1.0, "buffer": "1000GB"}]),
         "agents[0].buffer", "is more than the largest switch's queues hold"),
        ("pause-resume-offset-beyond-the-buffer",
         with_("agents", [without(PAUSE, "xoff") | {"alpha": 1.0, "buffer": "100KB",
                                                    "resume_offset": "200KB"}]),
         "agents[0].resume_offset", "must be below buffer (100000B)"),
        ("pause-deadlock-watch-of-1e7-s", with_("agents", [PAUSE | {"deadlock_after": "1e7s"}]),
         "agents[0].deadlock_after", "5 s, the longest detection time of SONiC's PFC watchdog"),
        ("token-bucket-faster-than-its-ports",
         with_("network.stages", [{"kind": "token_bucket", "ports": "nics",
                                   "classes": [{"class": 3, "rate": "1000Tbps"}]}]),
         "network.stages[0].classes[0].rate", "faster than the fastest of the stage's ports"),
        ("token-bucket-burst-of-an-hour",
         with_("network.stages", [{"kind": "token_bucket", "ports": "nics",
                                   "classes": [{"class": 3, "rate": "1Mbps", "burst": "1GB"}]}]),
         "network.stages[0].classes[0].burst", "at most 1 s like any delay"),
        ("ssthresh-of-linux-infinity", with_("transport.initial_ssthresh", "4000000000000B"),
         "transport.initial_ssthresh",
         "is 2739726027 segments, at least Linux's TCP_INFINITE_SSTHRESH (2147483647"),
        ("botcp-threshold-of-2-TB", with_("transport.botcp", {"x": "2000GB"}),
         "transport.botcp.x", "2000000000000 B exceeds the maximum of 1e12 B"),
        ("probe-train-past-the-stop-time",
         with_("stop_time", "1ms", with_("traffic.probes[0]",
                                         {"src": 0, "dst": "all", "interval": "600us"})),
         "traffic.probes[0].interval", "only 2 of its 3 probes would be sent"),
        ("probe-train-past-the-clock",
         with_("traffic.probes[0]", {"src": 0, "dst": "all", "interval": "1e7s"}),
         "traffic.probes[0].interval", "run past the end of the simulated clock"),
        ("think-time-longer-than-the-client",
         with_("traffic.request_response", [REQUEST_RESPONSE | {"think": "1e7s", "stop": "1ms"}]),
         "traffic.request_response[0].think", "is not before its stop (1000us)"),
        ("barrier-gap-longer-than-the-run",
         with_("stop_time", "1ms", with_("traffic.barrier", [BARRIER | {"gap": "1s"}])),
         "traffic.barrier[0].gap", "its second round would never come"),
        ("shuffle-gap-past-the-clock",
         with_("traffic.shuffle", [SHUFFLE | {"jobs": 3, "gap": "1e7s"}]),
         "traffic.shuffle[0].gap", "3 rounds 10000000000000us apart"),
        ("web-search-gap-longer-than-the-run",
         with_("stop_time", "1ms", with_("traffic.web_search", [WEB_SEARCH | {"gap": "1e7s"}])),
         "traffic.web_search[0].gap", "is not before the run's stop_time (1000us)"),
        # Issue 49: links.parquet's interval.
        ("link-interval-of-zero", with_("trace", {"links": "0us"}), "trace.links",
         "an interval of 0 counts nothing"),
        ("link-rows-beyond-the-bound",
         with_("stop_time", "1s", with_("trace", {"links": "1ns"})), "trace.links",
         "rows, more than 100000000: give a longer interval"),
    ],
    "Units": [
        ("unit-typo", with_("topology.link.rate", "10Gps"), "topology.link.rate",
         'unknown unit "Gps"'),
        ("unit-in-lower-case", with_("topology.link.rate", "10gbps"), "topology.link.rate",
         'unknown unit "gbps"'),
        ("number-without-unit", with_("network.host_delay", "10"), "network.host_delay",
         "has no unit"),
        ("number-not-a-string", with_("topology.link.rate", 1e10), "topology.link.rate",
         "expected a string"),
        ("sub-picosecond-time", with_("network.host_delay", "0.5ps"), "network.host_delay",
         "whole number of picoseconds"),
        ("zero-rate", with_("topology.link.rate", "0Gbps"), "topology.link.rate",
         "must be positive"),
        ("negative-rate", with_("topology.link.rate", "-1Gbps"), "topology.link.rate",
         "must be positive"),
        ("rate-unit-for-a-time", with_("topology.link.delay", "10Gbps"), "topology.link.delay",
         'unknown unit "Gbps"'),
        ("time-unit-for-a-rate", with_("topology.link.rate", "1us"), "topology.link.rate",
         'unknown unit "us"'),
        ("time-beyond-the-clock", with_("network.host_delay", "1e9s"), "network.host_delay",
         "too large"),
        ("size-beyond-2^64", with_("traffic.flows", [FLOW | {"size": "1e300B"}]),
         "traffic.flows[0].size", "too large"),
        ("not-a-number", with_("topology.link.rate", "fast"), "topology.link.rate",
         "expected a number followed by a unit"),
        ("nan", with_("topology.link.rate", "nanGbps"), "topology.link.rate",
         "expected a number followed by a unit"),
        ("unit-twice", with_("network.host_delay", "1 us us"), "network.host_delay",
         'unknown unit "us us"'),
        ("fraction-of-a-packet", queue(capacity="1.5pkt"), "network.queue.capacity",
         "not a whole number of packets"),
    ],
    "Files and values": [
        ("duplicate-key", Toml(TWO_HOST_STAR + '[transport]\nmss = "1460B"\nmss = "536B"\n'),
         "scenario", "duplicate key mss (line 6)"),
        ("invalid-toml", Toml(TWO_HOST_STAR + "seed = \n"), "scenario", "line 4"),
        ("integer-beyond-64-bits", base() | {"seed": 2**70}, "seed",
         "too large for a 64-bit integer"),
        ("lone-surrogate", base() | {"name": "a\ud800b"}, "name", "lone surrogate"),
        ("nested-too-deep", base() | {"trace": nested(100)}, "trace" + ".x" * 63,
         "nested more than 64 levels deep"),
        ("cdf-a-directory", with_("traffic.workloads", [WORKLOAD | {"cdf": str(REPO / "docs")}]),
         "traffic.workloads[0].cdf", "it is a directory"),
        ("cdf-a-device", with_("traffic.workloads", [WORKLOAD | {"cdf": "/dev/zero"}]),
         "traffic.workloads[0].cdf", "it is not a regular file"),
    ],
    "Top level": [
        ("unknown-top-level-key", with_("colour", "red"), "colour", "unknown key"),
        ("topology-missing", {"traffic": {}}, "topology", "required"),
        ("name-not-text", with_("name", 5), "name", "expected a string"),
        ("name-a-list", with_("name", ["a"]), "name", "invalid type: list"),
        ("negative-seed", with_("seed", -1), "seed", "integer `-1`"),
        ("fractional-seed", with_("seed", 1.5), "seed", "floating point `1.5`"),
        ("stop-time-without-unit", with_("stop_time", "10"), "stop_time", "has no unit"),
        ("stop-time-a-number", with_("stop_time", 5), "stop_time", "expected a string"),
    ],
    "Topology": [
        ("unknown-kind", with_("topology.kind", "torus"), "topology.kind",
         'unknown topology "torus"'),
        ("kind-missing", with_("topology", {"hosts": 4}), "topology.kind", "required"),
        ("kind-not-a-string", with_("topology", {"kind": 3, "hosts": 4}), "topology.kind",
         "got 3"),
        ("topology-not-a-table", with_("topology", "star"), "topology",
         "must be a table with a kind"),
        ("link-key-misspelt", with_("topology.link", {"rate": "1Gbps", "dealy": "1us"}),
         "topology.link.dealy", "unknown key"),
        ("link-table-as-a-list", with_("topology.link", ["1Gbps", "1us"]), "topology.link",
         "expected a table"),
        ("disconnected-edges", with_("topology", DISCONNECTED), "topology", "disconnected"),
    ],
    '`kind = "star"`': [
        ("star-hosts-missing", with_("topology", {"kind": "star"}), "topology.hosts",
         "required"),
        ("star-one-host", with_("topology.hosts", 1), "topology.hosts", "at least 2, got 1"),
        ("star-hosts-a-string", with_("topology.hosts", "4"), "topology.hosts",
         "expected an integer"),
        ("star-host-rates-count", with_("topology.host_rates", ["1Gbps"]),
         "topology.host_rates", "4 hosts, 1 rates"),
        ("star-host-rate-unit", with_("topology.host_rates", ["1Gbps"] * 3 + ["1G"]),
         "topology.host_rates[3]", 'unknown unit "G"'),
        ("star-key-misspelt", with_("topology.host", 4), "topology.host", "unknown key"),
    ],
    '`kind = "tree3"`': [
        ("tors-not-multiple-of-aggs", with_("topology", TREE3 | {"aggs": 3, "tors": 8}),
         "topology.tors", "multiple"),
        ("tree3-no-cores", with_("topology", TREE3 | {"cores": 0}), "topology.cores",
         "at least 1, got 0"),
        ("tree3-too-many-hosts", with_("topology", TREE3 | {"tors": 2000, "hosts_per_tor": 1000}),
         "topology.hosts_per_tor", "more than the 1000000"),
        ("tree3-negative-count", with_("topology", TREE3 | {"hosts_per_tor": -2}),
         "topology.hosts_per_tor", "integer `-2`"),
        ("tree3-link-key-misspelt", with_("topology", TREE3 | {"host_link": {"rat": "1Gbps"}}),
         "topology.host_link.rat", "unknown key"),
        ("tree3-bad-link-rate", with_("topology", TREE3 | {"agg_core_link": {"rate": "fast"}}),
         "topology.agg_core_link.rate", "expected a number followed by a unit"),
        ("tree3-key-of-leaf-spine", with_("topology", TREE3 | {"spines": 2}),
         "topology.spines", "unknown key"),
    ],
    '`kind = "fat_tree"`': [
        ("odd-fat-tree-k", with_("topology", {"kind": "fat_tree", "k": 5}), "topology.k",
         "must be even, got 5"),
        ("fat-tree-k-missing", with_("topology", {"kind": "fat_tree"}), "topology.k",
         "required"),
        ("fat-tree-k-too-large", with_("topology", {"kind": "fat_tree", "k": 130}),
         "topology.k", "between 2 and 128, got 130"),
        ("fat-tree-k-a-string", with_("topology", {"kind": "fat_tree", "k": "4"}),
         "topology.k", "expected an integer"),
        ("fat-tree-has-one-link", with_("topology", {"kind": "fat_tree", "k": 4, "host_link": {}}),
         "topology.host_link", "unknown key"),
    ],
    '`kind = "leaf_spine"`': [
        ("leaf-spine-no-leaves", with_("topology", LEAF_SPINE | {"leaves": 0}),
         "topology.leaves", "at least 1, got 0"),
        ("leaf-spine-link-unit",
         with_("topology", LEAF_SPINE | {"fabric_link": {"rate": "40Gbit"}}),
         "topology.fabric_link.rate", 'unknown unit "Gbit"'),
        ("leaf-spine-too-many-hosts",
         with_("topology", LEAF_SPINE | {"leaves": 1001, "hosts_per_leaf": 1000}),
         "topology.hosts_per_leaf", "more than the 1000000"),
        ("leaf-spine-key-of-tree3", with_("topology", LEAF_SPINE | {"tors": 2}),
         "topology.tors", "unknown key"),
    ],
    '`kind = "edges"`': [
        ("edges-link-to-nothing", edges(links=[EDGES_LINKS[0], {"a": "h1", "b": "s9"}]),
         "topology.links[1].b", 'no node named "s9"'),
        ("edges-nodes-missing", with_("topology", {"kind": "edges", "links": []}),
         "topology.nodes", "required"),
        ("edges-links-missing", with_("topology", {"kind": "edges", "nodes": EDGES_NODES}),
         "topology.links", "required"),
        ("edges-node-kind", edges(nodes=[{"name": "h0", "kind": "router"}, *EDGES_NODES[1:]]),
         "topology.nodes[0].kind", "unknown variant `router`"),
        ("edges-duplicate-name", edges(nodes=[*EDGES_NODES, {"name": "h0", "kind": "switch"}]),
         "topology.nodes[3].name", 'duplicate node name "h0"'),
        ("edges-node-name-missing", edges(nodes=[{"kind": "host"}, *EDGES_NODES[1:]]),
         "topology.nodes[0].name", "required"),
        ("edges-arrow-in-a-name", edges(nodes=[{"name": "h->0", "kind": "host"}, *EDGES_NODES[1:]]),
         "topology.nodes[0].name", 'must not contain "->"'),
        ("edges-self-link", edges(links=[*EDGES_LINKS, {"a": "s0", "b": "s0"}]),
         "topology.links[2].b", 'got "s0" twice'),
        ("edges-second-link", edges(links=[*EDGES_LINKS, {"a": "s0", "b": "h1"}]),
         "topology.links[2]", 'a second link between "s0" and "h1"'),
        ("edges-host-with-two-links",
         edges(nodes=[*EDGES_NODES, {"name": "s1", "kind": "switch"}],
               links=[*EDGES_LINKS, {"a": "h0", "b": "s1"}]),
         "topology", 'host "h0" has 2 links'),
        ("edges-host-tier",
         edges(nodes=[{"name": "h0", "kind": "host", "tier": 1}, *EDGES_NODES[1:]]),
         "topology.nodes[0].tier", "hosts are tier 0"),
        ("edges-switch-tier-zero",
         edges(nodes=[*EDGES_NODES[:2], {"name": "s0", "kind": "switch", "tier": 0}]),
         "topology.nodes[2].tier", "start at 1"),
        ("edges-no-hosts",
         with_("topology", {"kind": "edges", "nodes": [EDGES_NODES[2]], "links": []}),
         "topology", "has no hosts"),
        ("edges-link-key-misspelt",
         edges(links=[EDGES_LINKS[0] | {"rte": "1Gbps"}, EDGES_LINKS[1]]),
         "topology.links[0].rte", "unknown key"),
    ],
    "Host stack": [
        ("host-delay-a-number", with_("network.host_delay", 2.5), "network.host_delay",
         "expected a time"),
        ("host-delay-kind-at-the-top", with_("network.host_delay", {"kind": "uniform"}),
         "network.host_delay.kind", "goes under send or receive"),
        ("host-delay-unknown-distribution",
         with_("network.host_delay", {"send": {"kind": "gamma"}}),
         "network.host_delay.send.kind", 'unknown distribution "gamma"'),
        ("host-delay-kind-missing", with_("network.host_delay", {"send": {"low": "1us"}}),
         "network.host_delay.send.kind", "required"),
        ("host-delay-uniform-high-below-low",
         with_("network.host_delay", {"receive": {"kind": "uniform", "low": "3us", "high": "2us"}}),
         "network.host_delay.receive.high", "is below low"),
        ("host-delay-lognormal-sigma-missing",
         with_("network.host_delay", {"send": {"kind": "lognormal", "median": "1us"}}),
         "network.host_delay.send.sigma", "required"),
        ("host-delay-lognormal-sigma-too-large",
         with_("network.host_delay",
               {"send": {"kind": "lognormal", "median": "1us", "sigma": 9.0}}),
         "network.host_delay.send.sigma", "outside [0, 3]"),
        ("host-delay-lognormal-zero-median",
         with_("network.host_delay",
               {"send": {"kind": "lognormal", "median": "0us", "sigma": 1.0}}),
         "network.host_delay.send.median", "must be above 0"),
        ("host-delay-key-of-another-kind",
         with_("network.host_delay", {"send": {"kind": "constant", "value": "1us", "sigma": 1.0}}),
         "network.host_delay.send.sigma", 'unknown key for kind "constant"'),
        ("host-delay-cdf-file-missing",
         with_("network.host_delay", {"send": {"kind": "cdf", "file": "/nonexistent/stack.cdf"}}),
         "network.host_delay.send.file", "cannot read"),
        ("host-delay-draw-beyond-1-s", with_("network.host_delay", {"receive": "2s"}),
         "network.host_delay.receive", "1 s bound"),
    ],
    "Network": [
        ("network-key-misspelt", with_("network.host_dealy", "1us"), "network.host_dealy",
         "unknown key"),
        ("network-not-a-table", with_("network", 5), "network", "expected a table"),
        ("network-a-list", with_("network", []), "network", "invalid type: list"),
        ("negative-host-delay", with_("network.host_delay", "-1us"), "network.host_delay",
         "must be positive"),
        ("switch-latency-a-rate", with_("network.switch_latency", "1Gbps"),
         "network.switch_latency", 'unknown unit "Gbps"'),
        ("queue-capacity-missing", with_("network.queue", {"kind": "droptail"}),
         "network.queue.capacity", "required"),
        ("queue-key-misspelt", queue(capcity="1pkt"), "network.queue.capcity", "unknown key"),
        ("unknown-queue-kind", queue(kind="wfq"), "network.queue.kind", "unknown variant `wfq`"),
        ("queue-capacity-a-number", queue(capacity=100), "network.queue.capacity",
         "expected a string"),
        ("pfabric-queue-without-capacity", queue(kind="pfabric", capacity="0pkt"),
         "network.queue.capacity", "positive"),
    ],
    "Strict priority": [
        ("class-limits-moved", queue(class_limits=["10pkt"]), "network.queue.class_limits",
         "moved to network.queue.priority.class_limits"),
        ("droptail-priority-table", queue(priority={"class_limits": ["10pkt"]}),
         "network.queue.priority", "kind = \"droptail\""),
        ("priority-zero-capacity", with_("network.queue", PRIORITY | {"capacity": "0pkt"}),
         "network.queue.capacity", "positive"),
        ("priority-zero-byte-capacity",
         with_("network.nic_queue", PRIORITY | {"capacity": "0B"}),
         "network.nic_queue.capacity", "positive"),
        ("priority-class-limit-above-capacity",
         with_("network.queue", PRIORITY | {"priority": {"class_limits": ["10pkt", "101pkt"]}}),
         "network.queue.priority.class_limits[1]", "larger than the capacity (100pkt)"),
        ("priority-class-limit-other-unit",
         with_("network.queue", PRIORITY | {"priority": {"class_limits": ["64KB"]}}),
         "network.queue.priority.class_limits[0]", "packets"),
        ("priority-nine-class-limits",
         with_("network.queue", PRIORITY | {"priority": {"class_limits": ["1pkt"] * 9}}),
         "network.queue.priority.class_limits", "at most 8"),
        ("priority-class-limit-zero",
         with_("network.queue", PRIORITY | {"priority": {"class_limits": ["0pkt"]}}),
         "network.queue.priority.class_limits[0]", "must be positive"),
        ("priority-class-limits-not-a-list",
         with_("network.queue", PRIORITY | {"priority": {"class_limits": "5pkt"}}),
         "network.queue.priority.class_limits", "expected a list"),
        ("priority-unknown-kind-on-nic", with_("network.nic_queue", PRIORITY | {"kind": "red"}),
         "network.nic_queue.kind", "unknown variant `red`"),
    ],
    "AQM": [
        ("red-min-not-below-max", aqm(kind="red", min="80pkt", max="40pkt"),
         "network.queue.aqm", "min (80pkt) must be below max (40pkt)"),
        ("unknown-aqm-kind", aqm(kind="codel"), "network.queue.aqm", 'unknown kind "codel"'),
        ("aqm-kind-missing", aqm(k="20pkt"), "network.queue.aqm.kind", "required"),
        ("aqm-not-a-table", queue(aqm="red"), "network.queue.aqm", "expected a table"),
        ("threshold-k-missing", aqm(kind="threshold"), "network.queue.aqm.k", "required"),
        ("threshold-k-a-time", aqm(kind="threshold", k="1ms"), "network.queue.aqm.k",
         'unknown unit "ms"'),
        ("threshold-key-misspelt", aqm(kind="threshold", k="20pkt", kk=1),
         "network.queue.aqm.kk", "unknown key"),
        ("threshold-with-a-red-key", aqm(kind="threshold", k="20pkt", max_p=0.5),
         "network.queue.aqm.max_p", "unknown key (expected `k`)"),
        ("red-max-p-zero", aqm(kind="red", min="10pkt", max="20pkt", max_p=0),
         "network.queue.aqm.max_p", "(0, 1], got 0"),
        ("red-weight-zero", aqm(kind="red", min="10pkt", max="20pkt", weight=0),
         "network.queue.aqm.weight", "(0, 1], got 0"),
        ("red-units-mixed", aqm(kind="red", min="10pkt", max="20KB"), "network.queue.aqm",
         "both be in packets or both in bytes"),
        ("wred-no-profiles", aqm(kind="wred", profiles=[]), "network.queue.aqm.profiles",
         "at least one profile"),
        ("wred-profile-key-misspelt",
         aqm(kind="wred", profiles=[{"min": "1pkt", "max": "2pkt", "maxp": 0.1}]),
         "network.queue.aqm.profiles[0].maxp", "unknown key"),
        ("wred-bad-profile",
         with_("network.nic_queue", {"capacity": "100pkt", "aqm": {
             "kind": "wred", "profiles": [{"min": "8pkt", "max": "8pkt"}]}}),
         "network.nic_queue.aqm.profiles[0]", "must be below max"),
    ],
    "Port stages": [
        ("stage-ports-group", with_("network.stages", [{"kind": "max_occupancy", "ports": "tor"}]),
         "network.stages[0].ports", '"tor" is not a port group'),
        ("stage-unknown-port",
         with_("network.stages", [{"kind": "max_occupancy", "ports": ["sw0->host9"]}]),
         "network.stages[0].ports[0]", 'no port named "sw0->host9"'),
        ("stage-ports-missing", with_("network.stages", [{"kind": "max_occupancy"}]),
         "network.stages[0].ports", "missing"),
        ("token-bucket-class-twice",
         with_("network.stages", [{"kind": "token_bucket", "ports": "nics", "classes": [
             {"class": 1, "rate": "1Gbps"}, {"class": 1, "rate": "2Gbps"}]}]),
         "network.stages[0].classes[1].class", "listed twice"),
        ("stages-not-a-list", with_("network.stages", {"kind": "max_occupancy"}),
         "network.stages", "expected a list"),
    ],
    "Outages": [
        ("outage-unknown-port",
         with_("network.outages", [{"port": "sw0->host9", "start": "1ms", "stop": "2ms"}]),
         "network.outages[0].port", 'no port named "sw0->host9"'),
        ("outage-ends-before-it-starts",
         with_("network.outages", [{"port": "sw0->host1", "start": "2ms", "stop": "1ms"}]),
         "network.outages[0].stop", "must be after start"),
        ("outage-port-missing", with_("network.outages", [{"start": "1ms", "stop": "2ms"}]),
         "network.outages[0].port", "required"),
        ("outage-start-unit",
         with_("network.outages", [{"port": "sw0->host1", "start": "1 sec", "stop": "2ms"}]),
         "network.outages[0].start", 'unknown unit "sec"'),
        ("outage-key-misspelt",
         with_("network.outages", [{"port": "sw0->host1", "start": "1ms", "stop": "2ms",
                                    "end": "3ms"}]),
         "network.outages[0].end", "unknown key"),
        ("outages-a-table",
         with_("network.outages", {"port": "sw0->host1", "start": "1ms", "stop": "2ms"}),
         "network.outages", "expected a list"),
        ("outage-a-list", with_("network.outages", [["sw0->host1", "1ms", "2ms"]]),
         "network.outages[0]", "expected a table"),
    ],
    "Switch agents": [
        ("agent-unknown-kind", with_("agents", [{"kind": "slicer", "switches": "all"}]),
         "agents[0].kind", "slicer"),
        ("agent-without-switches", with_("agents", [without(PAUSE, "switches")]),
         "agents[0].switches", "missing"),
        ("agent-without-kind", with_("agents", [without(PAUSE, "kind")]), "agents[0].kind",
         "missing"),
        ("agent-at-a-host", with_("agents", [PAUSE | {"switches": ["host0"]}]),
         "agents[0].switches[0]", "is a host"),
        ("agent-unknown-switch", with_("agents", [PAUSE | {"switches": ["sw9"]}]),
         "agents[0].switches[0]", 'no switch named "sw9"'),
        ("agent-unknown-group", with_("agents", [PAUSE | {"switches": "spines"}]),
         "agents[0].switches", "spines"),
        ("agent-switches-a-number", with_("agents", [PAUSE | {"switches": 0}]),
         "agents[0].switches", '"all", "tor" or a list of switch names'),
        ("agent-no-switch", with_("agents", [PAUSE | {"switches": []}]), "agents[0].switches",
         "selects no switch"),
        ("agents-a-table", with_("agents", PAUSE), "agents", "expected a list"),
    ],
    '`kind = "pause"`: Ethernet flow control': [
        ("pause-xon-not-below-xoff", with_("agents", [PAUSE | {"xon": "20pkt"}]),
         "agents[0].xon", "below xoff"),
        ("pause-unknown-key", with_("agents", [PAUSE | {"xof": "1pkt"}]), "agents[0].xof",
         "unknown key"),
        ("pause-xoff-missing", with_("agents", [without(PAUSE, "xoff")]), "agents[0].xoff",
         "required"),
        ("pause-xoff-a-time", with_("agents", [PAUSE | {"xoff": "1ms"}]), "agents[0].xoff",
         'unknown unit "ms"'),
        ("pause-xoff-zero", with_("agents", [PAUSE | {"xoff": "0pkt"}]), "agents[0].xoff",
         "must be positive"),
        ("pause-xon-other-unit", with_("agents", [PAUSE | {"xon": "1KB"}]), "agents[0].xon",
         "unit of xoff"),
        ("pause-zero-quanta", with_("agents", [PAUSE | {"quanta": 0}]), "agents[0].quanta",
         "at least 1"),
        ("pause-quanta-above-16-bits", with_("agents", [PAUSE | {"quanta": 65536}]),
         "agents[0].quanta", "from 0 to 65535"),
        ("pause-per-class-a-string", with_("agents", [PAUSE | {"per_class": "yes"}]),
         "agents[0].per_class", "expected a boolean"),
        ("pause-headroom-above-buffer", with_("agents", [PAUSE | {"headroom": "1000pkt"}]),
         "agents[0].headroom", "below the switch ports' buffer"),
        ("pause-alpha-with-xoff", with_("agents", [PAUSE | {"alpha": 0.5}]), "agents[0].alpha",
         "not with xoff"),
        ("pause-alpha-without-buffer", with_("agents", [without(PAUSE, "xoff") | {"alpha": 0.5}]),
         "agents[0].buffer", "missing"),
        ("pause-zero-refresh", with_("agents", [PAUSE | {"refresh": "0us"}]),
         "agents[0].refresh", "shorter than one pause quantum"),
    ],
    '`kind = "packet_slicing"`: Packet Slicing': [
        ("slicing-floor-below-64", with_("agents", [SLICING | {"floor": "63B"}]),
         "agents[0].floor", "must be from 64 B (the Ethernet minimum) to packet (1500 B)"),
        ("slicing-floor-above-packet", with_("agents", [SLICING | {"floor": "1501B"}]),
         "agents[0].floor", "got 1501 B"),
        ("slicing-negative-interval", with_("agents", [SLICING | {"interval": "-1ms"}]),
         "agents[0].interval", "positive"),
        ("slicing-rtt-missing", with_("agents", [without(SLICING, "rtt_min")]),
         "agents[0].rtt_min", "required"),
        ("slicing-on-a-host", with_("agents", [SLICING | {"switches": ["host1"]}]),
         "agents[0].switches[0]", "is a host; agents run at switches"),
        ("slicing-without-handshake",
         with_("transport.handshake", False, with_("agents", [SLICING])),
         "agents[0].kind", "needs transport.handshake = true"),
    ],
    "Forwarding": [
        ("unknown-policy", with_("forwarding.policy", "spray"), "forwarding.policy", "spray"),
        ("forwarding-key-misspelt", with_("forwarding.polcy", "ecmp"), "forwarding.polcy",
         "unknown key"),
        ("policy-a-number", with_("forwarding.policy", 1), "forwarding.policy",
         "expected a string"),
        ("forwarding-a-list", with_("forwarding", ["rps"]), "forwarding", "expected a table"),
        ("elr-without-tiers", with_("forwarding.policy", "elr", edges()), "forwarding.policy",
         'switch "s0" has none'),
    ],
    "Transport": [
        ("min-pmtu-below-64", with_("transport.min_pmtu", "60B"), "transport.min_pmtu",
         "must be from 64 B (the Ethernet minimum)"),
        ("unknown-protocol", with_("transport.protocol", "cubic"), "transport.protocol",
         "cubic"),
        ("transport-key-misspelt", with_("transport.init_cwd", 2), "transport.init_cwd",
         "unknown key"),
        ("transport-not-a-table", with_("transport", "newreno"), "transport",
         "must be a table"),
        ("mss-too-small", with_("transport.mss", "10B"), "transport.mss", "got 10"),
        ("mss-too-large", with_("transport.mss", "65496B"), "transport.mss", "got 65496"),
        ("mss-in-packets", with_("transport.mss", "1pkt"), "transport.mss", 'unknown unit "pkt"'),
        ("rack-without-sack", with_("transport.rack", True), "transport.rack",
         "needs sack = true"),
        ("ns2-pipe-without-sack", with_("transport.sack_pipe", "ns2"), "transport.sack_pipe",
         'needs sack = true'),
        ("unknown-sack-pipe", with_("transport.sack_pipe", "linux"), "transport.sack_pipe",
         "linux"),
        ("ns2-holes-without-sack", with_("transport.sack_holes", "ns2"), "transport.sack_holes",
         'needs sack = true'),
        ("ns2-holes-with-rack",
         with_("transport.rack", True, with_("transport.sack_holes", "ns2",
               with_("transport.sack", True))),
         "transport.rack", "chooses its own holes"),
        ("unknown-sack-holes", with_("transport.sack_holes", "bsd"), "transport.sack_holes",
         "bsd"),
        ("dsack-without-sack", with_("transport.dsack", True), "transport.dsack",
         "needs sack = true"),
        ("dsack-undo-without-dsack",
         with_("transport.dsack_undo", True, with_("transport.sack", True)),
         "transport.dsack_undo", "needs dsack = true"),
        ("header-not-a-multiple-of-4", with_("transport.header", "42B"), "transport.header",
         "got 42"),
        ("init-cwnd-zero", with_("transport.init_cwnd", 0), "transport.init_cwnd",
         "at least 1"),
        ("init-cwnd-negative", with_("transport.init_cwnd", -1), "transport.init_cwnd",
         "integer `-1`"),
        ("min-rto-zero", with_("transport.min_rto", "0ms"), "transport.min_rto", "> 0"),
        ("max-rto-beyond-linux", with_("transport.max_rto", "121s"), "transport.max_rto",
         "at most 120000000us (120 s, Linux's TCP_RTO_MAX), got 121000000us"),
        ("initial-rto-a-day", with_("transport.initial_rto", "86400s"), "transport.initial_rto",
         "at most 120000000us"),
        ("rto-granularity-10-minutes", with_("transport.rto_granularity", "600s"),
         "transport.rto_granularity", "at most 120000000us"),
        ("delayed-ack-half-a-second", with_("transport.delayed_ack_timeout", "500ms"),
         "transport.delayed_ack_timeout", "less than 0.5 s (RFC 1122"),
        ("min-rto-above-max-rto", with_("transport", {"min_rto": "2s", "max_rto": "1s"}),
         "transport.min_rto", "≤ max_rto"),
        ("initial-ssthresh-a-time", with_("transport.initial_ssthresh", "1ms"),
         "transport.initial_ssthresh", 'unknown unit "ms"'),
        ("dupack-threshold-zero", with_("transport.dupack_threshold", 0),
         "transport.dupack_threshold", "at least 1"),
        ("sack-a-string", with_("transport.sack", "true"), "transport.sack",
         "expected a boolean"),
        ("sack-blocks-zero", with_("transport.sack_blocks", 0), "transport.sack_blocks",
         "1 and 4"),
        ("sack-blocks-five", with_("transport.sack_blocks", 5), "transport.sack_blocks",
         "got 5"),
        ("delayed-ack-timeout-without-unit", with_("transport.delayed_ack_timeout", "40"),
         "transport.delayed_ack_timeout", "has no unit"),
        ("quick-acks-negative", with_("transport.quick_acks", -1), "transport.quick_acks",
         "integer `-1`"),
        ("host-queue-limit-zero", with_("transport.host_queue_limit", 0),
         "transport.host_queue_limit", "at least 1"),
        ("dctcp-g-zero", with_("transport.dctcp", {"g": 0}), "transport.dctcp.g", "(0, 1]"),
        ("dctcp-g-a-fraction-string", with_("transport.dctcp", {"g": "1/16"}),
         "transport.dctcp.g", "expected a number"),
        ("dctcp-alpha-above-one", with_("transport.dctcp", {"alpha_init": 2}),
         "transport.dctcp.alpha_init", "[0, 1]"),
        ("d2tcp-bounds-crossed", with_("transport.d2tcp", {"d_min": 3.0, "d_max": 2.0}),
         "transport.d2tcp.d_min", "≤ d_max"),
        ("l2dct-bounds-crossed", with_("transport.l2dct", {"w_min": 3.0}),
         "transport.l2dct.w_min", "≤ w_max"),
        ("dctcp-unknown-key", with_("transport.dctcp", {"gain": 0.1}), "transport.dctcp.gain",
         "unknown key"),
        ("old-dctcp-g", with_("transport.dctcp_g", 0.1), "transport.dctcp_g",
         "moved to [transport.dctcp] g"),
        ("old-dctcp-alpha-init", with_("transport.dctcp_alpha_init", 1.0),
         "transport.dctcp_alpha_init", "moved to [transport.dctcp] alpha_init"),
        ("old-d2tcp-d-min", with_("transport.d2tcp_d_min", 0.5), "transport.d2tcp_d_min",
         "moved to [transport.d2tcp] d_min"),
        ("old-d2tcp-d-max", with_("transport.d2tcp_d_max", 2.0), "transport.d2tcp_d_max",
         "moved to [transport.d2tcp] d_max"),
        ("old-l2dct-w-max", with_("transport.l2dct_w_max", 2.5), "transport.l2dct_w_max",
         "moved to [transport.l2dct] w_max"),
        ("old-l2dct-w-min", with_("transport.l2dct_w_min", 0.1), "transport.l2dct_w_min",
         "moved to [transport.l2dct] w_min"),
        ("unknown-priority-scheme", with_("transport.priority", "deadline"),
         "transport.priority", "deadline"),
        ("pacing-not-a-bool", with_("transport.pacing", "yes"), "transport.pacing",
         "expected a boolean"),
        ("rwnd-zero", with_("transport.rwnd", "0B"), "transport.rwnd", "positive"),
        ("rwnd-zero-segments", with_("transport.rwnd", "0pkt"), "transport.rwnd", "positive"),
        ("pfabric-rto-zero", with_("transport.pfabric", {"rto": "0us"}),
         "transport.pfabric.rto", "above 0"),
        ("pfabric-probe-after-zero", with_("transport.pfabric", {"probe_after": 0}),
         "transport.pfabric.probe_after", "at least 1"),
        ("pfabric-cap-below-initial-window",
         with_("transport.pfabric", {"init_cwnd": 12, "max_cwnd": 8}),
         "transport.pfabric.max_cwnd", "init_cwnd"),
        ("pfabric-a-list", with_("transport.pfabric", [1, 2]), "transport.pfabric",
         "expected a table"),
    ],
    "Profiles": [
        ("unknown-profile", with_("transport.profile", "bsd"), "transport.profile", "bsd"),
        ("profile-a-number", with_("transport.profile", 1), "transport.profile",
         "expected a string"),
        ("profile-a-table", with_("transport.profile", {"linux": 1}), "transport.profile",
         "expected a string"),
    ],
    "Traffic": [
        ("traffic-key-misspelt", with_("traffic.flow", [FLOW]), "traffic.flow", "unknown key"),
        ("traffic-a-list", with_("traffic", [[{"src": 0, "dst": 1}]]), "traffic",
         "expected a table"),
        ("probes-a-table", with_("traffic.probes", {"src": 0, "dst": 1}), "traffic.probes",
         "expected a list"),
    ],
    "Applications": [
        ("application-misspelt", with_("traffic.incasts", [INCAST]), "traffic.incasts",
         "unknown key (expected one of `probes`, `streams`, `flows`, `workloads`, `incast`, "
         "`periodic`, `request_response`, `barrier`, `shuffle`, `web_search`)"),
        ("incast-a-table", with_("traffic.incast", INCAST), "traffic.incast", "expected a list"),
    ],
    "`[[traffic.probes]]`": [
        ("host-out-of-range", with_("traffic.probes[0].dst", 4), "traffic.probes[0].dst",
         "host 4 out of range"),
        ("negative-host", with_("traffic.probes[0].src", -1), "traffic.probes[0].src",
         "integer `-1`"),
        ("probe-src-missing", with_("traffic.probes", [{"dst": 1}]), "traffic.probes[0].src",
         "required"),
        ("probe-to-random", with_("traffic.probes[0].dst", "random"), "traffic.probes[0].dst",
         '"all", got "random"'),
        ("probe-to-itself", with_("traffic.probes[0].dst", 0), "traffic.probes[0].dst",
         "to itself"),
        ("probe-train-without-interval", with_("traffic.probes[0].dst", "all"),
         "traffic.probes[0].interval", 'required when dst = "all"'),
        ("probe-too-large", with_("traffic.probes[0].size", "100KB"), "traffic.probes[0].size",
         "maximum of 65535 B"),
        ("probe-size-zero", with_("traffic.probes[0].size", "0B"), "traffic.probes[0].size",
         "must be positive"),
        ("probe-time-a-rate", with_("traffic.probes[0].time", "1Gbps"),
         "traffic.probes[0].time", 'unknown unit "Gbps"'),
        ("probe-key-misspelt", with_("traffic.probes[0].sise", "1KB"), "traffic.probes[0].sise",
         "unknown key"),
        ("probe-src-a-name", with_("traffic.probes[0].src", "host0"), "traffic.probes[0].src",
         "expected an integer"),
        ("class-of-a-probe", with_("traffic.probes[0].class", 8), "traffic.probes[0].class",
         "0 to 7"),
    ],
    "`[[traffic.streams]]`": [
        ("stream-without-stop", with_("traffic.streams", [without(STREAM, "stop")]),
         "traffic.streams[0].stop", "required when the scenario has no stop_time"),
        ("load-above-one", with_("traffic.streams", [STREAM | {"load": 1.5}]),
         "traffic.streams[0].load", "(0, 1], got 1.5"),
        ("stream-load-zero", with_("traffic.streams", [STREAM | {"load": 0}]),
         "traffic.streams[0].load", "(0, 1], got 0"),
        ("stream-rate-and-load", with_("traffic.streams", [STREAM | {"rate": "1Gbps"}]),
         "traffic.streams[0]", "either rate or load, not both"),
        ("stream-neither-rate-nor-load", with_("traffic.streams", [without(STREAM, "load")]),
         "traffic.streams[0]", "needs a rate"),
        ("stream-rate-zero", with_("traffic.streams", [without(STREAM, "load") | {"rate": "0bps"}]),
         "traffic.streams[0].rate", "must be positive"),
        ("stream-unknown-pattern", with_("traffic.streams", [STREAM | {"pattern": "bursty"}]),
         "traffic.streams[0].pattern", "unknown variant `bursty`"),
        ("stream-to-all", with_("traffic.streams", [STREAM | {"dst": "all"}]),
         "traffic.streams[0].dst", '"random", got "all"'),
        ("stream-to-itself", with_("traffic.streams", [STREAM | {"dst": 0}]),
         "traffic.streams[0].dst", "to itself"),
        ("stream-stops-before-it-starts", with_("traffic.streams", [STREAM | {"start": "2ms"}]),
         "traffic.streams[0].stop", "must be after start"),
        ("stream-record-a-string", with_("traffic.streams", [STREAM | {"record": "yes"}]),
         "traffic.streams[0].record", "expected a boolean"),
        ("stream-source-out-of-range", with_("traffic.streams", [STREAM | {"src": 7}]),
         "traffic.streams[0].src", "host 7 out of range"),
        ("stream-packet-too-large", with_("traffic.streams", [STREAM | {"size": "1MB"}]),
         "traffic.streams[0].size", "maximum of 65535 B"),
        ("class-of-a-stream", with_("traffic.streams", [STREAM | {"class": 8}]),
         "traffic.streams[0].class", "0 to 7"),
    ],
    "`[[traffic.flows]]`": [
        ("deadline-before-start",
         with_("traffic.flows", [FLOW | {"start": "2ms", "deadline": "1ms"}]),
         "traffic.flows[0].deadline", "after the flow's start"),
        ("unknown-flow-protocol", with_("traffic.flows", [FLOW | {"protocol": "bbr"}]),
         "traffic.flows[0].protocol", "unknown variant `bbr`"),
        ("flow-protocol-a-number", with_("traffic.flows", [FLOW | {"protocol": 1}]),
         "traffic.flows[0].protocol", "expected a string"),
        ("flow-size-missing", with_("traffic.flows", [without(FLOW, "size")]),
         "traffic.flows[0].size", "required"),
        ("flow-size-zero", with_("traffic.flows", [FLOW | {"size": "0B"}]),
         "traffic.flows[0].size", "must be positive"),
        ("flow-size-in-packets", with_("traffic.flows", [FLOW | {"size": "10pkt"}]),
         "traffic.flows[0].size", 'unknown unit "pkt"'),
        ("flow-to-itself", with_("traffic.flows", [FLOW | {"dst": 0}]),
         "traffic.flows[0].dst", "to itself"),
        ("flow-destination-out-of-range", with_("traffic.flows", [FLOW | {"dst": 4}]),
         "traffic.flows[0].dst", "host 4 out of range"),
        ("flow-to-all", with_("traffic.flows", [FLOW | {"dst": "all"}]),
         "traffic.flows[0].dst", "expected an integer"),
        ("flow-key-misspelt", with_("traffic.flows", [FLOW | {"strat": "1ms"}]),
         "traffic.flows[0].strat", "unknown key"),
        ("flow-start-without-unit", with_("traffic.flows", [FLOW | {"start": "5"}]),
         "traffic.flows[0].start", "has no unit"),
        ("flow-a-list", with_("traffic.flows", [[0, 1, "10KB"]]), "traffic.flows[0]",
         "expected a table"),
        ("class-of-a-flow", with_("traffic.flows", [FLOW | {"class": 8}]),
         "traffic.flows[0].class", "0 to 7 (802.1Q priority), got 8"),
        ("flow-class-256", with_("traffic.flows", [FLOW | {"class": 256}]),
         "traffic.flows[0].class", "integer `256`"),
    ],
    # The file's rows: tests/test_first_use.py (each bad row names file and row).
    "`[[traffic.flows_file]]`": [
        ("flows-file-path-missing", with_("traffic.flows_file", [{}]),
         "traffic.flows_file[0].path", "required"),
        ("flows-file-key-misspelt", with_("traffic.flows_file", [{"pth": "a.csv"}]),
         "traffic.flows_file[0].pth", "unknown key"),
        ("flows-file-a-table", with_("traffic.flows_file", {"path": "a.csv"}),
         "traffic.flows_file", "expected a list of tables"),
        ("flows-file-missing", with_("traffic.flows_file", [{"path": "/nonexistent/a.csv"}]),
         "traffic.flows_file[0] '/nonexistent/a.csv'", "cannot read"),
        ("flows-file-not-csv", with_("traffic.flows_file", [{"path": "/dev/null"}]),
         "traffic.flows_file[0] '/dev/null'", "not a regular file"),
    ],
    "`[[traffic.workloads]]`": [
        ("workload-load-above-one", with_("traffic.workloads", [WORKLOAD | {"load": 1.5}]),
         "traffic.workloads[0].load", "(0, 1], got 1.5"),
        ("workload-cdf-and-size", with_("traffic.workloads", [WORKLOAD | {"size": "10KB"}]),
         "traffic.workloads[0]", "either cdf"),
        ("workload-neither-cdf-nor-size", with_("traffic.workloads", [without(WORKLOAD, "cdf")]),
         "traffic.workloads[0]", "either cdf"),
        ("workload-load-missing", with_("traffic.workloads", [without(WORKLOAD, "load")]),
         "traffic.workloads[0].load", "required"),
        ("workload-load-a-percentage", with_("traffic.workloads", [WORKLOAD | {"load": "50%"}]),
         "traffic.workloads[0].load", "expected a number"),
        ("workload-destination-out-of-range", with_("traffic.workloads", [WORKLOAD | {"dst": 9}]),
         "traffic.workloads[0].dst", "host 9 out of range"),
        ("workload-destination-keyword", with_("traffic.workloads", [WORKLOAD | {"dst": "any"}]),
         "traffic.workloads[0].dst", '"random" or "all", got "any"'),
        ("workload-source-random", with_("traffic.workloads", [WORKLOAD | {"src": "random"}]),
         "traffic.workloads[0].src", '"all", got "random"'),
        ("workload-to-itself", with_("traffic.workloads", [WORKLOAD | {"src": 1, "dst": 1}]),
         "traffic.workloads[0].dst", "to itself"),
        ("workload-without-stop", with_("traffic.workloads", [without(WORKLOAD, "stop")]),
         "traffic.workloads[0].stop", "required when the scenario has no stop_time"),
        ("workload-stops-before-it-starts",
         with_("traffic.workloads", [WORKLOAD | {"start": "2ms"}]),
         "traffic.workloads[0].stop", "must be after start"),
        ("workload-deadline-zero", with_("traffic.workloads", [WORKLOAD | {"deadline": "0us"}]),
         "traffic.workloads[0].deadline", "after the flow's start"),
        ("workload-unknown-protocol",
         with_("traffic.workloads", [WORKLOAD | {"protocol": "vegas"}]),
         "traffic.workloads[0].protocol", "unknown variant `vegas`"),
        ("workload-key-misspelt", with_("traffic.workloads", [WORKLOAD | {"lod": 0.5}]),
         "traffic.workloads[0].lod", "unknown key"),
        ("class-of-a-workload", with_("traffic.workloads", [WORKLOAD | {"class": 8}]),
         "traffic.workloads[0].class", "0 to 7 (802.1Q priority), got 8"),
    ],
    "`[[traffic.incast]]`": [
        ("incast-aggregator-is-a-worker", with_("traffic.incast", [INCAST | {"workers": [1, 0]}]),
         "traffic.incast[0].workers[1]", "is the aggregator"),
        ("incast-aggregator-missing", with_("traffic.incast", [without(INCAST, "aggregator")]),
         "traffic.incast[0].aggregator", "required"),
        ("incast-aggregator-out-of-range", with_("traffic.incast", [INCAST | {"aggregator": 4}]),
         "traffic.incast[0].aggregator", "host 4 out of range"),
        ("incast-no-workers", with_("traffic.incast", [INCAST | {"workers": []}]),
         "traffic.incast[0].workers", "at least one worker"),
        ("incast-worker-twice", with_("traffic.incast", [INCAST | {"workers": [1, 1]}]),
         "traffic.incast[0].workers[1]", "listed twice"),
        ("incast-worker-out-of-range", with_("traffic.incast", [INCAST | {"workers": [1, 5]}]),
         "traffic.incast[0].workers[1]", "host 5 out of range"),
        ("incast-workers-keyword", with_("traffic.incast", [INCAST | {"workers": "some"}]),
         "traffic.incast[0].workers", '"all", got "some"'),
        ("incast-sru-and-total", with_("traffic.incast", [INCAST | {"total": "2KB"}]),
         "traffic.incast[0]", "either sru"),
        ("incast-neither-sru-nor-total", with_("traffic.incast", [without(INCAST, "sru")]),
         "traffic.incast[0]", "either sru"),
        ("incast-no-rounds", with_("traffic.incast", [INCAST | {"rounds": 0}]),
         "traffic.incast[0].rounds", "at least 1"),
        ("incast-persistent-a-string", with_("traffic.incast", [INCAST | {"persistent": "no"}]),
         "traffic.incast[0].persistent", "expected a boolean"),
        ("incast-deadline-zero", with_("traffic.incast", [INCAST | {"deadline": "0us"}]),
         "traffic.incast[0].deadline", "after the round's start"),
        ("incast-sru-zero", with_("traffic.incast", [INCAST | {"sru": "0B"}]),
         "traffic.incast[0].sru", "must be positive"),
        ("incast-key-misspelt", with_("traffic.incast", [INCAST | {"round": 2}]),
         "traffic.incast[0].round", "unknown key"),
        ("class-of-an-incast", with_("traffic.incast", [INCAST | {"class": 8}]),
         "traffic.incast[0].class", "0 to 7"),
    ],
    "`[[traffic.periodic]]`": [
        ("periodic-zero-interval", with_("traffic.periodic", [PERIODIC | {"interval": "0us"}]),
         "traffic.periodic[0].interval", "0us is shorter than the 0.144us"),
        ("periodic-server-a-client", with_("traffic.periodic", [PERIODIC | {"clients": [0]}]),
         "traffic.periodic[0].clients[0]", "is the server"),
    ],
    "`[[traffic.request_response]]`": [
        ("request-response-no-server",
         with_("traffic.request_response", [REQUEST_RESPONSE | {"servers": []}]),
         "traffic.request_response[0].servers", "needs at least one server"),
        ("request-response-no-clients",
         with_("traffic.request_response", [REQUEST_RESPONSE | {"clients": []}]),
         "traffic.request_response[0].clients", "at least one client"),
    ],
    "`[[traffic.barrier]]`": [
        ("barrier-one-host", with_("traffic.barrier", [BARRIER | {"hosts": [0]}]),
         "traffic.barrier[0].hosts", "at least two hosts"),
        ("barrier-zero-iterations", with_("traffic.barrier", [BARRIER | {"iterations": 0}]),
         "traffic.barrier[0].iterations", "must be at least 1"),
    ],
    "`[[traffic.shuffle]]`": [
        ("shuffle-only-itself",
         with_("traffic.shuffle", [SHUFFLE | {"mappers": [1], "reducers": [1]}]),
         "traffic.shuffle[0].reducers", "the shuffle sends nothing"),
        ("shuffle-zero-jobs", with_("traffic.shuffle", [SHUFFLE | {"jobs": 0}]),
         "traffic.shuffle[0].jobs", "must be at least 1"),
    ],
    "`[[traffic.web_search]]`": [
        ("web-search-total-missing", with_("traffic.web_search", [without(WEB_SEARCH, "total")]),
         "traffic.web_search[0].total", "required"),
        ("web-search-no-queries", with_("traffic.web_search", [WEB_SEARCH | {"queries": 0}]),
         "traffic.web_search[0].queries", "at least 1"),
        ("web-search-request-too-small",
         with_("traffic.web_search", [WEB_SEARCH | {"request": "20B"}]),
         "traffic.web_search[0].request", "smaller than its own headers"),
    ],
    "Flow numbering": [
        ("trace-unknown-flow", with_("trace.flows", [1], with_("traffic.flows", [FLOW])),
         "trace.flows[0]", "no flow 1: TCP flows are numbered 0 to 0"),
        ("trace-flow-without-flows", with_("trace.flows", [0]), "trace.flows[0]",
         "the scenario has no TCP flows"),
    ],
    "Trace": [
        ("unknown-port", with_("trace.queues", ["sw0->host9"]), "trace.queues[0]",
         'no port named "sw0->host9"'),
        ("traced-queue-a-host", with_("trace.queues", ["host1"]), "trace.queues[0]",
         'no port named "host1"'),
        ("pcap-names-nothing", with_("trace.pcap", ["host9"]), "trace.pcap[0]", "host9"),
        ("pcap-names-a-switch", with_("trace.pcap", ["sw0"]), "trace.pcap[0]",
         'no host or port named "sw0"'),
        ("pcap-twice", with_("trace.pcap", ["host1", "host1"]), "trace.pcap[1]",
         "listed twice"),
        ("trace-key-misspelt", with_("trace.queue", ["sw0->host1"]), "trace.queue",
         "unknown key"),
        ("traced-queues-a-string", with_("trace.queues", "sw0->host1"), "trace.queues",
         "expected a list"),
        ("traced-flow-negative", with_("trace.flows", [-1]), "trace.flows[0]", "integer `-1`"),
        ("trace-a-list", with_("trace", [["sw0->host1"]]), "trace", "expected a table"),
    ],
}  # fmt: skip

CASES = [(section, *case) for section, cases in CATALOGUE.items() for case in cases]

#: Headings of docs/scenario.md that describe output files, not input.
NO_INPUT = {"`flows.parquet`", "Other files"}
#: Bad ``--out`` directories, for the Outputs section (CLI only).
OUTPUTS = ["a-file", "a-foreign-directory"]


def field_of(message: str) -> str:
    return message.split(": ", 1)[0]


def python_error(data) -> str:
    """The ScenarioError of ``data`` from the Python API (validate, then run)."""
    with pytest.raises(ScenarioError) as err:
        if isinstance(data, Toml):
            dcnsim.Scenario.from_toml_str(data).validate()
        else:
            dcnsim.validate(data)
    if not isinstance(data, Toml):
        with pytest.raises(ScenarioError) as err_run:
            dcnsim.run(data)
        assert str(err_run.value) == str(err.value)
    assert isinstance(err.value, ValueError)
    return str(err.value)


@pytest.mark.parametrize(
    ("section", "case", "data", "field", "needle"), CASES, ids=[c[1] for c in CASES]
)
def test_catalogue(section, case, data, field, needle):
    message = python_error(data)
    assert "\n" not in message
    assert field_of(message) == field, message
    assert needle in message.split(": ", 1)[1], message


def test_the_catalogue_covers_every_section():
    headings = re.findall(r"^#{2,3} (.+)$", (REPO / "docs" / "scenario.md").read_text(), re.M)
    assert set(CATALOGUE) | NO_INPUT | {"Outputs"} == set(headings)
    for section, cases in CATALOGUE.items():
        assert len(cases) >= 2, section
    assert len(OUTPUTS) >= 2
    assert len({c[1] for c in CASES}) == len(CASES) >= 80


#: Key tables of docs/scenario.md that hold no scenario key (a profile's values, output
#: columns).
NOT_KEYS = {"Profiles", "`flows.parquet`", "Other files", "Outputs"}

#: Sizes, times and rates the Bounds table does not bound: none. A key added to the
#: schema without a bound fails the test below; one that truly cannot be bounded goes
#: here with its reason.
UNBOUNDED: set[str] = set()


def sized_keys() -> set[str]:
    """Every key of docs/scenario.md's key tables whose type is a size, a time, a rate
    or a capacity, named as the Bounds table names keys: ``traffic.periodic.size``,
    ``qjump.packet``, ``transport.mss``, ``network.queue.capacity``."""
    keys = set()
    heading = ""
    for line in (REPO / "docs" / "scenario.md").read_text().splitlines():
        if line.startswith("#"):
            heading = line.lstrip("# ")
            continue
        row = re.match(r"^\| `([^`]+)` \| ([^|]*) \|", line)
        if heading in NOT_KEYS or heading == "Bounds" or not row:
            continue
        key, kind = row.groups()
        if not re.match(r"(queue )?(size|time|rate|capacity)\b", kind):
            continue
        key = key.strip('"')
        if table := re.search(r"`\[\[(traffic\.\w+)\]\]`", heading):
            key = f"{table.group(1)}.{key}"
        elif named := re.match(r'`kind = "(\w+)"`', heading):
            key = f"{named.group(1)}.{key}"
        elif heading in ("Transport", "AQM", "Outages"):
            key = f"{heading.lower()}.{key}"
        elif heading == "Network" and not key.startswith("network."):
            key = f"network.queue.{key}"  # the queue table's keys
        keys.add(key)
    return keys


def test_every_size_time_and_rate_key_has_a_bound():
    bounds = re.search(r"^## Bounds\n(.*?)^## ", (REPO / "docs" / "scenario.md").read_text(),
                       re.M | re.S).group(1)  # fmt: skip
    bounded = {name for row in re.findall(r"^\| (.*?) \|", bounds, re.M)
               for name in re.findall(r"`([^`]+)`", row)}  # fmt: skip
    keys = sized_keys()
    assert len(keys) > 50, sorted(keys)
    assert keys - bounded - UNBOUNDED == set(), "a size, time or rate key with no bound"
    assert UNBOUNDED <= keys and not UNBOUNDED & bounded, "UNBOUNDED is out of date"


@pytest.mark.parametrize("section", list(CATALOGUE))
def test_cli_gives_the_same_one_line_error(tmp_path, section):
    case, data, field, needle = CATALOGUE[section][0]
    path = tmp_path / f"{case}.toml"
    path.write_text(data if isinstance(data, Toml) else dcnsim.Scenario(data).to_toml())
    message = assert_one_error_line(cli("validate", str(path)))
    if isinstance(data, Toml):  # the CLI names the file where Python says "scenario text"
        assert field_of(message) == field and needle in message, message
    else:  # the command adds a "did you mean" to an unknown key
        assert message == with_hint(python_error(data))


@pytest.mark.parametrize("kind", OUTPUTS)
def test_a_bad_output_directory_is_one_line(tmp_path, kind):
    out = tmp_path / "out"
    if kind == "a-file":
        out.write_text("not a directory")
        reason = "exists and is not a directory"
    else:
        out.mkdir()
        (out / "notes.txt").write_text("keep me")
        reason = (
            "refusing to replace a directory holding files this command does not write (notes.txt)"
        )
    scenario = str(EXAMPLES / "tree3_probes.toml")
    message = assert_one_error_line(cli("run", scenario, "--out", str(out)))
    assert message == f"--out '{out}': {reason}"


def test_odd_k_message_is_the_documented_one():
    with pytest.raises(ScenarioError) as err:
        dcnsim.validate(with_("topology", {"kind": "fat_tree", "k": 5}))
    assert str(err.value).startswith("topology.k: ")
    assert "even" in str(err.value) and str(err.value).endswith("5")


def test_cli_run_refuses_bad_input_before_writing(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text(dcnsim.Scenario(with_("topology.link.rate", "10Gps")).to_toml())
    out = tmp_path / "out"
    message = assert_one_error_line(cli("run", str(path), "--out", str(out)))
    assert message.startswith("topology.link.rate")
    assert not out.exists()
    assert list(tmp_path.iterdir()) == [path]  # no temporary directory left behind


def test_missing_file(tmp_path):
    missing = tmp_path / "nope.toml"
    with pytest.raises(ScenarioError) as err:
        dcnsim.Scenario.from_toml(missing)
    message = str(err.value)
    assert message == f"scenario: cannot read '{missing}': No such file or directory"
    for command in (["validate", str(missing)], ["run", str(missing), "--out", "x"]):
        assert assert_one_error_line(cli(*command, cwd=tmp_path)) == message
    assert not (tmp_path / "x").exists()


def test_invalid_toml(tmp_path):
    path = tmp_path / "broken.toml"
    path.write_text('[topology]\nkind = "star"\nhosts = \n')
    with pytest.raises(ScenarioError) as err:
        dcnsim.Scenario.from_toml(path)
    assert str(err.value).startswith(f"scenario: invalid TOML in '{path}': ")
    assert "line 3" in str(err.value)
    assert assert_one_error_line(cli("validate", str(path))) == str(err.value)


def test_toml_value_json_cannot_carry_names_its_field():
    scenario = dcnsim.Scenario.from_toml_str("name = 'x'\nwhen = 1979-05-27T07:32:00Z\n")
    with pytest.raises(ScenarioError) as err:
        scenario.validate()
    assert str(err.value).startswith("when: ")


def test_bad_set_override_names_the_field():
    message = assert_one_error_line(
        cli("validate", str(EXAMPLES / "fat_tree_rps.toml"), "--set", "topology.k=5")
    )
    assert message.startswith("topology.k: ")


@pytest.mark.parametrize(
    "args",
    [
        ["run"],  # the scenario file missing
        ["run", str(EXAMPLES / "tree3_probes.toml"), "--out", "o", "--set", "novalue"],
        ["bench", "--repeat", "0"],
        ["bench", "b1", "--quick", "--stop-time", "1ms"],
        ["bench", "b2"],
        ["frobnicate"],
        [],
    ],
    ids=[
        "no-file",
        "set-without-equals",
        "repeat-zero",
        "quick-and-stop-time",
        "unknown-benchmark",
        "unknown-command",
        "no-command",
    ],
)
def test_usage_errors_are_one_line(args):
    assert_one_error_line(cli(*args))


@pytest.mark.parametrize("name", ["datagram", "scale"])
def test_bench_bad_stop_time(name):
    message = assert_one_error_line(cli("bench", name, "--stop-time", "10"))
    assert message.startswith("stop_time")


def bad_cdf_scenario(cdf: str) -> dict:
    return with_("traffic.workloads", [{**WORKLOAD, "cdf": cdf}])


def test_cdf_file_that_is_not_monotone(tmp_path):
    cdf = tmp_path / "bad.cdf"
    cdf.write_text("# size probability\n1000 0\n5000 0.5\n3000 0.7\n9000 1\n")
    with pytest.raises(ScenarioError) as err:
        dcnsim.validate(bad_cdf_scenario(str(cdf)))
    message = str(err.value)
    assert "\n" not in message
    assert message.startswith("traffic.workloads[0].cdf: ")
    assert "not monotone" in message and "line 4" in message and str(cdf) in message

    # The CLI, with the file named relative to the scenario file: the same message.
    scenario = tmp_path / "scenario.toml"
    scenario.write_text(dcnsim.Scenario(bad_cdf_scenario("bad.cdf")).to_toml())
    assert assert_one_error_line(cli("validate", str(scenario))) == message


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("100 0\n200 0.9\n", "last probability must be 1"),
        ("100 0\n200 1.5\n", "outside [0, 1]"),
        ("100 0 1\n", "line 1: expected two numbers"),
        ("# nothing\n", "no points"),
    ],
    ids=["not-ending-at-one", "probability-above-one", "three-columns", "empty"],
)
def test_other_bad_cdf_files(tmp_path, text, needle):
    cdf = tmp_path / "bad.cdf"
    cdf.write_text(text)
    with pytest.raises(ScenarioError, match=r"^traffic\.workloads\[0\]\.cdf: ") as err:
        dcnsim.validate(bad_cdf_scenario(str(cdf)))
    assert needle in str(err.value)


def test_misspelt_cdf_name_lists_the_shipped_ones(tmp_path):
    # Not a shipped name, so a file path: relative to the scenario file's directory.
    scenario = tmp_path / "scenario.toml"
    scenario.write_text(dcnsim.Scenario(bad_cdf_scenario("web_search")).to_toml())
    message = assert_one_error_line(cli("validate", str(scenario)))
    assert message.startswith("traffic.workloads[0].cdf: ")
    assert str(tmp_path / "web_search") in message
    for name in dcnsim._core.SHIPPED_CDFS:
        assert name in message
