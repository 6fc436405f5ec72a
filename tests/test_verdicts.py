"""The studies' verdicts follow from the numbers and the tolerance, on constructed runs.

Each study's claims are fed runs made up for the purpose (not today's output): a
difference well outside its 95 % interval gives ``yes`` or ``NO``, one inside it
``within noise``, an exact tie ``NO`` for a "larger"/"smaller" claim; physical bounds
and sanity checks are ``check`` rows, apart from the seed's claims.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from dcnsim.studies import botcp, incast, pfabric, qjump, spraying, spraying_random
from dcnsim.studies import latency_difference as lat
from dcnsim.studies.packet_slicing import claims as slicing
from dcnsim.studies.text import EXACT, Claim, claim_lines, claims_table, compare, every, within
from simhelp import assert_claims_printed, claim_named

WIGGLE = (-1.0, 0.0, 1.0)  # per seed: mean 0, 95 % half-width 2.48


# --- the verdict rules -------------------------------------------------------------------------


def test_compare_every_and_within():
    assert compare(3.0, 2.0) is True and compare(-3.0, 2.0) is False
    assert compare(1.0, 2.0) is None and compare(-1.0, 2.0) is None  # within noise
    assert compare(0.0, 0.0) is False and compare(0.0, np.nan) is False  # a tie: not larger
    assert compare(0.0, 0.0, strict=False) is True  # "at least": a tie holds
    assert compare(1e-9, np.nan) is True  # no interval: exact
    assert every([True, None, True]) is None and every([True, None, False]) is False
    assert every([True, True]) is True
    assert within(1.0, 0.5, 2.0) is True and within(3.0, 0.5, 2.0) is False
    assert within(1.8, 0.5, 2.0) is None


def test_claim_keeps_its_four_field_form():
    """Studies written against the four fields keep working: the new fields default to
    an exact comparison, a seed's claim (not a check), no noise."""
    claim = Claim(claim="c", seed="s", dcnsim="d", ok=True)
    assert (claim.tolerance, claim.noise, claim.check, claim.verdict) == (
        EXACT,
        False,
        False,
        "yes",
    )
    assert Claim("c", "s", "d", None).verdict == "n/a"
    assert Claim("c", "s", "d", None, noise=True).verdict == "within noise"
    claims = [claim, Claim("b", "s", "d", False, check=True)]
    table = claims_table(claims)
    assert list(table.columns) == ["claim", "seed", "dcnsim", "tolerance", "verdict"]
    assert list(table["claim"]) == ["c"] and list(claims_table(claims, True)["verdict"]) == ["NO"]
    lines = claim_lines(claims)
    assert lines[0].split() == ["verdict", "seed", "dcnsim", "claim", "of", "the", "seed"]
    assert lines[1].split() == ["[yes]", "s", "d", "c"] and "Checks" in lines[2]
    assert lines[4].split() == ["[NO]", "s", "d", "b"]


# --- spraying (static) -------------------------------------------------------------------------


def spraying_runs(rps_fct: float, rps_goodput: float, ooo3: float, noise: float) -> pd.DataFrame:
    """Single path: FCT 10 ms, goodput 500 Mbps, the same for every seed; rps: the given
    means, each seed off by ``noise`` x WIGGLE; rps's out-of-order share 10 % at
    n_long = 2 and ``ooo3`` at 3."""
    rows = []
    for policy, n, (seed, w) in itertools.product(
        ("rps", "single"), (1, 2, 3), enumerate(WIGGLE, start=1)
    ):
        rps = policy == "rps"
        rows.append(
            {
                "policy": policy, "n_long": n, "seed": seed,
                "short_fct_ms": rps_fct + noise * w if rps else 10.0,
                "short_ooo_pct": (10.0 if n == 2 else ooo3 if n == 3 else 5.0) if rps else 0.0,
                "short_timeouts": 0,
                "long_goodput_mbps": rps_goodput + noise * w if rps else 500.0,
                "long_goodput_max_mbps": 900.0 / n, "long_goodput_min_mbps": 900.0 / n,
                "long_aggregate_mbps": 900.0,
                "wall_s": 1.0 + seed,
            }
        )  # fmt: skip
    return pd.DataFrame(rows)


