"""dcnsim estimate: the drawn flows are the run's, what cannot be decomposed is refused
by name, the estimate meets closed forms where it must, resumes, and gives the same
tables on a local pool and on Dask (docs/estimate.md)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import dcnsim
from dcnsim import _core
from dcnsim.estimation import CONVERGED, DEFAULT_PASSES, clustering, combine, decompose

K4 = {
    "name": "k4 websearch",
    "seed": 2,
    "stop_time": "20ms",
    "topology": {"kind": "fat_tree", "k": 4, "link": {"rate": "10Gbps", "delay": "1us"}},
    "network": {"queue": {"capacity": "1000pkt", "aqm": {"kind": "threshold", "k": "65pkt"}}},
    "transport": {"protocol": "dctcp", "min_rto": "1ms"},
    "traffic": {"workloads": [{"src": "all", "dst": "random", "cdf": "websearch", "load": 0.3}]},
}


def _sorted_rows(columns, names):
    return sorted(zip(*(np.asarray(columns[n]).tolist() for n in names), strict=True))


def test_drawn_flows_are_the_runs_flows():
    """Sources, destinations, sizes, start times and ideal FCTs of the drawn flows are
    those of a packet-level run with the same seed (its flows table)."""
    scenario = dcnsim.Scenario(K4)
    drawn = _core.drawn(scenario.to_json())["flows"]
    ran = dcnsim.run(scenario).columns("flows")
    names = ["src", "dst", "size_bytes", "start_s", "ideal_fct_s"]
    assert len(drawn["src"]) > 50
    assert _sorted_rows(drawn, names) == _sorted_rows(ran, names)


@pytest.mark.parametrize(
    ("change", "named"),
    [
        (
            {"agents": [{"kind": "pause", "switches": "all", "xoff": "100KB", "xon": "50KB"}]},
            "agents:",
        ),
        ({"forwarding": {"policy": "rps"}}, "forwarding.policy: 'rps'"),
        ({"transport": {"protocol": "botcp"}}, "transport.protocol: 'botcp': in-band multi-hop"),
        ({"trace": {"queues": ["edge0_0->host0"]}}, "trace:"),
    ],
)
def test_refuses_what_it_cannot_decompose_by_name(tmp_path, change, named):
    with pytest.raises(dcnsim.ScenarioError, match="^" + named.replace("(", r"\(")):
        dcnsim.estimate(K4 | change, tmp_path / "out")


def test_refuses_closed_loop_applications_by_key(tmp_path):
    incast = K4 | {"traffic": {"incast": [{"aggregator": 0, "workers": "all", "sru": "64KB"}]}}
    with pytest.raises(dcnsim.ScenarioError, match=r"^traffic\.incast: a closed-loop"):
        dcnsim.estimate(incast, tmp_path / "out")


def test_a_lone_flow_is_estimated_at_its_fct_alone(tmp_path):
    """One flow on an empty fabric: every link-level run holds it alone, each link's
    delay is zero, and the estimate is its FCT alone, which a run measures."""
    one = K4 | {"traffic": {"flows": [{"src": 0, "dst": 15, "size": "1MB", "start": "1ms"}]}}
    est = dcnsim.estimate(one, tmp_path / "out", jobs=1)
    ran = dcnsim.run(one).flows
    assert est.summary["links"] == 6  # host, edge, aggregation, core, aggregation, edge
    assert est.flows["fct_s"][0] == pytest.approx(ran["fct_s"][0], rel=1e-9)
    assert est.flows["ideal_fct_s"][0] == pytest.approx(ran["ideal_fct_s"][0], rel=1e-12)


def test_delays_are_drawn_from_the_bucket_of_the_flow_size():
    """Parsimon's bucketing: at least B flows and a factor X of sizes per bucket; a
    bucket's range runs to its largest size, the next one's from one byte more."""
    sizes = np.repeat([1_000.0, 100_000.0], combine.B)
    delays = np.repeat([1.0, 5.0], combine.B)
    d = combine.Delays(sizes, delays)
    assert len(d.starts) == 3
    u = np.linspace(0, 0.999, 50)
    assert (d.sample(np.full(50, 1_000.0), u) == 1.0).all()
    assert (d.sample(np.full(50, 1_001.0), u) == 5.0).all()
    assert (d.sample(np.full(50, 1e9), u) == 5.0).all()


def test_a_bucket_spans_at_most_x_max_of_sizes():
    """dcnsim's cap on Parsimon's rule: where a run has too few flows for B per bucket,
    a bucket still closes before a size more than X_MAX times its smallest, so a large
    flow never takes a one-packet flow's per-packet delay. Hand-worked: 30 flows of
    1,500 B (delay 1 us a packet), 30 of 6,000 B (4 times: the same bucket) and 20 of
    1.5 MB (1,000 times: a bucket of their own, 0.1 us a packet)."""
    assert combine.X_MAX == 4
    sizes = np.repeat([1_500.0, 6_000.0, 1.5e6], [30, 30, 20])
    delays = np.repeat([1e-6, 3e-6, 1e-7], [30, 30, 20])
    d = combine.Delays(sizes, delays)
    assert d.starts.tolist() == [0, 60, 80]
    u = np.linspace(0, 0.999, 50)
    assert (d.sample(np.full(50, 1.5e6), u) == 1e-7).all()
    assert set(d.sample(np.full(50, 1_500.0), u)) == {1e-6, 3e-6}
    assert d.mean(np.array([1_500.0, 1.5e6])) == pytest.approx([2e-6, 1e-7])
    # a size between two buckets' flows takes the upper one (Parsimon's ranges)
    assert (d.sample(np.full(50, 10_000.0), u) == 1e-7).all()


def test_the_bottleneck_is_chosen_on_expected_delays_not_draws():
    """Two drawn hops per flow (no link simulated itself). Link 0's bucket: 99 flows
    delayed 1 us a packet and one 100 us (mean 1.99 us); link 1's: all 2 us. Every
    flow's expected delay is larger at link 1, so that is every flow's bottleneck,
    though some flows draw 100 us a packet at link 0 (the largest of their draws)."""
    n = 400
    flows = {"first_hop": np.arange(n) * 2, "size_bytes": np.full(n, 1_460 * 10)}
    d = decompose.Drawn(flows, np.zeros(2 * n), np.repeat(np.arange(n), 2), np.zeros(2 * n), {}, 1)
    link0 = combine.Delays(np.full(100, 14_600.0), np.r_[np.full(99, 1e-6), 1e-4])
    link1 = combine.Delays(np.full(100, 14_600.0), np.full(100, 2e-6))
    hop_link = np.tile([0, 1], n)
    own = np.full(2 * n, np.nan)
    draw, expected = combine.hop_delays(d, hop_link, [link0, link1], 1_460, 1, own)
    assert expected[0::2] == pytest.approx(np.full(n, 1.99e-5))
    assert expected[1::2] == pytest.approx(np.full(n, 2e-5))
    assert (draw[0::2] == 1e-3).any()  # the tail that a choice on draws would select
    assert (combine.bottlenecks(d, expected) == np.arange(n) * 2 + 1).all()
    assert (combine.bottlenecks(d, draw) == np.arange(n) * 2).any()
    # another pass draws from another stream; a flow's own delay is taken as it is
    assert not np.array_equal(
        draw, combine.hop_delays(d, hop_link, [link0, link1], 1_460, 1, own, 2)[0]
    )
    own[0] = 5.0
    assert combine.hop_delays(d, hop_link, [link0, link1], 1_460, 1, own)[1][0] == 5.0


def test_the_pacing_iteration_by_hand():
    """The damped step x <- (x + f(x)) / 2, the rates it paces at, and the stopping
    rule's measure (docs/estimate.md, "Iterating the pacing")."""
    assert combine.damped(np.array([2.0, 4.0]), np.array([4.0, 0.0])).tolist() == [3.0, 2.0]
    # 1 MB with 1 ms alone and 1 ms of delay: 8 Mbit in 2 ms
    rates = combine.pacing_rates(
        np.full(4, 1e6), np.full(4, 1e-3), np.array([1e-3, 0.0, np.inf, np.nan])
    )
    assert rates[0] == pytest.approx(4e9)
    assert np.isnan(rates[1:]).all()  # not delayed, unfinished, unknown: not paced
    # |old - new| / (alone + new): 2 / 4 and 2 / 2, median 0.75; unpaced flows left out
    change = combine.rate_change(np.ones(3), np.array([1.0, 3.0, 0.0]), np.array([3.0, 1.0, 5.0]))
    assert change == pytest.approx(0.75)
    assert combine.rate_change(np.ones(1), np.zeros(1), np.zeros(1)) == 0.0


