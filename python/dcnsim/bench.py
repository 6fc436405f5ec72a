"""The fixed benchmarks (``dcnsim bench``) and the scale series (issue 10).

The benchmark scenarios live in the core (``BENCH_SCENARIOS`` in
``crates/dcnsim-core/src/bench.rs``); this module runs them and reports, per run,
packet-hops and events per second of event loop, events per packet-hop, the wall
time of the event loop and of the whole ``run()`` call, and the peak resident set
size. The scale series runs B1's workload on fat-trees of growing k, each size in a
fresh process so that its peak memory is its own.
"""

from __future__ import annotations

import json
import resource
import statistics
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from multiprocessing import get_context

from dcnsim import _core
from dcnsim.formats import format_count, format_seconds
from dcnsim.memory import format_bytes
from dcnsim.results import run
from dcnsim.scenario import Scenario

#: The scale series: fat-tree sizes and the simulated time of each run (quick: less).
SCALE_KS = (4, 8, 16, 24)
SCALE_STOP = "20ms"
SCALE_QUICK_STOP = "2ms"


@dataclass(frozen=True)
class Measurement:
    """One run of a benchmark scenario."""

    events: int
    packet_hops: int
    sim_time_s: float
    loop_s: float
    whole_s: float
    peak_rss: int  # bytes, of the whole process so far

    @property
    def hops_per_s(self) -> float:
        return self.packet_hops / self.loop_s if self.loop_s > 0 else 0.0

    @property
    def events_per_s(self) -> float:
        return self.events / self.loop_s if self.loop_s > 0 else 0.0

    @property
    def events_per_hop(self) -> float:
        return self.events / self.packet_hops if self.packet_hops else 0.0

    @property
    def ns_per_hop(self) -> float:
        return 1e9 * self.loop_s / self.packet_hops if self.packet_hops else 0.0

    def line(self) -> str:
        return (
            f"{self.events:,} events, {self.packet_hops:,} packet-hops, simulated "
            f"{format_seconds(self.sim_time_s)} in {self.loop_s:.3f} s of event loop, "
            f"{self.whole_s:.3f} s whole: {format_count(self.hops_per_s)} packet-hops/s (loop), "
            f"{format_count(self.packet_hops / self.whole_s)} (whole), "
            f"{format_count(self.events_per_s)} events/s, "
            f"{self.events_per_hop:.3f} events per packet-hop, "
            f"peak RSS {format_bytes(self.peak_rss)}"
        )


def bench_scenario(name: str, quick: bool = False, stop_time: str | None = None) -> Scenario:
    """The benchmark ``name``, at its quick run's stop time or at ``stop_time``."""
    scenario = Scenario(json.loads(_core.bench_scenario(name, quick)))
    if stop_time is not None:
        scenario = scenario.set("stop_time", stop_time)
    scenario.validate()
    return scenario


def peak_rss() -> int:
    """The peak resident set size of this process, in bytes (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def measure(scenario: Scenario, progress: bool = False) -> Measurement:
    """Run ``scenario`` once; "whole" is the whole ``run()`` call (validation,
    construction, the event loop and the result tables)."""
    started = time.perf_counter()
    s = run(scenario, progress=progress).summary
    whole = time.perf_counter() - started
    return Measurement(
        events=int(s["events"]),
        packet_hops=int(s["packet_hops"]),
        sim_time_s=float(s["sim_time_s"]),
        loop_s=float(s["wall_s"]),
        whole_s=whole,
        peak_rss=peak_rss(),
    )


def alternate(
    scenarios: dict[str, Scenario],
    rounds: int,
    on_run: Callable[[int, str, Measurement], None] | None = None,
    progress: bool = False,
) -> dict[str, list[Measurement]]:
    """Run every scenario once per round for ``rounds`` rounds, in the given order in
    the first round and every other one, in reverse in the rest: a machine whose speed
    drifts slows the runs of a round alike, and none is always first. ``on_run`` is
    told each run as it ends (its round, from 0, its name and its measurement)."""
    runs: dict[str, list[Measurement]] = {name: [] for name in scenarios}
    order = list(scenarios)
    for i in range(rounds):
        for name in order if i % 2 == 0 else order[::-1]:
            m = measure(scenarios[name], progress)
            runs[name].append(m)
            if on_run is not None:
                on_run(i, name, m)
    return runs


def print_run(i: int, name: str, m: Measurement) -> None:
    """Print one run of :func:`alternate` as it ends (an ``on_run``): its round,
    counted from 1, its name and its figures."""
    print(f"round {i + 1}, {name}: {m.line()}", flush=True)


@dataclass(frozen=True)
class Versus:
    """Run ``a``'s packet-hops per second of event loop against run ``b``'s, over
    rounds in which both ran (:func:`alternate`).

    ``best`` is the ratio of each run's fastest round. On a shared machine
    interference only ever slows a run, so a run's fastest round is its nearest to an
    undisturbed one; over many short rounds this ratio is the steadiest of the three
    (docs/performance.md, "Measuring a ratio on a shared machine"). ``rounds`` are
    the rounds' own ratios, ``medians`` the ratio of the medians."""

    best: float
    rounds: list[float]
    medians: float

    @classmethod
    def of(cls, a: list[Measurement], b: list[Measurement]) -> Versus:
        ra = [m.hops_per_s for m in a]
        rb = [m.hops_per_s for m in b]
        if not ra or len(ra) != len(rb) or min(rb) <= 0:
            raise ValueError("two series of the same rounds, each with packet-hops, are needed")
        return cls(
            best=max(ra) / max(rb),
            rounds=[x / y for x, y in zip(ra, rb, strict=True)],
            medians=statistics.median(ra) / statistics.median(rb),
        )

    def line(self, a: str, b: str) -> str:
        """One line: the three ratios, the rounds' as median and quartiles."""
        text = f"{a} / {b}, packet-hops/s (loop): best {self.best:.3f}"
        if len(self.rounds) > 1:
            q1, med, q3 = statistics.quantiles(self.rounds, n=4, method="inclusive")
            text += (
                f", rounds' ratios median {med:.3f} (quartiles {q1:.3f}-{q3:.3f}), "
                f"medians {self.medians:.3f}, over {len(self.rounds)} rounds"
            )
        return text


