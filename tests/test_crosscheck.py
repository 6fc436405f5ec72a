"""dcnsim against ns-2.35 and ns-3.37 (issue 45): each scenario run by both through
``dcnsim.crosscheck``, held to the issue's tolerance ("What it must show"). Where
dcnsim's profile does not match its reference yet, the case is
``xfail(strict=True)`` with the measured numbers; no tolerance is loosened.

The references are installed by .ci/run (``ns2``, ``libns3-dev``, ``libgsl-dev``),
which sets DCNSIM_CROSSCHECK_TESTS=1: then a missing reference fails these tests
instead of skipping them. ns-3 programs are compiled once and cached by hash.
"""

from __future__ import annotations

import os

import pytest

import dcnsim
from dcnsim.cli import main
from dcnsim.crosscheck import NotTranslatable, ReferenceMissing, crosscheck, ns2, ns3

REQUIRED = os.environ.get("DCNSIM_CROSSCHECK_TESTS") == "1"


def _need(module) -> None:
    if not module.available():
        if REQUIRED:
            pytest.fail(module.INSTALL)
        pytest.skip(module.INSTALL)


def star(n: int, capacity: str = "100pkt", **queue) -> dict:
    return {
        "topology": {"kind": "star", "hosts": n, "link": {"rate": "1Gbps", "delay": "10us"}},
        "network": {"queue": {"capacity": capacity, **queue}},
    }


def incast(
    n: int, profile: str, sru: str, rounds: int, capacity: str = "100pkt", **transport
) -> dict:
    return {
        **star(n + 1, capacity),
        "transport": {"profile": profile, **transport},
        "traffic": {"incast": [{"aggregator": 0, "workers": "all", "sru": sru, "rounds": rounds}]},
    }


def run(scenario: dict, reference: str):
    _need(ns2 if reference == "ns2" else ns3)
    return crosscheck(scenario, reference)


# --- a single flow: FCT within 0.1 % ---------------------------------------------------------

SINGLE = {**star(2), "traffic": {"flows": [{"src": 0, "dst": 1, "size": "53600B"}]}}


def test_single_fulltcp_flow_matches_ns2_within_a_tenth_of_a_percent():
    # 100 segments of 536 B: no short last segment, so Nagle plays no part.
    report = run({**SINGLE, "transport": {"profile": "ns2"}}, "ns2")
    m = report.metric("FCT median")
    assert abs(m.ratio - 1) <= 0.001, report.format()
    assert report.flows().retransmits_ref.sum() == 0


def test_single_newreno_flow_matches_ns3_within_a_tenth_of_a_percent():
    report = run({**SINGLE, "transport": {"profile": "ns3"}}, "ns3")
    assert abs(report.metric("FCT median").ratio - 1) <= 0.001, report.format()


# --- incast below and past collapse -----------------------------------------------------------


def test_incast_below_collapse_round_times_within_one_percent_of_ns2():
    # 4 FullTcp/Sack workers, 37 full segments each (19,832 B), 100-packet port.
    report = run(incast(4, "ns2_sack", "19832B", 5), "ns2")
    assert report.metric("rounds finished").reference == 5
    assert abs(report.metric("round time median").ratio - 1) <= 0.01, report.format()
    assert report.metric("timeouts").reference == 0


def test_incast_with_a_short_last_segment_round_times_within_one_percent_of_ns2():
    # 20,000 B = 37 segments + 168 B: FullTcp's Nagle (nodelay_ false) holds the short
    # last one while data is outstanding; the ns2_sack profile's `nagle` does the same.
    report = run(incast(4, "ns2_sack", "20000B", 5), "ns2")
    assert abs(report.metric("round time median").ratio - 1) <= 0.01, report.format()


