"""`dcnsim study`: the seed experiments, checked against the seeds' claims.

The quick variants run in the default suite; the full ones (every grid point, ten
seeds) are marked ``slow`` (``pytest -m slow``). Claims of a seed that dcnsim does
not reproduce today are kept as written and marked ``xfail(strict=True)``, with the
numbers, so the suite says so and notices the day they start to hold.
"""

from __future__ import annotations

import pandas as pd
import pytest

from dcnsim import ScenarioError, studies
from simhelp import assert_one_error_line, cli

# --- spraying: the random packet spraying seed, static scenario ----------------------------


@pytest.fixture(scope="module")
def spraying_quick() -> pd.DataFrame:
    return studies.run_spraying(quick=True, jobs=2)


@pytest.fixture(scope="module")
def spraying_full() -> pd.DataFrame:
    return studies.run_spraying(quick=False)


def _by(runs: pd.DataFrame) -> pd.DataFrame:
    return studies.spraying_summary(runs).set_index(["policy", "n_long"])


def check_spraying_out_of_order(runs: pd.DataFrame) -> None:
    by = _by(runs)
    for n in sorted(set(runs["n_long"])):
        if n >= 2:
            assert by.loc[("rps", n), "short_ooo_pct"] > 0, by
        assert by.loc[("single", n), "short_ooo_pct"] == 0, by
    assert (runs.loc[runs["policy"] == "single", "short_ooo_packets"] == 0).all()


def check_spraying_bounds(runs: pd.DataFrame) -> None:
    """What holds whatever the policy: every flow finishes, the bottleneck is 1 Gbps."""
    assert (runs["unfinished"] == 0).all(), runs
    with_long = runs[runs["n_long"] > 0]
    assert (with_long["long_aggregate_mbps"] <= 1000.0).all(), with_long
    # single-path routing depends on the host pair only: every seed is the same run.
    single = runs[runs["policy"] == "single"].drop(columns=["seed", "wall_s"])
    assert (single.groupby("n_long").nunique() <= 1).all().all(), single


def check_spraying_fair_share(runs: pd.DataFrame) -> None:
    """Long flows are capped by their fair share at the last hop: every long flow's
    bytes cross E7->S15 at 1 Gbps, so the last one to finish gets at most 1000/n_long."""
    with_long = runs[runs["n_long"] > 0]
    cap = 1000.0 / with_long["n_long"]
    over = with_long[with_long["long_goodput_min_mbps"] > cap * 1.001]
    assert over.empty, over[["policy", "seed", "n_long", "long_goodput_min_mbps"]]


def check_spraying_short_fct(runs: pd.DataFrame) -> None:
    by = _by(runs)
    rps, single = by.loc[("rps", 5), "short_fct_ms"], by.loc[("single", 5), "short_fct_ms"]
    assert rps < single, f"n_long = 5: rps {rps:.3f} ms, single {single:.3f} ms"


SHORT_FCT_XFAIL = pytest.mark.xfail(
    strict=True,
    reason="dcnsim: rps is slower for the short flow at n_long = 5 (full study: rps 24.6 ms "
    "mean, 9.6-53.9 ms over seeds, single 14.4 ms): reordering triggers spurious fast "
    "retransmits (3 dupacks) that halve the short flow's window",
)


def test_spraying_quick_out_of_order(spraying_quick):
    assert sorted(set(spraying_quick["n_long"])) == [0, 2, 5]
    assert sorted(set(spraying_quick["seed"])) == [1, 2, 3]
    check_spraying_out_of_order(spraying_quick)


def test_spraying_quick_bounds(spraying_quick):
    check_spraying_bounds(spraying_quick)


def test_spraying_quick_long_goodput_within_fair_share(spraying_quick):
    check_spraying_fair_share(spraying_quick)


@SHORT_FCT_XFAIL
def test_spraying_quick_rps_short_flow_faster_at_five_long_flows(spraying_quick):
    check_spraying_short_fct(spraying_quick)


def test_spraying_runs_are_reproducible_and_parallel_equals_serial():
    kwargs = {"n_long": [2], "seeds": [4], "policies": ["rps"]}
    serial = studies.run_spraying(jobs=1, **kwargs).drop(columns="wall_s")
    parallel = studies.run_spraying(jobs=2, **kwargs).drop(columns="wall_s")
    pd.testing.assert_frame_equal(serial, parallel)


