"""The pFabric and BOTCP studies take seeds like the others (issue 46): each full and
quick plan runs several seeds, ``--seeds N`` (``run_study(seeds=N)``) runs every point
with seeds 1..N, the seed reaches each scenario, and a comparison over seeds is
decided on the 95 % interval of the difference paired by seed (``yes``, ``NO`` or
``within noise``), never on the means alone. Nothing here runs a simulation."""

from __future__ import annotations

import pandas as pd
import pytest

from dcnsim import studies
from dcnsim.studies import botcp, pfabric
from dcnsim.studies.botcp import analysis as botcp_analysis
from dcnsim.studies.botcp.scenarios import BOTCP_FULL, BOTCP_QUICK
from dcnsim.studies.pfabric_setup import PFABRIC_FULL, PFABRIC_QUICK

STUDIES = {"pfabric": pfabric, "botcp": botcp_analysis}


def test_every_plan_runs_several_seeds():
    """Five seeds in each full plan (as QJUMP's), three in each quick one (as the
    spraying studies'): every comparison gets an interval."""
    assert PFABRIC_FULL.seeds == BOTCP_FULL.seeds == (1, 2, 3, 4, 5)
    assert PFABRIC_QUICK.seeds == BOTCP_QUICK.seeds == (1, 2, 3)
    assert studies.STUDIES["pfabric"].seeded and studies.STUDIES["botcp"].seeded


class Stop(Exception):
    """Raised by the fake pool once it has the scenarios: nothing is simulated."""


def scenarios_run(monkeypatch, name: str, **options) -> list:
    """The scenarios ``run_study`` hands to the pool for study ``name``."""
    seen: list = []

    def pool(tasks, jobs=None, progress=None):
        seen.extend(scenario for _, scenario in tasks)
        raise Stop

    monkeypatch.setattr(STUDIES[name], "run_scenarios", pool)
    with pytest.raises(Stop):
        studies.run_study(studies.STUDIES[name], **options)
    return seen


@pytest.mark.parametrize("name", ["pfabric", "botcp"])
@pytest.mark.parametrize(
    ("options", "seeds"),
    [({"quick": True}, {1, 2, 3}), ({"quick": False}, {1, 2, 3, 4, 5}),
     ({"quick": True, "seeds": 2}, {1, 2})],
)  # fmt: skip
def test_each_point_runs_each_seed(monkeypatch, name, options, seeds):
    scenarios = scenarios_run(monkeypatch, name, **options)
    by_point: dict[str, set[int]] = {}
    for scenario in scenarios:
        point = str(scenario.get("name")).split(" seed=")[0]
        by_point.setdefault(point, set()).add(scenario.get("seed"))
    # BOTCP's Figs. 8-10 too: their seeds draw the flows' start offsets.
    assert by_point and all(s == seeds for s in by_point.values()), by_point
    assert len(scenarios) == sum(map(len, by_point.values()))


def test_the_seed_draws_the_arrivals_and_nothing_else():
    """Two seeds of a point differ in the seed alone: the same fabric, transport and
    workload, other arrivals."""
    pairs = [
        [pfabric.pfabric_scenario("tcp", "websearch", 0.5, seed) for seed in (1, 2)],
        [botcp.load_scenario("botcp", 0.5, seed) for seed in (1, 2)],
    ]
    for one, two in pairs:
        a, b = one.to_dict(), two.to_dict()
        assert (a["seed"], b["seed"]) == (1, 2)
        assert {k: v for k, v in a.items() if k not in ("seed", "name")} == {
            k: v for k, v in b.items() if k not in ("seed", "name")
        }


def pfabric_rows(small: dict[str, list[float]]) -> pd.DataFrame:
    """Runs at web search 0.2, one per (scheme, seed), ``small`` the (0, 100 KB] mean
    slowdown per seed; every other number alike across schemes."""
    rows = []
    for scheme, values in small.items():
        for seed, value in enumerate(values, start=1):
            rows.append(
                {"workload": "websearch", "load": 0.2, "scheme": scheme, "seed": seed,
                 **{f"{b}_{k}": 1 for b in ("small", "medium", "large")
                    for k in ("n", "unfinished")},
                 "small_mean": value, "small_p99": value, "small_mean_lb": value,
                 "medium_mean": 2.0, "medium_p99": 5.0, "medium_mean_lb": 2.0,
                 "large_mean": 3.0, "large_p99": 3.0, "large_mean_lb": 3.0,
                 "timeouts": 0, "drops": 0, "offered_load": 0.2, "carried_load": 0.2,
                 "wall_s": 1.0}
            )  # fmt: skip
    return pd.DataFrame(rows)