def test_oneway_incast_below_collapse_round_times_within_one_percent_of_ns2():
    # Persistent incast over Agent/TCP/Newreno + TCPSink with their SYN: measured
    # 735 and 694 µs rounds in both.
    report = run(incast(4, "ns2_oneway", "20000B", 5), "ns2")
    assert report.metric("rounds finished").reference == 5
    assert abs(report.metric("round time mean").ratio - 1) <= 0.01, report.format()
    # Without the SYN ns-2 sends packet 0 without its header (TcpAgent::output), 40 B
    # short, which the round count once missed ("no round"): measured 693.9 µs rounds
    # in both, ns-2's round 0 1.6 µs shorter (its four first packets).
    report = run(incast(4, "ns2_oneway", "20000B", 5, oneway_syn=False), "ns2")
    assert report.metric("rounds finished").reference == 5
    assert abs(report.metric("round time mean").ratio - 1) <= 0.01, report.format()


def test_incast_past_collapse_drops_within_25_percent_of_ns2():
    # Measured with the profile's ns-2 keys and the sixth round's pipe fixes (the fast
    # retransmit out of the pipe, the recovery's last ACK opening cwnd): 142 drops
    # against 121 (1.17), 25 timeouts against 30; rounds 201.29, 401.69, 201.26 ms
    # against 401.37, 401.44, 201.32 (before the fixes 149 drops, 43 timeouts; with
    # RFC 6675's holes instead of sack_holes = "ns2": 150 drops, 42 timeouts; with
    # RFC 6675's pipe too: 146 and 37; before the ns-2 keys, 228 and 51).
    report = run(incast(16, "ns2_sack", "19832B", 3, capacity="32pkt"), "ns2")
    assert report.metric("timeouts").reference > 0  # past collapse in ns-2 too
    assert abs(report.metric("drops").ratio - 1) <= 0.25, report.format()


@pytest.mark.slow
def test_fulltcp_sack_waits_for_its_timeout_after_many_losses_as_ns2():
    # The incast study's baseline at 8 workers (64 KB each into a 64 KB port, 1500 B
    # packets), 2 rounds, out of lockstep (worker i's link 25 us + i * 37 ns, so no two
    # packets reach the switch at one instant): in round 0 two flows lose so many
    # segments that, the lost ones counted in FullTcp/Sack's pipe (sack_pipe = "ns2";
    # the fast retransmit not counted, as SackFullTcpAgent::dupack_action sends it by
    # fast_retransmit, outside sent()), they wait for the RTO. Measured 203.340 ms and
    # 2 timeouts in both. In lockstep (the study's star) the two order simultaneous
    # arrivals differently from the 51st packet on and lose other segments (dcnsim
    # 4.45 ms, ns-2 203.63 ms: docs/studies.md, incast).
    from dcnsim.studies.incast import incast_scenario

    scenario = incast_scenario(1500, 8, 2).to_dict()
    transport = {k: v for k, v in scenario["transport"].items() if k != "dctcp"}
    scenario["transport"] = {**transport, "protocol": "newreno"}
    scenario["network"]["queue"] = {"capacity": scenario["network"]["queue"]["capacity"]}
    nodes = [{"name": f"host{i}", "kind": "host"} for i in range(9)]
    delays = ["25us"] + [f"{25_000 + i * 37}ns" for i in range(1, 9)]
    links = [{"a": f"host{i}", "b": "sw0", "delay": d} for i, d in enumerate(delays)]
    scenario["topology"] = {
        "kind": "edges",
        "link": {"rate": "1Gbps"},
        "nodes": [*nodes, {"name": "sw0", "kind": "switch"}],
        "links": links,
    }
    report = run(scenario, "ns2")
    rounds = [
        r.sort_values("round").round_time_s.iloc[0]
        for r in (report.dcnsim["rounds"], report.tables["rounds"])
    ]
    assert rounds[1] > 0.2  # ns-2 times out in round 0
    assert abs(rounds[0] / rounds[1] - 1) <= 0.001, report.format()
    assert report.metric("timeouts").reference == report.metric("timeouts").dcnsim == 2


