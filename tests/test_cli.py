"""The command line: outputs on disk, summaries, bench, progress and Ctrl-C."""

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

import dcnsim
from simhelp import (
    EXAMPLES,
    FLOW_COLUMNS,
    PROBE_COLUMNS,
    QUEUE_COLUMNS,
    SUMMARY_KEYS,
    assert_one_error_line,
    assert_summary_conserved,
    cli,
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
        "ports.parquet",
        "probes.parquet",
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


def test_set_changes_the_run(tmp_path):
    proc = cli("run", TREE3, "--out", str(tmp_path / "o"), "--set", "forwarding.policy=elr")
    assert proc.returncode == 0, proc.stderr
    probes = pd.read_parquet(tmp_path / "o" / "probes.parquet")
    assert (probes["hops"] == 6).all()
    assert "mean 78.20" in proc.stdout


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

    monkeypatch.setattr(pd.DataFrame, "to_parquet", broken)
    with pytest.raises(OSError):
        results.write(out)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert [p.name for p in tmp_path.iterdir()] == ["out"]


def test_validate_command():
    proc = cli("validate", TREE3)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"ok: {TREE3}\n"


def test_console_script_is_installed():
    script = Path(sys.executable).parent / "dcnsim"
    assert script.exists(), "pip install should put the dcnsim command beside python"
    proc = subprocess.run([script, "validate", TREE3], capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stdout == f"ok: {TREE3}\n", proc.stderr


def test_bench_prints_packet_hops_per_second():
    proc = cli("bench", "--stop-time", "1ms", "--repeat", "2")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert sum(line.startswith("run ") for line in lines) == 2
    last = lines[-1]
    assert last.startswith("packet-hops per wall second: ")
    rate = int(last.split(": ")[1].split()[0].replace(",", ""))
    assert rate > 0


def test_bench_scenario_is_the_documented_one():
    scenario = dcnsim.Scenario(json.loads(dcnsim._core.bench_scenario()))
    scenario.validate()
    assert scenario.get("topology.kind") == "fat_tree"
    assert scenario.get("topology.k") == 8


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
    proc = subprocess.Popen(
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
    assert progress.startswith("\rsimulated ")
    final = progress.split("\r")[-1]
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
    }  # fmt: skip
    assert first["stop_time_s"] == 1000.0
    assert 0 < first["sim_time_s"] <= second["sim_time_s"] < 1000
    assert first["events"] <= second["events"]