@pytest.mark.parametrize("passes", [1, 7, True, 2.5, "3"])
def test_bad_passes_is_one_line(tmp_path, passes):
    with pytest.raises(dcnsim.ScenarioError, match=r"^passes: expected a whole number in \[2, 6\]"):
        dcnsim.estimate(K4, tmp_path / "out", passes=passes)


def test_cli_bad_passes_is_one_line_and_writes_nothing(tmp_path):
    scenario = tmp_path / "k4.toml"
    import tomli_w

    scenario.write_text(tomli_w.dumps(K4))
    command = [sys.executable, "-m", "dcnsim", "estimate", str(scenario), "--passes", "0"]
    proc = subprocess.run(
        [*command, "--out", str(tmp_path / "est")], capture_output=True, text=True
    )
    assert proc.returncode == 2
    assert proc.stderr == "error: passes: expected a whole number in [2, 6], got 0\n"
    assert not (tmp_path / "est").exists()


def test_estimate_resumes_and_is_the_same_on_dask(tmp_path):
    """A second call simulates no link again; the estimate on a Dask LocalCluster is
    the local pool's, flow for flow."""
    pytest.importorskip("distributed")
    first = dcnsim.estimate(K4, tmp_path / "pool", jobs=2)
    made = first.summary["link_runs"] + first.summary["paced_runs"] + first.summary["alone_runs"]
    assert first.summary["paced_runs"] > 0
    # at most the default 3 passes, a third only where the pacing had not converged:
    # one rate change (the second pass's), the one the stopping rule reads
    assert 2 <= first.summary["passes"] <= DEFAULT_PASSES
    assert len(first.summary["rate_change"]) == 1
    assert (first.summary["passes"] == 3) == (first.summary["rate_change"][0] >= CONVERGED)
    assert first.summary["link_runs_now"] == made
    again = dcnsim.estimate(K4, tmp_path / "pool", jobs=2)
    assert again.summary["link_runs_now"] == 0
    dask = dcnsim.estimate(K4, tmp_path / "dask", jobs=2, dask="local")
    for other in (again, dask):
        assert np.array_equal(other.flows["fct_s"], first.flows["fct_s"], equal_nan=True)
    assert first.buckets.equals(dask.buckets)