@pytest.mark.parametrize(
    ("rps_fct", "rps_goodput", "noise", "fct", "goodput"),
    [
        (8.0, 510.0, 0.1, "yes", "yes"),  # well outside the interval
        (12.0, 490.0, 0.1, "NO", "NO"),
        (9.0, 501.0, 1.0, "within noise", "within noise"),  # inside it (+-2.48)
        (10.0, 500.0, 0.0, "NO", "NO"),  # exact ties: not faster, not larger
    ],
)
def test_spraying_verdicts(rps_fct, rps_goodput, noise, fct, goodput):
    claims = spraying.spraying_checks(spraying_runs(rps_fct, rps_goodput, 10.5, noise))
    assert claim_named(claims, "seed: rps short-flow mean FCT").verdict == fct
    assert claim_named(claims, "seed: long-flow mean goodput").verdict == goodput
    checks = [c for c in claims if c.check]
    assert {c.claim.split(" ")[0] for c in checks} >= {"long", "single-path"}
    assert all(c.verdict == "yes" for c in checks), checks
    assert all(c.tolerance for c in claims)


def test_spraying_out_of_order_about_the_same():
    same = spraying.spraying_checks(spraying_runs(8.0, 510.0, 11.0, 0.1))
    assert claim_named(same, "seed: rps short flow's out-of-order share").verdict == "yes"
    grown = spraying.spraying_checks(spraying_runs(8.0, 510.0, 20.0, 0.1))
    assert claim_named(grown, "seed: rps short flow's out-of-order share").verdict == "NO"


def test_spraying_bounds_are_checks_not_claims():
    runs = spraying_runs(8.0, 510.0, 10.5, 0.1)
    runs.loc[runs["n_long"] == 2, "long_aggregate_mbps"] = 1001.0  # over the bottleneck
    claims = spraying.spraying_checks(runs)
    bound = claim_named(claims, "long flows' aggregate <= 1 Gbps")
    assert bound.check and bound.verdict == "NO"
    assert claim_named(claims, "seed: long-flow mean goodput").verdict == "yes"


# --- spraying-random -----------------------------------------------------------------------------


def random_runs(rps_goodput: float, noise: float, ooo: float) -> pd.DataFrame:
    rows = []
    for policy, m, n, (seed, w) in itertools.product(
        ("rps", "single"), (10, 20), (1, 2), enumerate(WIGGLE, start=1)
    ):
        rps = policy == "rps"
        rows.append(
            {
                "policy": policy, "n_short": m, "n_long": n, "seed": seed,
                "short_fct_ms": (5.0 if rps else 6.0) + (m - 10) / 10 + 0.01 * w,
                "short_ooo_pct": ooo + w if rps else 0.0,
                "long_goodput_mbps": (rps_goodput + noise * w if rps else 700.0) - (m - 10),
            }
        )  # fmt: skip
    return pd.DataFrame(rows)


@pytest.mark.parametrize(
    ("rps_goodput", "noise", "fig5", "fig8"),
    [
        (800.0, 1.0, "yes", "yes"),  # 20 short flows: 10 Mbps less, paired per seed
        (600.0, 1.0, "NO", "yes"),
        (701.0, 1.0, "within noise", "yes"),
        (700.0, 0.0, "NO", "yes"),  # a tie
    ],
)
def test_spraying_random_verdicts(rps_goodput, noise, fig5, fig8):
    claims = spraying_random.spraying_random_checks(random_runs(rps_goodput, noise, 20.0))
    assert claim_named(claims, "seed Fig. 5").verdict == fig5
    assert claim_named(claims, "seed Fig. 8").verdict == fig8
    assert claim_named(claims, "seed Fig. 6").verdict == "yes"  # 1 ms faster, +-0.025
    assert claim_named(claims, "seed Fig. 9").verdict == "yes"
    single = claim_named(claims, "single-path short flows")
    assert single.check and single.verdict == "yes"


