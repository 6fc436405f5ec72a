"""Switch agents through the user's front door: Ethernet flow control (the
``pause`` agent) keeps a 5:1 overload from dropping, against its closed form; PFC on
a 2-to-1 overload (lossless, fair, its PAUSE frames as tshark decodes them); a PFC
deadlock reported.

Host 0 (10 Gbps) sends a constant 5 Gbps stream of 1500 B datagrams for 2 ms to
host 1 (1 Gbps) through one switch with 100-packet queues. Without flow control
the switch queue overflows. With it the switch pauses host 0 and the backlog
waits in host 0's NIC: nothing is lost and the 1 Gbps link never idles, so
packet k arrives at 2.2 us + 12 us * (k + 1) + 1 us (see crates/dcnsim-core/
tests/agents.rs for the derivation).
"""

import re
import shutil
import subprocess

import pytest

import dcnsim
from simhelp import cli, run_checked, star

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


# --- PFC: a 2-to-1 overload, its PAUSE frames in a capture, a deadlock -------------------
#
# Hosts 0 and 1 each send a constant 10 Gbps stream of 1500 B datagrams to host 2 for
# T = 2 ms through one 10 Gbps switch port (100-packet queues): twice its rate. Without
# flow control the switch drops; with PFC it pauses both senders and loses nothing, the
# bottleneck never idles after its first packet (at 2.2 us) and, by symmetry, each
# paused sender gets the fair share R/2 (crates/dcnsim-core/tests/pause.rs).

T = 2e-3
PFC = PAUSE | {"per_class": True}


def two_to_one(agents: list[dict]) -> dict:
    scenario = star(3, link={"rate": "10Gbps", "delay": "1us"})
    stream = {"dst": 2, "rate": "10Gbps", "pattern": "constant", "size": "1500B"}
    return {
        **scenario,
        "stop_time": "2ms",
        "network": {"queue": {"capacity": "100pkt"}, "nic_queue": {"capacity": "5000pkt"}},
        "traffic": {"streams": [stream | {"src": 0}, stream | {"src": 1}]},
        "trace": {"pcap": ["sw0->host0"]},
        "agents": agents,
    }  # fmt: skip


def test_two_to_one_without_pfc_drops_at_the_switch():
    results = run_checked(two_to_one([]))
    assert port(results, "sw0->host2")["packets_dropped"] > 100
    assert (results.ports["pause_frames_sent"] == 0).all()
    assert (results.ports["paused_s"] == 0).all()


def test_two_to_one_with_pfc_is_lossless_and_fair():
    results = run_checked(two_to_one([PFC]))
    assert results.summary["packets_dropped"] == 0
    busy = port(results, "sw0->host2")["bytes_sent"] * 8 / 10e9
    assert busy == pytest.approx(T - 2.2e-6, abs=1.2e-6)
    streams = results.flows[results.flows["kind"] == "stream"]
    nics = ["host0->sw0", "host1->sw0"]
    for nic, delivered in zip(nics, streams["bytes_delivered"], strict=True):
        assert delivered * 8 / 10e9 / busy == pytest.approx(0.5, abs=0.005)
        # Its NIC's utilisation: the fair share, plus what the switch still holds.
        sent = port(results, nic)["bytes_sent"] * 8 / 10e9
        assert 0 <= sent - busy / 2 <= 24 * 1.2e-6
        assert port(results, nic)["paused_s"] == port(results, nic)["class0_paused_s"] > 0


@pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark not installed")
@pytest.mark.parametrize(
    ("agent", "opcode", "time_field"),
    [(PAUSE, "0x0001", "macc.pause_time"), (PFC, "0x0101", "macc.cbfc.pause_time.c0")],
    ids=["802.3x", "802.1Qbb"],
)
def test_pause_counters_match_the_frames_tshark_decodes(tmp_path, agent, opcode, time_field):
    results = run_checked(two_to_one([agent]))
    path = tmp_path / "sw0-to-host0.pcap"
    path.write_bytes(results.pcaps["sw0->host0"])
    fields = ["-T", "fields", "-e", "macc.opcode", "-e", time_field]
    out = subprocess.run(
        ["tshark", "-r", str(path), "-Y", "macc", *fields],
        capture_output=True, text=True, check=True,
    ).stdout.split("\n")  # fmt: skip
    frames = [line.split("\t") for line in out if line]
    assert {code for code, _ in frames} == {opcode}
    assert {int(quanta) for _, quanta in frames} == {0, 65535}, "XOFF and XON"
    sent = port(results, "sw0->host0")["pause_frames_sent"]
    assert len(frames) == sent == port(results, "sw0->host0")["packets_sent"]
    assert port(results, "host0->sw0")["pause_frames_received"] == sent


