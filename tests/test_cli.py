"""The command line: outputs on disk, summaries, bench, progress and Ctrl-C."""

import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

import dcnsim
from dcnsim.outdir import OutputError
from dcnsim.results import check_output_dir, pcap_file_names
from simhelp import (
    EXAMPLES,
    FLOW_COLUMNS,
    FLOW_TRACE_COLUMNS,
    OP_COLUMNS,
    PROBE_COLUMNS,
    QUEUE_COLUMNS,
    REPO,
    ROUND_COLUMNS,
    SUMMARY_KEYS,
    assert_one_error_line,
    assert_summary_conserved,
    cli,
    interruptible,
    run_checked,
)

TREE3 = str(EXAMPLES / "tree3_probes.toml")
FAT_TREE = str(EXAMPLES / "fat_tree_rps.toml")


def test_run_writes_every_output_file(tmp_path):
    out = tmp_path / "demo"
    proc = cli("run", TREE3, "--out", str(out), "--no-progress")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""  # no progress line when asked for none
    assert sorted(p.name for p in out.iterdir()) == [
        "flows.parquet",
        "ops.parquet",
        "ports.parquet",
        "probes.parquet",
        "scenario.toml",
        "summary.json",
    ]  # no queue trace requested, no queues.parquet

    probes = pd.read_parquet(out / "probes.parquet")
    assert list(probes.columns) == PROBE_COLUMNS
    assert len(probes) == 127
    flows = pd.read_parquet(out / "flows.parquet")
    assert list(flows.columns) == FLOW_COLUMNS
    assert len(flows) == 0

    # Host 0's NIC sent the 127 probes; its ToR forwarded 15 of them to its own
    # hosts and 112 up to its aggregation switch.
    ports = pd.read_parquet(out / "ports.parquet").set_index("port")
    assert ports.loc["host0->tor0", "packets_sent"] == 127
    assert ports.loc["tor0->agg0", "packets_sent"] == 112
    assert ports.loc["agg0->core0", "packets_sent"] == 64
    assert ports["packets_dropped"].sum() == 0

    summary = json.loads((out / "summary.json").read_text())
    assert SUMMARY_KEYS <= set(summary)
    assert summary["name"] == "tree3 zero-load probes (first seed)"
    assert summary["seed"] == 1
    assert summary["version"] == dcnsim.__version__
    assert summary["packets_injected"] == summary["packets_delivered"] == 127
    assert_summary_conserved(summary)

    # The human summary: counters and the probe latency statistics in µs.
    text = proc.stdout
    for needle in ("events", "packet-hops", "127 delivered", "0 dropped"):
        assert needle in text, text
    assert "mean 63.21" in text and "std 16.78" in text, text
    assert "min 29.40" in text and "max 78.20" in text, text
    assert "tcp flows" not in text and "incast" not in text  # no TCP in this run


def test_run_writes_queue_trace_and_set_overrides(tmp_path):
    out = tmp_path / "ft"
    proc = cli("run", FAT_TREE, "--out", str(out), "--set", "stop_time=5ms", "--set", "seed=9")
    assert proc.returncode == 0, proc.stderr
    queues = pd.read_parquet(out / "queues.parquet")
    assert list(queues.columns) == QUEUE_COLUMNS
    assert len(queues) > 0
    assert set(queues["port"]) == {"edge7->host15"}
    summary = json.loads((out / "summary.json").read_text())
    assert summary["seed"] == 9
    assert summary["sim_time_s"] <= 5e-3
    assert_summary_conserved(summary)


KEPT_RUN = """
name = "kept"
seed = 1
stop_time = "20ms"
topology = { kind = "fat_tree", k = 4, link = { rate = "10Gbps", delay = "1us" } }
transport = { protocol = "dctcp" }
trace = { queues = ["edge0->host0"] }
[[traffic.workloads]]
src = "all"
dst = "random"
cdf = "sizes.cdf"
load = 0.3
stop = "3ms"
[[traffic.streams]]
src = 1
dst = 0
rate = "1Gbps"
record = true
stop = "1ms"
"""


