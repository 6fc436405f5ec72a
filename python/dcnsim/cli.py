"""The ``dcnsim`` command: a thin layer over the Python API.

    dcnsim run FILE [--out DIR] [--memory-limit SIZE] [--progress | --no-progress]
               [--set KEY=VALUE ...]
    dcnsim validate FILE
    dcnsim list [topologies|protocols|queues|aqms|policies|agents|cdfs|studies]
    dcnsim docs [scenario|experiments|studies|architecture|performance|estimate|crosscheck]
               [SECTION WORDS]
    dcnsim bench [NAME|all|scale] [--quick | --stop-time 20ms] [--repeat N]
    dcnsim study list
    dcnsim sweep SWEEP.toml --out DIR [--jobs N] [--dask local|tcp://HOST:PORT|slurm] [--report]
    dcnsim estimate FILE --out DIR [--tolerance X] [--check] [--jobs N]
               [--dask local|tcp://HOST:PORT|slurm] [--slurm FILE] [--set KEY=VALUE ...]
    dcnsim query DIR "SQL" [--csv]
    dcnsim crosscheck FILE --with ns2|ns3 [--out DIR] [--tolerance NAME=X ...] [--set KEY=VALUE ...]
    dcnsim plot DIR [--out DIR]
    dcnsim study NAME [--quick] [--seeds N] [--jobs N] [--out DIR] [--verbose]

Bad input ends with exit status 2 and one line on stderr, ``error: <message>``.

Only what a command uses is imported, when it runs: ``validate`` needs neither
pandas nor pyarrow, and the studies are imported only by ``study`` and ``list``.
"""

from __future__ import annotations

import argparse
import sys
import tomllib
from collections.abc import Callable, Mapping, Sequence
from contextlib import nullcontext
from typing import TYPE_CHECKING, Any

from dcnsim import _core, limits
from dcnsim._core import ScenarioError
from dcnsim.exits import EXIT_BAD_INPUT, ending
from dcnsim.formats import format_seconds
from dcnsim.labels import changes_line, scenario_line
from dcnsim.memory import format_bytes, parse_limit
from dcnsim.outdir import OutputError, ignore_signals_once_written
from dcnsim.results import check_output_dir, run, summarize
from dcnsim.run_text import format_summary
from dcnsim.scenario import Scenario
from dcnsim.suggest import with_hint
from dcnsim.unfinished import sweep_warning

if TYPE_CHECKING:
    from dcnsim.studies import Study


class _Parser(argparse.ArgumentParser):
    """argparse, but usage errors are one line too."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(EXIT_BAD_INPUT, f"error: {with_hint(message)} (see '{self.prog} --help')\n")


class _BadInput(Exception):
    """A user error found by the CLI itself (not by the scenario checks)."""


def main(argv: Sequence[str] | None = None) -> int:
    """The command ``argv`` (default: ``sys.argv[1:]``); its exit status. As a
    process, ``dcnsim.__main__.main`` calls this (see there for Ctrl-C)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        # The study command's choices and listing need the studies, and only it does.
        studies = _studies() if "study" in argv else None
        args = _build_parser(studies).parse_args(argv)
        return args.command(args)
    except (ScenarioError, _BadInput) as exc:
        return _fail(str(exc))
    except OSError as exc:
        return _fail(_describe_os_error(exc))
    except KeyboardInterrupt as exc:  # Ctrl-C or SIGTERM (dcnsim.exits.Terminated)
        word, status = ending(exc)
        print(f"error: {word}", file=sys.stderr)
        return status


# --- commands ---------------------------------------------------------------------------


def _load(args: argparse.Namespace) -> Scenario:
    """The scenario file with the ``--set`` overrides applied, in order."""
    scenario = Scenario.from_toml(args.file)
    for key, value in args.set:
        scenario = scenario.set(key, value)
    return scenario


def _cmd_run(args: argparse.Namespace) -> int:
    scenario = _load(args)
    if args.out is not None:
        _check_out(check_output_dir, args.out)  # fail before a long run, not after it
    progress = sys.stderr.isatty() if args.progress is None else args.progress
    limit = None if args.memory_limit is None else parse_limit(args.memory_limit)
    if args.out is None:
        results = summarize(scenario, progress=progress, memory_limit=limit)
        print(format_summary(results, args.set))
        return 0
    ignore_signals_once_written()
    try:
        results = run(scenario, progress=progress, memory_limit=limit, out=args.out)
    except OutputError as exc:
        raise _BadInput(exc.named("--out")) from None
    out = results.out_dir
    assert out is not None
    print(format_summary(results, args.set))
    written = sorted(p.name + ("/" if p.is_dir() else "") for p in out.iterdir())
    print(f"wrote {args.out}: {', '.join(written)}")
    return 0