def test_cli_prints_an_estimate_and_query_reads_it(tmp_path):
    scenario = tmp_path / "k4.toml"
    import tomli_w

    scenario.write_text(tomli_w.dumps(K4))
    out = tmp_path / "est"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "dcnsim",
            "estimate",
            str(scenario),
            "--out",
            str(out),
            "--jobs",
            "1",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "ESTIMATE by link-level decomposition" in proc.stdout.splitlines()[0]
    assert "est_p99" in proc.stdout
    table = dcnsim.query(out, "SELECT count(*) AS n FROM flows WHERE role = 'estimate'")
    drawn = _core.drawn(dcnsim.Scenario(K4).to_json())["flows"]
    assert int(table["n"][0]) == len(drawn["src"])
    summary = dcnsim.query(out, "SELECT estimate FROM summary WHERE role = 'estimate'")
    assert bool(summary["estimate"][0])


def test_bad_tolerance_is_one_line(tmp_path):
    with pytest.raises(dcnsim.ScenarioError, match=r"^tolerance: expected a number"):
        dcnsim.estimate(K4, tmp_path / "out", tolerance=-1)


def test_link_scenario_keeps_the_paths_latency():
    """A link-level scenario's unloaded path has the real path's latency: the access
    link stands for the hops before the link, the destination link for those after."""
    scenario = dcnsim.Scenario(K4 | {"network": {"switch_latency": "500ns"}})
    d = decompose.draw(scenario)
    lf = decompose.link_flows(d)
    core_up = next(
        i
        for i, p in enumerate(lf.ports)
        if d.ports["node_name"][p].startswith("agg") and d.ports["peer_name"][p].startswith("core")
    )
    link, _ = decompose.link_scenario(
        scenario.to_dict(), d, int(lf.ports[core_up]), lf.hops_of(core_up), 1500
    )
    json.dumps(link)
    dcnsim.validate(link)
    delays = {(lk["a"], lk["b"]): lk["delay"] for lk in link["topology"]["links"]}
    # host -> edge -> agg: 2 links of 1 us, 2 switch latencies (edge, agg), one
    # store-and-forward at the edge (1500 B at 10 Gbps = 1.2 us); the link-level
    # network adds A's switch latency itself.
    access = next(v for (a, b), v in delays.items() if b == "A")
    assert access == f"{round((2e-6 + 0.5e-6 + 1.2e-6) * 1e12)}ps"


