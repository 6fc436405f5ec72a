"""Packet Slicing's speed against the TCP benchmark, in the same process and build.

Runs, alternately (``dcnsim.bench.alternate``), ``dcnsim bench tcp`` (DCTCP on the k = 8
fat-tree) and the Packet Slicing study's 300-worker incast with the ``packet_slicing``
agent (``dcnsim.studies.packet_slicing.scenarios.incast_scenario(300, "dctcp", True)``:
one round of 64 KB per worker; the switch slices to ⌊38 250 / 300⌋ = 127 B packets, 87 B
of payload); prints each run's packet-hops per second of event loop and the ratios
(``dcnsim.bench.Versus``: of the fastest rounds, the rounds' own, of the medians; issue
32's target: at least 0.70)::

    python scripts/slicing_speed.py --repeat 7
"""

from __future__ import annotations

import argparse

from dcnsim.bench import Versus, alternate, bench_scenario, print_run
from dcnsim.studies.packet_slicing.scenarios import incast_scenario


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7, help="alternating rounds (default 7)")
    parser.add_argument("--workers", type=int, default=300, help="incast workers (default 300)")
    parser.add_argument(
        "--interval", default=None, help="the agent's interval (default: the agent's, 0)"
    )
    parser.add_argument(
        "--stop-time", default="20ms", help="simulated time of the benchmark (default 20ms)"
    )
    args = parser.parse_args()
    sliced = incast_scenario(args.workers, "dctcp", True)
    if args.interval is not None:
        sliced = sliced.set("agents[0].interval", args.interval)
    name = f"{args.workers}-worker incast, sliced"

    runs = alternate(
        {"tcp bench": bench_scenario("tcp", stop_time=args.stop_time), name: sliced},
        args.repeat,
        print_run,
    )
    print(Versus.of(runs[name], runs["tcp bench"]).line(name, "tcp bench"))


if __name__ == "__main__":
    main()
