"""QJUMP's cost: the TCP benchmark against itself with four QJUMP levels (issue 34).

The TCP benchmark (``dcnsim bench tcp``: k = 8 fat-tree, 10 Gbps, DCTCP web-search
flows at 50 % load) and the same with its load split over four classes (0-3, an
eighth of the load each) at four QJUMP levels on every NIC (f = 10000 for class 0,
the qdisc's lowest-band default, then 256 = 2n, 128 and 64: line rate, a half and
a quarter of it; overflow dropped) and strict-priority queues at the NICs and
switches, run alternately in this process (same build, ``dcnsim.bench.alternate``),
with the four-class run without QJUMP between them (the cost of the strict-priority
ports alone). The levels' rates are above each class's average load, not its
bursts: at 20 ms the QJUMP run drops 46,053 packets at the NICs and carries 4.66 M
packet-hops against the benchmark's 6.07 M, and each class's DCTCP marking works on
its own queue, so ports queue deeper than the benchmark's. Prints each run's
packet-hops per second of event loop and the ratios (``dcnsim.bench.Versus``: of the
fastest rounds, the rounds' own, of the medians; target: qjump / tcp at least 0.8)::

    python scripts/qjump_speed.py [--repeat 30] [--stop 20ms]
"""

from __future__ import annotations

import argparse

from dcnsim.bench import Versus, alternate, bench_scenario, print_run
from dcnsim.scenario import Scenario

LEVELS = [(0, 10000), (1, 256), (2, 128), (3, 64)]


def classes_variant(tcp: Scenario, qjump: bool) -> Scenario:
    """The TCP benchmark's load over four classes on strict-priority ports, with the
    QJUMP stage on every NIC or (to tell the stage's cost from the discipline's)
    without it."""
    spec = tcp.to_dict()
    spec["name"] = "bench tcp, four classes" + (" at four QJUMP levels" if qjump else "")
    queue = spec["network"]["queue"]
    spec["network"]["queue"] = {**queue, "kind": "priority"}
    spec["network"]["nic_queue"] = {"kind": "priority", "capacity": "1000pkt"}
    if qjump:
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
    parser.add_argument("--repeat", type=int, default=30, help="alternating rounds (default 30)")
    parser.add_argument("--stop", default="20ms", help="stop_time of every run (default 20ms)")
    args = parser.parse_args()
    tcp = bench_scenario("tcp", stop_time=args.stop)

    runs = alternate(
        {
            "tcp": tcp,
            "priority": classes_variant(tcp, qjump=False),
            "qjump": classes_variant(tcp, qjump=True),
        },
        args.repeat,
        print_run,
    )
    print(Versus.of(runs["qjump"], runs["tcp"]).line("qjump", "tcp"))
    print(Versus.of(runs["priority"], runs["tcp"]).line("priority", "tcp"))
    print(Versus.of(runs["qjump"], runs["priority"]).line("qjump", "priority"))


if __name__ == "__main__":
    main()
