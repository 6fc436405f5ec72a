"""Zero-load latency against the closed form: the first seed's 127 probes on tree3.

latency = 2·host_delay + Σ_links (8·size/rate + delay)   (docs/scenario.md, Network)
"""

import numpy as np
import pytest

from simhelp import EXACT, US, population_std, run_checked, serialization_s, tree3_seed

HOST_DELAY = 2.5 * US
SIZE = 1500
GROUPS = {  # destination hosts -> (latency, hops) from host 0, in the first seed
    range(1, 16): (29.4 * US, 2),  # same ToR
    range(16, 64): (53.8 * US, 4),  # same aggregation switch
    range(64, 128): (78.2 * US, 6),  # through the core
}


def test_first_seed_latencies_per_group():
    probes = run_checked(tree3_seed()).probes
    assert len(probes) == 127
    assert list(probes["dst"]) == list(range(1, 128))  # "all": increasing host order
    assert (probes["src"] == 0).all()
    assert (probes["flow_id"] == -1).all()
    assert (probes["size_bytes"] == SIZE).all()
    assert np.allclose(probes["sent_s"], np.arange(127) * 100 * US, rtol=0, atol=EXACT)
    for dsts, (latency, hops) in GROUPS.items():
        group = probes[probes["dst"].isin(dsts)]
        assert len(group) == len(dsts)
        assert np.abs(group["latency_s"] - latency).max() <= EXACT, (dsts, group["latency_s"])
        assert (group["hops"] == hops).all(), (dsts, group["hops"].unique())


def test_first_seed_mean_and_population_std():
    latency_us = run_checked(tree3_seed()).probes["latency_s"] * 1e6
    assert abs(latency_us.mean() - 63.21) < 0.01
    assert abs(population_std(latency_us) - 16.78) < 0.01


def test_equal_length_routing_makes_every_path_six_hops():
    scenario = tree3_seed()
    scenario["forwarding"]["policy"] = "elr"
    probes = run_checked(scenario).probes
    assert len(probes) == 127
    assert np.abs(probes["latency_s"] - 78.2 * US).max() <= EXACT
    assert (probes["hops"] == 6).all()
    assert population_std(probes["latency_s"]) < EXACT


@pytest.mark.parametrize("upper_rate", [2e9, 4e9])
def test_faster_upper_tiers_match_closed_form(upper_rate):
    scenario = tree3_seed()
    rate = f"{upper_rate / 1e9:g}Gbps"
    scenario["topology"]["tor_agg_link"] = {"rate": rate}  # delay falls back to `link`
    scenario["topology"]["agg_core_link"] = {"rate": rate}
    probes = run_checked(scenario).probes

    host_hop = serialization_s(SIZE, 1e9) + 0.2 * US
    upper_hop = serialization_s(SIZE, upper_rate) + 0.2 * US
    expected = {
        range(1, 16): 2 * HOST_DELAY + 2 * host_hop,
        range(16, 64): 2 * HOST_DELAY + 2 * host_hop + 2 * upper_hop,
        range(64, 128): 2 * HOST_DELAY + 2 * host_hop + 4 * upper_hop,
    }
    for dsts, latency in expected.items():
        group = probes[probes["dst"].isin(dsts)]
        assert len(group) == len(dsts)
        assert np.abs(group["latency_s"] - latency).max() <= EXACT, (rate, dsts, latency)


def test_switch_latency_is_added_once_per_switch():
    scenario = tree3_seed(switch_latency="1.5us")
    probes = run_checked(scenario).probes
    for dsts, (latency, hops) in GROUPS.items():
        switches = hops - 1
        group = probes[probes["dst"].isin(dsts)]
        assert np.abs(group["latency_s"] - (latency + switches * 1.5 * US)).max() <= EXACT
