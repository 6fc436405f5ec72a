"""LetFlow and DRILL beside ECMP and RPS: their keys, and the spraying seed's fat-tree."""

from __future__ import annotations

import pytest

from dcnsim.scenario import Scenario, ScenarioError
from dcnsim.studies import spraying_random

TREE = {"topology": {"kind": "fat_tree", "k": 4}}


def test_letflow_and_drill_keys_and_their_errors():
    drill = Scenario({**TREE, "forwarding": {"policy": "drill", "d": 3, "m": 2}})
    drill.validate()
    Scenario({**TREE, "forwarding": {"policy": "letflow", "flowlet_gap": "50us"}}).validate()
    for forwarding, message in (
        ({"policy": "ecmp", "d": 2}, 'forwarding.d: only with policy = "drill"'),
        ({"policy": "drill", "flowlet_gap": "1us"}, "forwarding.flowlet_gap: only with policy"),
        ({"policy": "drill", "d": 0}, "forwarding.d: "),
        ({"policy": "letflow", "flowlet_gap": "0s"}, "forwarding.flowlet_gap: "),
        ({"policy": "letflow", "flowlet_gap": "5"}, "forwarding.flowlet_gap: "),
    ):  # fmt: skip
        with pytest.raises(ScenarioError) as error:
            Scenario({**TREE, "forwarding": forwarding}).validate()
        assert str(error.value).startswith(message), error.value
        assert "\n" not in str(error.value)


def test_spraying_random_compares_letflow_and_drill_beside_ecmp_and_rps():
    """One seed, 2 long and 20 short flows: every policy's short flows finish, no faster
    than their bytes at the payload rate; a flow-hashing policy never reorders, a
    per-packet one does, and a flowlet one reorders no more than per-packet spraying."""
    runs = spraying_random.run_spraying_random(n_long=[2], n_short=[20], seeds=[1], jobs=1)
    by = runs.set_index("policy")
    assert set(spraying_random.RANDOM_POLICIES) <= set(by.index)
    assert {"ecmp", "rps", "letflow", "drill"} <= set(by.index)
    assert (runs["unfinished"] == 0).all(), runs
    assert (runs["short_fct_ms"] >= 200_000 * 8 / 1e9 * 1e3).all(), runs
    assert by.loc["ecmp", "short_ooo_pct"] == 0 and by.loc["single", "short_ooo_pct"] == 0
    assert by.loc["rps", "short_ooo_pct"] > 0 and by.loc["drill", "short_ooo_pct"] > 0
    assert by.loc["letflow", "short_ooo_pct"] <= by.loc["rps", "short_ooo_pct"]
    summary = spraying_random.spraying_random_summary(runs)
    assert {"letflow", "drill"} <= set(summary["policy"])


def test_policies_are_listed():
    from dcnsim import _core

    assert {"ecmp", "rps", "letflow", "drill"} <= set(dict(_core.names())["policies"])