def _oneway_incast_out_of_lockstep(step_ns: int) -> dict:
    """16 one-way workers x 20,000 B into a 32-packet port, 5 rounds, on a star whose
    worker i's link is 10 us + i * step_ns: no two workers' packets reach the switch
    at the same instant."""
    n = 16
    nodes = [{"name": f"h{i}", "kind": "host"} for i in range(n + 1)]
    links = [{"a": f"h{i}", "b": "sw", "delay": f"{10_000 + i * step_ns}ns"} for i in range(n + 1)]
    return {
        "topology": {
            "kind": "edges",
            "link": {"rate": "1Gbps", "delay": "10us"},
            "nodes": [*nodes, {"name": "sw", "kind": "switch"}],
            "links": links,
        },
        "network": {"queue": {"capacity": "32pkt"}},
        "transport": {"profile": "ns2_oneway"},
        "traffic": {"incast": [{"aggregator": 0, "workers": "all", "sru": "20000B", "rounds": 5}]},
    }


@pytest.mark.slow
def test_oneway_incast_past_collapse_times_out_every_round_as_ns2_out_of_lockstep():
    # In lockstep (equal links) ns-2 times out in every round and dcnsim in 2 of 5: the
    # tie order of simultaneous arrivals at the full port decides which packets drop
    # (docs/crosscheck.md). Out of lockstep by 37 ns a worker, measured: rounds
    # 201.19-202.18 ms against ns-2's 200.64-400.42 (median 201.86 / 201.23), drops
    # 239 / 217, timeouts 8 / 10.
    report = run(_oneway_incast_out_of_lockstep(37), "ns2")
    assert (report.dcnsim["rounds"].round_time_s > 0.2).all(), report.format()
    assert abs(report.metric("round time median").ratio - 1) <= 0.01, report.format()
    assert abs(report.metric("drops").ratio - 1) <= 0.25, report.format()


# --- long-flow fairness: 8 flows into one 100-packet drop-tail port ---------------------------

FAIR = {
    **star(9),
    "transport": {"profile": "ns2_oneway"},
    "traffic": {"flows": [{"src": i, "dst": 0, "size": "1000000B"} for i in range(1, 9)]},
}


def test_long_flow_fct_spread_within_ten_percent_of_ns2():
    # ns2_oneway's SYN (syn_, delay_growth_ true) on both sides: spread 26.7 against
    # 25.1 ms (1.064). With syn_ false, as before oneway_syn, one ns-2 flow timed out.
    report = run(FAIR, "ns2")
    assert abs(report.metric("FCT median").ratio - 1) <= 0.02, report.format()
    assert abs(report.metric("FCT spread").ratio - 1) <= 0.10, report.format()


# --- a 3-tier tree with probes, ns-2's defaults (Nagle on) ------------------------------------

TREE = {
    "topology": {
        "kind": "tree3",
        "cores": 1,
        "aggs": 2,
        "tors": 4,
        "hosts_per_tor": 2,
        "link": {"rate": "1Gbps", "delay": "0.2us"},
    },
    "network": {"host_delay": "2.5us"},
    "forwarding": {"policy": "single"},
    "transport": {"profile": "ns2"},
    "traffic": {
        "flows": [
            {"src": 0, "dst": d, "size": "10000B", "start": f"{d * 500}us"} for d in range(1, 8)
        ],
        "probes": [{"src": 0, "dst": "all", "size": "1500B", "time": "5ms", "interval": "100us"}],
    },
}


def test_tree_probes_match_ns2():
    report = run(TREE, "ns2")
    assert abs(report.metric("latency median").ratio - 1) <= 0.02, report.format()


def test_tree_per_flow_fct_median_within_two_percent_of_ns2_with_its_defaults():
    # Each 10,000 B flow ends in a 352 B segment that Nagle holds, in both.
    report = run(TREE, "ns2")
    assert abs(report.metric("FCT median").ratio - 1) <= 0.02, report.format()


# --- ns-3: a DCTCP incast and packet spraying ----------------------------------------------