def _cmd_validate(args: argparse.Namespace) -> int:
    scenario = _load(args)
    d = scenario.describe()
    print(f"ok: {args.file}")
    print(f"  scenario {scenario_line(scenario.to_dict())}")
    if args.set:
        print(f"  set      {changes_line(args.set)}")
    print(
        f"  network  {d['hosts']:,} hosts, {d['switches']:,} switches, {d['links']:,} links "
        f"({d['ports']:,} ports)"
    )
    # The datagram sources and listed flows always; an application only when used.
    apps = ["probe_packets", "streams", "flows"]
    apps += [k for k in dict(_core.names())["applications"] if d[k]]
    print("  traffic  " + ", ".join(f"{d[k]:,} {k.replace('_', ' ')}" for k in apps))
    print(f"  agents   {d['agents']:,}")
    stop = d["stop_time_s"]
    print(f"  stops    {'when traffic ends' if stop is None else f'at {format_seconds(stop)}'}")
    parts = ", ".join(f"{name} {format_bytes(b)}" for name, b in d["memory"] if b)
    print(f"  memory   about {format_bytes(d['memory_bytes'])} ({parts})")
    return 0


def _cmd_crosscheck(args: argparse.Namespace) -> int:
    """The scenario in dcnsim and in a reference, side by side; exit 1 if a metric
    is beyond its tolerance."""
    from dcnsim.crosscheck import crosscheck

    report = crosscheck(_load(args), args.reference, out=args.out, tolerances=dict(args.tolerance))
    print(report.format())
    if args.out is not None:
        print(f"wrote {args.out}: the {args.reference} program and its tables")
    return 0 if report.ok else 1


def _tolerance(text: str) -> tuple[str, float]:
    name, _, value = text.partition("=")
    try:
        return name.strip(), float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected NAME=NUMBER, got {text!r}") from None


def _cmd_docs(args: argparse.Namespace) -> int:
    """One document or one section of it (through a pager on a terminal), or with no
    name each document's name and title."""
    from dcnsim.docsview import section, show

    docs = dict(_core.docs())
    if args.name is not None:
        text = docs[args.name]
        if args.section:
            try:
                text = section(text, " ".join(args.section))
            except LookupError as exc:
                raise _BadInput(f"docs {args.name}: {exc}") from None
        show(text)
        return 0
    width = max(map(len, docs))
    for name, text in docs.items():
        title = text.splitlines()[0].lstrip("# ") if text else ""
        print(f"{name:<{width}}  {title}")
    print("\n(dcnsim docs NAME shows one; dcnsim docs NAME WORDS, the section so titled:")
    print(" dcnsim docs scenario transport)")
    return 0


def _cmd_list(args: argparse.Namespace) -> int:
    axes: dict[str, Any] = dict(_core.names())
    if args.axis in (None, "studies"):
        axes["studies"] = list(_studies())
    for axis, names in axes.items():
        if args.axis in (None, axis):
            print(f"{axis}: {', '.join(names)}")
    return 0


def _cmd_bench(args: argparse.Namespace) -> int:
    from dcnsim.bench import run_benchmarks, run_scale

    if args.name == "scale":
        run_scale(args.quick, args.stop_time, args.repeat)
        return 0
    names = list(_core.bench_names()) if args.name == "all" else [args.name]
    run_benchmarks(names, args.quick, args.stop_time, args.repeat, args.progress)
    return 0


def _studies() -> Mapping[str, Study]:
    from dcnsim.studies import STUDIES

    return STUDIES