def test_paced_flows_arrive_over_their_own_access_link():
    """A paced pass: a flow with a rate arrives from a host of its own over an
    access link of that rate (at most its NIC's) and its source's delay; the others
    as in the first pass; a NIC paces nothing."""
    scenario = dcnsim.Scenario(K4)
    d = decompose.draw(scenario)
    lf = decompose.link_flows(d)
    up = next(
        i
        for i, p in enumerate(lf.ports)
        if d.ports["node_name"][p].startswith("edge")
        and d.ports["peer_name"][p].startswith("agg")
        and len(lf.hops_of(i)) > 3
    )
    hops = lf.hops_of(up)
    pace = np.full(len(hops), np.nan)
    pace[[0, 2]] = [1e9, 1e12]
    plain, chains = decompose.link_scenario(K4, d, int(lf.ports[up]), hops, 1500)
    paced, paced_chains = decompose.link_scenario(K4, d, int(lf.ports[up]), hops, 1500, pace)
    assert paced_chains == chains  # each flow's FCT alone is its unpaced path's
    links = {lk["a"]: lk for lk in paced["topology"]["links"]}
    src = d.flows["src"][d.flow[hops]]
    for j, rate in ((0, "1000000000bps"), (2, "10000000000bps")):  # at most the NIC's
        assert links[f"p{j}"]["rate"] == rate
        assert links[f"p{j}"]["delay"] == links[f"s{src[j]}"]["delay"]
    names = [n["name"] for n in paced["topology"]["nodes"]]
    rows = paced["traffic"]["flows"]
    assert [names[rows[j]["src"]] for j in range(len(rows))][:3] == ["p0", f"s{src[1]}", "p2"]
    for key in ("size", "start"):
        assert [r[key] for r in rows] == [r[key] for r in plain["traffic"]["flows"]]
    nic = next(i for i, p in enumerate(lf.ports) if d.ports["node_is_host"][p])
    nic_hops = lf.hops_of(nic)
    at_nic = decompose.link_scenario(
        K4, d, int(lf.ports[nic]), nic_hops, 1500, np.full(len(nic_hops), 1e9)
    )[0]
    assert at_nic == decompose.link_scenario(K4, d, int(lf.ports[nic]), nic_hops, 1500)[0]


