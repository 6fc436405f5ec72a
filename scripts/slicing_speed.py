"""Packet Slicing's speed against the TCP benchmark, in the same process and build.

Runs, alternately, ``dcnsim bench tcp`` (DCTCP on the k = 8 fat-tree) and the Packet
Slicing study's 300-worker incast with the ``packet_slicing`` agent
(``dcnsim.studies.packet_slicing.scenarios.incast_scenario(300, "dctcp", True)``: one
round of 64 KB per worker; the switch slices to ⌊38 250 / 300⌋ = 127 B packets, 87 B
of payload); prints each run's packet-hops per second of event loop and the ratio of
the medians, with each round's own ratio (issue 32's target: at least 0.70)::

    python scripts/slicing_speed.py --repeat 7
"""

from __future__ import annotations

import argparse
import statistics

from dcnsim.bench import bench_scenario, measure
from dcnsim.scenario import Scenario
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
    runs: dict[str, tuple[Scenario, list[float]]] = {
        "tcp bench": (bench_scenario("tcp", stop_time=args.stop_time), []),
        f"{args.workers}-worker incast, sliced": (sliced, []),
    }
    for i in range(args.repeat):
        for name, (scenario, rates) in runs.items():
            m = measure(scenario)
            rates.append(m.hops_per_s)
            print(f"round {i + 1}, {name}: {m.line()}", flush=True)
    (_, (_, tcp_rates)), (name, (_, rates)) = runs.items()
    rounds = [s / t for s, t in zip(rates, tcp_rates, strict=True)]
    print(
        f"{name} / tcp bench, packet-hops/s (loop), medians: "
        f"{statistics.median(rates):,.0f} / {statistics.median(tcp_rates):,.0f} = "
        f"{statistics.median(rates) / statistics.median(tcp_rates):.3f} "
        f"(by round: {', '.join(f'{r:.2f}' for r in rounds)}; "
        f"median {statistics.median(rounds):.3f})"
    )


if __name__ == "__main__":
    main()