def _cmd_study(args: argparse.Namespace) -> int:
    from dcnsim.studies import run_study, write_study
    from dcnsim.studies.kept import beside, kept_runs
    from dcnsim.studies.runner import BarProgress
    from dcnsim.studies.study import check_study_dir

    if args.name == "list":
        return _list_studies()
    if args.out is not None:
        _check_out(check_study_dir, args.out)  # fail before a long run, not after it
    study = _studies()[args.name]
    if args.seeds is not None and not study.seeded:
        raise _BadInput(f"--seeds: {study.name} has no randomness: every seed gives the same run")
    progress = sys.stderr.isatty() if args.progress is None else args.progress
    line = BarProgress(args.name) if progress else None
    # With --out, finished runs are kept beside it until it is written: rerun, resumed.
    with kept_runs(beside(args.out)) if args.out is not None else nullcontext() as store:
        try:
            output = run_study(
                study,
                quick=args.quick,
                jobs=args.jobs,
                verbose=args.verbose,
                progress=line,
                seeds=args.seeds,
            )
        except KeyboardInterrupt as exc:
            if store is None or not store.count():
                raise
            word, status = ending(exc)
            print(
                f"error: {word}: {store.count()} finished runs of the study are kept in "
                f"{store.directory}; run the same study again to resume",
                file=sys.stderr,
            )
            return status
        finally:
            if line is not None:
                line.close()
            if store is not None and not store.count():
                store.remove()
    print(output.text)
    runs = len(output.detail)
    busy = float(output.detail["wall_s"].sum())
    reused = store.reused if store is not None else 0
    resumed = f"; {reused} of them kept by an interrupted study" if reused else ""
    print(
        f"\n{runs} runs in {output.timing['wall_s']:.1f} s wall ({busy:.1f} s of simulation, "
        f"{output.timing['jobs']} jobs){', quick variant' if args.quick else ''}{resumed}"
    )
    if store is not None:
        ignore_signals_once_written()
        try:
            written = write_study(output, args.out)
        except OSError as exc:
            raise OutputError("--out", args.out, exc) from None
        store.remove()
        print(f"wrote {args.out}: {', '.join(p.name for p in written)}")
    return 0


def _list_studies() -> int:
    """Every study: its name, the seed it reruns and the seed's figures it draws."""
    for name, study in _studies().items():
        print(f"{name}\n  seed:    {study.seed}\n  figures: {', '.join(study.figures)}")
    return 0


def _cmd_sweep(args: argparse.Namespace) -> int:
    from dcnsim.sweeps import SweepError, SweepInterrupted

    try:
        return _sweep(args)
    except SweepError as exc:
        raise _BadInput(str(exc)) from None
    except SweepInterrupted as exc:  # how many runs were kept, and that rerunning resumes
        print(f"error: {exc}", file=sys.stderr)
        return ending(exc.signal)[1]


def _cmd_estimate(args: argparse.Namespace) -> int:
    from dcnsim.estimation import EstimateInterrupted, estimate
    from dcnsim.estimation.text import format_estimate
    from dcnsim.store import check_sweep_dir
    from dcnsim.sweeps import SweepError

    scenario = _load(args)
    try:
        check_sweep_dir(args.out)  # before anything is drawn
    except OSError as exc:
        raise _BadInput(f"--out '{args.out}': {exc.strerror or exc}") from None
    slurm: dict[str, Any] = {}
    if args.slurm is not None:
        try:
            table = limits.loads(limits.read_small_file(args.slurm).decode("utf-8"))
        except (tomllib.TOMLDecodeError, limits.LimitError, UnicodeDecodeError) as exc:
            raise _BadInput(f"--slurm '{args.slurm}': {exc}") from None
        slurm = table.get("slurm", table)
    progress = sys.stderr.isatty() if args.progress is None else args.progress
    try:
        est = estimate(
            scenario,
            args.out,
            tolerance=args.tolerance,
            jobs=args.jobs,
            dask=args.dask,
            slurm=slurm,
            check=args.check,
            progress=progress,
        )
    except SweepError as exc:
        raise _BadInput(str(exc)) from None
    except EstimateInterrupted as exc:  # what was kept, and that rerunning resumes
        print(f"error: {exc}", file=sys.stderr)
        return exc.status
    print(format_estimate(est, scenario, args.set))
    return 0


def _sweep(args: argparse.Namespace) -> int:
    from dcnsim.report import write_sweep_report
    from dcnsim.store import check_sweep_dir, load
    from dcnsim.sweeps import Sweep, run_sweep

    sweep = Sweep.from_toml(args.file)
    _check_out(check_sweep_dir, args.out)  # before any run
    progress = sys.stderr.isatty() if args.progress is None else args.progress
    outcome = run_sweep(sweep, args.out, jobs=args.jobs, dask=args.dask, progress=progress)
    print(
        f"sweep {sweep.name}: {outcome.total} runs: ran {outcome.ran}, "
        f"{outcome.skipped} already done, {outcome.failed} failed now, "
        f"in {outcome.wall_s:.1f} s on {args.dask or 'the local pool'}"
    )
    catalog = load(outcome.out, "catalog")
    for row in catalog[catalog["status"] == "failed"].itertuples(index=False):
        print(f"  failed {row.run}: {row.error}")
    print(*sweep_warning(outcome.out), sep="\n", end="")
    if args.report:
        path = write_sweep_report(outcome.out, sweep)
        print(f"wrote {path}")
    print(f'wrote {args.out}: catalog.parquet, runs/ (query: dcnsim query {args.out} "SQL")')
    return 0


