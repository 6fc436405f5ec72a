"""Forwarding policies on the k = 4 fat-tree (the spraying seed's Fig. 1).

The output has no per-packet path column, so the core a packet crossed is made
observable through its latency: the same fat-tree is listed as an `edges`
topology whose four cores have links of different propagation delay. At zero load
each core then gives one exact latency.
"""

import numpy as np
import pytest

import dcnsim
from simhelp import EXACT, US, run_checked, serialization_s

K = 4
CORE_DELAY_US = [1, 2, 3, 4]  # core c's links; every other link has 1 µs
RATE = 10e9
SIZE = 1500
CHI2_3DOF_999 = 16.27  # 0.999 quantile of chi-square with 3 degrees of freedom


def fat_tree_edges(policy: str, seed: int = 1) -> dict:
    """k = 4 fat-tree numbered as docs/scenario.md numbers `fat_tree`, as an edges list."""
    half = K // 2
    nodes = [{"name": f"host{h}", "kind": "host"} for h in range(K**3 // 4)]
    nodes += [{"name": f"edge{e}", "kind": "switch", "tier": 1} for e in range(K * half)]
    nodes += [{"name": f"agg{a}", "kind": "switch", "tier": 2} for a in range(K * half)]
    nodes += [{"name": f"core{c}", "kind": "switch", "tier": 3} for c in range(half * half)]
    links = [{"a": f"host{h}", "b": f"edge{h // half}"} for h in range(K**3 // 4)]
    for pod in range(K):
        for e in range(pod * half, pod * half + half):
            for a in range(pod * half, pod * half + half):
                links.append({"a": f"edge{e}", "b": f"agg{a}"})
        for j in range(half):
            for c in range(j * half, j * half + half):
                delay = f"{CORE_DELAY_US[c]}us"
                links.append({"a": f"agg{pod * half + j}", "b": f"core{c}", "delay": delay})
    return {
        "seed": seed,
        "topology": {
            "kind": "edges",
            "link": {"rate": "10Gbps", "delay": "1us"},
            "nodes": nodes,
            "links": links,
        },
        "forwarding": {"policy": policy},
        "traffic": {"streams": []},
    }


def stream(src, dst, start_us, packets):
    """A recorded constant stream at 1 Gbps (gaps of 12 µs ≫ 1.2 µs serialization)."""
    gap_us = 12
    return {
        "src": src,
        "dst": dst,
        "rate": "1Gbps",
        "pattern": "constant",
        "size": f"{SIZE}B",
        "start": f"{start_us}us",
        "stop": f"{start_us + gap_us * packets}us",
        "record": True,
    }


def core_of(latency_s) -> np.ndarray:
    """The core each packet crossed, from its zero-load latency (exact or failure)."""
    base = 6 * serialization_s(SIZE, RATE) + 4 * US
    per_core = np.array([base + 2 * d * US for d in CORE_DELAY_US])
    latency = np.asarray(latency_s, dtype=float)
    nearest = np.abs(latency[:, None] - per_core[None, :]).argmin(axis=1)
    off = np.abs(latency - per_core[nearest]).max()
    assert off <= EXACT, f"a latency matches no core path exactly (off by {off} s)"
    return nearest


def cores_by_flow(scenario) -> dict[int, np.ndarray]:
    results = run_checked(scenario)
    probes = results.probes
    assert probes["received_s"].notna().all()
    assert (probes["hops"] == 6).all()
    return {
        int(f): core_of(probes.loc[probes["flow_id"] == f, "latency_s"])
        for f in results.flows["flow_id"]
    }


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_rps_spreads_packets_evenly_over_the_four_cores(seed):
    scenario = fat_tree_edges("rps", seed)
    scenario["traffic"]["streams"] = [stream(0, 15, 0, 3000)]
    (cores,) = cores_by_flow(scenario).values()
    assert len(cores) >= 2000
    counts = np.bincount(cores, minlength=4)
    expected = len(cores) / 4
    chi2 = float(((counts - expected) ** 2 / expected).sum())
    assert chi2 < CHI2_3DOF_999, (counts, chi2)


def test_rps_path_sequence_depends_on_the_seed():
    sequences = []
    for seed in (1, 2):
        scenario = fat_tree_edges("rps", seed)
        scenario["traffic"]["streams"] = [stream(0, 15, 0, 200)]
        (cores,) = cores_by_flow(scenario).values()
        sequences.append(cores)
    assert not np.array_equal(*sequences)


def _pairs_one_at_a_time(packets=20):
    """16 streams between pods 0 and 3, each in its own time window (zero load)."""
    pairs = [(s, d) for s in range(4) for d in range(12, 16)]
    return [stream(s, d, i * 1000, packets) for i, (s, d) in enumerate(pairs)]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_ecmp_keeps_each_flow_on_one_core(seed):
    scenario = fat_tree_edges("ecmp", seed)
    scenario["traffic"]["streams"] = _pairs_one_at_a_time()
    per_flow = cores_by_flow(scenario)
    assert len(per_flow) == 16
    for flow, cores in per_flow.items():
        assert len(cores) == 20
        assert len(set(cores)) == 1, (flow, np.bincount(cores, minlength=4))


@pytest.mark.parametrize("seed", [1, 2])
def test_ecmp_spreads_many_flows_evenly_over_the_cores(seed):
    """400 short flows of one host pair: the per-switch salt must keep the hashes of
    the edge and aggregation tiers independent (no polarization onto two cores)."""
    scenario = fat_tree_edges("ecmp", seed)
    scenario["traffic"]["streams"] = [stream(0, 15, i * 100, 2) for i in range(400)]
    per_flow = cores_by_flow(scenario)
    assert all(len(set(cores)) == 1 for cores in per_flow.values())
    counts = np.bincount([cores[0] for cores in per_flow.values()], minlength=4)
    chi2 = float(((counts - 100) ** 2 / 100).sum())
    assert chi2 < CHI2_3DOF_999, counts


def test_single_uses_one_core_per_pair_whatever_the_seed():
    chosen = []
    for seed in (1, 2, 3, 4, 5):
        scenario = fat_tree_edges("single", seed)
        scenario["traffic"]["streams"] = [stream(0, 15, 0, 100)]
        (cores,) = cores_by_flow(scenario).values()
        assert len(set(cores)) == 1, np.bincount(cores, minlength=4)
        chosen.append(int(cores[0]))
    assert len(set(chosen)) == 1, chosen


def test_elr_on_edges_with_tiers_climbs_to_the_core():
    scenario = fat_tree_edges("elr")
    scenario["traffic"] = {"probes": [{"src": 0, "dst": "all", "interval": "50us"}]}
    probes = run_checked(scenario).probes
    assert len(probes) == 15
    assert (probes["hops"] == 6).all()


# --- the fat_tree builder itself -------------------------------------------------------


def fat_tree(policy: str, **extra) -> dict:
    return {
        "topology": {"kind": "fat_tree", "k": 4, "link": {"rate": "1Gbps", "delay": "25us"}},
        "forwarding": {"policy": policy},
        **extra,
    }


@pytest.mark.parametrize("policy", ["single", "ecmp", "rps"])
def test_fat_tree_numbering_gives_closed_form_latencies(policy):
    probes_all = {"probes": [{"src": 0, "dst": "all", "interval": "1ms"}]}
    probes = run_checked(fat_tree(policy, traffic=probes_all)).probes
    hop = serialization_s(SIZE, 1e9) + 25 * US
    expected_hops = {1: 2, 2: 4, 3: 4, **{h: 6 for h in range(4, 16)}}
    assert list(probes["dst"]) == list(range(1, 16))
    for row in probes.itertuples():
        hops = expected_hops[row.dst]
        assert row.hops == hops, (policy, row.dst, row.hops)
        assert abs(row.latency_s - hops * hop) <= EXACT, (policy, row.dst, row.latency_s)


def test_fat_tree_elr_sends_everything_over_the_core():
    probes_all = {"probes": [{"src": 0, "dst": "all", "interval": "1ms"}]}
    probes = run_checked(fat_tree("elr", traffic=probes_all)).probes
    assert (probes["hops"] == 6).all()
    hop = serialization_s(SIZE, 1e9) + 25 * US
    assert np.abs(probes["latency_s"] - 6 * hop).max() <= EXACT


CORE_PORTS = ["agg0->core0", "agg0->core1", "agg1->core2", "agg1->core3"]


def test_fat_tree_rps_loads_every_core_port_of_pod_0():
    """Four hosts of pod 0 send into pod 3: sprayed, every uplink to a core queues."""
    streams = [
        {"src": s, "dst": 12 + s, "load": 0.9, "pattern": "poisson", "stop": "5ms"}
        for s in range(4)
    ]
    scenario = fat_tree("rps", traffic={"streams": streams}, trace={"queues": CORE_PORTS})
    scenario["topology"]["link"] = {"rate": "10Gbps", "delay": "1us"}
    queues = run_checked(scenario).traces["queues"]
    assert set(queues["port"]) == set(CORE_PORTS)
    for port, rows in queues.groupby("port"):
        assert rows["packets"].max() >= 2, port
        assert rows["time_s"].is_monotonic_increasing, port
        assert (rows["bytes"] == rows["packets"] * SIZE).all(), port


def test_fat_tree_port_names_follow_the_documented_numbering():
    # agg0 is the first aggregation switch of pod 0: it reaches core0 and core1 only.
    ok = fat_tree("rps", trace={"queues": CORE_PORTS})
    dcnsim.validate(ok)
    with pytest.raises(dcnsim.ScenarioError) as err:
        dcnsim.validate(fat_tree("rps", trace={"queues": ["agg0->core2"]}))
    assert str(err.value).startswith("trace.queues"), str(err.value)