def _mean_fct_over_seeds(scenario: dict, seeds: range) -> tuple[float, float, int, int]:
    """Mean FCT over every flow of every seed in dcnsim and in ns-3 (the scenario's seed
    is ns-3's RngRun), and the retransmits summed: random draws (spraying, RED) are each
    simulator's own, so they agree in distribution, not run by run."""
    ours, ref, rtx, rtx_ref = [], [], 0, 0
    for seed in seeds:
        flows = run({**scenario, "seed": seed}, "ns3").flows()
        assert flows.fct_s.notna().all() and flows.fct_s_ref.notna().all()
        ours += list(flows.fct_s)
        ref += list(flows.fct_s_ref)
        rtx += int(flows.retransmits.sum())
        rtx_ref += int(flows.retransmits_ref.sum())
    return sum(ours) / len(ours), sum(ref) / len(ref), rtx, rtx_ref


@pytest.mark.xfail(
    strict=True,
    reason="8 DCTCP workers x 64 KB, 5 rounds, threshold 20 of 100 packets (profile ns3_current "
    "with ns-3's DCTCP floor 0, delayed ACKs of 200 ms): rounds end on the 200 ms delayed-ACK "
    "timer in both, once more in dcnsim. Measured round time median ratio 1.0074 (202.7 against "
    "202.8 ms) but mean 282.6 against 242.1 ms (1.167); no drops or timeouts in either. Which "
    "round waits depends on the parity of segments since the last ACK, where dcnsim's model "
    "differs knowingly: ns-3.37 counts a short segment towards DelAckCount "
    "(TcpSocketBase::ReceivedData) and reduces the window by PRR in CWR (EnterCwr calls the "
    "recovery's EnterRecovery), dcnsim acknowledges a short segment at once and cuts at once; "
    "with 64,320 B (whole segments) the mean is 0.804 of ns-3's instead",
)
def test_dctcp_incast_round_times_within_one_percent_of_ns3():
    report = run(
        incast(8, "ns3_current", "64KB", 5, protocol="dctcp", slow_start="segments", ecn_floor=0)
        | {
            "network": {"queue": {"capacity": "100pkt", "aqm": {"kind": "threshold", "k": "20pkt"}}}
        },
        "ns3",
    )
    assert report.metric("rounds finished").reference == 5
    assert abs(report.metric("round time median").ratio - 1) <= 0.01, report.format()
    assert abs(report.metric("round time mean").ratio - 1) <= 0.01, report.format()


SPRAY = {
    "topology": {"kind": "fat_tree", "k": 4, "link": {"rate": "1Gbps", "delay": "1us"}},
    "forwarding": {"policy": "rps"},
    "transport": {"profile": "ns3"},
    "traffic": {"flows": [{"src": i, "dst": 15 - i, "size": "200000B"} for i in range(4)]},
}


def test_spraying_matches_ns3_on_one_seed_and_resends_less():
    # One seed's 4 flows are one draw of the spraying: seed 1, FCT mean 2.753 against
    # 3.111 ms (0.885), retransmits 89 against 455 (ns-3.37's non-SACK recovery, below).
    ours, ref, rtx, rtx_ref = _mean_fct_over_seeds(SPRAY, range(1, 2))
    assert abs(ours / ref - 1) <= 0.15, (ours, ref)
    assert 0 < rtx < rtx_ref, (rtx, rtx_ref)


@pytest.mark.slow
def test_spraying_mean_fct_over_seeds_within_two_percent_of_ns3():
    # k = 4 fat-tree, per-packet random spraying (ns-3's RandomEcmpRouting), 4 cross-pod
    # flows of 200 KB, seeds 1-8: measured 2.702 against 2.710 ms. One seed's 4 flows
    # are one draw of the spraying (seed 1: median 0.965 of ns-3's). Retransmits differ
    # by version, not by model: 89 against 510. The ns3 profile is ns-3.23's NewReno
    # (RFC 6582 partial ACKs); ns-3.37 without SACK marks a segment SACKed per duplicate
    # ACK (TcpTxBuffer::AddRenoSack from TcpSocketBase::DupAck/EnterRecovery) and
    # recovers by RFC 6675 over that scoreboard, resending every segment reordering
    # made look lost.
    ours, ref, rtx, rtx_ref = _mean_fct_over_seeds(SPRAY, range(1, 9))
    assert abs(ours / ref - 1) <= 0.02, (ours, ref)
    assert rtx < rtx_ref, (rtx, rtx_ref)


