"""The Scenario object: copies, dotted keys, TOML round trips, canonical JSON."""

import json
from pathlib import Path

import numpy as np
import pytest

import dcnsim
from dcnsim import Scenario, ScenarioError
from dcnsim.formats import format_wall
from dcnsim.results import format_progress, lasts_to_stop_time
from simhelp import EXAMPLES, cli, tree3_seed


def test_constructor_copies_and_keywords_set_top_level_keys():
    data = tree3_seed()
    scenario = Scenario(data, seed=7)
    data["topology"]["cores"] = 99
    assert scenario.get("topology.cores") == 1
    assert scenario.get("seed") == 7
    assert Scenario(topology={"kind": "star", "hosts": 2}).to_dict() == {
        "topology": {"kind": "star", "hosts": 2}
    }


def test_to_dict_is_a_deep_copy():
    scenario = Scenario(tree3_seed())
    scenario.to_dict()["topology"]["link"]["rate"] = "5Gbps"
    assert scenario.get("topology.link.rate") == "1Gbps"


def test_set_returns_a_changed_copy():
    original = Scenario(tree3_seed())
    changed = original.set("forwarding.policy", "rps")
    assert changed.get("forwarding.policy") == "rps"
    assert original.get("forwarding.policy") == "single"
    created = original.set("trace.queues", ["tor0->agg0"])
    assert created.to_dict()["trace"] == {"queues": ["tor0->agg0"]}
    assert "trace" not in original.to_dict()


def test_set_addresses_list_items():
    scenario = Scenario(tree3_seed())
    assert scenario.set("traffic.probes[0].size", "64B").get("traffic.probes[0].size") == "64B"
    assert scenario.set("traffic.probes.0.src", 3).get("traffic.probes[0].src") == 3
    with pytest.raises(ScenarioError, match=r"^traffic\.probes\[5\]: index out of range"):
        scenario.set("traffic.probes[5].src", 3)


def test_set_through_a_value_is_an_error():
    with pytest.raises(ScenarioError, match=r"^forwarding\.policy: is a string, not a table"):
        Scenario(tree3_seed()).set("forwarding.policy.kind", "x")


@pytest.mark.parametrize(
    ("key", "message"),
    [
        (
            "forwarding.polcy",
            "forwarding.polcy: unknown key (expected `policy`, `elr_classes`, `flowlet_gap`, "
            "`d`, `m`)",
        ),
        ("colour", "colour: unknown key"),
        ("topology.kk", "topology.kk: unknown key"),
        ("traffic.probes[0].sise", "traffic.probes[0].sise: unknown key"),
        ("forwarding.polcy.deeper", "forwarding.polcy: unknown key"),
    ],
)
def test_set_refuses_a_key_the_schema_does_not_have_at_once(key, message):
    scenario = Scenario.from_toml(EXAMPLES / "tree3_probes.toml")
    with pytest.raises(ScenarioError) as err:
        scenario.set(key, 1)
    assert str(err.value).startswith(message)
    # Known keys are taken, whatever their value (checked with the whole scenario),
    # and so are the keys of a scenario still being built.
    assert scenario.set("forwarding.policy", "spray").get("forwarding.policy") == "spray"
    assert Scenario().set("topology.kind", "star").set("topology.hosts", 3).get("topology") == {
        "kind": "star",
        "hosts": 3,
    }
    assert scenario.set(key, 1, check=False).get(key) == 1  # what a sweep does


def test_toml_round_trip():
    scenario = Scenario.from_toml(EXAMPLES / "edges_custom.toml")
    assert Scenario.from_toml_str(scenario.to_toml()) == scenario


def test_json_is_canonical_whatever_the_key_order():
    a = Scenario({"seed": 2, "topology": {"kind": "star", "hosts": 3}})
    b = Scenario({"topology": {"hosts": 3, "kind": "star"}, "seed": 2})
    assert a.to_json() == b.to_json()
    assert json.loads(a.to_json()) == a.to_dict()


def test_numpy_scalars_serialize_as_plain_numbers():
    scenario = Scenario(seed=np.int64(5), traffic={"streams": [{"load": np.float64(0.25)}]})
    assert json.loads(scenario.to_json()) == {"seed": 5, "traffic": {"streams": [{"load": 0.25}]}}


