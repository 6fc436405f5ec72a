"""`dcnsim study qjump`: the QJUMP seed's Figures 1 and 3 and its f trade-off.

The quick variant (40 ms per case, 10 ms per level) runs in the default suite; the
full one (0.5 s, 50 ms) is marked ``slow``. A claim of the seed that dcnsim does not
reproduce is kept as written and marked ``xfail(strict=True)`` with the measured
numbers.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dcnsim import studies
from dcnsim.studies import qjump
from dcnsim.studies.qjump import samples
from dcnsim.studies.qjump.scenarios import CASES, EPOCH_S, FACTORS, level_rate_bps
from dcnsim.studies.text import Claim
from simhelp import claim_printed, not_reproduced, reproduced


@pytest.fixture(scope="module")
def quick_output() -> studies.StudyOutput:
    return studies.run_study(studies.STUDIES["qjump"], quick=True, jobs=2)


@pytest.fixture(scope="module")
def quick(quick_output) -> pd.DataFrame:
    return quick_output.detail


@pytest.fixture(scope="module")
def full() -> pd.DataFrame:
    return qjump.run_qjump(quick=False)


def claim(runs: pd.DataFrame, start: str) -> Claim:
    (found,) = [c for c in qjump.qjump_claims(runs) if c.claim.startswith(start)]
    return found


def check_bookkeeping(runs: pd.DataFrame, quick: bool) -> None:
    """Every seed ran every case with its applications, the level sweep and the worst
    case; a level never beats its budget: f·P per epoch per host (the shaper's closed
    form); the seeds' start offsets differ, so their runs do."""
    assert sorted(set(runs["seed"])) == qjump.SEEDS[quick]
    for seed, mine in runs.groupby("seed"):
        cases = mine[mine["kind"] == "case"].set_index("case")
        assert list(cases.index) == CASES, seed
        for case, raw in cases.iterrows():
            row = samples.decode(raw)
            with_apps = case != "hadoop_alone"
            assert (len(row["ptp"]) > 0) == with_apps, case
            assert (len(row["memcached"]) > 0) == with_apps, case
            assert (len(row["naiad"]) > 0) == with_apps, case
            assert (len(row["hadoop"]) > 0) == (case.removesuffix("_stack") != "alone"), case
            assert np.all(row["ptp"] >= 0), case
        alone = samples.decode(cases.loc["alone"])
        # Alone, PTP's latency hardly varies: its offset error stays below a microsecond.
        assert np.max(alone["ptp"]) < 1e-6
        # The host stack delays each of a request's four traversals by at least its draw
        # (a FIFO only adds), whose mean is 148 µs x e^(0.22²/2): the mean request grows
        # by at least 95 % of four of them (the mean of 170+ requests is within 2 %).
        stack = samples.decode(cases.loc["alone_stack"])
        added = np.mean(stack["memcached"]) - np.mean(alone["memcached"])
        assert added > 0.95 * 4 * 148e-6 * np.exp(0.22**2 / 2), added
        levels = mine[mine["kind"] == "level"].sort_values("f")
        assert list(levels["f"]) == FACTORS
        assert np.allclose(levels["epoch_s"], EPOCH_S)
        assert (levels["throughput_bps"] <= [level_rate_bps(f) for f in levels["f"]]).all()
        (worst,) = mine[mine["kind"] == "worst"].itertuples()
        assert worst.epoch_s == pytest.approx(EPOCH_S) and worst.delivered > 0
    memcached = runs[(runs["kind"] == "case") & (runs["case"] == "contended")]["memcached"]
    assert memcached.nunique() == len(memcached)  # each seed its own run


def test_quick_bookkeeping(quick):
    check_bookkeeping(quick, quick=True)


def test_quick_writes_png_and_svg(quick_output, tmp_path):
    paths = studies.write_study(quick_output, tmp_path / "qjump")
    names = {p.name for p in paths}
    for stem in ("fig1", "fig3", "levels"):
        assert {f"{stem}.png", f"{stem}.svg"} <= names
    claims = pd.read_csv(tmp_path / "qjump" / "claims.csv")
    assert set(claims["verdict"]) <= {"yes", "NO", "within noise", "quick grid cannot decide"}


