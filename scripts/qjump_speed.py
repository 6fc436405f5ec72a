"""QJUMP's cost: the TCP benchmark against itself with four QJUMP levels (issue 34).

The TCP benchmark (``dcnsim bench tcp``: k = 8 fat-tree, 10 Gbps, DCTCP web-search
flows at 50 % load) and the same with its load split over four classes (0-3, an
eighth of the load each) at four QJUMP levels on every NIC (f = 10000 for class 0,
the qdisc's lowest-band default, then 64, 32, 16; overflow dropped) and strict-
priority queues at the NICs and switches, run alternately in this process (same
build). Prints each run's packet-hops per second of event loop and the ratio of
the medians (target: at least 0.8).

    PYTHONPATH=python python scripts/qjump_speed.py [--repeat 5] [--stop 5ms]
"""

from __future__ import annotations

import argparse
import statistics

from dcnsim.bench import bench_scenario, measure
from dcnsim.scenario import Scenario

LEVELS = [(0, 10000), (1, 64), (2, 32), (3, 16)]


def qjump_variant(tcp: Scenario) -> Scenario:
    spec = tcp.to_dict()
    spec["name"] = "bench tcp with four QJUMP levels"
    queue = spec["network"]["queue"]
    spec["network"]["queue"] = {**queue, "kind": "priority"}
    spec["network"]["nic_queue"] = {"kind": "priority", "capacity": "1000pkt"}
    spec["network"]["stages"] = [
        {"kind": "qjump", "ports": "nics", "levels": [{"class": c, "f": f} for c, f in LEVELS]}
    ]
    (workload,) = spec["traffic"]["workloads"]
    spec["traffic"]["workloads"] = [
        {**workload, "load": workload["load"] / len(LEVELS), "class": c} for c, _ in LEVELS
    ]
    return Scenario(spec)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--stop", default="5ms", help="stop_time of both runs")
    args = parser.parse_args()
    tcp = bench_scenario("tcp", stop_time=args.stop)
    qjump = qjump_variant(tcp)
    rates: dict[str, list[float]] = {"tcp": [], "qjump": []}
    for i in range(args.repeat):
        for name, scenario in (("tcp", tcp), ("qjump", qjump)):
            m = measure(scenario)
            rates[name].append(m.hops_per_s)
            print(f"{name} run {i + 1}: {m.line()}")
    medians = {k: statistics.median(v) for k, v in rates.items()}
    print(
        f"medians: tcp {medians['tcp']:,.0f}, qjump {medians['qjump']:,.0f} packet-hops/s; "
        f"qjump / tcp = {medians['qjump'] / medians['tcp']:.3f}"
    )


if __name__ == "__main__":
    main()