def test_a_flows_bottleneck_is_its_largest_delay():
    """The largest delay of each flow's path, an unknown or unfinished one first, the
    first of ties."""
    hops = np.array([3, 2, 3])
    first_hop = np.concatenate([[0], np.cumsum(hops)[:-1]])
    d = decompose.Drawn(
        {"first_hop": first_hop}, np.zeros(8), np.repeat(np.arange(3), hops), np.zeros(8), {}, 1.0
    )
    delay = np.array([1.0, 5.0, 5.0, 0.0, np.inf, 2.0, np.nan, 7.0])
    assert combine.bottlenecks(d, delay).tolist() == [1, 4, 6]


@pytest.mark.skipif(
    not os.environ.get("DCNSIM_SLURM_TESTS"),
    reason="no Slurm cluster: run `.ci/slurm up` and set DCNSIM_SLURM_TESTS=1 (.ci/run does)",
)
def test_estimate_on_slurm_is_the_local_pools(tmp_path):
    """The link-level runs on the one-node Slurm cluster (tests/test_slurm.py's) give
    the local pool's estimate, flow for flow."""
    pytest.importorskip("dask_jobqueue")
    table = {"cores": 1, "memory": "1GB", "walltime": "00:05:00", "workers": 2}
    table["log_directory"] = str(tmp_path / "logs")
    local = dcnsim.estimate(K4, tmp_path / "pool", jobs=2)
    slurm = dcnsim.estimate(K4, tmp_path / "slurm", dask="slurm", slurm=table)
    assert slurm.summary["on"] == "slurm"
    assert np.array_equal(slurm.flows["fct_s"], local.flows["fct_s"], equal_nan=True)
    assert slurm.buckets.equals(local.buckets)


def _one_bottleneck(sources: int, seed: int) -> dict:
    """``sources`` hosts, one flow each, into switch A, over the one link A -> B (10
    Gbps), to one host d behind B on a 100 Gbps link."""
    rng = np.random.default_rng(seed)
    nodes = [{"name": f"s{i}", "kind": "host"} for i in range(sources)]
    nodes += [{"name": "d", "kind": "host"}, {"name": "A", "kind": "switch"}]
    nodes += [{"name": "B", "kind": "switch"}]
    links = [{"a": f"s{i}", "b": "A"} for i in range(sources)]
    links += [{"a": "A", "b": "B"}, {"a": "B", "b": "d", "rate": "100Gbps"}]
    sizes = np.round(np.exp(rng.uniform(np.log(2e3), np.log(3e6), sources)))
    starts = np.sort(rng.uniform(0, 3e-3, sources))
    return (
        K4
        | {
            "name": "one bottleneck",
            "stop_time": "1s",
            "topology": {"kind": "edges", "link": {"rate": "10Gbps", "delay": "1us"}},
            "traffic": {
                "flows": [
                    {"src": i, "dst": sources, "size": f"{int(n)}B", "start": f"{t * 1e6:.3f}us"}
                    for i, (n, t) in enumerate(zip(sizes, starts, strict=True))
                ]
            },
        }
        | {"topology": {"kind": "edges", "nodes": nodes, "links": links}}
    )


def test_one_bottleneck_is_decomposed_exactly(tmp_path):
    """Consistency check where the decomposition is exact: every flow's one loaded
    link is A -> B, whose link-level network is the fabric itself (each source on its
    own NIC, one flow each), and the other links of every path add no queueing. So
    each flow's estimate is its FCT in the packet-level run, to the store-and-forward
    the faster destination link saves (Parsimon's fat link: 1 us at most here)."""
    scenario = _one_bottleneck(24, 7)
    est = dcnsim.estimate(scenario, tmp_path / "out", tolerance=0, jobs=2)
    ran = dcnsim.run(scenario).flows
    mine = est.flows.sort_values(["src", "start_s"]).reset_index(drop=True)
    truth = ran.sort_values(["src", "start_s"]).reset_index(drop=True)
    assert (mine["size_bytes"].to_numpy() == truth["size_bytes"].to_numpy()).all()
    # contention: the flows' FCTs in the packet-level run are far above their ideal
    assert truth["slowdown"].median() > 4
    error = mine["fct_s"].to_numpy() / truth["fct_s"].to_numpy() - 1
    # Some flows to the picosecond; the rest differ by the destination link's rate
    # (DCTCP's marks then fall on other packets) and by the last hop's link-level
    # run, where the sources' access links meet at B without A -> B's pacing.
    assert (np.abs(error) < 1e-9).sum() >= 5
    assert np.median(np.abs(error)) < 0.02
    assert np.abs(error).max() < 0.3
    for p in (50, 99):
        ratio = np.percentile(mine["slowdown"], p) / np.percentile(truth["slowdown"], p)
        assert ratio == pytest.approx(1, abs=0.05)