@pytest.mark.parametrize(("ooo", "fig7"), [(20.0, "yes"), (29.0, "within noise"), (40.0, "NO")])
def test_spraying_random_fig7_band(ooo, fig7):
    # the share is ooo +- 1 per seed (95 % half-width 2.48); the seed's band is 10-30 %
    claims = spraying_random.spraying_random_checks(random_runs(800.0, 1.0, ooo))
    assert claim_named(claims, "seed Fig. 7").verdict == fig7


# --- incast ---------------------------------------------------------------------------------------


def incast_detail(points: dict[int, dict[int, bool]]) -> pd.DataFrame:
    """size -> {workers: collapsed}."""
    return pd.DataFrame(
        [
            {"size_B": size, "workers": n, "rounds": 8, "steady_rounds": 7,
             "steady_timeout_rounds": 3 if hit else 0,
             "steady_goodput_mbps": 100.0 if hit else 900.0}
            for size, grid in points.items()
            for n, hit in grid.items()
        ]
    )  # fmt: skip


def test_incast_verdicts_compare_the_seeds_numbers_with_the_bracket():
    detail = incast_detail(
        {
            1500: {20: False, 24: False, 26: True, 28: False},  # 25 in [24, 26)
            500: {64: False, 68: True},  # the seed's 76 is past the collapse at 68
            250: {130: False, 140: False},  # the grid ends below the seed's 146
            64: {450: False, 550: True},  # no collapse up to 500
        }
    )
    claims = incast.incast_claims(detail)
    verdicts = [c.verdict for c in claims if not c.check]
    assert verdicts == ["yes", "NO", "n/a", "yes"]
    assert "below the seed's 146" in claims[-2].dcnsim
    monotone = [c for c in claims if c.check]
    assert len(monotone) == 1 and monotone[0].verdict == "NO"  # 28 is clean again


def test_incast_prints_each_claim_on_one_line_within_100_columns(tmp_path):
    detail = incast_detail(
        {1500: {20: False, 26: True}, 500: {64: False, 68: True}, 64: {450: False}}
    ).assign(profile="ns2_sack")
    table, text = incast.STUDY.tables(detail, False)
    assert_claims_printed(text, incast.incast_claims(detail))
    # Fig. 6(b) beside the seed's numbers, in the three formats
    incast.STUDY.figures["fig6b"](detail, table, tmp_path / "fig6b.png")
    assert {p.name for p in tmp_path.iterdir()} == {"fig6b.png", "fig6b.svg", "fig6b.pdf"}
    assert "seed" in (tmp_path / "fig6b.svg").read_text(encoding="utf-8")


# --- latency-difference ---------------------------------------------------------------------------


def latency_runs(elr_std_share: float, pfabric_share: float, loads=lat.LATENCY_FULL["loads"]):
    """Every grid point of the full variant, 5 seeds: TCP grows with load and
    oversubscription; TCP+ELR's std ``elr_std_share`` of TCP's; pFabric's mean and std
    ``pfabric_share`` of TCP's, pFabric+ELR's std a tenth of pFabric's."""
    rows = []
    factor = {"64:4:1": 3.0, "32:4:1": 2.0, "16:4:1": 1.0}
    for oversub, load, seed in itertools.product(factor, loads, range(1, 6)):
        tcp = 100.0 * factor[oversub] * (1 + 10 * load)
        wiggle = seed - 3.0
        schemes = {
            "TCP": (tcp, tcp / 2),
            "TCP+ELR": (tcp * 1.1, tcp / 2 * elr_std_share),
            "pFabric": (tcp * pfabric_share, tcp / 2 * pfabric_share),
            "pFabric+ELR": (tcp * pfabric_share * 1.2, tcp / 2 * pfabric_share / 10),
        }
        for scheme, (mean, std) in schemes.items():
            rows.append(
                {
                    "scheme": scheme, "oversub": oversub, "load": load, "seed": seed,
                    "role": "grid", "reading": "default",
                    "mean_us": mean + wiggle, "std_us": std + wiggle / 10,
                    "min_us": mean - std, "max_us": mean + std, "lost": 0, "undecided": 0,
                    "flows_active_half": 1, "flows_active_test": 2, "queue_early_pkts": 0.0,
                    "queue_late_pkts": 0.0, "warmup_ms": 50.0, "latencies_us": "",
                }
            )  # fmt: skip
    return pd.DataFrame(rows)