def test_a_run_keeps_its_scenario_and_reruns_to_the_same_tables(tmp_path):
    # The --set overrides are part of what ran: scenario.toml holds them (and the
    # workload's relative cdf path, made absolute), and running that file from
    # another directory writes every table again byte for byte.
    (tmp_path / "exp").mkdir()
    (tmp_path / "exp" / "sizes.cdf").write_text("1460 0\n1460 0.5\n20000 0.8\n200000 1\n")
    (tmp_path / "exp" / "kept.toml").write_text(KEPT_RUN)
    first, again = tmp_path / "first", tmp_path / "again"
    sets = ("--set", "seed=7", "--set", "forwarding.policy=rps")
    proc = cli("run", str(tmp_path / "exp" / "kept.toml"), *sets, "--out", str(first),
               "--no-progress")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    kept = dcnsim.Scenario.from_toml(first / "scenario.toml")
    given = dcnsim.Scenario.from_toml(tmp_path / "exp" / "kept.toml")
    assert kept == given.set("seed", 7).set("forwarding.policy", "rps")
    assert kept.get("traffic.workloads[0].cdf") == str(tmp_path / "exp" / "sizes.cdf")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    proc = cli("run", str(first / "scenario.toml"), "--out", str(again), "--no-progress",
               cwd=elsewhere)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    tables = sorted(p.name for p in first.iterdir() if p.suffix == ".parquet")
    assert {"flows.parquet", "queues.parquet", "probes.parquet"} <= set(tables)
    assert len(pd.read_parquet(first / "flows.parquet")) > 10
    assert tables == sorted(p.name for p in again.iterdir() if p.suffix == ".parquet")
    for name in tables:
        assert (first / name).read_bytes() == (again / name).read_bytes(), name
    assert (first / "scenario.toml").read_bytes() == (again / "scenario.toml").read_bytes()


def test_set_changes_the_run(tmp_path):
    proc = cli("run", TREE3, "--out", str(tmp_path / "o"), "--set", "forwarding.policy=elr")
    assert proc.returncode == 0, proc.stderr
    probes = pd.read_parquet(tmp_path / "o" / "probes.parquet")
    assert (probes["hops"] == 6).all()
    assert "mean 78.20" in proc.stdout


def test_the_header_says_what_ran_after_set():
    """The run header is made from the scenario that ran: a key changed with --set is
    in it, and nothing the file's values were says otherwise."""
    incast = str(EXAMPLES / "dctcp_incast.toml")
    proc = cli("run", incast, "--set", "transport.mss=460B")
    assert proc.returncode == 0, proc.stderr
    head = proc.stdout.split("  simulated")[0]
    assert "mss=460B" in head and "set          transport.mss=460B" in head
    assert "1500" not in head
    websearch = str(EXAMPLES / "websearch_dctcp.toml")
    changes = ["topology.k=8", "traffic.workloads[0].load=0.1", "stop_time=1ms"]
    proc = cli("validate", websearch, *(a for c in changes for a in ("--set", c)))
    assert proc.returncode == 0, proc.stderr
    assert "fat_tree k=8 " in proc.stdout and "load=0.1 " in proc.stdout
    assert "k=4" not in proc.stdout and "0.4" not in proc.stdout


