"""scripts/compare_builds.py: builds of the core run side by side, alternating
(docs/performance.md, "Method"). Builds the runner of the checked-out commit
once (134 s in CI, where it is the largest single cost of the default suite) and
reuses it: a developer's tool, so the test runs with `-m slow`."""

from __future__ import annotations

import json
import re
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "compare_builds.py"
WORKDIR = ROOT / "target" / "compare"
REPEAT = ["--repeat", "3", "--workdir", str(WORKDIR)]

STAR = """
seed = {seed}
stop_time = "2ms"

[topology]
kind = "star"
hosts = 4
link = {{ rate = "1Gbps", delay = "1us" }}

[[traffic.streams]]
src = "all"
dst = "random"
load = 0.3
pattern = "poisson"
size = "1500B"
"""


@pytest.mark.slow
def test_a_build_beside_itself_alternates_and_reports_identical_tables(tmp_path):
    scenario = tmp_path / "star.toml"
    scenario.write_text(STAR.format(seed=1))
    out = subprocess.run(
        [sys.executable, str(SCRIPT), "HEAD", "HEAD", "--scenario", str(scenario), *REPEAT],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    ).stdout
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    ).stdout.strip()
    label = f"HEAD ({commit})"
    runs = re.findall(
        r"^round (\d) (.+?): ([\d,]+) packet-hops, .* ([\d.]+) M packet-hops/s, tables (\w+)$",
        out,
        re.M,
    )
    # Rounds alternate the two builds: 1 1 2 2 3 3.
    assert [int(r[0]) for r in runs] == [1, 1, 2, 2, 3, 3]
    assert {r[1] for r in runs} == {label}
    # One build, one scenario: the same run every time.
    assert len({r[2] for r in runs}) == 1 and int(runs[0][2].replace(",", "")) > 100
    assert len({r[4] for r in runs}) == 1
    summary = re.findall(
        r"^(.+?): median ([\d.]+) M packet-hops/s, ([\d.]+)x .*; tables (identical to|differ from)",
        out,
        re.M,
    )
    assert len(summary) == 2
    for i, (name, median, _ratio, same) in enumerate(summary):
        assert name == label and same == "identical to"
        rates = [float(r[3]) for r in runs[i::2]]
        assert abs(float(median) - statistics.median(rates)) < 2e-3
    assert summary[0][2] == "1.000"

    # The digest covers the tables: another seed gives other tables.
    runner = WORKDIR / f"runner-{commit}" / "target" / "release" / f"runner-{commit}"
    other = tmp_path / "other.toml"
    other.write_text(STAR.format(seed=2))
    digests = [
        json.loads(
            subprocess.run([str(runner), str(f)], capture_output=True, text=True, check=True).stdout
        )["digest"]
        for f in (scenario, other)
    ]
    assert digests[0] == runs[0][4] and digests[1] != digests[0]
