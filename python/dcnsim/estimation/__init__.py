"""Flow-completion-time estimates for fabrics too big to simulate packet by packet: a
link-level decomposition as Parsimon's (Zhao et al., NSDI 2023), run by dcnsim's own
core (docs/estimate.md).

    est = dcnsim.estimate("examples/websearch_dctcp.toml", out="est/")
    print(est.buckets)          # slowdown p50/p99 per flow-size bucket
    est.flows                   # one row per flow: estimated fct_s, ideal_fct_s, slowdown

1. The core draws the scenario's flows (sources, destinations, sizes, start times, as a
   run with the same seed draws them) and routes each (``decompose.draw``).
2. Each directed link with traffic gets a small packet-level scenario of the flows that
   cross it (``decompose.link_scenario``); links with alike workloads are clustered,
   and only each cluster's representative is simulated (``clustering``).
3. The link-level runs go where sweeps go (a local pool, Dask, Slurm) and land in a
   sweep directory as runs of role ``link``: a killed estimate resumes from those done.
4. Parsimon's combination is the first pass; then paced passes (``_passes``): each
   flow's bottleneck is the link of its path with the largest expected delay, the
   links are simulated again with each flow arriving paced at its bottleneck rate at
   the links that are not its bottleneck, iterated as a damped fixed point, and a
   flow's estimate is its FCT alone plus its delay at its bottleneck in the last pass
   (``combine``); the estimated flows are the run of role ``estimate``, and with
   ``check`` the packet-level run of the whole scenario is the run of role
   ``packet``. ``dcnsim query OUT "SQL"`` reads them.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Mapping
from contextlib import ExitStack, closing
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dcnsim import _core, cluster, store
from dcnsim.estimation import clustering, combine, decompose
from dcnsim.exits import Stopped, ending
from dcnsim.scenario import Scenario, ScenarioError, as_scenario
from dcnsim.slurm import check_table
from dcnsim.studies.runner import progress_bar
from dcnsim.sweep_run import Run, SweepError, execute
from dcnsim.sweeps import on_pool, run_id

__all__ = [
    "DEFAULT_PASSES",
    "DEFAULT_TOLERANCE",
    "MAX_PASSES",
    "Estimate",
    "EstimateInterrupted",
    "estimate",
]

#: Parsimon's clustering tolerance is a parameter (its evaluation's ε); 0.1 is the
#: value dcnsim defaults to: links within 10 % in load, size mix and fan-in.
DEFAULT_TOLERANCE = 0.1
#: Passes over the links by default (the first, Parsimon's, then two with bottleneck
#: pacing), and at most (docs/estimate.md, "Iterating the pacing").
DEFAULT_PASSES, MAX_PASSES = 3, 6
#: The pacing has converged when its rates change by less than this (the median
#: relative change over the paced flows) from one pass to the next.
CONVERGED = 0.05
#: The catalog columns of an estimate's sweep directory.
COLUMNS = ["role", "link", "members"]


class EstimateInterrupted(Stopped):
    """Ctrl-C or SIGTERM stopped an estimate; its message says what is kept and how to
    resume."""


@dataclass
class Estimate:
    """An estimate's outcome: the estimated flows, the slowdown percentiles per size
    bucket (with ``check``: the packet level's and the error beside them), what was
    simulated and the wall times."""

    flows: pd.DataFrame
    buckets: pd.DataFrame
    summary: dict[str, Any]
    out: Path


def estimate(
    scenario: Scenario | Mapping[str, Any] | str | os.PathLike[str],
    out: str | os.PathLike[str],
    tolerance: float = DEFAULT_TOLERANCE,
    jobs: int | None = None,
    dask: str | None = None,
    slurm: Mapping[str, Any] | None = None,
    check: bool = False,
    progress: bool = False,
    passes: int = DEFAULT_PASSES,
) -> Estimate:
    """Estimate the scenario's flow times by link-level decomposition into the sweep
    directory ``out`` (resumed if it holds an earlier estimate's link runs).

    ``tolerance``: the clustering's (0: simulate every link). ``jobs``, ``dask``,
    ``slurm`` (the ``[slurm]`` table for ``dask="slurm"``): where the link-level runs
    go, as ``dcnsim.sweep``. ``check``: also run the packet level (its table beside the
    estimate's, and the error). ``progress``: a bar over the link-level runs.
    ``passes``: at most this many passes over the links (2..MAX_PASSES; the first is
    Parsimon's, the others pace at the bottleneck rates, docs/estimate.md).
    """
    scenario = as_scenario(scenario)
    if (
        isinstance(tolerance, bool)
        or not isinstance(tolerance, int | float)
        or not (0 <= tolerance < 10)
    ):
        raise ScenarioError(f"tolerance: expected a number in [0, 10), got {tolerance!r}")
    if isinstance(passes, bool) or not isinstance(passes, int) or not 2 <= passes <= MAX_PASSES:
        raise ScenarioError(f"passes: expected a whole number in [2, {MAX_PASSES}], got {passes!r}")
    jobs = (os.cpu_count() or 1) if jobs is None else jobs
    if jobs < 1:
        raise ScenarioError(f"jobs: must be at least 1, got {jobs}")
    table = check_table(slurm or {})
    decompose.refuse(scenario)
    clock = time.perf_counter()
    started = datetime.now(UTC)
    plan = _plan(scenario, tolerance)
    store.check_sweep_dir(out)
    spec = {"name": f"estimate: {scenario.get('name') or 'scenario'}", "base": scenario.to_dict()}
    directory = store.open_sweep_dir(out, spec)
    with ExitStack() as stack:
        where = _Where(stack, dask, jobs, table, progress)
        made = [0]

        def make(what: str, runs: list[Run]) -> None:
            made[0] += _execute(where, what, runs, directory, started, clock, made[0])

        passes_ = _passes(plan, scenario, directory, passes, make)
    ran = made[0]
    links_wall = time.perf_counter() - clock
    runs = passes_.runs
    flows = combine.estimate_flows(plan.drawn, passes_.delay[-1], plan.stop_s, passes_.alone)
    wall = time.perf_counter() - clock
    buckets = combine.bucket_table(flows).rename(columns={"p50": "est_p50", "p99": "est_p99"})
    summary = plan.summary | {
        "estimate": True,
        "method": "link-level decomposition (Parsimon, NSDI 2023)",
        "tolerance": float(tolerance),
        "passes": len(passes_.delay),
        "rate_change": passes_.change,
        "link_runs": passes_.link_runs,
        "paced_runs": len(runs) - len(plan.solo_runs) - passes_.link_runs,
        "link_runs_now": ran,
        "wall_s": wall,
        "link_wall_s": links_wall,
        "on": dask or "local pool",
    }
    est_run = Run(
        _id("estimate", scenario, f"{tolerance:g} passes {passes}"),
        _params("estimate", "", 0),
        scenario,
    )
    all_runs = [*runs, est_run]
    store.write_run(
        directory, est_run, {"tables": {"flows": flows}, "summary": summary, "wall_s": wall}
    )
    if check:
        packet_run, packet = _packet_level(scenario, directory)
        all_runs.append(packet_run)
        truth = combine.bucket_table(packet["flows"])
        buckets["packet_p50"], buckets["packet_p99"] = truth["p50"], truth["p99"]
        for p in ("p50", "p99"):
            buckets[f"error_{p}"] = buckets[f"est_{p}"] / buckets[f"packet_{p}"] - 1
        buckets["packet_flows"] = truth["flows"]
        summary["packet_wall_s"] = packet["wall_s"]
    _catalog(directory, all_runs, started, clock, ran, dask)
    return Estimate(pd.DataFrame(flows), buckets, summary, directory)


@dataclass
class _Where:
    """Where the link-level runs go (the client is made at the first run to make)."""

    stack: ExitStack
    dask: str | None
    jobs: int
    table: Mapping[str, Any]
    progress: bool
    client: Any = None
    watch: Any = None


def _execute(
    where: _Where,
    what: str,
    runs: list[Run],
    directory: Path,
    started: datetime,
    clock: float,
    ran: int,
) -> int:
    """Make the runs not in ``directory`` yet; the number made. Interrupted: the catalog
    is written and ``EstimateInterrupted`` says what is kept."""
    todo = [r for r in runs if not store.has_run(directory, r.id)]
    done = 0
    with progress_bar(what, len(runs), where.progress) as bar:
        bar.update(len(runs) - len(todo))
        try:
            if where.dask and todo and where.client is None:
                where.client, where.watch = where.stack.enter_context(
                    cluster.connect(where.dask, where.jobs, where.table)
                )
            answers = (
                cluster.on_dask(where.client, where.watch, iter(todo), ["flows"], 2 * where.jobs)
                if where.client is not None
                else on_pool(iter(todo), ["flows"], where.jobs, 2 * where.jobs)
            )
            with closing(answers):
                for run_, answer in answers:
                    if "error" in answer:
                        raise SweepError(f"link {run_.params['link']}: {answer['error']}")
                    store.write_run(directory, run_, answer)
                    done += 1
                    bar.update(1)
        except KeyboardInterrupt as exc:
            _catalog(directory, runs, started, clock, ran + done, where.dask)
            raise EstimateInterrupted(
                f"{ending(exc)[0]}: {directory} keeps {len(runs) - len(todo) + done:,} of "
                f"the {len(runs):,} {what}; run the same estimate again to resume",
                exc,
            ) from None
        except SweepError:
            _catalog(directory, runs, started, clock, ran + done, where.dask)
            raise
    return done


@dataclass
class _Plan:
    drawn: decompose.Drawn
    lf: decompose.LinkFlows
    rep: np.ndarray  # representative (index into lf.ports) of each link with traffic
    rep_chains: dict[int, np.ndarray]  # representative -> its flows' paths (chains)
    flow_chain: np.ndarray  # each flow's path in the fabric (index into solo_runs)
    solo_runs: list[Run]  # one per distinct path (chain): its sizes alone on it
    wire: int
    mss: int
    seed: int
    stop_s: float | None
    summary: dict[str, Any]


@dataclass
class _LinkRuns:
    """One pass's link-level runs: the run of each representative, and for each run
    the representatives it is (alike links can give the same scenario) and which of
    its flows arrive paced (their delays are not their own bottleneck's)."""

    rep_run: dict[int, str]
    run_reps: dict[str, list[int]]
    run_paced: dict[str, np.ndarray]
    runs: dict[str, Run]


def _plan(scenario: Scenario, tolerance: float) -> _Plan:
    t0 = time.perf_counter()
    d = decompose.draw(scenario)
    if not len(d.flows["src"]):
        raise ScenarioError("traffic: the scenario opens no flow: nothing to estimate")
    lf = decompose.link_flows(d)
    rep = clustering.cluster(clustering.features(d, lf), tolerance)
    mss = _bytes(scenario.get("transport.mss"), 1460)
    wire = mss + _bytes(scenario.get("transport.header"), decompose.HEADER_BYTES)
    base = scenario.to_dict()
    size = d.flows["size_bytes"]
    chains: dict[decompose.Chain, list[np.ndarray]] = {}

    def chain_ids(of: list[decompose.Chain], sizes: np.ndarray) -> np.ndarray:
        ids = np.array([_index(chains, c) for c in of], dtype=np.int64)
        for c in np.unique(ids):
            list(chains.values())[c].append(sizes[ids == c])
        return ids

    classes, fabric = decompose.path_chains(d)
    flow_chain = np.array([_index(chains, c) for c in fabric], dtype=np.int64)[classes]
    for c, chain in enumerate(fabric):
        chains[chain].append(size[classes == c])
    rep_chains: dict[int, np.ndarray] = {}
    for r in np.unique(rep):
        hops = lf.hops_of(int(r))
        _, paths = decompose.link_scenario(base, d, int(lf.ports[r]), hops, wire)
        rep_chains[int(r)] = chain_ids(paths, size[d.flow[hops]])
    solo_runs = []
    for chain, sizes in chains.items():
        grid = decompose.solo_sizes(np.concatenate(sizes))
        sc = Scenario(decompose.solo_scenario(base, chain, grid, wire))
        solo_runs.append(Run(run_id(sc), _params("alone", sc.get("name"), 0), sc))
    stop = scenario.describe()["stop_time_s"]
    summary = {
        "name": scenario.get("name"),
        "seed": scenario.get("seed", 1),
        "flows": len(size),
        "links": len(lf.ports),
        "alone_runs": len(solo_runs),
        "plan_wall_s": time.perf_counter() - t0,
        "sim_time_s": stop if stop is not None else float("nan"),
    }
    seed = int(scenario.get("seed", 1))
    return _Plan(d, lf, rep, rep_chains, flow_chain, solo_runs, wire, mss, seed, stop, summary)


@dataclass
class _Passes:
    """The passes' outcome: each flow's FCT alone, its bottleneck hop (chosen on the
    first pass's expected delays), its delay there in each pass, the rate change
    between consecutive pacings, and every run made (alone, first pass, paced)."""

    alone: np.ndarray
    first: np.ndarray  # the first pass's hop delays (draws where not its own)
    bottleneck: np.ndarray
    delay: list[np.ndarray]
    change: list[float]
    runs: list[Run]
    link_runs: int


def _passes(
    plan: _Plan,
    scenario: Scenario,
    directory: Path,
    passes: int,
    make: Callable[[str, list[Run]], None],
) -> _Passes:
    """Run the passes (docs/estimate.md, "Bottleneck pacing", "Iterating the pacing"):
    the first (Parsimon's: every flow at its NIC's rate), then up to ``passes - 1``
    paced ones, each pacing every flow at the links that are not its bottleneck at
    the rate its damped bottleneck delay gives, stopping early once those rates change
    by less than ``CONVERGED``. ``make(what, runs)`` makes the runs not yet in
    ``directory``."""
    first = _link_runs(plan, scenario, "link", None)
    by_id = {r.id: r for r in [*plan.solo_runs, *first.runs.values()]}
    make("link simulations", list(by_id.values()))
    alone, hop, expected = _hop_delays(plan, first, directory, 1)
    # Chosen on expected delays (own, or a bucket's mean), not on the draws: the
    # largest of a path's draws is the draws' tail.
    bottleneck = combine.bottlenecks(plan.drawn, expected)
    size = plan.drawn.flows["size_bytes"].astype(float)
    delay, change, pace = [hop[bottleneck]], [], hop[bottleneck]
    for k in range(2, passes + 1):
        rate = combine.pacing_rates(size, alone, pace)
        paced = _link_runs(plan, scenario, "paced", (rate, bottleneck))
        by_id |= {r.id: r for r in paced.runs.values()}
        make(f"paced link simulations (pass {k})", list(by_id.values()))
        delay.append(_hop_delays(plan, paced, directory, k)[1][bottleneck])
        if k == passes:
            break
        after = combine.damped(pace, delay[-1])
        change.append(combine.rate_change(alone, pace, after))
        if change[-1] < CONVERGED:
            break
        pace = after
    return _Passes(alone, hop, bottleneck, delay, change, list(by_id.values()), len(first.runs))


def _link_runs(
    plan: _Plan,
    scenario: Scenario,
    role: str,
    pacing: tuple[np.ndarray, np.ndarray] | None,
) -> _LinkRuns:
    """The link-level run of every representative; with ``pacing`` (each flow's rate
    and bottleneck hop), each flow whose bottleneck is another hop arrives paced at its
    rate (``decompose.link_scenario``)."""
    d, lf, base = plan.drawn, plan.lf, scenario.to_dict()
    members = np.bincount(plan.rep, minlength=len(plan.rep))
    out = _LinkRuns({}, {}, {}, {})
    for r in (int(x) for x in np.unique(plan.rep)):
        hops = lf.hops_of(r)
        pace = None
        if pacing is not None:
            rate, bottleneck = pacing
            f = d.flow[hops]
            pace = np.where(bottleneck[f] == hops, np.nan, rate[f])
        link, _ = decompose.link_scenario(base, d, int(lf.ports[r]), hops, plan.wire, pace)
        sc = Scenario(link)
        rid = run_id(sc)
        out.rep_run[r] = rid
        out.run_reps.setdefault(rid, []).append(r)
        if rid not in out.runs:
            names = {n["name"] for n in link["topology"]["nodes"]}
            out.run_paced[rid] = np.array([f"p{j}" in names for j in range(len(hops))])
            out.runs[rid] = Run(rid, _params(role, link["name"][5:], int(members[r])), sc)
    return out


def _index(index: dict[Any, list[Any]], key: Any) -> int:
    """The place of ``key`` in ``index`` (added, with an empty list, if new)."""
    if key not in index:
        index[key] = []
    return list(index).index(key)


def _hop_delays(
    plan: _Plan, links: _LinkRuns, directory: Path, stream: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each flow's FCT alone on its path, and each flattened hop's delay and expected
    delay in one pass's link-level runs (``combine.hop_delays``, the draws from random
    stream ``stream``); the buckets a cluster's other links draw from hold the run's
    flows that did not arrive paced."""
    import pyarrow.parquet as pq

    def flows_of(run_id_: str) -> dict[str, Any]:
        path = directory / "runs" / f"run={run_id_}" / "flows.parquet"
        return pq.read_table(path, columns=["size_bytes", "fct_s"]).to_pydict()

    solos = [flows_of(run.id) for run in plan.solo_runs]

    def alone(sizes: np.ndarray, chain: np.ndarray) -> np.ndarray:
        out = np.empty(len(sizes))
        for c in np.unique(chain):
            mine = chain == c
            out[mine] = combine.alone(sizes[mine], solos[c])
        return out

    d = plan.drawn
    size = d.flows["size_bytes"].astype(float)
    delays: dict[str, combine.Delays] = {}
    own = np.full(len(d.port), np.nan)
    for rid, reps in links.run_reps.items():
        hops = plan.lf.hops_of(reps[0])
        table = flows_of(rid)
        delay = combine.run_delays(table, alone(size[d.flow[hops]], plan.rep_chains[reps[0]]))
        # (a run whose flows all arrived paced, none bottlenecked there: all of them)
        keep = ~links.run_paced[rid] if not links.run_paced[rid].all() else slice(None)
        kept = {k: np.asarray(v)[keep] for k, v in table.items()}
        delays[rid] = combine.delays_of(kept, delay[keep], plan.mss)
        for r in reps:
            # A link simulated itself: its flows are the run's rows, in order.
            own[plan.lf.hops_of(r)] = delay
    order = list(delays)
    index = {rid: i for i, rid in enumerate(order)}
    link_of_port = np.full(len(d.ports["node"]), -1)
    link_of_port[plan.lf.ports] = [index[links.rep_run[int(r)]] for r in plan.rep]
    hop, expected = combine.hop_delays(
        d, link_of_port[d.port], [delays[r] for r in order], plan.mss, plan.seed, own, stream
    )
    return alone(size, plan.flow_chain), hop, expected


def _packet_level(scenario: Scenario, directory: Path) -> tuple[Run, dict[str, Any]]:
    """The packet-level run of the whole scenario (kept, so a resumed check reuses it)."""
    import pyarrow.parquet as pq

    run_ = Run(_id("packet", scenario, "0"), _params("packet", "", 0), scenario)
    if not store.has_run(directory, run_.id):
        answer = execute(scenario.to_json(), ["flows"])
        if "error" in answer:
            raise SweepError(f"packet level: {answer['error']}")
        store.write_run(directory, run_, answer)
    run_dir = directory / "runs" / f"run={run_.id}"
    record = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    flows = pq.read_table(run_dir / "flows.parquet").to_pandas()
    return run_, {"flows": flows, "wall_s": float(record["wall_s"])}


def _catalog(
    directory: Path, runs: list[Run], started: datetime, clock: float, ran: int, dask: str | None
) -> None:
    store.write_catalog(directory, runs, COLUMNS)
    store.note_session(directory, started, time.perf_counter() - clock, ran, dask or "local")


def _params(role: str, link: str, members: int) -> dict[str, Any]:
    return {"role": role, "link": link, "members": members}


def _id(role: str, scenario: Scenario, tag: str) -> str:
    """A run id for the estimate (tagged by tolerance and passes) or the packet-level
    run (tagged "0") of a scenario."""
    tagged = scenario.to_dict() | {"name": f"{role} {tag} {scenario.get('name') or ''}"}
    return run_id(Scenario(tagged))


def _bytes(text: str | None, default: int) -> int:
    return default if text is None else int(_core.parse_bytes(text))