def test_latency_verdicts():
    loaded = [0.1, 0.5, 0.9]
    claims = lat.latency_checks(latency_runs(0.9, 0.2, loaded))
    seed = "seed: TCP's mean and std grow"
    assert claim_named(claims, seed).verdict == "n/a"  # the runs lack 0 %: not shown
    claims = lat.latency_checks(latency_runs(0.9, 0.2, [0.0, *loaded]))
    verdicts = {
        c.claim.split(" (")[0][:40]: c.verdict for c in claims if c.claim.startswith("seed:")
    }
    assert claim_named(claims, seed).verdict == "yes", verdicts
    assert claim_named(claims, "seed: ELR does not shrink").verdict == "yes"
    assert claim_named(claims, "seed: pFabric's mean and std far below").verdict == "yes"
    assert claim_named(claims, "seed: pFabric+ELR has the smallest std").verdict == "yes"
    shrunk = lat.latency_checks(latency_runs(0.5, 0.6, [0.0, *loaded]))
    assert claim_named(shrunk, "seed: ELR does not shrink").verdict == "NO"
    assert claim_named(shrunk, "seed: pFabric's mean and std far below").verdict == "NO"
    edge = lat.latency_checks(latency_runs(0.75, 0.5, [0.0, *loaded]))  # on the readings' edge
    assert claim_named(edge, "seed: ELR does not shrink").verdict == "within noise"
    assert claim_named(edge, "seed: pFabric's mean and std far below").verdict == "within noise"


def test_latency_numbered_point_run_by_run():
    """The seed's one run at 10 %, 64:4:1 (TCP: 29-829 µs) against each of dcnsim's
    five runs: the share of runs inside it (every latency within the range +-1 µs)
    decides, on its Wilson interval, never the union of the runs' ranges."""
    runs = latency_runs(0.9, 0.2, [0.0, 0.1])
    at = (runs["scheme"] == "TCP") & (runs["oversub"] == "64:4:1") & (runs["load"] == 0.1)
    runs.loc[at, "min_us"] = 29.4
    runs.loc[at, "max_us"] = [700.0, 750.0, 800.0, 828.5, 900.0]  # the union holds 829
    claim = claim_named(lat.latency_checks(runs), "seed: TCP, 64:4:1, 10%")
    assert claim.verdict == "within noise" and "4 of 5" in claim.dcnsim, claim
    runs.loc[at, "max_us"] = [700.0, 750.0, 800.0, 810.0, 827.0]  # all inside
    assert claim_named(lat.latency_checks(runs), "seed: TCP, 64:4:1, 10%").verdict == "yes"
    runs.loc[at, "max_us"] = [433.0, 987.0, 1533.0, 1710.0, 1989.0]  # the maxima
    claim = claim_named(lat.latency_checks(runs), "seed: TCP, 64:4:1, 10%")
    assert claim.verdict == "within noise" and "1 of 5" in claim.dcnsim
    runs.loc[at, "max_us"] = 1500.0  # none inside
    assert claim_named(lat.latency_checks(runs), "seed: TCP, 64:4:1, 10%").verdict == "NO"
    elr = (runs["scheme"] == "TCP+ELR") & (runs["oversub"] == "64:4:1") & (runs["load"] == 0.1)
    runs.loc[elr, ["min_us", "max_us"]] = [83.0, 853.0]
    assert claim_named(lat.latency_checks(runs), "seed: TCP+ELR").verdict == "NO"  # none lost
    runs.loc[elr, "lost"] = [6, 7, 8, 9, 12]  # within x1.5 of the seed's 8
    assert claim_named(lat.latency_checks(runs), "seed: TCP+ELR").verdict == "yes"


def test_latency_a_flat_step_is_not_growth():
    runs = latency_runs(0.9, 0.2, [0.0, 0.1, 0.5, 0.9])
    flat = (runs["scheme"] == "TCP") & (runs["load"] == 0.9)
    runs.loc[flat, ["mean_us", "std_us"]] = runs.loc[
        (runs["scheme"] == "TCP") & (runs["load"] == 0.5), ["mean_us", "std_us"]
    ].to_numpy()  # 90 % exactly as 50 %, seed by seed
    assert claim_named(lat.latency_checks(runs), "seed: TCP's mean and std grow").verdict == "NO"


