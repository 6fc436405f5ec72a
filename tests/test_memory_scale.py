"""The memory estimate against what a run really takes, fabric by fabric (issue 48).

A run is checked before it starts against what the process may still take (memory
available, an address-space or cgroup limit less what is already used), so the
estimate is of what the run adds to the process, not of the interpreter and its
libraries. Each case runs in a fresh interpreter that imports everything a run uses
first, notes its resident set, runs, and reports its peak (``VmHWM``, the high-water
mark of this program's own address space): the difference is the run's growth, compared
with ``describe()["memory_bytes"]``. Not ``ru_maxrss``: Linux carries the high-water mark
of the address space an ``execve`` replaces into it, so a child of a large pytest process
(a forked copy of its pages) reports the parent's size as its own peak.

The margin: 15 % of the growth, plus 2 MB for the allocators' granularity (glibc's
arenas and Python's own), which only matters for the smallest fabric. The default
suite runs the fat-trees that take seconds (k = 8 to 32, a k = 32 incast grows by
60 MB); k = 48 to 128 are ``slow`` (k = 128 grows by about 4 GB: run it by hand,
alone, on a machine with room).

Workload traffic: benchmark B1's load (web-search sizes at 50 %, DCTCP) on fat-trees,
short runs, where packets in flight and open connections weigh most, and longer ones,
where the flows' rows do. The default suite runs those of a few seconds; the rest are
``slow`` (on a loaded 2-core machine: k = 48 for 1 ms 17 s, for 5 ms 4 minutes; k = 8
for 1 s, B1 itself, 10 minutes). A second of B1 at k = 48 (10.6 M flows, some 130 G
packet-hops) is out of reach of a test: its estimate is 8.2 GB, 7.7 GB of it the
flows' rows, against some 9 GB from k = 8's measured growth per host.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from dcnsim.scenario import Scenario

MARGIN = 0.15
SLACK = 2e6

MEASURE = """
import json, sys
import dcnsim, pandas, pyarrow.parquet  # noqa: F401  (what the run imports, first)
def status(key):
    return next(int(l.split()[1]) * 1024 for l in open("/proc/self/status") if l.startswith(key))
scenario = dcnsim.Scenario.from_toml_str(sys.argv[1])
estimate = scenario.describe()["memory_bytes"]
rss = status("VmRSS:")
results = dcnsim.run(scenario)
peak = status("VmHWM:")
print(json.dumps({"estimate": estimate, "growth": peak - rss, "flows": len(results.flows)}))
"""


def incast(k: int) -> str:
    """The issue's case: a k-ary fat-tree, every host sends 1 KB to host 0 at once."""
    return f"""stop_time = "100us"
[topology]
kind = "fat_tree"
k = {k}
[[traffic.incast]]
aggregator = 0
workers = "all"
sru = "1KB"
"""


def b1(k: int, stop: str) -> str:
    """Benchmark B1's fabric, queues and workload on a k-ary fat-tree, for ``stop``."""
    from dcnsim.bench import bench_scenario

    return bench_scenario("b1", stop_time=stop).set("topology.k", k).to_toml()


def measure(scenario: str) -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", MEASURE, scenario], capture_output=True, text=True, timeout=3600
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout)


SLOW = pytest.mark.slow


@pytest.mark.parametrize(
    "k", [8, 16, 24, 32, pytest.param(48, marks=SLOW), pytest.param(64, marks=SLOW),
          pytest.param(96, marks=SLOW), pytest.param(128, marks=SLOW)],
)  # fmt: skip
def test_the_estimate_of_a_fat_tree_incast_is_within_the_margin_of_its_growth(k):
    m = measure(incast(k))
    assert m["flows"] == k**3 // 4 - 1
    within_margin(m, f"incast at k = {k}")


def within_margin(m: dict, what: str) -> None:
    growth, estimate = m["growth"], m["estimate"]
    assert abs(estimate - growth) <= MARGIN * growth + SLACK, (
        f"{what}: estimate {estimate / 1e6:.1f} MB, measured growth {growth / 1e6:.1f} MB "
        f"({estimate / growth - 1:+.0%})"
    )


@pytest.mark.parametrize(
    ("k", "stop"),
    [(8, "1ms"), (8, "20ms"), (16, "1ms"), (16, "5ms"),
     pytest.param(8, "100ms", marks=SLOW), pytest.param(16, "20ms", marks=SLOW),
     pytest.param(24, "2ms", marks=SLOW), pytest.param(24, "5ms", marks=SLOW),
     pytest.param(32, "2ms", marks=SLOW), pytest.param(48, "1ms", marks=SLOW),
     pytest.param(48, "5ms", marks=SLOW), pytest.param(8, "1s", marks=SLOW)],
)  # fmt: skip
def test_the_estimate_of_a_fat_tree_workload_is_within_the_margin_of_its_growth(k, stop):
    m = measure(b1(k, stop))
    assert m["flows"] > 0
    within_margin(m, f"B1 at k = {k} for {stop}")


@pytest.mark.parametrize(("k", "stop"), [(8, "20ms"), pytest.param(16, "5ms", marks=SLOW)])
def test_a_drop_tail_fabric_s_estimate_is_on_the_upper_side(k, stop):
    # B1 without its marking (NewReno, drop-tail 1000-packet queues): a busy source
    # is counted as holding its bottleneck queue full, an upper side. Measured: k = 8
    # for 20 ms 23.4 MB against 7.6 MB, k = 16 for 5 ms 101.2 MB against 29.8 MB; the
    # 65 packets of B1's K counted for every queue (before the count read the queue)
    # gave 2.8 MB at k = 8, 63 % under.
    from dcnsim.bench import bench_scenario

    data = bench_scenario("b1", stop_time=stop).set("topology.k", k).to_dict()
    del data["network"]["queue"]["aqm"]
    data["transport"]["protocol"] = "newreno"
    m = measure(Scenario(data).to_toml())
    assert m["estimate"] >= m["growth"], m
