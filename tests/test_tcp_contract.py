"""TCP flows through the API: completion, conservation, determinism, losses, incast
rounds, flow traces and packet captures (read back with dpkt, and tshark if present)."""

import collections
import io
import shutil
import subprocess

import dpkt
import pandas as pd
import pytest

import dcnsim
from simhelp import EXACT, FLOW_TRACE_COLUMNS, ROUND_COLUMNS, US, run_checked

MSS = 1460  # the default transport.mss
HEADER = 40  # IPv4 + TCP header of every segment
MB = 1_000_000


def two_hosts(size: str = "1MB", **sections) -> dict:
    """One TCP flow host0 -> host1 across a 2-host star of 1 Gbps, 1 us links."""
    return {
        "topology": {"kind": "star", "hosts": 2, "link": {"rate": "1Gbps", "delay": "1us"}},
        "traffic": {"flows": [{"src": 0, "dst": 1, "size": size}]},
        **sections,
    }


def tcp_rows(results: dcnsim.Results) -> pd.DataFrame:
    return results.flows[results.flows["kind"] == "tcp"].reset_index(drop=True)


# --- (a) one flow on an empty network -----------------------------------------------


def test_one_flow_finishes_close_to_its_ideal_time():
    flow = tcp_rows(run_checked(two_hosts()))
    assert len(flow) == 1
    f = flow.iloc[0]
    assert (f["protocol"], f["origin"], f["app"], f["round"]) == ("newreno", "flow", -1, -1)
    assert (f["src"], f["dst"], f["size_bytes"]) == (0, 1, MB)
    assert f["bytes_delivered"] == MB
    assert f["retransmits"] == 0 and f["timeouts"] == 0 and f["drops"] == 0
    assert f["ooo_packets"] == 0
    # Every data segment reached the receiver once: ceil(size / mss) of them.
    assert f["packets_delivered"] == -(-MB // MSS)

    # The documented ideal: handshake round trip (two 40 B packets over two hops),
    # every packet back to back through the slowest link, the first full packet's
    # store-and-forward over the other link, and the propagation delays.
    rate, delay = 1e9, 1 * US
    segments = -(-MB // MSS)
    handshake = 2 * (2 * 8 * HEADER / rate + 2 * delay)
    body = 8 * (MB + segments * HEADER) / rate
    store_forward = 8 * (MSS + HEADER) / rate
    ideal = handshake + body + store_forward + 2 * delay
    assert abs(f["ideal_fct_s"] - ideal) <= 1e-11

    assert f["fct_s"] >= f["ideal_fct_s"]
    assert 1.0 <= f["slowdown"] <= 1.5
    # On an empty network the window never limits a 1 Gbps, 26 us RTT path: only the
    # handshake's third packet (40 B, 0.32 us) is ahead of the data.
    assert f["fct_s"] - f["ideal_fct_s"] < 1 * US
    assert f["goodput_bps"] == pytest.approx(MB * 8 / f["fct_s"], rel=1e-12)
    assert f["end_s"] == pytest.approx(f["start_s"] + f["fct_s"], abs=EXACT)


def test_a_flow_starting_later_keeps_its_fct():
    first = tcp_rows(run_checked(two_hosts("200KB"))).iloc[0]
    later = two_hosts("200KB")
    later["traffic"]["flows"][0]["start"] = "3ms"
    second = tcp_rows(run_checked(later)).iloc[0]
    assert second["start_s"] == pytest.approx(3e-3, abs=EXACT)
    assert second["fct_s"] == pytest.approx(first["fct_s"], abs=EXACT)


# --- (b) conservation with TCP and workloads ----------------------------------------


def mixed_fat_tree(seed: int = 1, **extra) -> dict:
    """k=4 fat-tree, DCTCP with ECN marking, a websearch workload from every host,
    one datagram stream and a probe train."""
    return {
        "seed": seed,
        "topology": {"kind": "fat_tree", "k": 4, "link": {"rate": "10Gbps", "delay": "1us"}},
        "network": {
            "queue": {"capacity": "100pkt", "aqm": {"kind": "threshold", "k": "30pkt"}},
        },
        "transport": {"protocol": "dctcp", "min_rto": "1ms"},
        "traffic": {
            "workloads": [
                {"src": "all", "dst": "random", "cdf": "websearch", "load": 0.5, "stop": "2ms"}
            ],
            "streams": [{"src": 0, "dst": 5, "load": 0.2, "stop": "1ms"}],
            "probes": [{"src": 1, "dst": "all", "interval": "10us"}],
        },
        **extra,
    }


def test_conservation_with_tcp_workloads_streams_and_probes():
    # Run to completion: nothing in flight, every flow and stream accounted for.
    results = run_checked(mixed_fat_tree())
    s = results.summary
    assert s["packets_in_flight"] == 0
    tcp = tcp_rows(results)
    assert len(tcp) >= 5
    assert set(tcp["origin"]) == {"workload"} and set(tcp["protocol"]) == {"dctcp"}
    assert tcp["fct_s"].notna().all()
    assert (tcp["bytes_delivered"] == tcp["size_bytes"]).all()
    # Workload sources: one per host ("all"), numbered in order; random destinations.
    assert set(tcp["app"]) <= set(range(16))
    assert (tcp["src"] != tcp["dst"]).all()
    assert (tcp["start_s"] < 2e-3).all()


def test_conservation_when_the_run_stops_with_packets_in_flight():
    results = run_checked(mixed_fat_tree(stop_time="1ms"))
    assert results.summary["packets_in_flight"] > 0
    tcp = tcp_rows(results)
    unfinished = tcp[tcp["fct_s"].isna()]
    assert len(unfinished) > 0
    assert (unfinished["bytes_delivered"] < unfinished["size_bytes"]).all()
    assert unfinished["end_s"].isna().all() and unfinished["goodput_bps"].isna().all()


# --- (c) determinism ----------------------------------------------------------------


def test_tcp_runs_are_deterministic_per_seed():
    first, again = run_checked(mixed_fat_tree(3)), run_checked(mixed_fat_tree(3))
    pd.testing.assert_frame_equal(first.flows, again.flows)
    pd.testing.assert_frame_equal(first.ports, again.ports)
    other = run_checked(mixed_fat_tree(4))
    assert not first.flows.equals(other.flows)
    # Another seed draws other flow arrivals.
    starts, other_starts = tcp_rows(first)["start_s"], tcp_rows(other)["start_s"]
    assert not starts.equals(other_starts)


# --- (d) an outage forces retransmission timeouts -----------------------------------


def test_outage_on_the_bottleneck_causes_timeouts():
    scenario = two_hosts(
        network={"outages": [{"port": "sw0->host1", "start": "1ms", "stop": "300ms"}]}
    )
    results = run_checked(scenario)
    f = tcp_rows(results).iloc[0]
    assert f["bytes_delivered"] == MB  # it recovers and finishes
    assert f["timeouts"] >= 1
    assert f["retransmits"] >= f["timeouts"]
    assert f["fct_s"] > 0.3  # nothing gets through before the outage ends
    assert f["slowdown"] > 30
    # The port dropped what it was offered during the outage, and only that.
    port = results.ports.set_index("port").loc["sw0->host1"]
    assert port["packets_dropped"] == f["drops"] > 0
    assert results.summary["packets_dropped"] == f["drops"]


def test_short_outage_is_repaired_without_a_timeout():
    # A 1 ms outage while the sender's NIC still holds a large window: the segments
    # queued behind the hole arrive after it and come back as duplicate ACKs, so fast
    # retransmit and NewReno's partial ACKs repair every loss well before min_rto.
    scenario = two_hosts(
        network={"outages": [{"port": "sw0->host1", "start": "1ms", "stop": "2ms"}]}
    )
    f = tcp_rows(run_checked(scenario)).iloc[0]
    assert f["drops"] > 1
    assert f["timeouts"] == 0
    assert f["retransmits"] == f["drops"]  # each lost segment resent exactly once
    assert f["ooo_packets"] > 0
    assert f["bytes_delivered"] == MB
    assert f["fct_s"] < 0.2  # the default min_rto


# --- congestion control -------------------------------------------------------------


def two_into_one(protocol: str) -> dict:
    """Two 5 MB flows into host2 through a 60-packet port that marks CE at 15 packets;
    flow 1 has a 5 ms deadline."""
    return {
        "topology": {"kind": "star", "hosts": 3, "link": {"rate": "10Gbps", "delay": "1us"}},
        "transport": {"protocol": protocol, "min_rto": "1ms"},
        "network": {"queue": {"capacity": "60pkt", "aqm": {"kind": "threshold", "k": "15pkt"}}},
        "traffic": {
            "flows": [
                {"src": 0, "dst": 2, "size": "5MB"},
                {"src": 1, "dst": 2, "size": "5MB", "deadline": "5ms"},
            ]
        },
    }


@pytest.mark.parametrize("protocol", ["ecn", "dctcp", "d2tcp", "l2dct"])
def test_ecn_marking_keeps_ecn_capable_flows_loss_free(protocol):
    results = run_checked(two_into_one(protocol))
    flows = tcp_rows(results)
    assert (flows["protocol"] == protocol).all()
    assert (flows["bytes_delivered"] == 5 * MB).all()
    assert (flows["drops"] == 0).all() and (flows["retransmits"] == 0).all()
    port = results.ports.set_index("port").loc["sw0->host2"]
    assert port["packets_dropped"] == 0 and port["max_queue_packets"] < 60
    # Together they keep the bottleneck busy: 10 MB (plus headers) at 10 Gbps is 8.2 ms.
    assert flows["end_s"].max() < 8.5e-3


def test_newreno_ignores_the_marks_and_overflows_the_buffer():
    results = run_checked(two_into_one("newreno"))
    flows = tcp_rows(results)
    assert (flows["bytes_delivered"] == 5 * MB).all()
    port = results.ports.set_index("port").loc["sw0->host2"]
    assert port["max_queue_packets"] == 60
    assert port["packets_dropped"] == flows["drops"].sum() > 0
    assert (flows["retransmits"] >= flows["drops"]).all()


def test_d2tcp_lets_the_flow_with_a_deadline_finish_first():
    dctcp = tcp_rows(run_checked(two_into_one("dctcp"))).set_index("flow_id")
    d2tcp = tcp_rows(run_checked(two_into_one("d2tcp"))).set_index("flow_id")
    assert d2tcp.loc[1, "deadline_s"] == pytest.approx(5e-3, abs=EXACT)
    assert dctcp.loc[1, "deadline_s"] == pytest.approx(5e-3, abs=EXACT)  # ignored by DCTCP
    # DCTCP ignores the deadline; D²TCP backs the flow without one off harder.
    assert d2tcp.loc[1, "fct_s"] < d2tcp.loc[0, "fct_s"]
    assert d2tcp.loc[1, "fct_s"] < dctcp.loc[1, "fct_s"]


# --- (e) incast rounds --------------------------------------------------------------


def incast(**app) -> dict:
    return {
        "topology": {"kind": "star", "hosts": 5, "link": {"rate": "1Gbps", "delay": "1us"}},
        "network": {"queue": {"capacity": "32pkt"}},
        "traffic": {
            "incast": [
                {"aggregator": 0, "workers": [1, 2, 3, 4], "rounds": 3, "persistent": False, **app}
            ]
        },
    }


def test_incast_rounds_are_barrier_synchronized():
    sru = 64_000
    results = run_checked(incast(sru="64KB", start="1ms"))
    rounds = results.rounds
    assert list(rounds.columns) == ROUND_COLUMNS
    assert list(rounds["app"]) == [0, 0, 0] and list(rounds["round"]) == [0, 1, 2]
    assert rounds["start_s"].iloc[0] == pytest.approx(1e-3, abs=EXACT)
    # The next round starts exactly when the last response of the previous one is in.
    assert (rounds["start_s"].iloc[1:].to_numpy() == rounds["end_s"].iloc[:-1].to_numpy()).all()
    assert (rounds["round_time_s"] - (rounds["end_s"] - rounds["start_s"])).abs().max() <= EXACT
    assert (rounds["bytes"] == 4 * sru).all() and (rounds["flows"] == 4).all()
    goodput = rounds["bytes"] * 8 / rounds["round_time_s"]
    assert ((rounds["goodput_bps"] - goodput).abs() <= 1e-9 * goodput).all()
    assert (rounds["goodput_bps"] < 1e9).all()  # the aggregator's link is the bottleneck

    flows = tcp_rows(results)
    assert len(flows) == 12
    assert set(flows["origin"]) == {"incast"} and set(flows["app"]) == {0}
    assert sorted(flows["round"]) == [0] * 4 + [1] * 4 + [2] * 4
    assert (flows["dst"] == 0).all() and (flows["size_bytes"] == sru).all()
    for r, group in flows.groupby("round"):
        row = rounds.set_index("round").loc[r]
        assert sorted(group["src"]) == [1, 2, 3, 4]
        assert (group["start_s"] == row["start_s"]).all()
        assert group["end_s"].max() == pytest.approx(row["end_s"], abs=EXACT)
        assert group["timeouts"].sum() == row["timeouts"]
        assert row["any_timeout"] == int(row["timeouts"] > 0)


def test_incast_total_is_split_across_the_workers():
    results = run_checked(incast(total="100KB", rounds=2))
    flows = tcp_rows(results)
    assert len(flows) == 8 and (flows["size_bytes"] == 25_000).all()
    assert (results.rounds["bytes"] == 100_000).all()


def test_incast_with_timeouts_marks_the_round():
    # 16 synchronized senders into a 16-packet buffer: some responses lose their
    # tail and wait for the 200 ms minimum RTO (the incast collapse).
    scenario = {
        "topology": {"kind": "star", "hosts": 17, "link": {"rate": "1Gbps", "delay": "1us"}},
        "network": {"queue": {"capacity": "16pkt"}},
        "transport": {"init_cwnd": 2},
        "traffic": {
            "incast": [
                {
                    "aggregator": 0,
                    "workers": "all",
                    "sru": "32KB",
                    "rounds": 2,
                    "persistent": False,
                }
            ]
        },
    }
    results = run_checked(scenario)
    rounds = results.rounds
    assert len(rounds) == 2
    assert (rounds["any_timeout"] == 1).all() and (rounds["timeouts"] > 0).all()
    assert (rounds["round_time_s"] > 0.2).all()
    flows = tcp_rows(results)
    per_round = flows.groupby("round")["timeouts"].sum()
    assert list(per_round) == list(rounds["timeouts"])


def test_persistent_incast_keeps_one_connection_per_worker():
    # The default: each worker's connection stays open across rounds, so its
    # window carries over; one handshake per worker, one FIN after the last round.
    scenario = incast(sru="64KB", rounds=3)
    del scenario["traffic"]["incast"][0]["persistent"]
    results = run_checked(scenario)
    rounds = results.rounds
    assert list(rounds["round"]) == [0, 1, 2]
    assert (rounds["start_s"].iloc[1:].to_numpy() == rounds["end_s"].iloc[:-1].to_numpy()).all()
    flows = tcp_rows(results)
    assert len(flows) == 4 and sorted(flows["src"]) == [1, 2, 3, 4]
    assert (flows["size_bytes"] == 3 * 64_000).all()
    assert (flows["bytes_delivered"] == 3 * 64_000).all()
    # Each connection's last byte arrives at the end of some round's barrier.
    assert flows["end_s"].max() == pytest.approx(rounds["end_s"].iloc[-1], abs=EXACT)


def test_flow_numbering_listed_flows_first_then_creation_order():
    scenario = incast(sru="10KB", rounds=2)
    scenario["traffic"]["flows"] = [
        {"src": 1, "dst": 2, "size": "10KB", "start": "5ms"},
        {"src": 3, "dst": 4, "size": "10KB"},
    ]
    flows = tcp_rows(run_checked(scenario))
    assert list(flows["flow_id"]) == list(range(10))
    assert list(flows["origin"]) == ["flow", "flow"] + ["incast"] * 8
    assert list(flows["src"].iloc[:2]) == [1, 3]  # listed order, not start order
    assert list(flows["round"].iloc[2:]) == [0] * 4 + [1] * 4


# --- (f) flow traces ----------------------------------------------------------------


def test_flow_trace_records_exactly_the_traced_flows():
    scenario = {
        "topology": {"kind": "star", "hosts": 4, "link": {"rate": "1Gbps", "delay": "1us"}},
        "traffic": {
            "flows": [
                {"src": 0, "dst": 3, "size": "300KB"},
                {"src": 1, "dst": 3, "size": "300KB"},
                {"src": 2, "dst": 3, "size": "300KB"},
            ]
        },
        "trace": {"flows": [0, 2]},
    }
    results = run_checked(scenario)
    trace = results.traces["flows"]
    assert list(trace.columns) == FLOW_TRACE_COLUMNS
    assert set(trace["flow_id"]) == {0, 2}
    flows = tcp_rows(results).set_index("flow_id")
    for flow_id, rows in trace.groupby("flow_id"):
        assert rows["time_s"].is_monotonic_increasing
        assert (rows["cwnd_bytes"] > 0).all()
        assert rows["snd_una"].is_monotonic_increasing
        assert (rows["snd_nxt"] >= rows["snd_una"]).all()
        # Sequence space: SYN at 0, data 1..size, then the FIN.
        assert rows["snd_una"].max() == flows.loc[flow_id, "size_bytes"] + 2
        assert rows["srtt_s"].dropna().gt(0).all()
        assert rows["alpha"].isna().all()  # NewReno has no alpha
    # Without trace.flows nothing is recorded.
    del scenario["trace"]
    assert len(run_checked(scenario).traces["flows"]) == 0


def test_flow_trace_shows_dctcp_alpha():
    scenario = two_hosts(
        "500KB",
        transport={"protocol": "dctcp"},
        network={"queue": {"capacity": "100pkt", "aqm": {"kind": "threshold", "k": "5pkt"}}},
        trace={"flows": [0]},
    )
    scenario["topology"]["host_rates"] = ["10Gbps", "1Gbps"]
    trace = run_checked(scenario).traces["flows"]
    alpha = trace["alpha"]
    assert alpha.notna().all() and alpha.between(0, 1).all()
    assert alpha.iloc[0] == 1.0  # [transport.dctcp] alpha_init
    assert alpha.min() < 1.0  # it decays once windows go by without full marking


# --- (g) packet captures ------------------------------------------------------------


Packet = collections.namedtuple("Packet", "time src dst flags seq payload ecn")


def read_pcap(data: bytes) -> list[Packet]:
    reader = dpkt.pcap.Reader(io.BytesIO(data))
    assert reader.datalink() == dpkt.pcap.DLT_EN10MB
    packets = []
    for ts, buf in reader:
        ip = dpkt.ethernet.Ethernet(buf).data
        assert isinstance(ip, dpkt.ip.IP) and ip.p == dpkt.ip.IP_PROTO_TCP
        tcp = ip.data
        payload = ip.len - 4 * ip.hl - 4 * tcp.off
        packets.append(
            Packet(float(ts), host(ip.src), host(ip.dst), tcp.flags, tcp.seq, payload, ip.tos & 3)
        )
    return packets


def host(address: bytes) -> int:
    """The host index of an IPv4 address: host i is 10.0.0.0 + (i + 1)."""
    return int.from_bytes(address[1:], "big") - 1


def dctcp_into_host1() -> dict:
    """Two DCTCP flows into host1, marked at a 20-packet threshold."""
    return {
        "topology": {"kind": "star", "hosts": 3, "link": {"rate": "1Gbps", "delay": "1us"}},
        "transport": {"protocol": "dctcp"},
        "network": {"queue": {"capacity": "100pkt", "aqm": {"kind": "threshold", "k": "20pkt"}}},
        "traffic": {
            "flows": [
                {"src": 0, "dst": 1, "size": "300KB"},
                {"src": 2, "dst": 1, "size": "200KB", "start": "10us"},
            ]
        },
        "trace": {"pcap": ["host1", "host0->sw0"]},
    }


def test_pcap_captures_match_the_flows_table(tmp_path):
    results = run_checked(dctcp_into_host1())
    flows = tcp_rows(results).set_index("flow_id")
    assert set(results.pcaps) == {"host1", "host0->sw0"}

    # The files on disk are the same bytes, under file-system-safe names.
    out = results.write(tmp_path / "out")
    assert sorted(p.name for p in (out / "pcap").iterdir()) == ["host0-to-sw0.pcap", "host1.pcap"]
    assert (out / "pcap" / "host1.pcap").read_bytes() == results.pcaps["host1"]
    assert (out / "pcap" / "host0-to-sw0.pcap").read_bytes() == results.pcaps["host0->sw0"]

    # host1 is the receiver of both flows: it sees everything they send and receive.
    at_host1 = read_pcap(results.pcaps["host1"])
    times = [p.time for p in at_host1]
    assert times == sorted(times)
    assert all(1 in (p.src, p.dst) for p in at_host1)
    assert len(at_host1) == flows["packets_sent"].sum() - flows["drops"].sum()
    syn = [p for p in at_host1 if p.flags & dpkt.tcp.TH_SYN]
    fin = [p for p in at_host1 if p.flags & dpkt.tcp.TH_FIN]
    assert len(syn) == 4  # per flow: the SYN in and the SYN-ACK out
    assert len(fin) == 4  # per flow: the sender's FIN in and the receiver's FIN out
    data = [p for p in at_host1 if p.payload > 0]
    assert all(p.dst == 1 for p in data)  # only the senders carry data
    assert len(data) == flows["packets_delivered"].sum()
    for flow_id, src in ((0, 0), (1, 2)):
        segments = {(p.seq, p.payload) for p in data if p.src == src}
        # Distinct segments cover the flow's bytes exactly: 1..size after the SYN.
        assert sum(length for _, length in segments) == flows.loc[flow_id, "size_bytes"]
        assert min(seq for seq, _ in segments) == 1
    # DCTCP data is ECN-capable; the switch marked some of it CE on the way in.
    assert {p.ecn for p in data} <= {2, 3}
    assert any(p.ecn == 3 for p in data)
    assert all(p.ecn == 0 for p in at_host1 if p.payload == 0)  # pure ACKs, SYN, FIN

    # host0's NIC: every segment flow 0 sends, unmarked (no switch on the way yet).
    at_nic = read_pcap(results.pcaps["host0->sw0"])
    assert all((p.src, p.dst) == (0, 1) for p in at_nic)
    sent_data = [p for p in at_nic if p.payload > 0]
    assert len(sent_data) == -(-300_000 // MSS) + flows.loc[0, "retransmits"]
    assert all(p.ecn == 2 for p in sent_data)  # ECT(0)
    (first,) = [p for p in at_nic if p.flags & dpkt.tcp.TH_SYN]
    ecn_setup = dpkt.tcp.TH_ECE | dpkt.tcp.TH_CWR
    assert first.flags & ecn_setup == ecn_setup  # an ECN-setup SYN (RFC 3168)
    assert first.seq == 0 and first.payload == 0


def test_newreno_data_is_not_ecn_capable():
    scenario = two_hosts("50KB", trace={"pcap": ["host0"]})
    packets = read_pcap(run_checked(scenario).pcaps["host0"])
    assert {p.ecn for p in packets} == {0}
    assert sum(p.payload > 0 for p in packets) == -(-50_000 // MSS)


def tshark_frames(tshark: str, path, display_filter: str) -> list[str]:
    """The numbers of the frames of the capture at ``path`` that tshark's display
    filter keeps."""
    proc = subprocess.run(
        [tshark, "-r", str(path), "-Y", display_filter, "-T", "fields", "-e", "frame.number"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.split()


def test_tshark_sees_the_retransmissions(tmp_path):
    tshark = shutil.which("tshark")
    # Losses from a long outage: every resend is an RTO or follows one, so resends
    # are far more than 3 ms after the original (tshark would call it out-of-order).
    scenario = two_hosts(
        network={"outages": [{"port": "sw0->host1", "start": "1ms", "stop": "300ms"}]},
        trace={"pcap": ["host0->sw0"]},
    )
    results = run_checked(scenario)
    f = tcp_rows(results).iloc[0]
    assert f["retransmits"] > 0
    path = results.write(tmp_path / "out") / "pcap" / "host0-to-sw0.pcap"
    if tshark is None:
        pytest.skip("tshark is not installed")

    resent = tshark_frames(
        tshark,
        path,
        "tcp.analysis.retransmission || tcp.analysis.fast_retransmission"
        " || tcp.analysis.spurious_retransmission",
    )
    out_of_order = tshark_frames(tshark, path, "tcp.analysis.out_of_order")
    # tshark cannot see more resends than the sender made, it sees at least one per
    # timeout, and every resend is labelled as one (or, if quick, as out of order).
    assert f["timeouts"] <= len(resent) <= f["retransmits"]
    assert len(resent) + len(out_of_order) == f["retransmits"]


def test_tshark_agrees_with_a_sack_recovery(tmp_path):
    """Two short outages on the receiver's link make two holes; with SACK the sender
    repairs them without a timeout. tshark reads the SACK option and counts, from the
    receiver's capture, one duplicate ACK per out-of-order segment and, from the
    sender's, one resend per dcnsim retransmission."""
    tshark = shutil.which("tshark")
    scenario = two_hosts(
        "2MB",
        transport={"sack": True},
        network={
            "outages": [
                {"port": "sw0->host1", "start": "2ms", "stop": "2.03ms"},
                {"port": "sw0->host1", "start": "2.1ms", "stop": "2.13ms"},
            ]
        },
        trace={"pcap": ["host0", "host1"]},
    )
    results = run_checked(scenario)
    f = tcp_rows(results).iloc[0]
    assert f["timeouts"] == 0 and f["retransmits"] > 0 and f["ooo_packets"] > 0
    out = results.write(tmp_path / "out") / "pcap"
    if tshark is None:
        pytest.skip("tshark is not installed")

    def frames(path, display_filter: str) -> list[str]:
        return tshark_frames(tshark, path, display_filter)

    receiver, sender = out / "host1.pcap", out / "host0.pcap"
    assert frames(receiver, "tcp.options.sack_le"), "SACK blocks on the receiver's ACKs"
    dup_acks = frames(receiver, "tcp.analysis.duplicate_ack && ip.src == 10.0.0.2")
    assert len(dup_acks) == f["ooo_packets"]
    resent = frames(
        sender,
        "ip.src == 10.0.0.1 && (tcp.analysis.retransmission"
        " || tcp.analysis.fast_retransmission || tcp.analysis.spurious_retransmission"
        " || tcp.analysis.out_of_order)",
    )
    assert len(resent) == f["retransmits"]


def test_rwnd_caps_a_long_flow_at_one_window_per_round_trip():
    """With the receiver window below the bandwidth-delay product, a flow sends one
    window per round trip: goodput = rwnd / RTT (closed form)."""
    scenario = two_hosts("10MB", transport={"rwnd": "10pkt"})
    scenario["topology"]["link"]["delay"] = "100us"
    f = tcp_rows(run_checked(scenario)).iloc[0]
    # Data: two store-and-forward hops of 1500 B at 1 Gbps; the ACK: two of 40 B.
    rtt = 2 * (100e-6 + 1500 * 8 / 1e9) + 2 * (100e-6 + 40 * 8 / 1e9)
    window_rate = 10 * MSS * 8 / rtt
    assert f["goodput_bps"] == pytest.approx(window_rate, rel=0.03)
    assert f["retransmits"] == 0


def test_a_profile_sets_the_defaults_and_written_keys_override_it():
    scenario = two_hosts(
        "200KB", transport={"profile": "ns3", "mss": "1000B"}, trace={"pcap": ["host0"]}
    )
    packets = read_pcap(run_checked(scenario).pcaps["host0"])
    data = [p for p in packets if p.payload > 0]
    assert max(p.payload for p in data) == 1000  # the written key, not ns-3's 536 B
    # ns-3.23's initial window of one segment, answered at once (its first-packet
    # rule): one data segment leaves before the first ACK of data comes back.
    first_ack = min(p.time for p in packets if p.src == 1 and not p.flags & dpkt.tcp.TH_SYN)
    assert sum(p.time < first_ack for p in data) == 1