# --- pfabric --------------------------------------------------------------------------------------


def pfabric_runs(small: dict[str, float], large: dict[str, float], seeds=(1,), noise=0.0):
    rows = []
    for load, scheme, (i, seed) in itertools.product((0.2, 0.6), small, enumerate(seeds)):
        w = noise * (i - (len(seeds) - 1) / 2)
        rows.append(
            {
                "workload": "websearch", "load": load, "scheme": scheme, "seed": seed,
                **{f"{b}_{k}": 1 for b in ("small", "medium", "large")
                   for k in ("n", "unfinished")},
                "small_mean": small[scheme] + w, "small_p99": 3 * small[scheme] + w,
                "small_mean_lb": small[scheme], "medium_mean": 2.0, "medium_p99": 5.0,
                "medium_mean_lb": 2.0, "large_mean": large[scheme] + w,
                "large_p99": large[scheme], "large_mean_lb": large[scheme] + w,
                "timeouts": 0, "drops": 0, "offered_load": load, "carried_load": load,
                "wall_s": 1.0,
            }
        )  # fmt: skip
    return pd.DataFrame(rows)


def test_pfabric_verdicts():
    schemes = {"pfabric": 1.1, "dctcp": 2.0, "tcp": 3.0}
    tie = {"pfabric": 3.0, "dctcp": 3.0, "tcp": 4.0}
    claims = pfabric.pfabric_checks(pfabric_runs(schemes, tie))  # one seed: exact
    assert [c.verdict for c in claims if not c.check] == ["yes", "yes", "yes", "yes"]
    assert all(c.tolerance for c in claims)
    bound = [c for c in claims if c.check]
    assert len(bound) == 1 and "lower bound" in bound[0].claim
    # Three seeds, each off by -0.5, 0, 0.5 in every scheme: 1.1 +- 1.24 may be above 1.5,
    # but the differences between schemes, paired by seed, are exact.
    noisy = pfabric.pfabric_checks(pfabric_runs(schemes, tie, seeds=(1, 2, 3), noise=0.5))
    assert [c.verdict for c in noisy if not c.check] == ["within noise", "yes", "yes", "yes"]
    worse = pfabric.pfabric_checks(pfabric_runs({**schemes, "pfabric": 1.6}, {**tie, "pfabric": 4}))
    assert [c.verdict for c in worse if not c.check] == ["NO", "yes", "yes", "NO"]


# --- qjump (seeds: paired intervals; numbered points run by run) ----------------------------


QJUMP_WIGGLE = (-1.0, -0.5, 0.0, 0.5, 1.0)  # five seeds: mean 0


def qjump_runs(rms: dict[str, float], throughput: list[float], noise: float = 0.0) -> pd.DataFrame:
    """Five seeds (a numbered point of the seed can be decided from five runs, not
    three); per seed each case's samples all equal to ``rms[case]`` (so its RMS, p99
    and max are that number; QJUMP's off by ``noise`` x QJUMP_WIGGLE), Hadoop's 1 s
    alone and ``rms["hadoop_" + case]`` with it; the level sweep's throughputs as
    given, its latency std growing, every latency within the epoch; the worst case
    within the epoch."""
    epoch = qjump.scenarios.EPOCH_S
    rows = []
    for seed, w in enumerate(QJUMP_WIGGLE, start=1):
        for case in qjump.scenarios.CASES:
            value = rms.get(case, 1e-6) * (1 + noise * w if case == "qjump" else 1)
            apps = case != "hadoop_alone"
            rows.append(
                {
                    "kind": "case", "case": case, "seed": seed,
                    "ptp": np.full(20, value) if apps else np.array([]),
                    "memcached": np.full(20, value) if apps else np.array([]),
                    "naiad": np.full(20, value) if apps else np.array([]),
                    "hadoop": np.full(3, rms.get(f"hadoop_{case}", 1.0)),
                }
            )  # fmt: skip
        for i, (f, t) in enumerate(zip(qjump.scenarios.FACTORS, throughput, strict=True)):
            rows.append(
                {
                    "kind": "level", "f": f, "seed": seed, "throughput_bps": t + seed,
                    "latency_std_s": 1e-7 * (i + 1), "latency_max_s": 0.5 * epoch,
                    "epoch_s": epoch,
                }
            )  # fmt: skip
        rows.append(
            {"kind": "worst", "seed": seed, "latency_max_s": 0.9 * epoch,
             "latency_p99_s": 0.8 * epoch, "delivered": 10, "sent": 10}
        )  # fmt: skip
    return pd.DataFrame(rows)


