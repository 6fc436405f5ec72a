"""Queues against closed forms (M/D/1) and drop-tail capacity limits."""

import pytest

from simhelp import US, run_checked, serialization_s, star

RATE = 10e9
SIZE = 1500
MU = RATE / (8 * SIZE)  # packets per second a 10 Gbps link serves


def md1_scenario(load: float, packets: int, seed: int = 1) -> dict:
    """Host 0 sends Poisson datagrams of fixed size to host 1 through one switch.

    The queue is host 0's NIC (arrivals Poisson, service deterministic): M/D/1.
    The switch port behind it never queues, its arrivals being spaced by a full
    serialization time already.
    """
    stop_s = packets / (load * MU)
    return {
        "seed": seed,
        **star(2, link={"rate": "10Gbps", "delay": "1us"}),
        "traffic": {
            "streams": [
                {
                    "src": 0,
                    "dst": 1,
                    "load": load,
                    "pattern": "poisson",
                    "size": f"{SIZE}B",
                    "stop": f"{stop_s * 1e6:.0f}us",
                    "record": True,
                }
            ]
        },
    }


def check_md1(load: float, packets: int) -> None:
    results = run_checked(md1_scenario(load, packets))
    assert results.summary["packets_dropped"] == 0
    probes = results.probes
    # Poisson arrivals at the mean rate: sd of the count is sqrt(n), 1% is > 5 sd here.
    assert len(probes) == pytest.approx(packets, rel=0.01)
    zero_load = 2 * (serialization_s(SIZE, RATE) + 1 * US)
    assert probes["latency_s"].min() == pytest.approx(zero_load, abs=1e-12)
    wait = probes["latency_s"].mean() - zero_load
    expected = load / (2 * MU * (1 - load))
    assert wait == pytest.approx(expected, rel=0.03), (load, wait, expected)
    # The flow row agrees with its recorded packets.
    flow = results.flows.iloc[0]
    assert flow["packets_sent"] == len(probes)
    assert flow["mean_latency_s"] == pytest.approx(probes["latency_s"].mean(), rel=1e-9)


def test_md1_mean_wait_at_load_half():
    check_md1(0.5, 300_000)


def test_md1_mean_wait_at_load_0_8():
    check_md1(0.8, 1_500_000)


# --- drop-tail ----------------------------------------------------------------------------


def incast(capacity: str, sizes=(SIZE, SIZE, SIZE), load=0.6, stop="10ms") -> dict:
    """Three senders into host 0 at `load` each: the port sw0->host0 is overloaded."""
    streams = [
        {"src": i + 1, "dst": 0, "load": load, "pattern": "poisson", "size": f"{size}B",
         "stop": stop}
        for i, size in enumerate(sizes)
    ]  # fmt: skip
    return {
        **star(4, link={"rate": "10Gbps", "delay": "1us"}),
        "network": {"queue": {"kind": "droptail", "capacity": capacity}},
        "traffic": {"streams": streams},
        "trace": {"queues": ["sw0->host0"]},
    }


def test_droptail_packet_capacity_is_never_exceeded_and_drops_are_counted():
    results = run_checked(incast("50pkt"))
    queue = results.traces["queues"]
    assert set(queue["port"]) == {"sw0->host0"}
    assert queue["packets"].max() == 50  # fills up to, and never past, its capacity
    assert queue["packets"].min() >= 0
    assert queue["time_s"].is_monotonic_increasing

    dropped = results.summary["packets_dropped"]
    assert dropped > 0
    assert results.flows["drops"].sum() == dropped
    assert (results.flows["drops"] > 0).all()  # every sender loses some
    # The bottleneck stays busy: ~10 ms of line rate is delivered.
    assert results.summary["packets_delivered"] >= 0.98 * MU * 10e-3


def test_droptail_byte_capacity_is_never_exceeded():
    results = run_checked(incast("64KB", sizes=(1500, 1000, 500)))
    queue = results.traces["queues"]
    assert queue["bytes"].max() <= 64_000
    assert queue["bytes"].max() > 64_000 - 1500  # it does fill up
    assert queue["packets"].max() > 50  # bytes, not packets, are the limit here
    assert results.summary["packets_dropped"] > 0
    assert results.flows["drops"].sum() == results.summary["packets_dropped"]


def test_droptail_byte_capacity_in_whole_packets():
    # 42 packets of 1500 B fit in 64 000 B; a 43rd would exceed it.
    queue = run_checked(incast("64KB")).traces["queues"]
    assert queue["packets"].max() == 42
    assert queue["bytes"].max() == 42 * 1500


def test_no_drops_below_capacity():
    # Three senders at 0.3 each: load 0.9 on the port, a deep buffer never overflows.
    results = run_checked(incast("10000pkt", load=0.3))
    assert results.summary["packets_dropped"] == 0
    assert (results.flows["packets_delivered"] == results.flows["packets_sent"]).all()