def ring_deadlock() -> dict:
    """Five switches in a ring, host i streaming to host i + 2 over two ring links."""
    n = 5
    hosts = [{"name": f"h{i}", "kind": "host"} for i in range(n)]
    switches = [{"name": f"s{i}", "kind": "switch"} for i in range(n)]
    links = [{"a": f"h{i}", "b": f"s{i}"} for i in range(n)]
    links += [{"a": f"s{i}", "b": f"s{(i + 1) % n}"} for i in range(n)]
    stream = {"rate": "10Gbps", "pattern": "constant", "size": "1500B", "stop": "10ms"}
    return {
        "stop_time": "20ms",
        "topology": {"kind": "edges", "nodes": hosts + switches, "links": links,
                     "link": {"rate": "10Gbps", "delay": "1us"}},
        "network": {"queue": {"capacity": "1000pkt"}, "nic_queue": {"capacity": "100000pkt"}},
        "traffic": {"streams": [stream | {"src": i, "dst": (i + 2) % n} for i in range(n)]},
        "agents": [PAUSE | {"xon": "2pkt", "quanta": 1000, "deadlock_after": "1ms"}],
    }  # fmt: skip


def test_a_pfc_deadlock_ends_the_run_with_a_report(tmp_path):
    """Every ring link carries two 10 Gbps streams and the ring's buffers wait on each
    other. The run ends at the deadlock instead of running to its stop time, and says
    why, in the summary and on the command line."""
    results = run_checked(ring_deadlock())
    report = results.summary["stopped_by_agent"]
    assert "no progress while paused" in report
    assert results.summary["sim_time_s"] < 10e-3
    assert not results.summary["stopped_at_stop_time"]
    path = tmp_path / "ring.toml"
    path.write_text(dcnsim.Scenario(ring_deadlock()).to_toml())
    proc = cli("run", str(path))
    assert proc.returncode == 0, proc.stderr
    assert f"  stopped      by a switch agent: {report}" in proc.stdout.splitlines()


def ring_of_tcp_flows(per_class: bool) -> dict:
    """The ring of :func:`ring_deadlock` with TCP flows instead of streams: host i sends
    20 MB to host i + 2 over two ring links, so the five flows' routes close a cycle of
    buffer dependencies (each ring ingress waits on the next ring egress), with PFC
    (802.1Qbb, ``per_class``) or 802.3x PAUSE. TCP's window is not limited by loss (a
    lossless fabric drops nothing), so the ring's buffers fill past XOFF."""
    scenario = ring_deadlock()
    n = len(scenario["traffic"]["streams"])
    flows = [{"src": i, "dst": (i + 2) % n, "size": "20MB", "class": 3} for i in range(n)]
    scenario["traffic"] = {"flows": flows}
    scenario["stop_time"] = "200ms"
    scenario["agents"][0] |= {"per_class": per_class}
    return scenario


@pytest.mark.parametrize("per_class", [True, False])
def test_tcp_flows_closing_a_buffer_cycle_deadlock_and_the_report_names_port_and_reason(
    per_class,
):
    """Issue 48: a real deadlock, not an overload. The flows cannot finish (each waits on
    a paused ring port), the detector ends the run ``deadlock_after`` into the stall,
    long before the stop time, naming a ring port (switch to switch) and the reason:
    packets waiting, the flows' class paused (bit 3 with PFC, every class with 802.3x),
    nothing sent."""
    results = run_checked(ring_of_tcp_flows(per_class))
    summary = results.summary
    report = summary["stopped_by_agent"]
    assert report is not None, "the run went on to its stop time"
    ring_ports = {f"s{i}->s{j}" for i in range(5) for j in range(5) if abs(i - j) in (1, 4)}
    found = re.fullmatch(
        r"(\S+) at ([\d.]+)us: no progress while paused \(PFC deadlock\?\): (\d+) packets "
        r"waiting, classes (0x[0-9a-f]{2}) paused, nothing sent for ([\d.]+)us \(deadlock_after\)",
        report,
    )
    assert found, report
    port, at_us, waiting, classes, stalled_us = found.groups()
    assert port in ring_ports and int(waiting) > 0, report
    assert classes == ("0x08" if per_class else "0xff"), report
    assert 1000 <= float(stalled_us) <= float(at_us), "deadlock_after (1 ms) into the stall"
    assert summary["sim_time_s"] < 200e-3 and not summary["stopped_at_stop_time"]
    assert summary["packets_dropped"] == 0 and summary["packets_in_flight"] > 0
    assert (results.flows["fct_s"].isna()).all(), "no flow of the cycle may finish"
