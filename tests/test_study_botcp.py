"""`dcnsim study botcp`: BOTCP against TCP-ECN and DCTCP on the seed's fabric.

The quick variant (loads 0.3 and 0.7 on a 2 x 2 leaf-spine of 16 hosts, and the
seed's Fig. 8 and Figs. 9-10 runs on its own 192-host fabric) runs in the default
suite; the full one (192 hosts, loads 0.1-0.9) is marked ``slow``. A claim of the
seed that dcnsim does not reproduce is kept as written and marked
``xfail(strict=True)`` with the measured numbers.
"""

from __future__ import annotations

import pandas as pd
import pytest

from dcnsim import studies
from dcnsim.studies import botcp as study_botcp
from dcnsim.studies.botcp import (
    SCHEMES,
    bandwidth_scenario,
    botcp_checks,
    extreme_scenario,
    load_scenario,
    run_botcp,
)
from simhelp import claim_printed, not_reproduced, reproduced


@pytest.fixture(scope="module")
def quick() -> pd.DataFrame:
    return run_botcp(quick=True, jobs=2)


@pytest.fixture(scope="module")
def full() -> pd.DataFrame:
    return run_botcp(quick=False)


def claim(runs: pd.DataFrame, start: str) -> studies.text.Claim:
    (found,) = [c for c in botcp_checks(runs) if c.claim.startswith(start)]
    return found


# --- the quick variant ------------------------------------------------------------------------


def test_initial_window_reading_and_its_variant():
    """BOTCP starts at 1 segment (§3.2), TCP-ECN and DCTCP at ns-2.35's windowInit_ 2;
    the variant changes TCP-ECN's initial window and nothing else."""
    from dcnsim.studies.botcp.scenarios import INIT_CWND, IW_VARIANT

    reading = load_scenario("tcp_ecn", 0.5, quick=True).to_dict()
    variant = load_scenario("tcp_ecn", 0.5, quick=True, init_cwnd=IW_VARIANT[1]).to_dict()
    assert reading["transport"]["init_cwnd"] == INIT_CWND["tcp_ecn"] == 2
    assert variant["transport"] == reading["transport"] | {"init_cwnd": 1}
    assert {k: v for k, v in variant.items() if k not in ("transport", "name")} == {
        k: v for k, v in reading.items() if k not in ("transport", "name")
    }
    with pytest.raises(ValueError, match="BOTCP's initial window"):
        load_scenario("botcp", 0.5, quick=True, init_cwnd=2)


def test_quick_plan(quick):
    load = quick[quick["experiment"] == "load"]
    assert sorted(set(load["load"])) == [0.3, 0.7]
    assert sorted(set(load["scheme"])) == sorted(SCHEMES)
    # Two loads x (three schemes + the initial-window variant) x seeds 1-3, then Fig. 8
    # and Figs. 9-10 per scheme and seed 1-3 (their start offsets drawn by the seed).
    assert len(quick) == 2 * (3 + 1) * 3 + 2 * 3 * 3
    assert set(load["seed"]) == {1, 2, 3}
    small = quick[quick["experiment"].isin(["bandwidth", "extreme"])]
    assert sorted(small.groupby(["experiment", "scheme"])["seed"].apply(sorted)) == [[1, 2, 3]] * 6
    variant = quick[quick["experiment"] == "load_iw"]
    assert sorted(set(variant["load"])) == [0.3, 0.7] and set(variant["scheme"]) == {"tcp_ecn"}
    assert (variant["short_n"] > 0).all()
    # Every counted short flow finished; every extreme-load flow finished.
    assert (load["short_unfinished"] == 0).all() and (load["short_n"] > 0).all()
    extreme = quick[quick["experiment"] == "extreme"]
    assert (extreme["unfinished"] == 0).all()
    assert all(len(f) == 100 for f in extreme["fct_s"])


#: The claims that hold in dcnsim, in both variants (those of ``QUICK_UNDECIDED`` in
#: the full one only).
HOLDING = (
    "Fig. 8: the long flows regain the link",
    "Fig. 9: with TCP-ECN and DCTCP the blocked flows resume after the RTO",
    "Fig. 10: with TCP-ECN and DCTCP the flows",
)
#: Fig. 9's states of the seed's one run, judged run by run: on three quick seeds the
#: share's interval cannot exclude 1/2 even with every run inside (3 of 3: 0.44-1.00).
RUN_BY_RUN = (
    "Fig. 9: BOTCP drops nothing",
    "Fig. 9: BOTCP's queue during the extreme load is about",
    "Fig. 9: TCP-ECN and DCTCP drop",
)