@pytest.mark.slow
@pytest.mark.xfail(
    strict=True,
    reason="the same spraying with ns3_current (SACK, PRR, limited transmit, initial window 10) "
    "in both: retransmits agree (160 against 264 over seeds 1-8) but dcnsim's mean FCT is "
    "2.685 against 2.567 ms (1.046), every seed slower; not root-caused",
)
def test_spraying_with_ns3_current_mean_fct_over_seeds_within_two_percent_of_ns3():
    scenario = {**SPRAY, "transport": {"profile": "ns3_current"}}
    ours, ref, _, _ = _mean_fct_over_seeds(scenario, range(1, 9))
    assert abs(ours / ref - 1) <= 0.02, (ours, ref)


# --- ns-3: every drop at a full drop-tail port is counted -------------------------------------

# Six NewReno flows of 5 KB to 2 MB, staggered over 4 ms, into one 40-packet port.
MIXED = {
    "topology": {"kind": "star", "hosts": 7, "link": {"rate": "1Gbps", "delay": "5us"}},
    "network": {"queue": {"capacity": "40pkt"}},
    "seed": 3,
    "transport": {"profile": "ns3"},
    "traffic": {
        "flows": [
            {"src": src, "dst": 0, "size": size, "start": start}
            for src, size, start in [
                (1, "2MB", "0s"),
                (2, "500KB", "1ms"),
                (3, "100KB", "2ms"),
                (4, "20KB", "3ms"),
                (5, "1MB", "500us"),
                (6, "5KB", "4ms"),
            ]
        ]
    },
}


def test_ns3_drops_at_a_full_droptail_port_are_counted_with_lost_syns():
    # With the point-to-point helper's flow control, ns-3.37 stopped the full device
    # queue and TrafficControlLayer discarded what came meanwhile, out of the queue's
    # sight: 0 drops reported beside 109 retransmits and two flows that lost their SYN
    # (no data resent, FCT 1.001 s: ConnTimeout). The driver disables it on drop-tail
    # ports, so the queue drops and counts them: 69, of which flows 3 and 5 one each.
    report = run(MIXED, "ns3")
    flows = report.flows()
    dropped = report.metric("packets dropped").reference
    assert dropped > 0, report.format()
    assert flows.drops_ref.sum() == dropped  # every drop is a packet of some flow
    # No loss without a drop: each flow that resent or waited out a timer (its ideal FCT is
    # under 20 ms, ns-3's first RTO 1 s) lost a packet.
    lost = flows[(flows.retransmits_ref > 0) | (flows.fct_s_ref > 0.5)]
    assert (lost.drops_ref > 0).all(), flows[["flow_id", "fct_s_ref", "drops_ref"]]
    assert report.metric("largest queue").reference == 40


# --- RED with ECN ------------------------------------------------------------------------------

RED = {
    **star(5, aqm={"kind": "red", "min": "5pkt", "max": "15pkt"}),
    "transport": {"profile": "ns3", "protocol": "ecn"},
    "traffic": {"flows": [{"src": i, "dst": 0, "size": "500000B"} for i in range(1, 5)]},
}


def test_red_with_ecn_keeps_two_segments_as_ns3s_newreno():
    # 4 ECN NewReno flows of 500 KB into one RED port (min 5, max 15 of 100 packets,
    # profile ns3 with its 200 ms delayed ACKs). Before the ns3 profiles' ecn_floor = 2
    # (TcpNewReno::GetSsThresh's 2-segment floor) dcnsim cut windows below one segment,
    # each then waiting out the delayed-ACK timer: FCT median 510.4 ms against 18.0 ms
    # (31.6), spread 405.5 against 4.5 ms. Now the mean over the flows is within 5 %
    # (measured 17.91 against 17.12 ms: RED's draws are each simulator's own, so flows
    # are compared on average, not one by one).
    report = run(RED, "ns3")
    assert report.metric("drops").reference == 0 == report.metric("drops").dcnsim
    flows = report.flows()
    assert abs(flows.fct_s.mean() / flows.fct_s_ref.mean() - 1) <= 0.05, report.format()


