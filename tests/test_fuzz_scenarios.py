"""Property: every Python value given as a scenario gives a valid scenario or one
``ScenarioError`` whose message is one line naming a field, never another exception,
a panic or a hang.

Scenarios are drawn near the schema (real section and key names, real kinds, small
sizes) with arbitrary JSON-like values mixed in (huge and negative integers, NaN,
lone surrogates, nested lists and tables, unknown keys). Topology sizes stay small:
a valid but huge network is the memory estimate's business, not this test's.

The default run draws a fixed set of examples (``derandomize``); a longer campaign:
``DCNSIM_FUZZ_EXAMPLES=100000 pytest tests/test_fuzz_scenarios.py``.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dcnsim
from dcnsim import ScenarioError

EXAMPLES = int(os.environ.get("DCNSIM_FUZZ_EXAMPLES", "300"))

names = dict(dcnsim._core.names())

junk = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=12),  # includes lone surrogates
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)
quantity = st.sampled_from(
    ["1500B", "10Gbps", "1us", "0.2us", "64KB", "100pkt", "1e3pkt", "2.5e9bps", "0B", "-1us",
     "1e99s", "10 Gbps", "1.5.5us", "us", ""]
)  # fmt: skip
small = st.integers(min_value=-2, max_value=6)
value = st.one_of(junk, quantity, small)


def table(keys: list[str], extra: st.SearchStrategy = value) -> st.SearchStrategy:
    return st.dictionaries(st.sampled_from(keys) | st.text(max_size=6), extra, max_size=len(keys))


topology = st.fixed_dictionaries(
    {"kind": st.sampled_from(names["topologies"]) | st.text(max_size=6)},
    optional={
        "hosts": small, "k": small, "cores": small, "aggs": small, "tors": small,
        "hosts_per_tor": small, "leaves": small, "spines": small,
        "link": table(["rate", "delay"], quantity), "host_rates": st.lists(quantity, max_size=3),
    },
)  # fmt: skip
queue = table(["kind", "capacity", "aqm", "class_limits", "priority"],
              value | st.sampled_from(names["queues"] + names["aqms"]))  # fmt: skip
network = table(["host_delay", "switch_latency", "queue", "nic_queue", "outages", "stages"],
                value | queue)  # fmt: skip
transport = table(["protocol", "mss", "min_rto", "pacing", "pfabric", "priority"],
                  value | st.sampled_from(names["protocols"]))  # fmt: skip
entry = table(["src", "dst", "size", "time", "rate", "load", "stop", "start", "class",
               "cdf", "pattern", "record", "workers", "protocol", "kind", "switches", "xoff"],
              value | st.sampled_from(["all", "random", "websearch", "constant", "poisson",
                                       "pause", "tor"]))  # fmt: skip
traffic = table(["probes", "streams", "flows", "workloads", "incast"], st.lists(entry, max_size=2))
scenario = st.fixed_dictionaries(
    {"topology": topology | junk},
    optional={
        "seed": small | junk, "stop_time": quantity | junk, "name": st.text(max_size=6),
        "network": network,
        "forwarding": table(["policy"], value | st.sampled_from(names["policies"])),
        "transport": transport, "traffic": traffic, "trace": table(["queues", "flows", "pcap"]),
        "agents": st.lists(entry, max_size=2), "extra": junk,
    },
)  # fmt: skip


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=EXAMPLES <= 300,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(scenario)
def test_every_input_is_a_scenario_or_one_scenario_error(data):
    try:
        dcnsim.validate(data)
    except ScenarioError as err:
        message = str(err)
        assert "\n" not in message, message
        field, sep, reason = message.partition(": ")
        assert sep and reason, message
        assert field, message
