"""Switch agents through the user's front door: Ethernet flow control (the
``pause`` agent) keeps a 5:1 overload from dropping, against its closed form.

Host 0 (10 Gbps) sends a constant 5 Gbps stream of 1500 B datagrams for 2 ms to
host 1 (1 Gbps) through one switch with 100-packet queues. Without flow control
the switch queue overflows. With it the switch pauses host 0 and the backlog
waits in host 0's NIC: nothing is lost and the 1 Gbps link never idles, so
packet k arrives at 2.2 us + 12 us * (k + 1) + 1 us (see crates/dcnsim-core/
tests/agents.rs for the derivation).
"""

import pytest

from simhelp import run_checked, star

PAUSE = {"kind": "pause", "switches": "all", "xoff": "20pkt", "xon": "10pkt"}


def overload(agents: list[dict]) -> dict:
    scenario = star(2, link={"rate": "10Gbps", "delay": "1us"})
    scenario["topology"]["host_rates"] = ["10Gbps", "1Gbps"]
    return {
        **scenario,
        "stop_time": "30ms",
        "network": {"queue": {"capacity": "100pkt"}},
        "traffic": {
            "streams": [
                {"src": 0, "dst": 1, "rate": "5Gbps", "pattern": "constant",
                 "size": "1500B", "stop": "2ms", "record": True}
            ]
        },
        "agents": agents,
    }  # fmt: skip


def port(results, name: str):
    return results.ports.set_index("port").loc[name]


def test_without_flow_control_the_switch_drops():
    results = run_checked(overload([]))
    assert port(results, "sw0->host1")["packets_dropped"] > 100


def test_pause_moves_the_backlog_to_the_sender_without_loss():
    results = run_checked(overload([PAUSE]))
    assert results.summary["packets_dropped"] == 0
    received = results.probes["received_s"].sort_values().to_numpy()
    assert len(received) == 834
    for k, t in enumerate(received):
        assert t == pytest.approx((2.2 + 12 * (k + 1) + 1) * 1e-6, abs=1e-12)
    assert port(results, "sw0->host1")["max_queue_packets"] <= 20 + 3
    assert port(results, "host0->sw0")["max_queue_packets"] > 100
    frames = port(results, "sw0->host0")["packets_sent"]
    assert frames >= 2
    assert results.summary["packets_from_switches"] == frames
    assert results.summary["packets_delivered"] == 834 + frames
