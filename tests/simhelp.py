"""Helpers shared by the tests: checked runs, scenario builders, the CLI."""

from __future__ import annotations

import math
import re
import signal
import subprocess
import sys
from pathlib import Path

import dcnsim

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples"

#: Output columns, in order, from docs/scenario.md "Outputs".
FLOW_COLUMNS = [
    "flow_id", "kind", "protocol", "origin", "app", "round", "src", "dst", "class",
    "size_bytes", "start_s", "end_s", "deadline_s", "fct_s", "ideal_fct_s", "slowdown",
    "goodput_bps", "packets_sent", "packets_delivered", "drops", "bytes_delivered",
    "retransmits", "timeouts", "ooo_packets", "mean_latency_s",
]  # fmt: skip
PROBE_COLUMNS = [
    "probe_id", "flow_id", "src", "dst", "size_bytes", "class", "sent_s", "received_s", "latency_s",
    "hops",
]  # fmt: skip
QUEUE_COLUMNS = ["time_s", "port", "packets", "bytes"]
ROUND_COLUMNS = [
    "app", "round", "start_s", "end_s", "round_time_s", "bytes", "goodput_bps", "flows",
    "timeouts", "any_timeout",
]  # fmt: skip
OP_COLUMNS = [
    "application", "app", "op_id", "host", "start_s", "end_s", "bytes", "outcome", "value",
]  # fmt: skip
FLOW_TRACE_COLUMNS = [
    "time_s", "flow_id", "cwnd_bytes", "ssthresh_bytes", "snd_una", "snd_nxt", "srtt_s", "alpha",
]  # fmt: skip
SUMMARY_KEYS = {
    "events", "packet_hops", "packets_injected", "packets_from_switches", "packets_delivered",
    "packets_dropped", "packets_in_flight", "tcp_connections_peak", "sim_time_s", "wall_s",
    "packet_hops_per_s", "stopped_at_stop_time", "name", "seed", "version",
}  # fmt: skip

US = 1e-6
EXACT = 1e-12  # seconds: latencies are whole picoseconds


def run_checked(scenario, **kwargs) -> dcnsim.Results:
    """``dcnsim.run`` followed by the conservation checks every run must pass."""
    results = dcnsim.run(scenario, **kwargs)
    assert_conserved(results)
    return results


