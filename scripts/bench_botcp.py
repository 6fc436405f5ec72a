"""BOTCP's speed against the DCTCP benchmark, in the same process and build.

Runs, alternately, the BOTCP study's fabric at 50 % web-search load with BOTCP
(``dcnsim.studies.botcp.load_scenario``: the 6 x 6 leaf-spine of 192 hosts, the
``max_occupancy`` stamp on every switch port, the 4-byte option on every packet),
``dcnsim bench tcp`` (DCTCP on the k = 8 fat-tree) and, to tell the fabric's cost from
the protocol's, DCTCP on the BOTCP fabric; prints each run's packet-hops per second of
event loop and the ratios of the medians (issue 33's target: BOTCP at least 0.8 of the
benchmark)::

    python scripts/bench_botcp.py --repeat 5 --stop-time 20ms
"""

from __future__ import annotations

import argparse
import statistics

from dcnsim.bench import bench_scenario, measure
from dcnsim.scenario import Scenario
from dcnsim.studies.botcp import load_scenario


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="alternating rounds (default 5)")
    parser.add_argument(
        "--stop-time", default="20ms", help="simulated time of both runs (default 20ms)"
    )
    args = parser.parse_args()

    def fabric(scheme: str) -> Scenario:
        scenario = load_scenario(scheme, 0.5).set("stop_time", args.stop_time)
        return scenario.set("traffic.workloads[0].stop", args.stop_time)

    runs: dict[str, tuple[Scenario, list[float]]] = {
        "botcp": (fabric("botcp"), []),
        "dctcp bench": (bench_scenario("tcp", stop_time=args.stop_time), []),
        "dctcp on the botcp fabric": (fabric("dctcp"), []),
    }
    for i in range(args.repeat):
        for name, (scenario, ms) in runs.items():
            m = measure(scenario)
            ms.append(m.hops_per_s)
            print(f"round {i + 1}, {name}: {m.line()}")
    medians = {name: statistics.median(ms) for name, (_, ms) in runs.items()}
    for other in ("dctcp bench", "dctcp on the botcp fabric"):
        rounds = [b / d for b, d in zip(runs["botcp"][1], runs[other][1], strict=True)]
        print(
            f"botcp / {other}, packet-hops/s (loop), medians: "
            f"{medians['botcp']:,.0f} / {medians[other]:,.0f} = "
            f"{medians['botcp'] / medians[other]:.3f} "
            f"(by round: {', '.join(f'{r:.2f}' for r in rounds)})"
        )


if __name__ == "__main__":
    main()