#: Claims that hold in the quick variant (seeds 1-5, as the full one).
HOLDS = [
    "PTP with Hadoop and QJUMP",
    "memcached with QJUMP",
    "Naiad with QJUMP",
    "f: a level's throughput",
    "f: a level's latency variance",
    "f = 1, random destinations",
    "f = 1 in its worst case",
]

#: Claims that do not (the reason, with the numbers, is built from the run): with the
#: host stack calibrated to memcached's and Naiad's p99 alone, Hadoop adds less than
#: the seed's 1.5x and 2-3x (the stack slows Hadoop's own TCP, whose queues then stay
#: short); the shuffle's queues at the PTP clients' ports stay far below the 512 KB
#: buffer; no retransmission timeout in 40 ms; QJUMP costs Hadoop 5 % where the others
#: cost it 1 %, so it is not the closest to 1 for Hadoop; PAUSE's effects are within
#: the seeds' spread. ECN/WRED's and DCTCP's help is within noise in 40 ms, and
#: memcached's and Naiad's p99 alone above the range (handshakes among few requests):
#: the full runs decide them (yes), and the quick study marks them as undecided.
QUICK_NO = [
    "PTP with Hadoop: offset",
    "memcached alone:",
    "memcached with Hadoop: p99",
    "memcached with Hadoop: about",
    "Naiad alone:",
    "Naiad with Hadoop:",
    "Fig. 3: QJUMP's",
    "Fig. 3: ECN/WRED",
    "Fig. 3: DCTCP",
    "Fig. 3: PAUSE",
]


#: Claims the quick grid cannot decide (the full one says yes).
QUICK_UNDECIDED = (
    "Fig. 3: ECN/WRED [40",
    "Fig. 3: DCTCP (K = 65) helps PTP and memcached",
    "memcached alone:",
    "Naiad alone:",
    "memcached with Hadoop: p99",
)


def test_quick_marks_what_only_the_full_grid_decides(quick_output):
    """ECN/WRED's and DCTCP's claims were within noise on the quick grid and yes on the
    full one; memcached's and Naiad's p99 alone with the calibrated stack are above the
    range on the quick grid (a handshake per client among 215 requests) and inside it
    on the full one: the quick study says its grid cannot decide them, and why."""
    for start in QUICK_UNDECIDED:
        (found,) = [c for c in quick_output.claims if c.claim.startswith(start)]
        assert found.verdict == "quick grid cannot decide" and "full" in found.quick
        assert claim_printed(quick_output.text, "quick grid cannot decide", found.claim)
    assert all(not c.quick for c in quick_output.claims if not c.claim.startswith(QUICK_UNDECIDED))


@pytest.mark.parametrize("start", HOLDS)
def test_quick_claims_that_hold(quick, start):
    reproduced(claim(quick, start))


@pytest.mark.parametrize("start", QUICK_NO)
def test_quick_claims_that_do_not_reproduce(quick, start):
    not_reproduced(claim(quick, start))


def test_every_claim_is_checked(quick):
    starts = [*HOLDS, *QUICK_NO]
    for c in qjump.qjump_claims(quick):
        assert sum(c.claim.startswith(s) for s in starts) == 1, c.claim


@pytest.mark.slow
def test_full_bookkeeping(full):
    check_bookkeeping(full, quick=False)


#: In the full variant ECN/WRED's and DCTCP's claims hold too, and so do memcached's
#: and Naiad's p99 alone with the calibrated stack (824 and 506 µs, seeds 1-5).
FULL_HOLDS = [*HOLDS, "Fig. 3: ECN/WRED", "Fig. 3: DCTCP", "memcached alone:", "Naiad alone:"]

#: Claims the full variant does not reproduce (reasons built from the run).
FULL_NO = [start for start in QUICK_NO if start not in FULL_HOLDS]


@pytest.mark.slow
@pytest.mark.parametrize("start", FULL_HOLDS)
def test_full_claims_that_hold(full, start):
    reproduced(claim(full, start))


@pytest.mark.slow
@pytest.mark.parametrize("start", FULL_NO)
def test_full_claims_that_do_not_reproduce(full, start):
    not_reproduced(claim(full, start))