def assert_conserved(results: dcnsim.Results) -> None:
    """Every packet injected is delivered, dropped or still in flight, per run and per flow.

    Datagram streams (``kind == "stream"``) count their own packets: sent = delivered +
    dropped once nothing is in flight. A TCP flow's ``packets_sent`` counts every segment
    of both ends (data, ACKs, SYN, FIN) and ``drops`` every one of them lost, but its
    ``packets_delivered`` counts only data segments reaching the receiver, so for TCP
    the run-wide identity is checked with sent - drops as the flow's deliveries.
    """
    s = results.summary
    assert_summary_conserved(s)
    injected, delivered = s["packets_injected"], s["packets_delivered"]
    dropped, in_flight = s["packets_dropped"], s["packets_in_flight"]

    flows, probes = results.flows, results.probes
    assert list(flows.columns) == FLOW_COLUMNS
    assert list(probes.columns) == PROBE_COLUMNS
    assert list(results.traces["queues"].columns) == QUEUE_COLUMNS
    assert list(results.traces["flows"].columns) == FLOW_TRACE_COLUMNS
    assert list(results.rounds.columns) == ROUND_COLUMNS
    assert list(results.ops.columns) == OP_COLUMNS
    assert set(flows["kind"]) <= {"stream", "tcp"}
    streams, tcp = flows[flows["kind"] == "stream"], flows[flows["kind"] == "tcp"]
    # Streams first, then TCP flows, each numbered from 0 in order.
    assert list(flows["kind"]) == ["stream"] * len(streams) + ["tcp"] * len(tcp)
    assert list(streams["flow_id"]) == list(range(len(streams)))
    assert list(tcp["flow_id"]) == list(range(len(tcp)))

    # Probe packets (flow_id -1), stream packets, TCP segments and what switch agents
    # emitted make up everything.
    lone = probes[probes["flow_id"] == -1]
    lone_received = int(lone["received_s"].notna().sum())
    from_switches = s["packets_from_switches"]
    assert injected == int(flows["packets_sent"].sum()) + len(lone) + from_switches, s
    assert (flows["drops"] <= flows["packets_sent"]).all(), flows
    assert dropped >= int(flows["drops"].sum()), s

    # A probe row is either received (latency = received - sent, hops >= 1) or not.
    received = probes["received_s"].notna()
    assert (probes["latency_s"].notna() == received).all()
    assert (probes.loc[~received, "hops"] == -1).all()
    assert (probes.loc[received, "hops"] >= 1).all()
    lat = probes.loc[received, "received_s"] - probes.loc[received, "sent_s"]
    assert ((lat - probes.loc[received, "latency_s"]).abs() <= EXACT).all()
    assert (probes.loc[received, "latency_s"] > 0).all()

    if len(tcp):
        assert_tcp_rows_consistent(tcp)

    if in_flight == 0:
        # Nothing left in the network: every flow's packets are accounted for exactly.
        per_stream = streams["packets_delivered"] + streams["drops"]
        assert (streams["packets_sent"] == per_stream).all(), streams
        tcp_delivered = int((tcp["packets_sent"] - tcp["drops"]).sum())
        stream_delivered = int(streams["packets_delivered"].sum())
        flow_delivered = stream_delivered + tcp_delivered + lone_received
        flow_dropped = int(flows["drops"].sum()) + (len(lone) - lone_received)
        # Packets switches emitted are delivered or dropped like any other.
        assert flow_delivered <= delivered <= flow_delivered + from_switches, s
        assert delivered + dropped == flow_delivered + flow_dropped + from_switches, s
    else:
        assert delivered >= int(streams["packets_delivered"].sum()) + lone_received, s
    if results.scenario.get("stop_time") is None:
        assert in_flight == 0, "without stop_time the run ends when all traffic is done"


def assert_tcp_rows_consistent(tcp) -> None:
    """What every TCP row must satisfy, finished or not."""
    assert (tcp["bytes_delivered"] <= tcp["size_bytes"]).all(), tcp
    assert (tcp["retransmits"] >= tcp["timeouts"]).all(), tcp
    assert (tcp["ideal_fct_s"] > 0).all(), tcp
    done = tcp["fct_s"].notna()
    # A flow is finished exactly when the receiver has every byte.
    assert (done == (tcp["bytes_delivered"] == tcp["size_bytes"])).all(), tcp
    finished = tcp[done]
    assert ((finished["end_s"] - finished["start_s"] - finished["fct_s"]).abs() <= EXACT).all()
    assert (finished["fct_s"] >= finished["ideal_fct_s"] - EXACT).all(), finished
    slowdown = finished["fct_s"] / finished["ideal_fct_s"]
    assert ((finished["slowdown"] - slowdown).abs() <= 1e-9 * slowdown).all()
    goodput = finished["size_bytes"] * 8 / finished["fct_s"]
    assert ((finished["goodput_bps"] - goodput).abs() <= 1e-9 * goodput).all()


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


#: Injected at the top of a copy of a report before Chromium loads it: records every
#: error (script errors and resources that fail to load) and, once the page has
#: loaded, how many images there are, how many did not decode and whether the page is
#: wider than the window (a wide table must scroll inside the page), on <body>.
_PROBE = """<script>
window.__errors = [];
window.addEventListener("error", (e) => window.__errors.push(
  e.message || ("failed to load " + ((e.target && (e.target.src || e.target.href)) || "?"))
), true);
window.addEventListener("load", () => {
  const images = Array.from(document.images);
  const broken = images.filter((i) => !(i.complete && i.naturalWidth > 0)).length;
  const page = document.documentElement;
  document.body.setAttribute("data-probe", JSON.stringify({images: images.length,
    broken: broken, errors: window.__errors, wide: page.scrollWidth > page.clientWidth}));
});
</script>"""


