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
    varied = {p: s for p, s in by_point.items() if "fig8" not in p and "fig9" not in p}
    assert varied and all(s == seeds for s in varied.values()), by_point
    # BOTCP's Figs. 8-10 are one deterministic run per scheme (no randomness to draw).
    assert all(s == {1} for p, s in by_point.items() if p not in varied)
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