#: The claims that do not (the reasons, with the numbers, are built from the run):
#: BOTCP's short flows start at 1 segment (§3.2) where the ECN schemes start at 2, and
#: turn long after X = 10 KB, growing by a whole segment per ACK only while Bcr <=
#: Bl/2 (docs/studies.md, the trace); TCP-ECN's short flows beat DCTCP's; the quick
#: variant's loads drop (next to) nothing with any scheme, so "fewer" cannot hold.
QUICK_NO = [
    "§5.1, §5.3: BOTCP drops fewer packets",
    "Fig. 6: at load 0.7 DCTCP's",
    "Fig. 8: short flows finish first with BOTCP",
]
#: Within noise on the quick grid (16-39 short flows a run, three seeds) where the full
#: one decides: the study marks them ``quick grid cannot decide`` (``quick_undecided``).
QUICK_UNDECIDED = [
    "Fig. 6: BOTCP's short-flow average FCT is the lowest",
    "Fig. 7: BOTCP's short-flow p99 FCT is the lowest",
    "Fig. 6: at load 0.3 TCP-ECN's",
    "Fig. 11: long flows' average FCT about equal",
    *RUN_BY_RUN,
]
FULL_NO = [
    *QUICK_UNDECIDED[:2],
    *(start for start in QUICK_NO if "at load 0." not in start),
    "Fig. 6: at load 0.9 DCTCP's",
]


@pytest.mark.parametrize("start", HOLDING)
def test_quick_claims_that_hold(quick, start):
    reproduced(claim(quick, start))


@pytest.mark.parametrize("start", QUICK_NO)
def test_quick_claims_not_reproduced(quick, start):
    not_reproduced(claim(quick, start))


def test_quick_grid_cannot_decide_what_the_full_one_does(quick):
    """Within noise on three quick seeds; ``dcnsim study botcp --quick`` prints them as
    ``quick grid cannot decide``, with why (``STUDY.quick_undecided``)."""
    from dcnsim.studies.text import marked_quick, quick_undecided

    for start in QUICK_UNDECIDED:
        assert claim(quick, start).verdict == "within noise", start
    with quick_undecided(study_botcp.STUDY.quick_undecided):
        marked = marked_quick(botcp_checks(quick))
    undecided = {c.claim for c in marked if c.verdict == "quick grid cannot decide"}
    assert undecided == {claim(quick, start).claim for start in QUICK_UNDECIDED}


