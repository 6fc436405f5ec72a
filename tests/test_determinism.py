"""Same scenario and seed: identical results. Another seed: different results."""

import pandas as pd

import dcnsim
from simhelp import EXAMPLES, run_checked

TIMING_KEYS = {"wall_s", "packet_hops_per_s"}


def loaded_fat_tree(seed: int) -> dcnsim.Scenario:
    scenario = dcnsim.Scenario.from_toml(EXAMPLES / "fat_tree_rps.toml")
    return scenario.set("seed", seed).set("stop_time", "10ms")


def _counters(results):
    return {k: v for k, v in results.summary.items() if k not in TIMING_KEYS}


def test_same_seed_gives_identical_tables():
    first, second = run_checked(loaded_fat_tree(3)), run_checked(loaded_fat_tree(3))
    assert len(first.probes) > 100 and len(first.traces["queues"]) > 100
    pd.testing.assert_frame_equal(first.flows, second.flows)
    pd.testing.assert_frame_equal(first.probes, second.probes)
    pd.testing.assert_frame_equal(first.traces["queues"], second.traces["queues"])
    assert _counters(first) == _counters(second)


def test_other_seed_gives_other_results():
    first, other = run_checked(loaded_fat_tree(3)), run_checked(loaded_fat_tree(4))
    assert not first.probes["sent_s"].equals(other.probes["sent_s"])
    assert not first.traces["queues"].equals(other.traces["queues"])
    assert other.summary["seed"] == 4


def test_python_built_scenario_is_the_toml_one():
    text = (EXAMPLES / "tree3_probes.toml").read_text()
    from_file = dcnsim.Scenario.from_toml(EXAMPLES / "tree3_probes.toml")
    built = dcnsim.Scenario(
        name="tree3 zero-load probes (first seed)",
        seed=1,
        forwarding={"policy": "single"},  # other key order than the file
        network={"host_delay": "2.5us"},
        traffic={"probes": [{"interval": "100us", "size": "1500B", "dst": "all", "src": 0}]},
        topology={
            "kind": "tree3",
            "link": {"delay": "0.2us", "rate": "1Gbps"},
            "hosts_per_tor": 16,
            "tors": 8,
            "aggs": 2,
            "cores": 1,
        },
    )
    assert built == from_file == dcnsim.Scenario.from_toml_str(text)
    assert built.to_json() == from_file.to_json()
    a, b = run_checked(built), run_checked(from_file)
    pd.testing.assert_frame_equal(a.probes, b.probes)
    assert _counters(a) == _counters(b)