def run_benchmarks(
    names: list[str], quick: bool, stop_time: str | None, repeat: int, progress: bool
) -> None:
    """Run the named benchmarks ``repeat`` times, alternating so that a noisy machine
    affects them alike, and print every run and the best and medians."""
    scenarios = {name: bench_scenario(name, quick, stop_time) for name in names}

    def on_run(i: int, name: str, m: Measurement) -> None:
        if i == 0:
            scenario = scenarios[name]
            print(
                f"dcnsim {_core.__version__}, {scenario.get('name') or name} "
                f"(stop_time {scenario.get('stop_time')})"
            )
        print(f"{name} run {i + 1}/{repeat}: {m.line()}")

    runs = alternate(scenarios, repeat, on_run, progress)
    for name, ms in runs.items():
        best = max(m.hops_per_s for m in ms)
        line = f"{name}: packet-hops per wall second: {best:,.0f} ({format_count(best)}) loop"
        line += f", {format_count(max(m.packet_hops / m.whole_s for m in ms))} whole"
        if len(ms) > 1:
            line += (
                f", best of {len(ms)}; medians "
                f"{format_count(statistics.median(m.hops_per_s for m in ms))} loop, "
                f"{format_count(statistics.median(m.packet_hops / m.whole_s for m in ms))} whole"
            )
        print(line)
    if "pfabric" in runs and "tcp" in runs:
        ratio = statistics.median(m.hops_per_s for m in runs["pfabric"]) / statistics.median(
            m.hops_per_s for m in runs["tcp"]
        )
        print(f"pfabric / tcp (medians): {ratio:.2f}")


def scale_point(k: int, stop_time: str) -> Measurement:
    """One run of B1's workload on a k-ary fat-tree (in the calling process)."""
    return measure(bench_scenario("b1", stop_time=stop_time).set("topology.k", k))


def run_scale(quick: bool, stop_time: str | None, repeat: int) -> None:
    """The scale series: ``repeat`` rounds, each running every size once in a fresh
    process (so a size's peak RSS is its own, and a drifting machine slows the sizes
    of a round alike); prints ns per packet-hop per size (median over the rounds),
    the process's peak RSS, and the ratio of k = 24 to k = 8 (with its value in
    each round when there are several)."""
    stop = stop_time or (SCALE_QUICK_STOP if quick else SCALE_STOP)
    bench_scenario("b1", stop_time=stop)  # a bad stop time fails here, in one line
    print(
        f"dcnsim {_core.__version__}, scale series: B1's workload on k = "
        f"{', '.join(map(str, SCALE_KS))} fat-trees (stop_time {stop}), a process per "
        f"size{f', {repeat} rounds alternating the sizes' if repeat > 1 else ''}"
    )
    runs: dict[int, list[Measurement]] = {k: [] for k in SCALE_KS}
    for i in range(repeat):
        for k in SCALE_KS:
            with ProcessPoolExecutor(1, mp_context=get_context("spawn")) as pool:
                m = pool.submit(scale_point, k, stop).result()
            runs[k].append(m)
            if repeat > 1:
                print(f"round {i + 1}/{repeat}, k={k}: {m.ns_per_hop:.1f} ns per packet-hop")
    ns: dict[int, float] = {}
    for k, ms in runs.items():
        ns[k] = statistics.median(m.ns_per_hop for m in ms)
        print(
            f"scale k={k}: {k**3 // 4:,} hosts, {ms[-1].packet_hops:,} packet-hops, "
            f"{ns[k]:.1f} ns per packet-hop, "
            f"{statistics.median(m.events_per_hop for m in ms):.3f} events per packet-hop, "
            f"peak RSS {format_bytes(max(m.peak_rss for m in ms))}"
        )
    big = SCALE_KS[-1]
    if ns[8] > 0:  # a stop time too short for any packet-hop gives no ratio
        line = f"scale: ns per packet-hop at k={big} / k=8: {ns[big] / ns[8]:.2f}"
        if repeat > 1:
            rounds = [
                f"{b.ns_per_hop / a.ns_per_hop:.2f}" if a.ns_per_hop > 0 else "n/a"
                for a, b in zip(runs[8], runs[big], strict=True)
            ]
            line += f" (medians; by round {', '.join(rounds)})"
        print(line)
