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
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

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
    growth, estimate = m["growth"], m["estimate"]
    assert abs(estimate - growth) <= MARGIN * growth + SLACK, (
        f"k = {k}: estimate {estimate / 1e6:.1f} MB, measured growth {growth / 1e6:.1f} MB "
        f"({estimate / growth - 1:+.0%})"
    )