@pytest.mark.slow
@pytest.mark.xfail(
    strict=True,
    reason="the same RED + ECN over seeds 1-8 (ns-3's RngRun): dcnsim's mean FCT 18.06 ms "
    "against 17.31 ms (1.043), higher at every seed, with larger queues (78-86 against 67-79 "
    "packets at seeds 1-3). Not root-caused; a known difference in the cut: ns-3's EnterCwr "
    "halves BytesInFlight(), dcnsim's ecn controller halves cwnd",
)
def test_red_with_ecn_mean_fct_over_seeds_within_two_percent_of_ns3():
    ours, ref, _, _ = _mean_fct_over_seeds(RED, range(1, 9))
    assert abs(ours / ref - 1) <= 0.02, (ours, ref)


def test_ns3s_ecn_floor_follows_its_congestion_control():
    # TcpNewReno's ECE cut leaves at least 2 segments, TcpDctcp's no floor.
    with pytest.raises(NotTranslatable, match=r"transport\.ecn_floor"):
        crosscheck(
            {**RED, "transport": {"profile": "ns3", "protocol": "ecn", "ecn_floor": 0}}, "ns3"
        )
    dctcp = {"profile": "ns3", "protocol": "dctcp", "slow_start": "segments"}
    with pytest.raises(NotTranslatable, match=r"set ecn_floor = 0"):
        crosscheck({**RED, "transport": dctcp}, "ns3")


# --- refusals and the command line ------------------------------------------------------------


@pytest.mark.parametrize(
    ("change", "key"),
    [
        ({"transport": {"profile": "dcnsim"}}, "transport.profile"),
        ({"transport": {"profile": "ns2", "protocol": "dctcp"}}, "transport.protocol"),
        # dcnsim itself refuses RACK or PRR beside ns2_sack's sack_pipe = "ns2";
        # with RFC 6675's pipe the reference refuses them.
        ({"transport": {"profile": "ns2_sack", "rack": True}}, "transport.rack"),
        (
            {"transport": {"profile": "ns2_sack", "rack": True, "sack_pipe": "rfc6675"}},
            "transport.rack",
        ),
        ({"network": {"host_delay": {"send": "1us", "receive": "2us"}}}, "network.host_delay"),
        (
            {
                "network": {"queue": {"kind": "pfabric", "capacity": "24pkt"}},
                "transport": {"profile": "ns2"},
            },
            "network.queue.kind",
        ),
        ({"transport": {"profile": "ns2_sack", "recovery": "prr"}}, "transport.recovery"),
        ({"transport": {"profile": "ns2_sack", "sack_pipe": "rfc6675"}}, "transport.sack_pipe"),
        ({"transport": {"profile": "ns2_sack", "sack_holes": "rfc6675"}}, "transport.sack_holes"),
        ({"transport": {"profile": "ns2", "rto_ticks": False}}, "transport.rto_ticks"),
        ({"transport": {"profile": "ns2_oneway", "nagle": True}}, "transport.nagle"),
        ({"transport": {"profile": "ns2_oneway", "idle_restart": True}}, "transport.idle_restart"),
        (
            {"transport": {"profile": "ns2_oneway", "handshake": True, "oneway_syn": False}},
            "transport.handshake",
        ),
    ],
)
def test_what_ns2_cannot_model_is_refused_naming_the_key(change, key):
    scenario = {**SINGLE, **change}
    with pytest.raises(dcnsim.ScenarioError, match=key.replace(".", r"\.")):
        crosscheck(scenario, "ns2")