def lowest(runs: pd.DataFrame) -> studies.text.Claim:
    (claim,) = [c for c in pfabric.pfabric_checks(runs) if "mean slowdown is the lowest" in c.claim]
    return claim


def test_pfabric_comparison_on_the_paired_interval():
    """pFabric below both others on every seed: yes; below on the means but not on
    every seed, by less than the paired interval: within noise; one seed: exact."""
    clear = pfabric_rows({"pfabric": [1.1, 1.2, 1.0], "dctcp": [2.1, 2.3, 1.9],
                          "tcp": [3.0, 3.1, 2.9]})  # fmt: skip
    assert lowest(clear).verdict == "yes"
    assert lowest(clear).tolerance == "95 % interval over seeds (paired by seed)"
    noisy = pfabric_rows({"pfabric": [1.0, 1.5, 1.2], "dctcp": [1.4, 1.1, 1.3],
                          "tcp": [3.0, 3.1, 2.9]})  # fmt: skip
    assert noisy.groupby("scheme")["small_mean"].mean()["pfabric"] < 1.27  # below on the means
    assert lowest(noisy).verdict == "within noise"
    one = noisy[noisy["seed"] == 1]
    assert lowest(one).verdict == "yes"
    assert lowest(one).tolerance == "exact: one seed, no interval"


def botcp_rows(short: dict[str, list[float]]) -> pd.DataFrame:
    """Load runs at 0.5, one per (scheme, seed), ``short`` the short flows' mean FCT in
    seconds per seed."""
    rows = []
    for scheme, values in short.items():
        for seed, value in enumerate(values, start=1):
            rows.append(
                {"experiment": "load", "scheme": scheme, "load": 0.5, "seed": seed,
                 "short_mean_s": value, "short_p99_s": 2 * value, "long_mean_s": 1e-2,
                 "short_n": 100, "long_n": 10, "long_unfinished": 0, "drops": 0,
                 "timeouts": 0}
            )  # fmt: skip
    return pd.DataFrame(rows)


def fig6(runs: pd.DataFrame) -> studies.text.Claim:
    (claim,) = [c for c in botcp.botcp_checks(runs) if c.claim.startswith("Fig. 6: BOTCP's")]
    return claim


def test_botcp_comparison_on_the_paired_interval():
    clear = botcp_rows({"botcp": [1e-4, 1.1e-4, 0.9e-4], "tcp_ecn": [2e-4, 2.2e-4, 1.9e-4],
                        "dctcp": [2.5e-4, 2.4e-4, 2.6e-4]})  # fmt: skip
    assert fig6(clear).verdict == "yes"
    slower = botcp_rows({"botcp": [3e-4, 3.1e-4, 2.9e-4], "tcp_ecn": [2e-4, 2.2e-4, 1.9e-4],
                         "dctcp": [2.5e-4, 2.4e-4, 2.6e-4]})  # fmt: skip
    assert fig6(slower).verdict == "NO"
    noisy = botcp_rows({"botcp": [1e-4, 2.5e-4, 1.5e-4], "tcp_ecn": [2e-4, 1.2e-4, 2.1e-4],
                        "dctcp": [2.5e-4, 2.6e-4, 2.6e-4]})  # fmt: skip
    assert fig6(noisy).verdict == "within noise"
    assert fig6(noisy).tolerance == "95 % interval over seeds (paired by seed)"


# --- BOTCP's Figs. 8-10 over seeds: the claims' logic on synthetic runs ---------------------------

#: Student's t quantile 0.975 with 2 degrees of freedom (three seeds), and the normal
#: one: closed forms of the intervals below.
T2 = 4.302652729911275
Z = 1.959963984540054

