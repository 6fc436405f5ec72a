"""BOTCP's speed against the DCTCP benchmark, in the same process and build.

Runs, alternately (``dcnsim.bench.alternate``), the BOTCP study's fabric at 50 %
web-search load with BOTCP (``dcnsim.studies.botcp.load_scenario``: the 6 x 6 leaf-spine
of 192 hosts, the ``max_occupancy`` stamp on every switch port, the 4-byte option on
every packet), ``dcnsim bench tcp`` (DCTCP on the k = 8 fat-tree) and, to tell the
fabric's cost from the protocol's, DCTCP on the BOTCP fabric; prints each run's
packet-hops per second of event loop, then BOTCP against the other two
(``dcnsim.bench.Versus``: the ratio of the fastest rounds, the rounds' own ratios, the
ratio of the medians; issue 33's target: BOTCP at least 0.8 of the benchmark)::

    python scripts/bench_botcp.py --repeat 30 --stop-time 20ms
"""

from __future__ import annotations

import argparse

from dcnsim.bench import Versus, alternate, bench_scenario, print_run
from dcnsim.scenario import Scenario
from dcnsim.studies.botcp import load_scenario


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=30, help="alternating rounds (default 30)")
    parser.add_argument(
        "--stop-time", default="20ms", help="simulated time of every run (default 20ms)"
    )
    args = parser.parse_args()

    def fabric(scheme: str) -> Scenario:
        scenario = load_scenario(scheme, 0.5).set("stop_time", args.stop_time)
        return scenario.set("traffic.workloads[0].stop", args.stop_time)

    runs = alternate(
        {
            "botcp": fabric("botcp"),
            "dctcp bench": bench_scenario("tcp", stop_time=args.stop_time),
            "dctcp on the botcp fabric": fabric("dctcp"),
        },
        args.repeat,
        print_run,
    )
    for other in ("dctcp bench", "dctcp on the botcp fabric"):
        print(Versus.of(runs["botcp"], runs[other]).line("botcp", other))


if __name__ == "__main__":
    main()