@pytest.mark.parametrize(
    ("change", "key"),
    [
        ({"idle_restart": True}, "transport.idle_restart"),
        ({"rto_ticks": True}, "transport.rto_ticks"),
        ({"recovery": "reno"}, "transport.recovery"),
    ],
)
def test_what_ns3_cannot_model_is_refused_naming_the_key(change, key):
    scenario = {**SINGLE, "transport": {"profile": "ns3", **change}}
    with pytest.raises(NotTranslatable, match=key.replace(".", r"\.")):
        crosscheck(scenario, "ns3")


def _script(transport: dict, reference: str = "ns2") -> str:
    """The generated program of SINGLE with ``transport``, built without running."""
    from dcnsim.crosscheck import _prepare

    module = ns2 if reference == "ns2" else ns3
    data = dcnsim.Scenario({**SINGLE, "transport": transport}).to_dict()
    flows = dcnsim.run(data).flows
    model = _prepare(module, data, flows, reference)
    return ns2.translate(model, "t", "r") if reference == "ns2" else ns3.translate(model)[0]


def test_the_ns2_profiles_keys_pick_the_agent_and_its_variables():
    # ns2: plain FullTcp (Reno) with Nagle and slow-start restart (ns-default.tcl's
    # nodelay_ false, slow_start_restart_ true), ticks of tcpTick_ 0.01.
    plain = _script({"profile": "ns2"})
    assert "[new Agent/TCP/FullTcp]" in plain
    for line in ("set nodelay_ false", "set slow_start_restart_ true", "set tcpTick_ 0.01"):
        assert line in plain
    # The same keys off, and classic recovery: FullTcp/Newreno.
    off = _script({"profile": "ns2", "nagle": False, "idle_restart": False, "recovery": "classic"})
    assert "[new Agent/TCP/FullTcp/Newreno]" in off
    assert "set nodelay_ true" in off and "set slow_start_restart_ false" in off
    assert "[new Agent/TCP/FullTcp/Sack]" in _script({"profile": "ns2_sack"})
    # One-way: the SYN and the delayed growth follow oneway_syn.
    oneway = _script({"profile": "ns2_oneway"})
    assert "[new Agent/TCP/Newreno]" in oneway
    assert "set syn_ true" in oneway and "set delay_growth_ true" in oneway
    bare = _script({"profile": "ns2_oneway", "oneway_syn": False})
    assert "set syn_ false" in bare and "set delay_growth_ false" in bare


def test_nagle_sets_ns3s_tcp_no_delay():
    assert 'TcpNoDelay", BooleanValue(true)' in _script({"profile": "ns3"}, "ns3")
    assert 'TcpNoDelay", BooleanValue(false)' in _script({"profile": "ns3", "nagle": True}, "ns3")


def test_equal_cost_paths_are_refused_by_ns2_and_per_flow_ecmp_by_ns3():
    scenario = {
        "topology": {"kind": "fat_tree", "k": 4},
        "forwarding": {"policy": "ecmp"},
        "transport": {"profile": "ns2"},
        "traffic": {"flows": [{"src": 0, "dst": 15, "size": "10KB"}]},
    }
    with pytest.raises(NotTranslatable, match=r"forwarding\.policy"):
        crosscheck(scenario, "ns2")
    with pytest.raises(NotTranslatable, match=r"forwarding\.policy"):
        crosscheck({**scenario, "transport": {"profile": "ns3"}}, "ns3")