QJUMP_RMS = {"alone": 1e-6, "contended": 3e-6, "pause": 3e-6, "ecn_wred": 2e-6, "dctcp": 2e-6,
             "qjump": 1.1e-6, "hadoop_contended": 1.3, "hadoop_pause": 1.3,
             "hadoop_ecn_wred": 1.5, "hadoop_dctcp": 1.5, "hadoop_qjump": 1.1}  # fmt: skip


def test_qjump_verdicts():
    claims = qjump.qjump_claims(qjump_runs(QJUMP_RMS, [1e6, 2e6, 3e6, 6e6, 12e6]))
    assert all(c.tolerance for c in claims)
    assert [c.claim for c in claims if c.check] == [
        "f: a level's throughput grows with f (f·P per epoch)"
    ]
    assert claim_named(claims, "Fig. 3: QJUMP's").verdict == "yes"
    assert claim_named(claims, "f: a level's throughput").verdict == "yes"
    assert claim_named(claims, "f = 1 in its worst case").verdict == "yes"
    # 3x in every run, not 1.5x: no run inside, the share's interval below 1/2.
    assert claim_named(claims, "memcached with Hadoop: p99").verdict == "NO"
    assert claim_named(claims, "Fig. 3: PAUSE").verdict == "NO"  # a tie with contended
    assert claim_named(claims, "Fig. 3: ECN/WRED").verdict == "yes"  # Hadoop 1.5 > 1.3
    # A tie for the closest to 1 (QJUMP's Hadoop as ECN/WRED's) and a flat step in f.
    tied = qjump.qjump_claims(
        qjump_runs(
            {**QJUMP_RMS, "hadoop_qjump": 1.5, "hadoop_ecn_wred": 0.5}, [1e6, 2e6, 2e6, 6e6, 12e6]
        )
    )
    assert claim_named(tied, "Fig. 3: QJUMP's").verdict == "NO"
    assert claim_named(tied, "f: a level's throughput").verdict == "NO"


def test_qjump_comparisons_within_noise():
    """QJUMP's RMS off by up to +-60 % across seeds: its distance from 1 against
    contended's cannot be told from zero for PTP and memcached."""
    noisy = {**QJUMP_RMS, "qjump": 2.9e-6}  # distance 1.9 +- 1.7 against contended's 2
    claims = qjump.qjump_claims(qjump_runs(noisy, [1e6, 2e6, 3e6, 6e6, 12e6], noise=0.6))
    assert claim_named(claims, "Fig. 3: QJUMP's").verdict == "within noise"


def test_numbered_point_judged_run_by_run():
    """Three of three runs inside the seed's range: the Wilson interval of the share
    (0.44-1) holds 1/2, so within noise; five of five (0.57-1): yes; none of five: NO.
    The union of the runs never decides."""
    from dcnsim.studies.text import runs_inside

    assert runs_inside([True] * 3)[0] is None
    assert runs_inside([True] * 5)[0] is True
    assert runs_inside([False] * 5)[0] is False
    ok, text = runs_inside([True, False, False, False, False])
    assert ok is None and "1 of 5" in text


# --- botcp (the load grid over seeds: paired intervals; one run each for Figs. 8-10) --------