def _parking_lot(per_host: int, seed: int) -> dict:
    """Two loaded 10 Gbps links in series: 12 hosts s_i -> A -> B -> C -> d and 12
    hosts t_i -> B -> C -> d (C -> d 100 Gbps), ``per_host`` flows each."""
    n = 12
    rng = np.random.default_rng(seed)
    nodes = [{"name": f"{x}{i}", "kind": "host"} for x in "st" for i in range(n)]
    nodes += [{"name": "d", "kind": "host"}] + [{"name": x, "kind": "switch"} for x in "ABC"]
    links = [{"a": f"s{i}", "b": "A"} for i in range(n)] + [
        {"a": f"t{i}", "b": "B"} for i in range(n)
    ]
    links += [{"a": "A", "b": "B"}, {"a": "B", "b": "C"}, {"a": "C", "b": "d", "rate": "100Gbps"}]
    flows = [
        {
            "src": i,
            "dst": 2 * n,
            "size": f"{round(np.exp(rng.uniform(np.log(2e3), np.log(3e6))))}B",
            "start": f"{rng.uniform(0, 8e3):.3f}us",
        }
        for i in range(2 * n)
        for _ in range(per_host)
    ]
    topology = {"kind": "edges", "link": {"rate": "10Gbps", "delay": "1us"}}
    return K4 | {
        "name": "parking lot",
        "stop_time": "1s",
        "topology": topology | {"nodes": nodes, "links": links},
        "traffic": {"flows": flows},
    }


@pytest.mark.slow
def test_parking_lot_per_flow_within_ten_percent(tmp_path):
    """Heavy multi-hop congestion where the paced passes should hold (docs/estimate.md):
    the s flows queue at A -> B and again at B -> C; each flow's estimate (every link
    simulated itself) is within 10 % of its packet-level FCT at the median."""
    scenario = _parking_lot(4, 3)
    est = dcnsim.estimate(scenario, tmp_path / "out", tolerance=0, jobs=2)
    ran = dcnsim.run(scenario).flows
    mine = est.flows.sort_values(["src", "start_s"]).reset_index(drop=True)
    truth = ran.sort_values(["src", "start_s"]).reset_index(drop=True)
    error = np.abs(mine["fct_s"].to_numpy() / truth["fct_s"].to_numpy() - 1)
    two_hops = truth["src"].to_numpy() < 12
    assert truth["slowdown"][two_hops].median() > 5  # congested
    assert np.median(error[two_hops]) <= 0.10
    assert np.median(error[~two_hops]) <= 0.10


def _b1(stop: str) -> dict:
    """B1 (docs/performance.md): k = 8 fat-tree, 10 Gbps, DCTCP (K = 65 packets, 1000
    packet queues), web-search flows at 50 % load, ECMP."""
    workload = {"src": "all", "dst": "random", "cdf": "websearch", "load": 0.5}
    return K4 | {
        "name": "B1",
        "seed": 1,
        "stop_time": stop,
        "topology": {"kind": "fat_tree", "k": 8, "link": {"rate": "10Gbps", "delay": "1us"}},
        "forwarding": {"policy": "ecmp"},
        "traffic": {"workloads": [workload]},
    }