def test_a_missing_reference_is_one_line_saying_what_to_install(monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(ns2, "available", lambda: False)
    with pytest.raises(ReferenceMissing, match=r"apt-get install ns2"):
        crosscheck({**SINGLE, "transport": {"profile": "ns2"}}, "ns2")
    path = tmp_path / "s.toml"
    path.write_text(dcnsim.Scenario({**SINGLE, "transport": {"profile": "ns2"}}).to_toml())
    assert main(["crosscheck", str(path), "--with", "ns2"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["error: " + ns2.INSTALL]


def test_the_command_prints_both_and_keeps_the_script(tmp_path, capsys):
    _need(ns2)
    path = tmp_path / "s.toml"
    path.write_text(dcnsim.Scenario({**SINGLE, "transport": {"profile": "ns2"}}).to_toml())
    status = main(
        [
            "crosscheck",
            str(path),
            "--with",
            "ns2",
            "--out",
            str(tmp_path / "xc"),
            "--tolerance",
            "fct=0.001",
        ]
    )
    out = capsys.readouterr().out
    assert "FCT median" in out and "fct ±0.001" in out and "ns2" in out
    assert status == 0, out
    assert (tmp_path / "xc" / "crosscheck.tcl").read_text().startswith("# ns-2.35 script")
    assert (tmp_path / "xc" / "ns2_flows.csv").exists()


# --- item 4: the incast study's baseline beside ns-2 ------------------------------------------


def test_the_incast_baseline_runs_beside_ns2():
    from dcnsim.studies.incast import incast_reference

    _need(ns2)
    table, text = incast_reference(workers=(4, 16), rounds=3)
    assert list(table["workers"]) == [4, 16]
    assert "the seed's most workers without collapse (DCTCP): 25" in text
    # Collapse is a round that waits for RTO_min (200 ms): none at 4 workers, every
    # steady round at 16, in both simulators (64 KB port, 16 x 64 KB responses).
    for who in ("dcnsim", "ns2"):
        small, large = table.iloc[0], table.iloc[1]
        assert small[f"{who}_steady_median_ms"] < 200 <= large[f"{who}_steady_median_ms"], text
        assert large[f"{who}_timeouts"] > 0, text


def test_the_full_incast_study_prints_the_ns2_baseline(monkeypatch):
    import dcnsim.studies.incast as incast_study
    from dcnsim.studies.incast import STUDY, run_incast

    _need(ns2)
    # The full variant (quick=False, its own grid: here one point) runs the baseline in both
    # simulators and prints it after the claims (here at 4 and 8 workers of its five,
    # to stay short; measured: no collapse at either in both).
    full = incast_study.incast_reference
    monkeypatch.setattr(incast_study, "incast_reference", lambda **kw: full(workers=(4, 8), **kw))
    monkeypatch.setattr(incast_study, "INCAST_FULL", {1500: [4]})
    detail = run_incast(rounds=2, jobs=1)
    text = STUDY.tables(detail, False)[1]
    block = text[text.index("Incast baseline without DCTCP") :]
    assert "the seed's most workers without collapse (DCTCP): 25" in block
    assert "most workers of [4, 8] without collapse, without DCTCP: dcnsim 8, ns-2 8" in block
    assert max(len(line) for line in block.splitlines()) <= 100
    rows = block.splitlines()[8:10]
    assert [line.split()[0] for line in rows] == ["4", "8"]
    # Without ns-2 the study says what to install instead.
    monkeypatch.setattr(ns2, "available", lambda: False)
    detail = run_incast(rounds=2, jobs=1)
    assert f"not run ({ns2.INSTALL})" in STUDY.tables(detail, False)[1]
    # The quick variant, or a grid of the caller's, runs no reference.
    assert "reference" not in run_incast(quick=True, sizes=[1500], jobs=1).attrs
    assert "reference" not in run_incast(grid={1500: [4]}, rounds=2, jobs=1).attrs


@pytest.mark.slow
def test_the_first_seeds_tcp_baseline_beside_ns2():
    from dcnsim.studies.latency_difference.reference import latency_reference, reference_text

    _need(ns2)
    # TCP, 64:4:1, 10 % load, seed 1: the 127 test packets' latencies in both agree
    # (measured: median 610.9 / 610 µs, largest 1494.7 / 1507 µs); both run past the
    # seed's 829 µs, so the gap to the seed is not dcnsim's.
    table = latency_reference(seeds=(1,))
    row = table.iloc[0]
    for stat in ("median", "max"):
        assert abs(row[f"dcnsim_{stat}_us"] / row[f"ns2_{stat}_us"] - 1) <= 0.02, table
    assert row["ns2_max_us"] > 829 + 1 and row["dcnsim_max_us"] > 829 + 1, table
    text = reference_text(table)
    assert "the seed: 29-829 µs; runs inside it (+-1 µs): dcnsim 0 of 1, ns-2 0 of 1" in text
