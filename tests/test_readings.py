"""Each seed's reading is stated once and every study of the seed runs it.

The settings objects of ``dcnsim.studies.readings.<seed>`` are the very objects the
studies build from (identity, not equality), and the scenarios the studies build
carry them; a reading's settings are read-only, so no study changes them for another.
"""

from __future__ import annotations

import pytest

from dcnsim.studies import incast, pfabric, spraying, spraying_random
from dcnsim.studies.latency_difference import scenario as lat
from dcnsim.studies.packet_slicing import scenarios as ps
from dcnsim.studies.qjump import scenarios as qj
from dcnsim.studies.readings import Reading, first_seed, readings, register, thawed
from dcnsim.studies.readings import packet_slicing as slicing_reading
from dcnsim.studies.readings import qjump as qjump_reading
from dcnsim.studies.readings import spraying as spraying_reading


def transport_of(scenario) -> dict:
    return scenario.to_dict()["transport"]


def test_first_seed_shared_objects():
    assert lat.TCP_SCRIPTS is first_seed.TCP
    assert lat.PFABRIC_SCRIPTS is first_seed.PFABRIC
    assert lat.SCRIPT_QUEUES is first_seed.QUEUES
    tcp = transport_of(lat.latency_scenario("TCP", "64:4:1", 0.1))
    assert {k: tcp[k] for k in first_seed.TCP} == thawed(first_seed.TCP)
    for scheme in ("tcp", "dctcp"):
        t = transport_of(pfabric.pfabric_scenario(scheme, "websearch", 0.5, quick=True))
        assert {k: t[k] for k in first_seed.TCP} == thawed(first_seed.TCP), scheme
    p = pfabric.pfabric_scenario("pfabric", "websearch", 0.5, quick=True).to_dict()
    l = lat.latency_scenario("pFabric", "64:4:1", 0.1).to_dict()  # noqa: E741
    assert p["transport"]["pfabric"] == l["transport"]["pfabric"] == thawed(first_seed.PFABRIC)
    assert p["network"]["queue"]["capacity"] == l["network"]["queue"]["capacity"]
    d = pfabric.pfabric_scenario("dctcp", "websearch", 0.5, quick=True).to_dict()
    assert d["network"]["queue"]["capacity"] == first_seed.QUEUES["TCP"][0]
    assert d["network"]["queue"]["aqm"]["k"] == first_seed.DCTCP_K


def test_spraying_shared_objects():
    static = spraying.spraying_scenario("rps", 2).to_dict()
    randomized = spraying_random.random_scenario("rps", 2, 10, 1).to_dict()
    for s in (static, randomized):
        assert {k: s["transport"][k] for k in spraying_reading.TCP} == thawed(spraying_reading.TCP)
        assert s["network"]["queue"] == thawed(spraying_reading.QUEUE)
    assert spraying_random.reading is spraying_reading


def test_qjump_shared_objects():
    assert qj.reading is qjump_reading
    for case in qj.CASES:
        t = transport_of(qj.case_scenario(case, quick=True))
        assert t["profile"] == qjump_reading.TCP["profile"], case
    ecn = qj.case_scenario("ecn_wred", quick=True).to_dict()["network"]["queue"]["aqm"]
    dctcp = qj.case_scenario("dctcp", quick=True).to_dict()["network"]["queue"]["aqm"]
    assert ecn == thawed(qjump_reading.WRED) and dctcp == thawed(qjump_reading.DCTCP)


def test_packet_slicing_shared_objects():
    """The ``incast`` and ``packet-slicing`` studies build the same TCP, K and buffer
    from the seed's one ns-2 setup (the same object); a variant is printed beside it,
    never instead of it."""
    assert incast.TCP is ps.TCP is slicing_reading.TCP
    a, b = incast.incast_scenario(1500, 30).to_dict(), ps.incast_scenario(30).to_dict()
    assert a["transport"] == b["transport"]
    assert a["network"]["queue"] == b["network"]["queue"]
    assert b["transport"]["profile"] == "ns2_sack" and b["transport"]["ecn_floor"] == 1
    assert "limited_transmit" not in b["transport"]
    assert b["network"]["queue"] == {
        "capacity": "64KB",
        "aqm": {"kind": "threshold", "k": "29200B"},
    }
    floor2 = ps.incast_scenario(30, reading=slicing_reading.VARIANTS["floor2"]).to_dict()
    assert floor2["transport"] == b["transport"] | {"ecn_floor": 2}


def test_qjump_host_stack_only_in_its_cases():
    """The calibrated host stack runs in the ``*_stack`` cases, and only there."""
    for case in qj.CASES:
        network = qj.case_scenario(case, quick=True).to_dict()["network"]
        if case.endswith("_stack"):
            assert network["host_delay"] == thawed(qjump_reading.HOST_STACK), case
        else:
            assert "host_delay" not in network, case
    with pytest.raises(ValueError, match="not one of"):
        qj.case_scenario("alone_stak", quick=True)


def test_one_reading_per_seed_read_only():
    found = readings()
    assert {
        "latency-difference-3tier-pfabric-elr.txt",
        "packet-spraying-fat-tree.txt",
        "qjump.txt",
        "packet-slicing-incast.txt",
    } <= set(found)
    assert found["packet-slicing-incast.txt"] is slicing_reading.READING
    assert found["qjump.txt"] is qjump_reading.READING
    with pytest.raises(TypeError):
        first_seed.TCP["mss"] = "536B"  # type: ignore[index]
    with pytest.raises(ValueError, match="already has a reading"):
        register(Reading("qjump.txt", ("x",), "t", "m", "b", "h", "w"))
    for reading in found.values():
        assert reading.tcp and reading.buffer and reading.header and reading.why


def test_qjump_host_stack_is_the_calibration_it_says():
    """The stack's median and sigma solve the seed's two p99s alone in the model of the
    stacks alone (``qjump.calibration``): 779 µs for memcached, about 500 µs for Naiad."""
    from dcnsim.studies.qjump.calibration import model_p99s, solve_median

    leg = qjump_reading.HOST_STACK_LEG
    median = float(leg["median"].removesuffix("us")) * 1e-6
    memcached, naiad = model_p99s(median, leg["sigma"])
    assert memcached == pytest.approx(779e-6, rel=0.01)
    assert naiad == pytest.approx(500e-6, rel=0.01)
    assert solve_median(leg["sigma"]) == pytest.approx(median, abs=0.5e-6)
    assert qjump_reading.HOST_STACK["receive"] == qjump_reading.HOST_STACK["send"] == leg