#: Per column, a value per scheme that makes every Fig. 8-10 claim hold exactly.
SMALL = {
    "short_mean_s": {"botcp": 1e-4, "tcp_ecn": 2e-4, "dctcp": 3e-4},
    "long_after_share": {"botcp": 0.97, "tcp_ecn": 0.97, "dctcp": 0.97},
    "median_fct_s": {"botcp": 3e-3, "tcp_ecn": 2e-3, "dctcp": 2e-3},
    "drops": {"botcp": 0, "tcp_ecn": 300, "dctcp": 300},
    "timeouts": {"botcp": 0, "tcp_ecn": 200, "dctcp": 200},
    "extreme_queue_kib": {"botcp": 88.0, "tcp_ecn": 124.0, "dctcp": 124.0},
    "timed_out_median_fct_s": {"botcp": float("nan"), "tcp_ecn": 3e-3, "dctcp": 3e-3},
    "clean_median_fct_s": {"botcp": 3e-3, "tcp_ecn": 1.5e-3, "dctcp": 1.5e-3},
}


def small_runs(seeds: int, **columns: dict[str, list[float]]) -> pd.DataFrame:
    """Fig. 8 and Figs. 9-10 runs, one per (experiment, scheme, seed): ``columns[name]
    [scheme]`` a value per seed, else ``SMALL``'s."""
    rows = []
    for experiment in ("bandwidth", "extreme"):
        for scheme in botcp.SCHEMES:
            for seed in range(1, seeds + 1):
                row = {"experiment": experiment, "scheme": scheme, "load": float("nan"),
                       "seed": seed, "max_queue_kib": 110.0, "extreme_from_s": 8e-4,
                       "extreme_to_s": 2.7e-3}  # fmt: skip
                for name, value in SMALL.items():
                    given = columns.get(name, {}).get(scheme)
                    row[name] = value[scheme] if given is None else given[seed - 1]
                rows.append(row)
    return pd.DataFrame(rows)


def small_claim(runs: pd.DataFrame, start: str) -> studies.text.Claim:
    (claim,) = [c for c in botcp.botcp_checks(runs) if c.claim.startswith(start)]
    return claim


def test_botcp_small_runs_hold_exactly_when_alike():
    runs = small_runs(5)
    claims = [c for c in botcp.botcp_checks(runs)]
    assert len(claims) == 7 and {c.verdict for c in claims} == {"yes"}
    assert small_claim(runs, "Fig. 8: short flows").tolerance == (
        "95 % interval over seeds (paired by seed)"
    )
    assert small_claim(runs, "Fig. 9: BOTCP drops").tolerance == studies.text.RUN_BY_RUN


def test_botcp_fig10_on_the_paired_interval():
    """BOTCP's median minus TCP-ECN's per seed: 0.5 ms + (0.1, 0, -0.1) ms, a mean of
    0.5 ms with half-width t(2) x 0.1 / sqrt(3) = 0.248 ms: yes; shifted to 0.2 ms the
    interval holds zero (within noise); at -0.5 ms, NO."""
    half = T2 * 0.1 / 3**0.5
    for shift, verdict in ((0.5, "yes"), (0.2, "within noise"), (-0.5, "NO")):
        ecn = [(3.0 - shift + e) * 1e-3 for e in (-0.1, 0.0, 0.1)]
        claim = small_claim(small_runs(3, median_fct_s={"tcp_ecn": ecn}), "Fig. 10:")
        assert claim.verdict == verdict, claim.dcnsim
        assert f"BOTCP - TCP-ECN {shift:+.3g} ± {half:.2g} ms" in claim.dcnsim


def test_botcp_fig8_order_paired_by_seed():
    """TCP-ECN's short flows faster than DCTCP's on the means but not paired by seed
    (differences +0.2, -0.1, +0.2 x 0.1 ms: half-width t(2) x 0.173 / sqrt(3) x 0.1 ms
    = 0.043 ms about a mean of 0.01 ms): within noise; BOTCP slower than TCP-ECN on
    every seed: NO whatever the rest."""
    dctcp = [4e-4, 2e-4, 3e-4]
    noisy = small_runs(3, short_mean_s={"tcp_ecn": [2e-4, 3e-4, 1e-4], "dctcp": dctcp})
    assert small_claim(noisy, "Fig. 8: short flows").verdict == "within noise"
    slow = small_runs(3, short_mean_s={"botcp": [5e-4, 5e-4, 5e-4], "dctcp": dctcp})
    assert small_claim(slow, "Fig. 8: short flows").verdict == "NO"