def _cmd_query(args: argparse.Namespace) -> int:
    import duckdb

    from dcnsim.store import query
    from dcnsim.studies.text import format_table
    from dcnsim.sweeps import one_line

    try:
        table = query(args.dir, args.sql)
    except FileNotFoundError as exc:
        raise _BadInput(str(exc)) from None
    except duckdb.Error as exc:
        raise _BadInput(f"query: {one_line(exc, named=False)}") from None
    if args.csv:
        table.to_csv(sys.stdout, index=False)
    else:
        print(format_table(table) if len(table.columns) else "(no columns)")
    return 0


def _cmd_plot(args: argparse.Namespace) -> int:
    from dcnsim.plot import plot_run

    try:
        written, skipped = plot_run(args.dir, args.out)
    except FileNotFoundError as exc:
        raise _BadInput(str(exc)) from None
    for line in skipped:
        print(f"skipped {line}")
    where = {p.parent for p in written}
    for folder in sorted(where):
        names = sorted({p.stem for p in written if p.parent == folder})
        print(f"wrote {folder}: {', '.join(names)} (.png, .svg, .pdf)")
    return 0


def _check_out(check: Callable[[str], object], out: str) -> None:
    """``check(out)``, the command's check of its output directory, before any run;
    an ``OSError`` it raises becomes the one line naming ``--out``."""
    try:
        check(out)
    except OSError as exc:
        raise OutputError("--out", out, exc) from None


def _fail(message: str) -> int:
    print(f"error: {with_hint(message)}", file=sys.stderr)
    return EXIT_BAD_INPUT


def _describe_os_error(exc: OSError) -> str:
    reason = exc.strerror or str(exc)
    if exc.filename is not None:
        return f"'{exc.filename}': {reason}"
    return reason


# --- arguments --------------------------------------------------------------------------


def _key_value(text: str) -> tuple[str, Any]:
    """``KEY=VALUE``; VALUE is read as a TOML value if it is one, else as a string."""
    key, sep, raw = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got '{text}'")
    try:
        value = limits.loads(f"value = {raw}")["value"]
    except limits.LimitError as exc:
        # One value, given as "value = ...": its line and key say nothing.
        reason = exc.reason.removeprefix("value: ")
        raise argparse.ArgumentTypeError(f"{key.strip()}: {reason}") from None
    except tomllib.TOMLDecodeError:
        value = raw
    return key.strip(), value


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got '{text}'")
    return value


def _seed_count(text: str) -> int:
    """A study's ``--seeds``: a positive integer, at most ``limits.MAX_RUNS`` (each
    seed is at least one run), checked before anything is built."""
    value = _positive_int(text)
    if value > limits.MAX_RUNS:
        raise argparse.ArgumentTypeError(
            f"{value:,} seeds, more than the {limits.MAX_RUNS:,} runs a study may have"
        )
    return value


def _add_jobs(parser: argparse.ArgumentParser, text: str) -> None:
    parser.add_argument("--jobs", metavar="N", type=_positive_int, default=None, help=text)


def _add_progress(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help=f"show {what} on stderr (default: when stderr is a terminal)",
    )