def test_quick_checks_and_tables_say_what_the_tests_say(quick, tmp_path):
    checks = botcp_checks(quick)
    assert checks and all(c.verdict in ("yes", "NO", "within noise") for c in checks)
    table, text = study_botcp.botcp_tables(quick, verbose=True)
    assert len(table) == 6
    for c in checks:
        assert claim_printed(text, c.verdict, c.claim), c.claim
    output = studies.StudyOutput(study_botcp.STUDY, text, table, quick, checks)
    names = {p.name for p in studies.write_study(output, tmp_path / "out")}
    for fig in ("fig6", "fig7", "fig8", "fig9", "fig10", "fig11"):
        assert {f"{fig}.png", f"{fig}.svg"} <= names
    assert (tmp_path / "out" / "fig9.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (tmp_path / "out" / "fig9.svg").read_text().lstrip().startswith("<?xml")
    # The directory it wrote may be written again.
    studies.write_study(output, tmp_path / "out")


# --- the scenarios, without running them --------------------------------------------------------


def test_scenarios_are_the_seeds_setup():
    b = load_scenario("botcp", 0.5)
    b.validate()
    assert b.get("topology") == {
        "kind": "leaf_spine",
        "leaves": 6,
        "spines": 6,
        "hosts_per_leaf": 32,
        "host_link": {"rate": "10Gbps", "delay": "1us"},
        "fabric_link": {"rate": "40Gbps", "delay": "1us"},
    }
    assert b.get("network") == {
        "queue": {"capacity": "128KiB"},
        "stages": [{"kind": "max_occupancy", "ports": "switches"}],
    }
    assert b.get("transport.botcp") == {"bl": 20, "bs": 40, "bm": 60, "x": "10KB"}
    assert b.get("transport.min_rto") == "200us"
    assert b.get("transport.mss") == "1456B"
    d = load_scenario("dctcp", 0.5)
    d.validate()
    assert d.get("network.queue") == {
        "capacity": "128KiB",
        "aqm": {"kind": "threshold", "k": "20pkt"},
    }
    assert d.get("transport.protocol") == "dctcp"
    assert load_scenario("tcp_ecn", 0.5).get("transport.protocol") == "ecn"
    for scheme in SCHEMES:
        bandwidth_scenario(scheme).validate()
        extreme_scenario(scheme).validate()
    e = extreme_scenario("botcp")
    flows = e.get("traffic.flows")
    assert len(flows) == 100 and {f["src"] for f in flows} == set(range(32, 132))
    with pytest.raises(ValueError, match="scheme"):
        load_scenario("tcp", 0.5)
    with pytest.raises(ValueError, match="load"):
        load_scenario("botcp", 0.0)


def test_registered_as_a_study():
    study = studies.STUDIES["botcp"]
    assert study is study_botcp.STUDY
    assert study.runs is run_botcp
    assert study.experiments == ("load", "bandwidth", "extreme")


def ns(start: str) -> int:
    assert start.endswith("ns"), start
    return int(start.removesuffix("ns"))


def test_figs_8_to_10_start_offsets():
    """Every flow of Figs. 8-10 starts at the seed's time (0.5 ms for Fig. 8's short
    flows, k x 200 µs for burst k) plus its seed's offset, uniform in [0, 8 µs) (the
    cross-leaf propagation round trip); the schemes of a seed share the offsets and
    the scenario's seed, other seeds draw others."""
    from dcnsim.studies.botcp.scenarios import START_JITTER_NS, start_offsets_ns

    assert START_JITTER_NS == 2 * 4 * 1000  # four links of 1 µs, there and back
    for seed in (1, 2, 3):
        offsets = start_offsets_ns(seed, 100)
        e = extreme_scenario("botcp", seed)
        assert e.get("seed") == seed
        starts = [ns(f["start"]) for f in e.get("traffic.flows")]
        assert [s - o for s, o in zip(starts, offsets, strict=True)] == [
            200_000 * (i // 20) for i in range(100)
        ]
        for scheme in SCHEMES:
            assert [f["start"] for f in extreme_scenario(scheme, seed).get("traffic.flows")] == [
                f["start"] for f in e.get("traffic.flows")
            ]
        b = bandwidth_scenario("dctcp", seed)
        fig8 = [ns(f["start"]) for f in b.get("traffic.flows")]
        assert [s - o for s, o in zip(fig8, start_offsets_ns(seed, 7), strict=True)] == [
            0,
            0,
            *[500_000] * 5,
        ]
    drawn = [o for seed in range(1, 11) for o in start_offsets_ns(seed, 100)]
    assert min(drawn) >= 0 and max(drawn) < START_JITTER_NS
    # Uniform over the span: 1,000 draws' mean within 4 standard errors of 4 µs.
    assert abs(sum(drawn) / len(drawn) - START_JITTER_NS / 2) < 4 * START_JITTER_NS / (
        12**0.5 * len(drawn) ** 0.5
    )
    assert start_offsets_ns(1, 100) == start_offsets_ns(1, 100) != start_offsets_ns(2, 100)
    with pytest.raises(ValueError, match="experiments"):
        run_botcp(experiments=["fig8"])


# --- the full variant ---------------------------------------------------------------------------


@pytest.mark.slow
def test_full_plan(full):
    load = full[full["experiment"] == "load"]
    assert sorted(set(load["load"])) == [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]
    assert set(full["hosts"]) == {192}
    assert set(load["seed"]) == {1, 2, 3, 4, 5}
    assert (load["short_n"] > 300).all()


@pytest.mark.slow
@pytest.mark.parametrize("start", HOLDING)
def test_full_claims_that_hold(full, start):
    reproduced(claim(full, start))


@pytest.mark.slow
@pytest.mark.parametrize(
    "start", ["Fig. 6: at load 0.1 TCP-ECN's", "Fig. 11: long flows'", *RUN_BY_RUN]
)
def test_full_claims_that_hold_on_the_full_grid(full, start):
    reproduced(claim(full, start))


@pytest.mark.slow
@pytest.mark.parametrize("start", FULL_NO)
def test_full_claims_not_reproduced(full, start):
    not_reproduced(claim(full, start))
