"""Helpers shared by the tests: checked runs, scenario builders, the CLI."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import dcnsim

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples"

#: Output columns, in order, from docs/scenario.md "Outputs".
FLOW_COLUMNS = [
    "flow_id", "kind", "src", "dst", "size_bytes", "start_s", "end_s", "fct_s",
    "packets_sent", "packets_delivered", "packets_dropped", "bytes_delivered", "mean_latency_s",
]  # fmt: skip
PROBE_COLUMNS = [
    "probe_id", "flow_id", "src", "dst", "size_bytes", "sent_s", "received_s", "latency_s", "hops",
]  # fmt: skip
QUEUE_COLUMNS = ["time_s", "port", "packets", "bytes"]
SUMMARY_KEYS = {
    "events", "packet_hops", "packets_injected", "packets_delivered", "packets_dropped",
    "packets_in_flight", "sim_time_s", "wall_s", "packet_hops_per_s", "name", "seed", "version",
}  # fmt: skip

US = 1e-6
EXACT = 1e-12  # seconds: latencies are whole picoseconds


def run_checked(scenario, **kwargs) -> dcnsim.Results:
    """``dcnsim.run`` followed by the conservation checks every run must pass."""
    results = dcnsim.run(scenario, **kwargs)
    assert_conserved(results)
    return results


def assert_conserved(results: dcnsim.Results) -> None:
    """Every packet injected is delivered, dropped or still in flight, per run and per flow."""
    s = results.summary
    assert_summary_conserved(s)
    injected, delivered = s["packets_injected"], s["packets_delivered"]
    dropped, in_flight = s["packets_dropped"], s["packets_in_flight"]

    flows, probes = results.flows, results.probes
    assert list(flows.columns) == FLOW_COLUMNS
    assert list(probes.columns) == PROBE_COLUMNS
    assert list(results.traces["queues"].columns) == QUEUE_COLUMNS

    # Probe packets (flow_id -1) and stream packets make up everything injected.
    lone = probes[probes["flow_id"] == -1]
    lone_received = int(lone["received_s"].notna().sum())
    assert injected == int(flows["packets_sent"].sum()) + len(lone), s
    assert delivered == int(flows["packets_delivered"].sum()) + lone_received, s

    # A probe row is either received (latency = received - sent, hops >= 1) or not.
    received = probes["received_s"].notna()
    assert (probes["latency_s"].notna() == received).all()
    assert (probes.loc[~received, "hops"] == -1).all()
    assert (probes.loc[received, "hops"] >= 1).all()
    lat = probes.loc[received, "received_s"] - probes.loc[received, "sent_s"]
    assert ((lat - probes.loc[received, "latency_s"]).abs() <= EXACT).all()
    assert (probes.loc[received, "latency_s"] > 0).all()

    if in_flight == 0:
        # Nothing left in the network: every flow's packets are accounted for exactly.
        per_flow = flows["packets_delivered"] + flows["packets_dropped"]
        assert (flows["packets_sent"] == per_flow).all(), flows
        assert dropped == int(flows["packets_dropped"].sum()) + (len(lone) - lone_received), s
    if results.scenario.get("stop_time") is None:
        assert in_flight == 0, "without stop_time the run ends when all traffic is done"


def assert_summary_conserved(s: dict) -> None:
    """packets_injected == delivered + dropped + in flight, all counts non-negative."""
    injected, delivered = s["packets_injected"], s["packets_delivered"]
    dropped, in_flight = s["packets_dropped"], s["packets_in_flight"]
    assert min(injected, delivered, dropped, in_flight) >= 0, s
    assert injected == delivered + dropped + in_flight, s


def population_std(values) -> float:
    values = list(values)
    mean = sum(values) / len(values)
    return math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))


def serialization_s(size_bytes: int, rate_bps: float) -> float:
    return 8 * size_bytes / rate_bps


def tree3_seed(**network) -> dict:
    """The first seed's zero-load scenario, as examples/tree3_probes.toml has it."""
    return {
        "name": "tree3 zero-load probes (first seed)",
        "seed": 1,
        "topology": {
            "kind": "tree3",
            "cores": 1,
            "aggs": 2,
            "tors": 8,
            "hosts_per_tor": 16,
            "link": {"rate": "1Gbps", "delay": "0.2us"},
        },
        "network": {"host_delay": "2.5us", **network},
        "forwarding": {"policy": "single"},
        "traffic": {
            "probes": [{"src": 0, "dst": "all", "size": "1500B", "interval": "100us"}],
        },
    }


def star(hosts: int, **topology) -> dict:
    return {"topology": {"kind": "star", "hosts": hosts, **topology}}


def cli(*args: str, cwd: Path | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """Run ``python -m dcnsim ARGS`` and capture its output."""
    return subprocess.run(
        [sys.executable, "-m", "dcnsim", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=timeout,
    )


def assert_one_error_line(proc: subprocess.CompletedProcess) -> str:
    """Bad input: exit status 2, nothing on stdout, one ``error: ...`` line on stderr."""
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert proc.stdout == ""
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("error: "), proc.stderr
    return lines[0].removeprefix("error: ")