def test_non_finite_numbers_name_their_field():
    with pytest.raises(ScenarioError, match=r"^traffic\.streams\[0\]\.load: "):
        Scenario(traffic={"streams": [{"load": float("nan")}]}).to_json()


def test_from_toml_str_syntax_error():
    with pytest.raises(ScenarioError, match=r"^scenario: invalid TOML in scenario text: "):
        Scenario.from_toml_str("topology = {")


def test_progress_line_format():
    info = {
        "sim_time_s": 0.005,
        "stop_time_s": 0.02,
        "events": 10,
        "packet_hops": 4,
        "wall_s": 1.5,
        "packet_hops_per_s": 2_500_000.0,
    }
    line = format_progress(info)
    assert line.startswith("simulated 5.000 ms of 20.000 ms ( 25.0%)")
    assert "2.50 M packet-hops/s" in line
    # A quarter done in 1.5 s: the other three quarters at that speed take 4.5 s.
    assert line.endswith("| wall 1.5 s | about 4.5 s left"), line
    assert "%" not in format_progress({**info, "stop_time_s": None})
    assert "left" not in format_progress({**info, "stop_time_s": None})
    # Traffic that may end before stop_time: the stop time is a bound, no time left.
    bounded = format_progress(info, eta=False)
    assert "of at most 20.000 ms" in bounded and "left" not in bounded


@pytest.mark.parametrize(
    ("seconds", "shown"),
    [(0.0, "0 s"), (4.2e-4, "420 µs"), (0.0123, "12 ms"), (0.00999, "10 ms"), (1.234, "1.2 s"),
     (6.0, "6.0 s"), (52.3, "52 s"), (192.0, "3 min 12 s"), (7384.0, "2 h 03 min")],
)  # fmt: skip
def test_wall_times_have_the_precision_a_reader_uses(seconds, shown):
    assert format_wall(seconds) == shown


#: Web-search flows on a k = 4 fat-tree for 1 s of arrivals: a second or two of wall
#: time, so the progress line is printed a few times.
_ARRIVALS = {
    "topology": {"kind": "fat_tree", "k": 4, "link": {"rate": "1Gbps", "delay": "25us"}},
    "traffic": {"workloads": [{"src": "all", "dst": "all", "cdf": "websearch", "load": 0.4}]},
}


def _progress_lines(tmp_path, scenario: dict) -> list[str]:
    path = tmp_path / "run.toml"
    path.write_text(Scenario(scenario).to_toml())
    proc = cli("run", str(path), "--progress")
    assert proc.returncode == 0, proc.stderr
    # Each line is the progress bar (tqdm's, as studies and sweeps draw it), then the text.
    lines = [s.strip() for s in proc.stderr.replace("\r", "\n").splitlines() if s.strip()]
    texts = [s[s.index("simulated ") :] for s in lines if "simulated " in s]
    assert texts, proc.stderr
    return texts


def test_no_time_left_is_guessed_for_a_run_whose_traffic_ends_early(tmp_path):
    early = Scenario(_ARRIVALS).set("stop_time", "100s").set("traffic.workloads[0].stop", "1s")
    assert not lasts_to_stop_time(early)
    lines = _progress_lines(tmp_path, early.to_dict())
    # The bar ends full, saying the traffic ended before stop_time (issue 49); every
    # line before says how far the run may go, none guesses the time left.
    assert "traffic done before stop_time" in lines[-1], lines
    for line in lines:
        assert "left" not in line, line
        assert "of at most 100.000 s" in line or "traffic done before stop_time" in line, line
    # The same traffic up to stop_time: the run lasts until then, so the time left is said.
    lasting = Scenario(_ARRIVALS).set("stop_time", "1s")
    assert lasts_to_stop_time(lasting)
    lines = _progress_lines(tmp_path, lasting.to_dict())
    assert all("at most" not in s for s in lines)
    assert any(s.endswith(" left") for s in lines), lines


# --- workload CDF files named relative to the scenario file -----------------------------

CDF_TEXT = "# size probability\n1000 0\n1000 0.5\n20000 1\n"


