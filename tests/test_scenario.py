"""The Scenario object: copies, dotted keys, TOML round trips, canonical JSON."""

import json

import numpy as np
import pytest

from dcnsim import Scenario, ScenarioError
from dcnsim.results import format_progress
from simhelp import EXAMPLES, tree3_seed


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
    assert "%" not in format_progress({**info, "stop_time_s": None})