def test_spraying_scenario_is_the_seed_setup():
    scenario = studies.spraying_scenario("rps", 3, seed=7)
    scenario.validate()
    assert scenario.get("seed") == 7
    assert scenario.get("forwarding.policy") == "rps"
    assert scenario.get("topology") == {
        "kind": "fat_tree",
        "k": 4,
        "link": {"rate": "1Gbps", "delay": "25us"},
    }
    assert scenario.get("network.queue") == {"capacity": "1000pkt"}
    assert scenario.get("traffic.flows") == [
        {"src": 0, "dst": 15, "size": "10MB"},
        {"src": 1, "dst": 15, "size": "10MB"},
        {"src": 2, "dst": 15, "size": "10MB"},
        {"src": 0, "dst": 15, "size": "200KB"},
    ]


@pytest.mark.slow
def test_spraying_full_out_of_order(spraying_full):
    assert sorted(set(spraying_full["seed"])) == list(range(1, 11))
    check_spraying_out_of_order(spraying_full)


@pytest.mark.slow
def test_spraying_full_bounds(spraying_full):
    check_spraying_bounds(spraying_full)


@pytest.mark.slow
def test_spraying_full_long_goodput_within_fair_share(spraying_full):
    check_spraying_fair_share(spraying_full)


@pytest.mark.slow
@SHORT_FCT_XFAIL
def test_spraying_full_rps_short_flow_faster_at_five_long_flows(spraying_full):
    check_spraying_short_fct(spraying_full)


# --- incast: the Packet Slicing seed, §II.C ------------------------------------------------


def test_incast_quick_collapse_is_timeouts_and_shrinks_with_packet_size():
    detail = studies.run_incast(quick=True, sizes=[1500, 500, 250], jobs=2)
    at = detail.set_index(["size_B", "workers"])
    fine, collapsed = at.loc[(500, 40)], at.loc[(500, 80)]
    assert fine["steady_rounds"] == studies.INCAST_ROUNDS - 1
    assert fine["steady_timeout_rounds"] == 0 and fine["steady_timeouts"] == 0
    assert fine["steady_goodput_mbps"] > 800
    assert collapsed["steady_goodput_mbps"] < 300
    assert collapsed["steady_timeout_rounds"] > 0 and collapsed["timeout_fraction"] > 0.5

    summary = studies.incast_summary(detail).set_index("size_B")
    assert (summary["bound"] == "=").all(), summary
    largest, first = summary["dcnsim_max_workers"], summary["first_collapse"]
    assert largest[1500] < largest[500] < largest[250], summary
    assert first[1500] < first[500] < first[250], summary


def test_incast_scenario_is_the_seed_setup():
    scenario = studies.incast_scenario(500, 12)
    scenario.validate()
    assert scenario.to_dict() == {
        "name": "incast S=500B N=12",
        "topology": {"kind": "star", "hosts": 13, "link": {"rate": "1Gbps", "delay": "25us"}},
        "network": {"queue": {"capacity": "64KB", "aqm": {"kind": "threshold", "k": "20pkt"}}},
        "transport": {"protocol": "dctcp", "mss": "460B", "init_cwnd": 2, "min_rto": "200ms"},
        "traffic": {
            "incast": [
                {"aggregator": 0, "workers": "all", "sru": "64KB", "rounds": 8, "persistent": True}
            ]
        },
    }
    with pytest.raises(ValueError):
        studies.incast_scenario(63, 2)


def _point(size: int, workers: int, timeout_rounds: int, goodput: float) -> dict:
    return {
        "size_B": size,
        "workers": workers,
        "rounds": 8,
        "steady_rounds": 7,
        "steady_timeout_rounds": timeout_rounds,
        "steady_goodput_mbps": goodput,
    }