def render_in_chromium(report: Path, workdir: Path) -> tuple[dict, list[str], Path]:
    """Open ``report`` in headless Chromium (Debian's ``chromium``, which ``.ci/run``
    installs): the probe's findings (images, broken images, page errors, a page wider
    than the window), the console lines Chromium logged, and a full-width screenshot."""
    import json
    import re
    import shutil

    chromium = shutil.which("chromium")
    assert chromium, "chromium not found: apt-get install chromium (.ci/run installs it)"
    page = workdir / "probed.html"
    page.write_text(report.read_text().replace("<head>", "<head>\n" + _PROBE, 1))
    flags = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"]
    flags += ["--virtual-time-budget=10000", f"--user-data-dir={workdir / 'profile'}"]
    dom = subprocess.run(
        [*flags, "--enable-logging=stderr", "--v=0", "--dump-dom", page.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert dom.returncode == 0, dom.stderr
    found = re.search(r'data-probe="([^"]*)"', dom.stdout)
    assert found, "the page never finished loading"
    probe = json.loads(found.group(1).replace("&quot;", '"'))
    console = [line for line in dom.stderr.splitlines() if "CONSOLE" in line]
    shot = workdir / "screenshot.png"
    done = subprocess.run(
        [*flags, f"--screenshot={shot}", "--window-size=1280,2400", report.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0 and shot.is_file(), done.stderr
    return probe, console, shot


def interruptible(command: list[str], **kwargs) -> subprocess.Popen:
    """Start ``command`` so that SIGINT reaches it as Ctrl-C would, even when the
    test run itself was started in the background (which ignores SIGINT, and an
    ignored signal stays ignored across exec)."""
    return subprocess.Popen(
        command, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL), **kwargs
    )


def claim_named(claims, start: str):
    """The one claim whose text starts with ``start``."""
    found = [c for c in claims if c.claim.startswith(start)]
    assert len(found) == 1, (start, [c.claim for c in claims])
    return found[0]


def reproduced(claim) -> None:
    """The seed's claim holds: its verdict is ``yes`` (the message says what was measured)."""
    assert claim.verdict == "yes", f"[{claim.verdict}] {claim.claim}: {claim.dcnsim}"


def not_reproduced(claim) -> None:
    """A seed claim dcnsim does not reproduce today, kept as written: an expected failure
    whose reason is what was measured, built at test time; strict, so the test fails
    the day the claim holds (then drop this expectation)."""
    import pytest

    if claim.verdict == "yes":
        pytest.fail(f"now reproduced, drop the expected failure: {claim.claim}: {claim.dcnsim}")
    pytest.xfail(f"[{claim.verdict}] {claim.claim}: {claim.dcnsim} ({claim.tolerance})")


def claim_printed(text: str, verdict: str, claim: str) -> bool:
    """Whether ``text`` (a study's printed output) has a claim line (``claim_lines``:
    verdict in brackets, seed, dcnsim, then the claim, cut with ``…`` to fit) for
    ``claim`` with ``verdict``."""
    for row in text.splitlines():
        if row.startswith("  [") and row[3 : row.index("]")] == verdict:
            shown = re.split(r" {2,}", row)[-1].removesuffix("…")
            if shown and " ".join(claim.split()).startswith(shown):
                return True
    return False


def assert_claims_printed(text: str, claims) -> None:
    """``text`` (a study's printed output) holds one line per claim of ``claims``, the
    seed's first and the checks after them, each beginning with its verdict in
    brackets, and every such line (and its header) within ``LINE_WIDTH`` columns."""
    from dcnsim.studies.text import LINE_WIDTH

    rows = [line for line in text.splitlines() if line.startswith("  [")]
    ordered = [c for c in claims if not c.check] + [c for c in claims if c.check]
    assert [r[3 : r.index("]")] for r in rows] == [c.verdict for c in ordered], rows
    for row, claim in zip(rows, ordered, strict=True):
        shown = re.split(r" {2,}", row)[-1].removesuffix("…")  # the claim, cut to fit
        assert " ".join(claim.claim.split()).startswith(shown), (row, claim.claim)
    heads = [line for line in text.splitlines() if line.startswith("  verdict")]
    assert heads and all(len(line) <= LINE_WIDTH for line in rows + heads), rows + heads