def test_botcp_fig8_regain_on_the_mean_and_its_interval():
    """Shares 0.80, 0.86, 0.92: a mean of 0.86 with half-width t(2) x 0.06 / sqrt(3) =
    0.149, holding 0.85: within noise; alike at 0.9 (no interval): yes; at 0.5: NO."""
    for shares, verdict in (
        ([0.80, 0.86, 0.92], "within noise"), ([0.9] * 3, "yes"), ([0.5] * 3, "NO")
    ):  # fmt: skip
        claim = small_claim(small_runs(3, long_after_share={"dctcp": shares}), "Fig. 8: the long")
        assert claim.verdict == verdict, claim.dcnsim
    claim = small_claim(
        small_runs(3, long_after_share={"dctcp": [0.80, 0.86, 0.92]}), "Fig. 8: the"
    )
    assert f"0.860 ± {T2 * 0.06 / 3**0.5:.2g}" in claim.dcnsim


def test_botcp_fig9_states_judged_run_by_run():
    """The share of runs in the seed's state, on its 95 % Wilson interval: all of five
    runs, [5/(5 + z²), 1] = [0.57, 1]: yes; all of three, [0.44, 1]: within noise (the
    quick grid); four of five: within noise; none of five, [0, z²/(5 + z²)] = [0,
    0.43]: NO. Never the union of the runs."""
    assert 5 / (5 + Z**2) > 0.5 > 3 / (3 + Z**2)
    share = "runs inside (95 % interval of the share"
    cases = [
        (5, {"drops": {"botcp": [0] * 5}}, "yes", f"5 of 5 {share} 0.57-1.00)"),
        (3, {"drops": {"botcp": [0] * 3}}, "within noise", f"3 of 3 {share} 0.44-1.00)"),
        (5, {"drops": {"botcp": [0, 0, 0, 0, 3]}}, "within noise", "4 of 5 runs inside"),
        (5, {"timeouts": {"botcp": [1] * 5}}, "NO", f"0 of 5 {share} 0.00-0.43)"),
    ]
    for seeds, columns, verdict, text in cases:
        claim = small_claim(small_runs(seeds, **columns), "Fig. 9: BOTCP drops nothing")
        assert claim.verdict == verdict and text in claim.dcnsim, claim.dcnsim
    # The queue: 88 KiB ± 15 % of the seed's 87.9 is 74.7-101.1 KiB.
    far = small_claim(small_runs(5, extreme_queue_kib={"botcp": [70.0] * 5}), "Fig. 9: BOTCP's q")
    assert (
        far.verdict == "NO"
        and f"0 of 5 runs inside (95 % interval of the share 0.00-{Z**2 / (5 + Z**2):.2f})"
        in far.dcnsim
    )
    one_drop_free = small_runs(5, drops={"dctcp": [0, 300, 300, 300, 300]})
    assert small_claim(one_drop_free, "Fig. 9: TCP-ECN and DCTCP drop").verdict == "within noise"


def test_botcp_fig9_resume_on_the_mean_and_its_interval():
    """The timed-out flows' median minus the others', per seed 1.5 ms + (-1.2, 0, 1.2)
    ms: a mean of 1.5 ms with half-width t(2) x 1.2 / sqrt(3) = 2.98 ms, holding the
    0.2 ms bound: within noise; 1.5 ms on every seed: yes; 0.1 ms: NO."""
    for late_ms, verdict in (
        ([0.3, 1.5, 2.7], "within noise"), ([1.5] * 3, "yes"), ([0.1] * 3, "NO")
    ):  # fmt: skip
        timed_out = [(1.5 + x) * 1e-3 for x in late_ms]
        claim = small_claim(
            small_runs(3, timed_out_median_fct_s={"tcp_ecn": timed_out}), "Fig. 9: with TCP-ECN"
        )
        assert claim.verdict == verdict, claim.dcnsim