def test_incast_summary_takes_the_first_timeout_even_if_a_larger_n_is_fine():
    detail = pd.DataFrame(
        [
            _point(1500, 4, 0, 940.0),
            _point(1500, 2, 0, 920.0),  # order of the rows does not matter
            _point(1500, 10, 3, 558.0),
            _point(1500, 16, 0, 966.0),
            _point(500, 20, 1, 100.0),
            _point(64, 100, 0, 373.0),
            _point(64, 200, 0, 375.0),
        ]
    )
    summary = studies.incast_summary(detail).set_index("size_B")
    assert summary.loc[1500, "dcnsim_max_workers"] == 4
    assert summary.loc[1500, "first_collapse"] == 10
    assert summary.loc[1500, "goodput_below_mbps"] == 940.0
    assert summary.loc[1500, "goodput_above_mbps"] == 558.0
    assert summary.loc[1500, "bound"] == "="
    assert summary.loc[1500, "seed_max_workers"] == 25
    assert pd.isna(summary.loc[500, "dcnsim_max_workers"])
    assert summary.loc[500, "bound"] == "<"
    assert summary.loc[64, "dcnsim_max_workers"] == 200
    assert summary.loc[64, "bound"] == ">="
    assert pd.isna(summary.loc[64, "first_collapse"])


@pytest.mark.slow
def test_incast_full_max_workers_grow_as_packets_shrink():
    detail = studies.run_incast(quick=False)
    summary = studies.incast_summary(detail).set_index("size_B")
    largest = summary["dcnsim_max_workers"]
    assert largest[1500] < largest[500] < largest[250] < largest[64], summary
    assert largest[64] >= 450, summary
    # 64 B packets carry 24 B of payload: at most 24/64 of the link.
    assert detail.loc[detail["size_B"] == 64, "steady_goodput_mbps"].max() <= 375.0


# --- the command ------------------------------------------------------------------------------


def test_cli_study_help_lists_the_studies():
    proc = cli("study", "--help")
    assert proc.returncode == 0, proc.stderr
    for name, study in studies.STUDIES.items():
        assert name in proc.stdout
        assert study.title.split(":")[0] in " ".join(proc.stdout.split())
    assert "--quick" in proc.stdout and "--jobs" in proc.stdout and "--out" in proc.stdout


def test_cli_study_spraying_quick_prints_the_table(tmp_path):
    out = tmp_path / "spraying"
    proc = cli("study", "spraying", "--quick", "--jobs", "2", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("long flows"))
    assert "FCT rps" in lines[header] and "FCT single" in lines[header]
    assert set(lines[header + 1]) <= {"-", " "}
    rows = [line.split() for line in lines[header + 2 : header + 5]]
    assert [row[0] for row in rows] == ["0", "2", "5"]
    assert "Seed's findings" in proc.stdout
    assert "runs in" in proc.stdout and "quick variant" in proc.stdout
    assert sorted(p.name for p in out.iterdir()) == ["runs.csv", "study.csv", "study.png"]
    table = pd.read_csv(out / "study.csv")
    assert list(table["n_long"]) == [0, 2, 5]
    assert (out / "study.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    runs = pd.read_csv(out / "runs.csv")
    assert len(runs) == 2 * 3 * 3


def test_cli_study_unknown_name_is_bad_input():
    message = assert_one_error_line(cli("study", "nosuch"))
    assert "nosuch" in message and "incast" in message and "spraying" in message


def test_cli_study_bad_options_are_bad_input(tmp_path):
    assert "--jobs" in assert_one_error_line(cli("study", "spraying", "--jobs", "0"))
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("x")
    message = assert_one_error_line(cli("study", "spraying", "--quick", "--out", str(not_a_dir)))
    assert "--out" in message


def test_run_study_in_python():
    output = studies.run_study("spraying", quick=True, jobs=1, verbose=True)
    assert "Per run:" in output.text
    assert list(output.table["n_long"]) == [0, 2, 5]
    assert len(output.detail) == 2 * 3 * 3


@pytest.mark.parametrize("jobs", [1, 2])
def test_run_scenarios_reports_a_bad_scenario_as_scenario_error(jobs):
    bad = studies.spraying_scenario("rps", 1).set("topology.k", 5)
    tasks = [(studies._reduce_spraying, bad), (studies._reduce_spraying, bad)]
    with pytest.raises(ScenarioError, match=r"topology\.k: fat-tree k must be even"):
        studies.run_scenarios(tasks, jobs=jobs)