@pytest.mark.slow
@pytest.mark.xfail(
    strict=True,
    reason="issue 47's 10 % is not met on B1 (1 s, tolerance 0.1, 3 passes; measured 29 Nov "
    "2026, second round, docs/estimate.md): slowdown error p50 -25/+14/+19/+3 %, p99 "
    "+25/+1/-29/-22 % (<10KB, 10-100KB, 100KB-1MB, >1MB): a few-packet flow is charged "
    "one link's wait where it waits at every queue (small flows' medians), three passes "
    "are not the pacing's fixed point (rates still change by 29 %), and the estimate's "
    "tail is short for the larger flows (p99s low)",
)
def test_b1_within_ten_percent_of_the_packet_level(tmp_path):
    est = dcnsim.estimate(_b1("1s"), tmp_path / "out", tolerance=0.1, jobs=2, check=True)
    errors = est.buckets[["error_p50", "error_p99"]].to_numpy()
    assert np.isfinite(errors).all()
    assert (np.abs(errors) <= 0.10).all(), est.buckets.to_string()


def test_link_features_are_each_links_own():
    """The clustering's features, computed for all links at once, are each link's
    load, size quantiles (``np.quantile``'s) and number of source hosts."""
    d = decompose.draw(dcnsim.Scenario(K4))
    lf = decompose.link_flows(d)
    feat = clustering.features(d, lf)
    size = d.flows["size_bytes"].astype(float)
    for i in range(0, len(lf.ports), 7):
        f = d.flow[lf.hops_of(i)]
        rate = d.ports["rate_bps"][lf.ports[i]]
        assert feat.load[i] == pytest.approx(size[f].sum() * 8 / d.span_s / rate, rel=1e-12)
        quantiles = np.quantile(size[f], clustering.QUANTILES)
        np.testing.assert_allclose(feat.sizes[i], quantiles, rtol=1e-12)
        assert feat.fan_in[i] == len(np.unique(d.flows["src"][f]))


def _exhaustive_greedy(feat: clustering.Features, tolerance: float) -> np.ndarray:
    """Parsimon's greedy pass as ``greedy.rs`` writes it: each unclustered link in
    turn is a representative and is compared with every unclustered link."""
    rep = np.full(len(feat.load), -1)
    for r in range(len(rep)):
        if rep[r] >= 0:
            continue
        rest = np.flatnonzero((rep < 0) & (feat.shape == feat.shape[r]))
        close = (
            (np.abs(feat.load[rest] - feat.load[r]) <= tolerance * feat.load[r])
            & (
                np.abs(feat.sizes[rest] - feat.sizes[r]).sum(axis=1)
                <= tolerance * feat.sizes[r].sum()
            )
            & (np.abs(feat.fan_in[rest] - feat.fan_in[r]) <= tolerance * feat.fan_in[r])
        )
        rep[rest[close]] = r
    return rep


@pytest.mark.parametrize("tolerance", [0, 0.05, 0.2, 0.5, 2])
def test_clustering_is_the_exhaustive_greedy_pass(tolerance):
    """The k-d tree only narrows whom a representative is compared with: link for
    link, the clusters are those of the exhaustive pass, on a fabric's links and on
    random features with exact ties and near-ties at the tolerance's edge."""
    d = decompose.draw(dcnsim.Scenario(K4 | {"stop_time": "5ms"}))
    feat = clustering.features(d, decompose.link_flows(d))
    rng = np.random.default_rng(5)
    n = 3000
    base = np.sort(np.exp(rng.normal(9, 2, (40, 20))), axis=1)
    pick = rng.integers(0, 40, n)
    noise = np.exp(rng.normal(0, 0.15, (n, 1)) * rng.integers(0, 2, (n, 1)))
    synthetic = clustering.Features(
        shape=rng.integers(0, 3, n),
        load=np.round(rng.uniform(0.1, 0.9, n), 1),
        sizes=base[pick] * noise,
        fan_in=rng.integers(1, 6, n).astype(float),
    )
    for f in (feat, synthetic):
        expected = _exhaustive_greedy(f, tolerance)
        np.testing.assert_array_equal(clustering.cluster(f, tolerance), expected)
    # not a trivial partition: some links share a run, and not all one
    assert 1 < len(np.unique(expected)) < n