def test_rerun_replaces_the_whole_output_directory(tmp_path):
    out = tmp_path / "out"
    assert cli("run", FAT_TREE, "--out", str(out), "--set", "stop_time=2ms").returncode == 0
    assert (out / "queues.parquet").exists()
    proc = cli("run", TREE3, "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    # The stale trace of the first run is gone; nothing is left beside the directory.
    assert not (out / "queues.parquet").exists()
    assert len(pd.read_parquet(out / "probes.parquet")) == 127
    assert [p.name for p in tmp_path.iterdir()] == ["out"]


def test_run_refuses_to_replace_a_foreign_directory(tmp_path):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("keep me")
    message = assert_one_error_line(cli("run", TREE3, "--out", str(out)))
    assert message.startswith(f"--out '{out}': ") and "notes.txt" in message
    assert [p.name for p in out.iterdir()] == ["notes.txt"]
    assert [p.name for p in tmp_path.iterdir()] == ["mine"]


def test_results_write_is_whole_or_nothing(tmp_path, monkeypatch):
    results = run_checked(TREE3)
    out = results.write(tmp_path / "out")
    before = {p.name: p.read_bytes() for p in out.iterdir()}

    def broken(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(dcnsim.results, "write_table", broken)
    with pytest.raises(OutputError, match=r"^out_dir '.*': No space left on device$"):
        results.write(out)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert [p.name for p in tmp_path.iterdir()] == ["out"]


def test_validate_command():
    proc = cli("validate", TREE3)
    assert proc.returncode == 0, proc.stderr
    # The seed's tree: 1 core, 2 aggregation and 8 ToR switches, 16 hosts per ToR;
    # a link per host, per ToR (up to its aggregation switch) and per aggregation
    # switch (up to the core); probes from host 0 to each of the other 127.
    assert proc.stdout.splitlines() == [
        f"ok: {TREE3}",
        "  scenario tree3 cores=1 aggs=2 tors=8 hosts_per_tor=16 links 1Gbps 0.2us; single; "
        "1 probes",
        "  network  128 hosts, 11 switches, 138 links (276 ports)",
        "  traffic  127 probe packets, 0 streams, 0 flows",
        "  agents   0",
        "  stops    when traffic ends",
        # Routes: 139 nodes x 16 B, 12 rows (11 switches and the hosts') x 8 ToRs x 4 B
        # and 20 ports between switches x 16 B = 2,928 B; 276 ports, 127 recorded probes.
        proc.stdout.splitlines()[-1],
    ]
    memory = proc.stdout.splitlines()[-1]
    assert memory.startswith("  memory   about ") and "routing tables 2.9 KB" in memory


def test_list_names_what_each_axis_accepts():
    proc = cli("list")
    assert proc.returncode == 0, proc.stderr
    lines = dict(line.split(": ", 1) for line in proc.stdout.splitlines())
    assert lines["topologies"].startswith("star, tree3, fat_tree")
    assert lines["queues"] == "droptail, pfabric, priority"
    assert lines["agents"] == "pause, packet_slicing"
    assert lines["applications"] == (
        "workloads, incast, periodic, request_response, barrier, shuffle, web_search"
    )
    assert lines["stages"] == "max_occupancy, token_bucket, qjump"
    assert lines["studies"] == (
        "incast, spraying, spraying-random, latency-difference, pfabric, qjump, botcp, "
        "packet-slicing"
    )
    for protocol in ("newreno", "ecn", "dctcp", "d2tcp", "l2dct", "pfabric"):
        assert protocol in lines["protocols"].split(", ")
    # Every listed protocol and queue is accepted by validation.
    for protocol in lines["protocols"].split(", "):
        dcnsim.validate({"topology": {"kind": "star", "hosts": 2},
                         "transport": {"protocol": protocol}})  # fmt: skip
    assert cli("list", "cdfs").stdout == "cdfs: websearch, datamining, fb_hadoop, detail\n"


def test_every_listed_topology_and_policy_is_accepted_and_documented():
    lines = dict(line.split(": ", 1) for line in cli("list").stdout.splitlines())
    doc = (REPO / "docs" / "scenario.md").read_text()
    for kind in lines["topologies"].split(", "):
        assert f'### `kind = "{kind}"`' in doc, kind
        try:
            dcnsim.validate({"topology": {"kind": kind}})
        except dcnsim.ScenarioError as e:  # a kind's own keys may be required, not the kind
            assert not str(e).startswith("topology.kind"), e
    for policy in lines["policies"].split(", "):
        assert f"- `{policy}` — " in doc, policy
        star = {"kind": "star", "hosts": 2}
        dcnsim.validate({"topology": star, "forwarding": {"policy": policy}})


def test_console_script_is_installed():
    script = Path(sys.executable).parent / "dcnsim"
    assert script.exists(), "pip install should put the dcnsim command beside python"
    proc = subprocess.run([script, "validate", TREE3], capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stdout.startswith(f"ok: {TREE3}\n"), proc.stderr


def _bench_runs(stdout: str, name: str) -> list[str]:
    return [line for line in stdout.splitlines() if line.startswith(f"{name} run ")]


def test_bench_prints_packet_hops_per_second():
    proc = cli("bench", "--stop-time", "1ms", "--repeat", "2")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert len(_bench_runs(proc.stdout, "datagram")) == 2
    last = lines[-1]
    assert last.startswith("datagram: packet-hops per wall second: ")
    rate = int(last.split(": ")[2].split()[0].replace(",", ""))
    assert rate > 0


def test_bench_reports_events_per_packet_hop_and_peak_memory():
    proc = cli("bench", "tcp", "--stop-time", "0.5ms")
    assert proc.returncode == 0, proc.stderr
    (line,) = _bench_runs(proc.stdout, "tcp")
    events = int(line.split(": ")[1].split(" events")[0].replace(",", ""))
    hops = int(line.split("events, ")[1].split(" packet-hops")[0].replace(",", ""))
    per_hop = float(line.split(" events per packet-hop")[0].rsplit(", ", 1)[1])
    assert per_hop == pytest.approx(events / hops, abs=5e-4)
    assert " events/s, " in line and " s whole: " in line
    assert line.rsplit(", ", 1)[1].startswith("peak RSS ")


def test_bench_all_runs_pfabric_beside_dctcp_and_prints_the_ratio():
    proc = cli("bench", "all", "--stop-time", "0.5ms")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    for name in ("datagram", "tcp", "pfabric", "b1", "flowheavy"):
        assert len(_bench_runs(proc.stdout, name)) == 1
    ratio = float(lines[-1].removeprefix("pfabric / tcp (medians): "))
    assert ratio > 0


def bench(name: str, quick: bool = False) -> dcnsim.Scenario:
    scenario = dcnsim.Scenario(json.loads(dcnsim._core.bench_scenario(name, quick)))
    scenario.validate()
    return scenario


def test_bench_scenario_is_the_documented_one():
    scenario = bench("datagram")
    assert scenario.get("topology.kind") == "fat_tree"
    assert scenario.get("topology.k") == 8
    pfabric = bench("pfabric")
    assert pfabric.get("transport.protocol") == "pfabric"
    assert pfabric.get("network.queue.kind") == "pfabric"


def test_b1_is_the_tcp_benchmark_run_for_one_second():
    # Issue 10: k = 8 fat-tree, 10 Gbps, 1 us links, 1000-packet queues, DCTCP K = 65,
    # web-search sizes, Poisson arrivals at 50 % load between random pairs, ECMP, 1 s;
    # --quick: 100 ms.
    b1, tcp = bench("b1").to_dict(), bench("tcp").to_dict()
    assert {k: v for k, v in b1.items() if k not in ("name", "stop_time")} == {
        k: v for k, v in tcp.items() if k not in ("name", "stop_time")
    }
    assert b1["topology"] == {
        "kind": "fat_tree",
        "k": 8,
        "link": {"rate": "10Gbps", "delay": "1us"},
    }
    assert b1["network"]["queue"] == {
        "capacity": "1000pkt",
        "aqm": {"kind": "threshold", "k": "65pkt"},
    }
    assert b1["traffic"]["workloads"] == [
        {"src": "all", "dst": "random", "cdf": "websearch", "load": 0.5}
    ]
    assert b1["stop_time"] == "1s"
    assert bench("b1", quick=True).get("stop_time") == "100ms"


def test_flowheavy_is_the_latency_difference_background():
    from dcnsim.studies.latency_difference import latency_scenario

    study = latency_scenario("TCP", "64:4:1", 0.5, reading="previous").to_dict()
    flowheavy = bench("flowheavy").to_dict()
    for key in ("topology", "network", "forwarding", "transport"):
        assert flowheavy[key] == study[key], key
    assert flowheavy["traffic"] == {"workloads": study["traffic"]["workloads"]}
    assert flowheavy["stop_time"] == "500ms"
    assert bench("flowheavy", quick=True).get("stop_time") == "50ms"  # the study's warm-up


def test_bench_scale_runs_each_fat_tree_in_its_own_process_round_by_round():
    proc = cli("bench", "scale", "--stop-time", "0.2ms", "--repeat", "2")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.splitlines()
    sizes = [line for line in out if line.startswith("scale k=")]
    # k^3 / 4 hosts per fat-tree, each size in its own process.
    assert [line.split(":")[1].split(" hosts")[0].strip() for line in sizes] == [
        "16",
        "128",
        "1,024",
        "3,456",
    ]
    for line in sizes:
        assert " ns per packet-hop, " in line and ", peak RSS " in line
    rounds = [line for line in out if line.startswith("round ")]
    # Every size once per round, round after round (not each size's runs together).
    assert [line.split(":")[0] for line in rounds] == [
        f"round {r}/2, k={k}" for r in (1, 2) for k in (4, 8, 16, 24)
    ]
    ns = {k: [] for k in (4, 8, 16, 24)}
    for line in rounds:
        k = int(line.split("k=")[1].split(":")[0])
        ns[k].append(float(line.split(": ")[1].split(" ns")[0]))
    # The size lines give the medians of the rounds, the last line their ratio
    # and each round's own.
    for line in (line for line in out if line.startswith("scale k=")):
        k = int(line.split("k=")[1].split(":")[0])
        printed = float(line.split("packet-hops, ")[1].split(" ns")[0])
        assert printed == pytest.approx(sum(ns[k]) / 2, abs=0.11)
    last = out[-1]
    assert last.startswith("scale: ns per packet-hop at k=24 / k=8: ")
    by_round = [float(r) for r in last.split("by round ")[1].rstrip(")").split(", ")]
    assert by_round == pytest.approx([b / a for a, b in zip(ns[8], ns[24], strict=True)], abs=0.02)


# --- long runs: progress line and Ctrl-C ----------------------------------------------


def endless(tmp_path: Path) -> Path:
    """A scenario that would take far longer than the test to simulate."""
    path = tmp_path / "long.toml"
    path.write_text(
        'stop_time = "1000s"\n'
        '[topology]\nkind = "star"\nhosts = 2\n'
        "[[traffic.streams]]\nsrc = 0\ndst = 1\nload = 0.5\n"
    )
    return path


def interrupt_after(args, seconds: float) -> subprocess.CompletedProcess:
    proc = interruptible(
        [sys.executable, "-m", "dcnsim", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    time.sleep(seconds)
    proc.send_signal(signal.SIGINT)
    try:
        stdout, stderr = proc.communicate(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        pytest.fail("the run did not stop within 15 s of Ctrl-C")
    # Decoded by hand: text mode would turn the progress line's \r into \n.
    return subprocess.CompletedProcess(args, proc.returncode, stdout.decode(), stderr.decode())


def test_ctrl_c_stops_a_run_cleanly(tmp_path):
    out = tmp_path / "out"
    proc = interrupt_after(["run", str(endless(tmp_path)), "--out", str(out), "--no-progress"], 3)
    assert proc.returncode == 130, proc.stderr
    assert proc.stderr == "error: interrupted\n"
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir()] == ["long.toml"]


def test_progress_line_shows_simulated_time_and_rate(tmp_path):
    out = tmp_path / "out"
    proc = interrupt_after(["run", str(endless(tmp_path)), "--out", str(out), "--progress"], 3)
    assert proc.returncode == 130, proc.stderr
    assert "Traceback" not in proc.stderr
    progress, last = proc.stderr.rsplit("\n", 2)[:2]
    assert last == "error: interrupted"
    final = progress.split("\r")[-1]  # the bar of the studies and sweeps, then the text
    assert re.match(r" *\d+%\|[^|]{20}\| simulated ", final), final
    assert " of 1000.000 s (" in final and "%)" in final
    assert "packet-hops/s" in final


def test_hook_exception_aborts_the_run(tmp_path):
    scenario = dcnsim.Scenario.from_toml(endless(tmp_path))
    calls = []

    def hook(info):
        calls.append(info)
        if len(calls) == 2:
            raise RuntimeError("stop here")

    started = time.monotonic()
    with pytest.raises(RuntimeError, match="stop here"):
        dcnsim._core.run(scenario.to_json(), hook)
    assert time.monotonic() - started < 10
    assert len(calls) == 2
    first, second = calls
    assert set(first) == {
        "sim_time_s", "stop_time_s", "events", "packet_hops", "wall_s", "packet_hops_per_s",
        "recorded_rows",
    }  # fmt: skip
    assert first["stop_time_s"] == 1000.0
    assert 0 < first["sim_time_s"] <= second["sim_time_s"] < 1000
    assert first["events"] <= second["events"]
    assert first["recorded_rows"] == 0  # the stream is not recorded


# --- TCP outputs: rounds, flow traces, packet captures ----------------------------------

TCP_RUN = """
name = "incast with captures"
[topology]
kind = "star"
hosts = 5
link = { rate = "1Gbps", delay = "1us" }
[network.queue]
capacity = "32pkt"
[[traffic.incast]]
aggregator = 0
workers = "all"
sru = "64KB"
rounds = 3
persistent = false
[trace]
flows = [0, 5]
pcap = ["host0", "sw0->host0"]
"""


def tcp_scenario(tmp_path: Path, text: str = TCP_RUN) -> Path:
    path = tmp_path / "incast.toml"
    path.write_text(text)
    return path


def test_run_writes_tcp_outputs_and_summarizes_them(tmp_path):
    out = tmp_path / "out"
    proc = cli("run", str(tcp_scenario(tmp_path)), "--out", str(out), "--no-progress")
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in out.iterdir()) == [
        "flow_trace.parquet",
        "flows.parquet",
        "ops.parquet",
        "pcap",
        "ports.parquet",
        "probes.parquet",
        "rounds.parquet",
        "scenario.toml",
        "summary.json",
    ]
    assert sorted(p.name for p in (out / "pcap").iterdir()) == ["host0.pcap", "sw0-to-host0.pcap"]
    rounds = pd.read_parquet(out / "rounds.parquet")
    assert list(rounds.columns) == ROUND_COLUMNS and len(rounds) == 3
    # Rounds are the incast operations (one per response) by round.
    ops = pd.read_parquet(out / "ops.parquet")
    assert list(ops.columns) == OP_COLUMNS and len(ops) == 3 * 4
    assert set(ops["application"]) == {"incast"} and sorted(set(ops["host"])) == [1, 2, 3, 4]
    by_round = ops.groupby("op_id")
    assert list(by_round["end_s"].max()) == list(rounds["end_s"])
    assert list(by_round["bytes"].sum()) == list(rounds["bytes"]) == [4 * 64_000] * 3
    assert list(by_round["value"].sum().astype(int)) == list(rounds["timeouts"])
    assert list(ops["outcome"] == "timeout") == list(ops["value"] > 0)
    trace = pd.read_parquet(out / "flow_trace.parquet")
    assert list(trace.columns) == FLOW_TRACE_COLUMNS and set(trace["flow_id"]) == {0, 5}
    flows = pd.read_parquet(out / "flows.parquet")
    assert list(flows.columns) == FLOW_COLUMNS and len(flows) == 12

    # The same numbers in the printed summary.
    results = run_checked(tcp_scenario(tmp_path))
    pd.testing.assert_frame_equal(flows, results.flows)
    tcp = results.flows
    text = proc.stdout
    assert "packet-hops/s" in text
    (tcp_line,) = [line for line in text.splitlines() if line.startswith("  tcp flows")]
    assert "12 finished of 12" in tcp_line
    assert f"{tcp['retransmits'].sum():,} retransmits" in tcp_line
    assert f"{tcp['timeouts'].sum():,} timeouts" in tcp_line
    (fct_line,) = [line for line in text.splitlines() if line.startswith("  flow times")]
    assert f"FCT mean {tcp['fct_s'].mean() * 1e3:.3f} ms" in fct_line
    assert f"p99 {tcp['fct_s'].quantile(0.99) * 1e3:.3f} ms" in fct_line
    assert f"slowdown mean {tcp['slowdown'].mean():.2f}" in fct_line
    (op_line,) = [line for line in text.splitlines() if line.startswith("  operations")]
    outcomes = ops["outcome"].value_counts()
    assert op_line.startswith("  operations   12 (incast 12); outcomes: ")
    assert all(f"{word} {n}" in op_line for word, n in outcomes.items())
    (round_line,) = [line for line in text.splitlines() if line.startswith("  incast")]
    assert "3 rounds" in round_line
    assert f"round time mean {rounds['round_time_s'].mean() * 1e3:.3f} ms" in round_line
    assert f"goodput mean {rounds['goodput_bps'].mean() / 1e6:.2f} Mbps" in round_line
    share = 100 * rounds["any_timeout"].mean()
    assert f"{share:.1f}% of rounds with a timeout" in round_line
    assert text.splitlines()[-1] == (
        f"wrote {out}: flow_trace.parquet, flows.parquet, ops.parquet, pcap/, ports.parquet, "
        "probes.parquet, rounds.parquet, scenario.toml, summary.json"
    )


def test_requested_tables_are_written_even_when_empty(tmp_path):
    # The run stops before the first round ends: rounds.parquet and
    # flow_trace.parquet are still written (asked for), empty or not.
    path = tcp_scenario(tmp_path, 'stop_time = "1us"\n' + TCP_RUN)
    results = run_checked(path)
    assert len(results.rounds) == 0
    out = results.write(tmp_path / "out")
    rounds = pd.read_parquet(out / "rounds.parquet")
    assert list(rounds.columns) == ROUND_COLUMNS and len(rounds) == 0
    assert (out / "flow_trace.parquet").exists()
    assert sorted(p.name for p in (out / "pcap").iterdir()) == ["host0.pcap", "sw0-to-host0.pcap"]


def test_rerun_replaces_captures_and_refuses_foreign_files_in_pcap(tmp_path):
    out = tmp_path / "out"
    assert cli("run", str(tcp_scenario(tmp_path)), "--out", str(out)).returncode == 0
    assert (out / "pcap").is_dir()
    # A run without captures replaces the directory: the old captures are gone.
    proc = cli("run", TREE3, "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert not (out / "pcap").exists() and not (out / "rounds.parquet").exists()

    assert cli("run", str(tcp_scenario(tmp_path)), "--out", str(out)).returncode == 0
    (out / "pcap" / "notes.txt").write_text("mine")
    message = assert_one_error_line(cli("run", TREE3, "--out", str(out)))
    assert "pcap/notes.txt" in message
    assert (out / "pcap" / "notes.txt").read_text() == "mine"
    assert (out / "rounds.parquet").exists()  # untouched


@pytest.mark.parametrize(
    "make",
    [
        lambda d: (d / "flows.parquet").mkdir(),  # our name, but a directory
        lambda d: (d / "pcap").write_text("a file, not our directory"),
        lambda d: (d / "pcap").mkdir() or (d / "pcap" / "inner").mkdir(),
        lambda d: (d / "summary.json").symlink_to(d.parent / "elsewhere.json"),
    ],
    ids=["directory-named-like-a-table", "pcap-file", "directory-in-pcap", "symlink"],
)
def test_output_dir_check_refuses_what_it_did_not_write(tmp_path, make):
    out = tmp_path / "out"
    out.mkdir()
    make(out)
    with pytest.raises(FileExistsError):
        check_output_dir(out)


def test_results_write_is_whole_or_nothing_with_captures(tmp_path, monkeypatch):
    results = run_checked(tcp_scenario(tmp_path))
    out = results.write(tmp_path / "out")
    before = {str(p.relative_to(out)): p.read_bytes() for p in out.rglob("*") if p.is_file()}

    def broken(self, data):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Path, "write_bytes", broken)
    with pytest.raises(OutputError, match=r"^out_dir '.*': No space left on device$"):
        results.write(out)
    after = {str(p.relative_to(out)): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert after == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["incast.toml", "out"]


def test_pcap_file_names():
    names = ["sw0->host3", "host3", "a b/c", ".hidden", "host3", "HOST3", "tor0->agg0"]
    assert pcap_file_names(names) == {
        "sw0->host3": "sw0-to-host3.pcap",
        "host3": "host3.pcap",
        "a b/c": "a_b_c.pcap",
        ".hidden": "_hidden.pcap",
        "HOST3": "HOST3-2.pcap",  # distinct from host3.pcap on case-insensitive disks
        "tor0->agg0": "tor0-to-agg0.pcap",
    }


def test_docs_prints_the_reference_shipped_inside_the_package():
    proc = cli("docs", "scenario")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == (REPO / "docs" / "scenario.md").read_text()


def test_docs_lists_every_document_and_opens_each():
    documents = sorted(p.stem for p in (REPO / "docs").glob("*.md"))
    proc = cli("docs")
    assert proc.returncode == 0, proc.stderr
    listed = [line.split()[0] for line in proc.stdout.splitlines()[: len(documents)]]
    assert sorted(listed) == documents
    for name in documents:
        proc = cli("docs", name)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout == (REPO / "docs" / f"{name}.md").read_text()