def _build_parser(studies: Mapping[str, Study] | None = None) -> argparse.ArgumentParser:
    """The parser; ``studies`` (needed by the study command only) fill its choices."""
    parser = _Parser(
        prog="dcnsim",
        description="Packet-level data-center network simulator.",
        epilog="Scenario reference: dcnsim docs scenario (docs/scenario.md in the source)",
    )
    parser.add_argument("--version", action="version", version=f"dcnsim {_core.__version__}")
    commands = parser.add_subparsers(title="commands", metavar="COMMAND", required=True)

    set_help = "override a scenario key, e.g. forwarding.policy=rps (repeatable)"
    p = commands.add_parser("run", help="run a scenario file and write its outputs")
    p.add_argument("file", metavar="FILE", help="scenario TOML file")
    p.add_argument(
        "--out",
        metavar="DIR",
        help="output directory (replaced); without it the summary is printed and nothing written",
    )
    p.add_argument(
        "--memory-limit",
        metavar="SIZE",
        help="refuse a run estimated to need more (default: 80%% of the least of the memory "
        "available and what ulimit -v and the cgroup's limit leave)",
    )
    _add_progress(p, "a progress line")
    p.add_argument(
        "--set", metavar="KEY=VALUE", type=_key_value, action="append", default=[], help=set_help
    )
    p.set_defaults(command=_cmd_run)

    p = commands.add_parser("validate", help="check a scenario file without running it")
    p.add_argument("file", metavar="FILE", help="scenario TOML file")
    p.add_argument(
        "--set", metavar="KEY=VALUE", type=_key_value, action="append", default=[], help=set_help
    )
    p.set_defaults(command=_cmd_validate)

    p = commands.add_parser("docs", help="list the documents shipped with dcnsim, or print one")
    p.add_argument("name", nargs="?", choices=[name for name, _ in _core.docs()])
    p.add_argument("section", nargs="*", help="words of a section's heading (e.g. transport)")
    p.set_defaults(command=_cmd_docs)

    axes = [axis for axis, _ in _core.names()] + ["studies"]
    p = commands.add_parser("list", help="what each axis accepts (topologies, protocols, ...)")
    p.add_argument("axis", nargs="?", choices=axes, help="one axis (default: all)")
    p.set_defaults(command=_cmd_list)

    p = commands.add_parser(
        "bench",
        help="run the fixed benchmarks or the scale series, print packet-hops/s",
    )
    p.add_argument(
        "name",
        nargs="?",
        choices=[*_core.bench_names(), "all", "scale"],
        default="datagram",
        help="which benchmark: datagram (default), tcp (DCTCP), pfabric, b1 (the headline "
        "figure: DCTCP web-search flows for 1 s), flowheavy (the first seed's tree with "
        "all-to-all flows), all of them alternating (then pfabric's ratio to tcp is printed "
        "too), or scale (B1's workload on k = 4, 8, 16, 24 fat-trees, a process per size)",
    )
    when = p.add_mutually_exclusive_group()
    when.add_argument(
        "--stop-time",
        metavar="TIME",
        help="simulated time to run, e.g. 20ms (default: the benchmark's own)",
    )
    when.add_argument(
        "--quick",
        action="store_true",
        help="the benchmark's quick stop time (b1: 100ms, flowheavy: 50ms, the others 5ms; "
        "scale: 2ms instead of 20ms)",
    )
    p.add_argument(
        "--repeat",
        metavar="N",
        type=_positive_int,
        default=1,
        help="number of runs, alternating the benchmarks; the best and the medians are "
        "reported (scale: rounds, each running every size once; the medians and the "
        "k=24/k=8 ratio of each round are reported) (default: 1)",
    )
    p.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=False,
        help="show a progress line on stderr",
    )
    p.set_defaults(command=_cmd_bench)

    studies = studies or {}
    width = max((len(name) for name in studies), default=0)
    listing = "\n".join(f"  {name:<{width}}  {study.title}" for name, study in studies.items())
    p = commands.add_parser(
        "study",
        help="run a seed experiment, print the seed's numbers beside dcnsim's",
        description="Run one seed experiment and print the seed's numbers beside dcnsim's.",
        epilog=f"studies:\n{listing}\n\nWhat each study runs and how to read it: docs/studies.md",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "name",
        metavar="NAME",
        choices=["list", *studies],
        help=f"one of: {', '.join(studies)}; 'list' shows each with its seed and figures",
    )
    p.add_argument(
        "--quick",
        action="store_true",
        help="fewer points and runs (what the default test suite runs)",
    )
    _add_jobs(p, "simulations run in parallel (default: the number of CPUs)")
    p.add_argument(
        "--seeds",
        metavar="N",
        type=_seed_count,
        default=None,
        help="run every point with seeds 1..N (default: the variant's own; 95 %% intervals "
        "over seeds in the tables and figures)",
    )
    p.add_argument(
        "--out",
        metavar="DIR",
        help="also write the tables (CSV), the seed's figures (PNG) and report.html here",
    )
    p.add_argument("--verbose", action="store_true", help="also print one line per run or point")
    _add_progress(p, "a progress line")
    p.set_defaults(command=_cmd_study)

    p = commands.add_parser(
        "sweep",
        help="run a grid of scenarios (resumes an interrupted sweep), locally or on Dask",
        description="Run every run of a sweep file that DIR does not hold yet; "
        "see docs/experiments.md.",
    )
    p.add_argument("file", metavar="SWEEP", help="sweep file (TOML)")
    p.add_argument("--out", metavar="DIR", required=True, help="sweep directory (resumed)")
    _add_jobs(p, "parallel runs: local processes or LocalCluster workers (default: the CPUs)")
    p.add_argument(
        "--dask",
        metavar="WHERE",
        help="run on Dask: 'local' (a LocalCluster), tcp://HOST:PORT (a running "
        "scheduler) or 'slurm' (dask-jobqueue, options from the [slurm] table)",
    )
    p.add_argument("--report", action="store_true", help="also write DIR/report.html")
    _add_progress(p, "a progress bar (runs done, failed, time left)")
    p.set_defaults(command=_cmd_sweep)

    p = commands.add_parser(
        "crosscheck",
        help="run a scenario in dcnsim and in ns-2 or ns-3, print both with ratios",
        description="Translate the scenario for a reference simulator, run both, and "
        "print each metric side by side with its ratio and a verdict; exit 1 if one "
        "is beyond its tolerance. See docs/crosscheck.md.",
    )
    p.add_argument("file", metavar="FILE", help="scenario TOML file")
    p.add_argument(
        "--with",
        dest="reference",
        required=True,
        choices=["ns2", "ns3"],
        help="the reference: ns2 (ns-2.35) or ns3 (ns-3.37)",
    )
    p.add_argument(
        "--out", metavar="DIR", help="keep the generated script or program and its tables here"
    )
    p.add_argument(
        "--tolerance",
        metavar="NAME=X",
        type=_tolerance,
        action="append",
        default=[],
        help="relative tolerance of a metric, e.g. fct=0.001 (repeatable; "
        "names in docs/crosscheck.md)",
    )
    p.add_argument(
        "--set", metavar="KEY=VALUE", type=_key_value, action="append", default=[], help=set_help
    )
    p.set_defaults(command=_cmd_crosscheck)

    p = commands.add_parser(
        "estimate",
        help="estimate flow times by link-level decomposition (Parsimon): big fabrics",
        description="Estimate the scenario's flow completion times by simulating each "
        "link alone (clustering alike links) and combining along paths; see "
        "docs/estimate.md. The output is a sweep directory (dcnsim query).",
    )
    p.add_argument("file", metavar="FILE", help="scenario TOML file")
    p.add_argument("--out", metavar="DIR", required=True, help="output directory (resumed)")
    p.add_argument(
        "--tolerance",
        metavar="X",
        type=float,
        default=0.1,
        help="clustering tolerance: links within X (relative) in load, size mix and fan-in "
        "share one link simulation; 0 simulates every link (default: 0.1)",
    )
    p.add_argument(
        "--check",
        action="store_true",
        help="also run the packet level and print the error per flow-size bucket",
    )
    _add_jobs(p, "parallel link simulations (default: the CPUs)")
    p.add_argument(
        "--dask",
        metavar="WHERE",
        help="run the link simulations on Dask: 'local', tcp://HOST:PORT or 'slurm'",
    )
    p.add_argument(
        "--slurm",
        metavar="FILE",
        help="TOML file with the [slurm] table (SLURMCluster options) for --dask slurm",
    )
    _add_progress(p, "a progress bar over the link simulations")
    p.add_argument(
        "--set", metavar="KEY=VALUE", type=_key_value, action="append", default=[], help=set_help
    )
    p.set_defaults(command=_cmd_estimate)

    p = commands.add_parser(
        "query",
        help="SQL over a sweep directory (DuckDB): the catalog and each kept table",
        description="Views: catalog, and each kept table (flows, summary, ...) joined "
        "with the run's grid values. See docs/experiments.md.",
    )
    p.add_argument("dir", metavar="DIR", help="sweep directory")
    p.add_argument(
        "sql", metavar="SQL", help='e.g. "SELECT seed, avg(slowdown) FROM flows GROUP BY 1"'
    )
    p.add_argument("--csv", action="store_true", help="print CSV instead of an aligned table")
    p.set_defaults(command=_cmd_query)

    p = commands.add_parser(
        "plot",
        help="draw one run's figures: FCT and slowdown CDFs, queues, link utilisation",
        description="Figures of a run's output directory (dcnsim run ... --out DIR), each as "
        "PNG, SVG and PDF.",
    )
    p.add_argument("dir", metavar="DIR", help="a run's output directory")
    p.add_argument("--out", metavar="DIR", help="where the figures go (default: DIR/plots)")
    p.set_defaults(command=_cmd_plot)
    return parser


if __name__ == "__main__":
    sys.exit(main())