def cdf_scenario_file(directory: Path, cdfs: list[str]) -> Path:
    """A scenario file in ``directory`` with one workload per entry of ``cdfs``."""
    directory.mkdir(parents=True, exist_ok=True)
    workloads = [
        {"src": i, "dst": "random", "cdf": cdf, "load": 0.3, "stop": "1ms"}
        for i, cdf in enumerate(cdfs)
    ]
    scenario = Scenario(
        topology={"kind": "star", "hosts": 4, "link": {"rate": "10Gbps"}},
        traffic={"workloads": workloads},
    )
    path = directory / "scenario.toml"
    path.write_text(scenario.to_toml())
    return path


def test_relative_cdf_path_is_relative_to_the_scenario_file(tmp_path, monkeypatch):
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "common.cdf").write_text(CDF_TEXT)
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "local.cdf").write_text(CDF_TEXT)
    absolute = tmp_path / "shared" / "common.cdf"
    cdfs = ["local.cdf", "../shared/common.cdf", "websearch", str(absolute)]
    path = cdf_scenario_file(tmp_path / "runs", cdfs)

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    for scenario in (Scenario.from_toml(path), Scenario.from_toml(str(path))):
        got = [scenario.get(f"traffic.workloads[{i}].cdf") for i in range(len(cdfs))]
        assert got[0] == str(tmp_path / "runs" / "local.cdf")
        assert Path(got[1]).resolve() == absolute.resolve()
        assert got[2] == "websearch"  # a shipped name is not a path
        assert got[3] == str(absolute)  # absolute paths are kept as they are
    scenario.validate()
    results = dcnsim.run(scenario)
    tcp = results.flows[results.flows["kind"] == "tcp"]
    assert len(tcp) > 0
    # Sizes drawn from the local file are within its support.
    local = tcp[tcp["app"] == 0]
    assert local["size_bytes"].between(1000, 20000).all()


def test_relative_cdf_path_from_a_relative_scenario_path(tmp_path, monkeypatch):
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "local.cdf").write_text(CDF_TEXT)
    cdf_scenario_file(tmp_path / "runs", ["local.cdf"])
    monkeypatch.chdir(tmp_path)
    scenario = Scenario.from_toml(Path("runs") / "scenario.toml")
    assert scenario.get("traffic.workloads[0].cdf") == str(tmp_path / "runs" / "local.cdf")
    scenario.validate()


def test_cli_runs_a_scenario_with_a_relative_cdf_from_another_directory(tmp_path):
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "local.cdf").write_text(CDF_TEXT)
    path = cdf_scenario_file(tmp_path / "runs", ["local.cdf"])
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    proc = cli("run", str(path), "--out", "out", cwd=elsewhere)
    assert proc.returncode == 0, proc.stderr
    assert (elsewhere / "out" / "flows.parquet").exists()
    assert "tcp flows" in proc.stdout


def test_dict_and_text_scenarios_keep_relative_cdf_paths():
    workloads = [{"src": 0, "dst": "random", "cdf": "sizes.cdf", "load": 0.5}]
    built = Scenario(traffic={"workloads": workloads})
    assert built.get("traffic.workloads[0].cdf") == "sizes.cdf"
    text = Scenario.from_toml_str(built.to_toml())
    assert text.get("traffic.workloads[0].cdf") == "sizes.cdf"


def test_the_documented_cdf_example_is_a_valid_file(tmp_path):
    doc = (EXAMPLES.parent / "docs" / "scenario.md").read_text()
    block = doc.split("# size_bytes  cumulative_probability\n", 1)[1].split("```", 1)[0]
    (tmp_path / "sizes.cdf").write_text(block)
    path = cdf_scenario_file(tmp_path, ["sizes.cdf"])
    scenario = Scenario.from_toml(path).set("traffic.workloads[0].stop", "100ms")
    results = dcnsim.run(scenario.set("stop_time", "100ms"))
    sizes = results.flows.loc[results.flows["kind"] == "tcp", "size_bytes"]
    assert len(sizes) > 300
    assert sizes.between(1460, 1_000_000).all()
    # The point mass: half the flows are exactly one segment.
    assert 0.4 < (sizes == 1460).mean() < 0.6
