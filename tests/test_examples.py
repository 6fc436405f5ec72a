"""Every shipped example is valid and runs, conserving packets."""

import pytest

import dcnsim
from simhelp import EXAMPLES, run_checked

EXAMPLE_FILES = sorted(EXAMPLES.glob("*.toml"))


def test_the_documented_examples_exist():
    names = {p.name for p in EXAMPLE_FILES}
    assert {
        "tree3_probes.toml",
        "fat_tree_rps.toml",
        "star_bottleneck.toml",
        "leaf_spine_botcp.toml",
        "edges_custom.toml",
    } <= names


@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=lambda p: p.stem)
def test_example_runs(path):
    scenario = dcnsim.Scenario.from_toml(path)
    scenario.validate()
    results = run_checked(scenario)
    s = results.summary
    assert s["name"] == scenario.get("name")
    assert s["packets_delivered"] > 0
    assert s["packet_hops"] >= s["packets_delivered"]
    assert s["events"] > 0
    traced = scenario.get("trace.queues") or []
    queues = results.traces["queues"]
    assert set(queues["port"]) <= set(traced)


def test_star_bottleneck_example_drops_at_the_slow_port():
    results = run_checked(EXAMPLES / "star_bottleneck.toml")
    assert results.summary["packets_dropped"] > 0
    queue = results.traces["queues"]
    assert queue["packets"].max() == 100  # the example's capacity, reached, not exceeded