def botcp_runs(botcp_s: float, noise: float, seeds=(1, 2, 3)) -> pd.DataFrame:
    """Loads 0.3 and 0.7: TCP-ECN's short flows 1 ms, DCTCP's 1.2 ms at 0.3 and 0.8 ms
    at 0.7, BOTCP's ``botcp_s`` ms, each seed off by ``noise`` x WIGGLE (BOTCP only)."""
    rows = []
    for load, scheme, (seed, w) in itertools.product(
        (0.3, 0.7), botcp.SCHEMES, zip(seeds, WIGGLE, strict=False)
    ):
        base = {"botcp": botcp_s + noise * w, "tcp_ecn": 1.0,
                "dctcp": 1.2 if load == 0.3 else 0.8}[scheme]  # fmt: skip
        rows.append(
            {
                "experiment": "load", "scheme": scheme, "load": load, "seed": seed,
                "short_mean_s": base * 1e-3, "short_p99_s": 3 * base * 1e-3,
                "long_mean_s": 0.01, "short_n": 10, "short_unfinished": 0, "long_n": 5,
                "long_unfinished": 0, "drops": 0, "timeouts": 0,
            }
        )  # fmt: skip
    return pd.DataFrame(rows)


@pytest.mark.parametrize(
    ("botcp_ms", "noise", "verdict"),
    [(0.5, 0.01, "yes"), (2.0, 0.01, "NO"), (0.75, 0.1, "within noise"), (0.8, 0.0, "NO")],
)
def test_botcp_verdicts(botcp_ms, noise, verdict):
    # 0.75 +- 0.25 (half-width 0.1 x 2.48) against DCTCP's 0.8 at 0.7; 0.8: a tie with it
    claims = botcp.botcp_checks(botcp_runs(botcp_ms, noise))
    assert claim_named(claims, "Fig. 6: BOTCP's short-flow average").verdict == verdict
    assert claim_named(claims, "Fig. 7: BOTCP's short-flow p99").tolerance.startswith("95 %")
    assert claim_named(claims, "Fig. 6: at load 0.3 TCP-ECN's").verdict == "yes"
    assert claim_named(claims, "Fig. 6: at load 0.7 DCTCP's").verdict == "yes"
    assert claim_named(claims, "Fig. 11").verdict == "yes"
    # No scheme drops: a tie is not "fewer".
    assert claim_named(claims, "§5.1, §5.3: BOTCP drops fewer").verdict == "NO"
    one = botcp.botcp_checks(botcp_runs(botcp_ms, noise, seeds=(1,)))
    assert claim_named(one, "Fig. 6: BOTCP's short-flow average").tolerance.startswith("exact")


# --- packet-slicing (no seeds: exact, ties do not hold, grid ends are not "more") ------------


def slicing_runs(goodput_on: float, most_on: int) -> pd.DataFrame:
    """Fig. 12's buffer sizes (sliced goodput ``goodput_on`` against 50 Mbps) and
    §IV.B.3 at 10 Gbps (timeouts above 45 flows without slicing, above ``most_on`` with;
    the grid ends at the seed's 900)."""
    rows = [
        {"experiment": "fig12_buffer", "protocol": "dctcp", "slicing": on, "buffer_KB": b,
         "goodput_mbps": goodput_on if on else 50.0}
        for b in (64, 128) for on in (False, True)
    ]  # fmt: skip
    rows += [
        {"experiment": "10g", "protocol": "dctcp", "slicing": on, "workers": n,
         "timeouts": int(n > (most_on if on else 45))}
        for n in (20, 45, 50, 600, 900) for on in (False, True)
    ]  # fmt: skip
    return pd.DataFrame(rows)


@pytest.mark.parametrize(
    ("goodput_on", "most_on", "fig12", "more"),
    [(60.0, 900, "yes", "n/a"), (50.0, 600, "NO", "NO"), (40.0, 900, "NO", "n/a")],
)
def test_packet_slicing_verdicts(goodput_on, most_on, fig12, more):
    claims = slicing.simulated_claims(slicing_runs(goodput_on, most_on))
    assert claim_named(claims, "Fig. 12: DCTCP_PS above DCTCP").verdict == fig12  # 50: a tie
    assert claim_named(claims, "§IV.B.3 10 Gbps: DCTCP's most").verdict == "yes"  # 45
    # no timeout up to the grid's end at 900 cannot show "> 900"
    assert claim_named(claims, "§IV.B.3 10 Gbps: with slicing").verdict == more
    assert all(c.tolerance for c in claims)
