#!/usr/bin/env python3
"""Compare the event loop of several builds of dcnsim side by side.

The method of docs/performance.md: each revision's core is built into a small
runner of its own (a git worktree and a Cargo crate linking that worktree's
``crates/dcnsim-core`` with that revision's own release profile), and the runners
run the same scenario alternately, round after round, so that a machine whose
speed drifts slows every build of a round alike. Prints every run, then per
build the median packet-hops per second of event loop and its ratio to the
first build's median, the median of the rounds' own ratios, and whether the
builds' output tables are identical (a digest of every column of the flow,
probe, port, queue, round and flow-trace tables, bit for bit).

    python scripts/compare_builds.py 9bc42eb HEAD --bench b1 --stop-time 100ms --repeat 5
    python scripts/compare_builds.py HEAD~1 HEAD --scenario examples/websearch_dctcp.toml

``--bench`` takes the scenario text from the installed ``dcnsim`` package (the
checkout's own benchmarks), ``--scenario`` from a TOML file; both are given to
every build as the same TOML text. Needs git and cargo, and the project's
virtualenv (``.venv/bin/python``: ``tomli_w``, ``dcnsim``); the worktrees and
runners live under ``--workdir`` (default ``target/compare``) and are reused
by later calls.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tomllib
from pathlib import Path

import tomli_w

ROOT = Path(__file__).resolve().parent.parent

#: The runner: reads the scenario's TOML from its first argument, runs it and
#: prints one JSON line. Written against the core's public API as it has been
#: since before issue 10 (`Scenario::from_toml_str`, `run`, `Output`'s tables).
RUNNER = r"""
use std::hash::{Hash, Hasher};

fn digest(tables: &[&dcnsim_core::Table]) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for t in tables {
        for (name, column) in &t.columns {
            name.hash(&mut h);
            match column {
                dcnsim_core::Column::F64(v) => v.iter().for_each(|x| x.to_bits().hash(&mut h)),
                dcnsim_core::Column::I64(v) => v.hash(&mut h),
                dcnsim_core::Column::Str(v) => v.hash(&mut h),
            }
        }
    }
    h.finish()
}

fn main() {
    let path = std::env::args().nth(1).expect("the scenario file");
    let text = std::fs::read_to_string(path).expect("the scenario file is readable");
    let sc = dcnsim_core::Scenario::from_toml_str(&text).expect("the scenario is valid");
    let out = dcnsim_core::run(&sc, &mut |_| true).expect("the run ends");
    let s = &out.summary;
    let tables = [&out.flows, &out.probes, &out.ports, &out.queues, &out.rounds, &out.flow_trace];
    let d = digest(&tables);
    println!(
        "{{\"events\": {}, \"packet_hops\": {}, \"loop_s\": {}, \"digest\": \"{:016x}\"}}",
        s.events, s.packet_hops, s.wall_s, d
    );
}
"""


def run(cmd: list[str], cwd: Path | None = None) -> str:
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{done.stderr.strip()}")
    return done.stdout.strip()


def build(rev: str, workdir: Path) -> tuple[str, Path]:
    """Build revision `rev`'s runner; return its short commit and binary."""
    commit = run(["git", "rev-parse", "--short", f"{rev}^{{commit}}"], ROOT)
    tree = workdir / f"tree-{commit}"
    if not tree.exists():
        run(["git", "worktree", "add", "--detach", str(tree), commit], ROOT)
    crate = workdir / f"runner-{commit}"
    (crate / "src").mkdir(parents=True, exist_ok=True)
    manifest = {
        "package": {"name": f"runner-{commit}", "version": "0.0.0", "edition": "2021"},
        "dependencies": {"dcnsim-core": {"path": str((tree / "crates" / "dcnsim-core").resolve())}},
        # The revision's own release profile, as its wheel is built.
        "profile": {
            "release": tomllib.loads((tree / "Cargo.toml").read_text())["profile"]["release"]
        },
        "workspace": {},
    }
    (crate / "Cargo.toml").write_text(tomli_w.dumps(manifest))
    (crate / "src" / "main.rs").write_text(RUNNER)
    print(f"building {rev} ({commit}) ...", file=sys.stderr, flush=True)
    run(["cargo", "build", "--release", "--quiet"], crate)
    return commit, crate / "target" / "release" / f"runner-{commit}"


def scenario_text(args: argparse.Namespace) -> str:
    if args.scenario:
        text = Path(args.scenario).read_text()
        if args.stop_time is None:
            return text
        data = tomllib.loads(text)
        data["stop_time"] = args.stop_time
        return tomli_w.dumps(data)
    from dcnsim.bench import bench_scenario

    return bench_scenario(args.bench, stop_time=args.stop_time).to_toml()


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("revs", nargs="+", metavar="REV", help="git revisions; the first is the base")
    what = p.add_mutually_exclusive_group()
    what.add_argument("--bench", default="b1", help="a benchmark of `dcnsim bench` (default b1)")
    what.add_argument("--scenario", help="a scenario TOML file instead of a benchmark")
    p.add_argument("--stop-time", help="override the scenario's stop time (e.g. 100ms)")
    p.add_argument("--repeat", type=int, default=5, help="rounds (default 5)")
    p.add_argument("--workdir", default=str(ROOT / "target" / "compare"))
    args = p.parse_args(argv)
    if args.repeat < 1:
        p.error("--repeat must be at least 1")
    workdir = Path(args.workdir).resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    builds = [build(rev, workdir) for rev in args.revs]
    toml = workdir / "scenario.toml"
    toml.write_text(scenario_text(args))

    labels = [f"{rev} ({commit})" for rev, (commit, _) in zip(args.revs, builds, strict=True)]
    rates: list[list[float]] = [[] for _ in builds]
    digests: list[set[str]] = [set() for _ in builds]
    for r in range(1, args.repeat + 1):
        for i, (_, binary) in enumerate(builds):
            m = json.loads(run([str(binary), str(toml)]))
            rate = m["packet_hops"] / m["loop_s"]
            rates[i].append(rate)
            digests[i].add(m["digest"])
            print(
                f"round {r} {labels[i]}: {m['packet_hops']:,} packet-hops, {m['events']:,} events, "
                f"{m['loop_s']:.3f} s of loop, {rate / 1e6:.3f} M packet-hops/s, "
                f"tables {m['digest']}",
                flush=True,
            )
    base_median = statistics.median(rates[0])
    for i, label in enumerate(labels):
        median = statistics.median(rates[i])
        rounds = [x / b for x, b in zip(rates[i], rates[0], strict=True)]
        same = "identical to" if digests[i] == digests[0] else "differ from"
        print(
            f"{label}: median {median / 1e6:.3f} M packet-hops/s, {median / base_median:.3f}x "
            f"{labels[0]} (rounds {min(rounds):.3f}-{max(rounds):.3f}, median "
            f"{statistics.median(rounds):.3f}); tables {same} {labels[0]}'s"
        )


if __name__ == "__main__":
    main()
