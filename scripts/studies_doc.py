"""The measured numbers of docs/studies.md, from checked-in results files.

Each study's runs are kept in ``docs/results/<study>.csv`` (its ``runs.csv``) beside
``docs/results/<study>.json`` (which variant ran, when, how long, with which dcnsim).
Between ``<!-- results: <study> -->`` and ``<!-- /results -->`` docs/studies.md holds
what the study makes of those runs: its printed table and its claims and checks with
their tolerances and verdicts. Nothing there is written by hand.

    python scripts/studies_doc.py run NAME... [--quick] [--jobs N] [--seeds N]  # rerun, render
    python scripts/studies_doc.py run NAME --seeds N --add-seeds  # only the seeds missing
    python scripts/studies_doc.py run NAME --experiments E...  # rerun those parts alone
    python scripts/studies_doc.py render [--check] [--doc PATH]      # rewrite (or compare)

A ``run`` stopped before its results files are written keeps its finished runs in
``.study-runs/`` (``dcnsim.studies.kept``): the same command resumes from them.

``make studies-doc`` reruns every study's full variant and renders. ``--check``
rewrites nothing and exits 1 when the document and the results files disagree
(tests/test_studies_doc.py runs it).
"""

from __future__ import annotations

import argparse
import io
import json
import re
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd

from dcnsim.studies import STUDIES, run_study
from dcnsim.studies.kept import kept_runs
from dcnsim.studies.study import machine
from dcnsim.studies.text import claims_table, ranges

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "studies.md"
RESULTS = ROOT / "docs" / "results"
#: Where ``run`` keeps its finished runs until the results files are written.
KEPT = ROOT / ".study-runs"
BLOCK = re.compile(r"(<!-- results: ([\w-]+) -->\n)(.*?)(<!-- /results -->)", re.S)


def run(names: list[str], quick: bool, jobs: int | None, seeds: int | None = None) -> None:
    """Run each study and write its results files; ``seeds``: seeds 1..``seeds``
    instead of the variant's own (``dcnsim study --seeds``), which the block says."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    for name in names:
        output = run_study(STUDIES[name], quick=quick, jobs=jobs, seeds=seeds)
        output.detail.to_csv(RESULTS / f"{name}.csv", index=False)
        meta = {
            "study": name,
            "variant": "quick" if quick else "full",
            "runs": len(output.detail),
            "started": output.timing["started"],
            "wall_s": round(float(output.timing["wall_s"]), 1),
            "jobs": output.timing["jobs"],
            "dcnsim": machine()["dcnsim"],
            **({} if seeds is None else {"seeds_option": seeds}),
        }
        (RESULTS / f"{name}.json").write_text(json.dumps(meta, indent=2) + "\n")
        print(f"{name}: {meta['runs']} runs in {meta['wall_s']} s", file=sys.stderr)


def add_seeds(names: list[str], quick: bool, jobs: int | None, seeds: int) -> None:
    """Run seeds 1..``seeds`` that each study's results files lack, in their variant,
    and append the rows. A run depends only on its scenario (dcnsim is deterministic),
    so the rows there are what a whole rerun gives; a run the study repeats whatever
    the seed must come out identical, or nothing is written."""
    for name in names:
        meta = json.loads((RESULTS / f"{name}.json").read_text())
        if meta["variant"] != ("quick" if quick else "full"):
            sys.exit(f"{name}: the results files hold the {meta['variant']} variant")
        # As text, as the files hold them: a repeated run compares bit for bit.
        old = pd.read_csv(RESULTS / f"{name}.csv", dtype=str, keep_default_na=False)
        have = {int(s) for s in old["seed"] if s}
        new_seeds = [s for s in range(1, seeds + 1) if s not in have]
        started = datetime.now(UTC).isoformat(timespec="seconds")
        clock = time.perf_counter()
        runs = STUDIES[name].runs(quick=quick, jobs=jobs, seeds=new_seeds)
        wall = time.perf_counter() - clock
        text = io.StringIO(runs.to_csv(index=False))
        new = pd.read_csv(text, dtype=str, keep_default_na=False)[list(old.columns)]
        same = [c for c in old.columns if c != "wall_s"]
        repeated = new["seed"].astype(int).isin(have)
        known = new[repeated].merge(old[same], on=same, how="left", indicator=True)
        if (known["_merge"] != "both").any():
            sys.exit(f"{name}: a repeated run differs from the checked-in one; rerun it whole")
        both = pd.concat([old, new[~repeated]], ignore_index=True)
        both.to_csv(RESULTS / f"{name}.csv", index=False)
        added = {"seeds": new_seeds, "started": started, "wall_s": round(wall, 1)}
        meta.update(
            runs=len(both),
            wall_s=round(meta["wall_s"] + wall, 1),
            seeds_added=[*meta.get("seeds_added", []), added],
        )
        (RESULTS / f"{name}.json").write_text(json.dumps(meta, indent=2) + "\n")
        print(f"{name}: seeds {new_seeds} added, {len(both)} runs", file=sys.stderr)


def redo(name: str, quick: bool, jobs: int | None, experiments: list[str]) -> None:
    """Rerun the ``experiments`` of study ``name`` alone (``Study.experiments``: the
    parts its ``runs`` can run by themselves, over the variant's own seeds) and put
    their rows in place of the results file's rows of the same ``experiment``s; the
    study's other rows stay as they are. For a change that touches only those parts:
    the rest need not be paid for again."""
    study = STUDIES[name]
    unknown = sorted(set(experiments) - set(study.experiments))
    if unknown:
        sys.exit(f"{name}: cannot run {', '.join(unknown)} alone (it can: "
                 f"{', '.join(study.experiments) or 'none'})")  # fmt: skip
    meta = json.loads((RESULTS / f"{name}.json").read_text())
    if meta["variant"] != ("quick" if quick else "full"):
        sys.exit(f"{name}: the results files hold the {meta['variant']} variant")
    old = pd.read_csv(RESULTS / f"{name}.csv", dtype=str, keep_default_na=False)
    started = datetime.now(UTC).isoformat(timespec="seconds")
    clock = time.perf_counter()
    runs = study.runs(quick=quick, jobs=jobs, experiments=experiments)
    wall = time.perf_counter() - clock
    new = pd.read_csv(io.StringIO(runs.to_csv(index=False)), dtype=str, keep_default_na=False)
    extra = sorted(set(new.columns) - set(old.columns))
    if extra:
        sys.exit(f"{name}: the rerun has columns the results file lacks ({extra}); rerun it whole")
    new = new.reindex(columns=old.columns, fill_value="")
    replaced = old["experiment"].isin(set(new["experiment"]))
    both = pd.concat([old[~replaced], new], ignore_index=True)
    both.to_csv(RESULTS / f"{name}.csv", index=False)
    rerun = {
        "experiments": sorted(set(new["experiment"])),
        "runs": len(new),
        "replaced": int(replaced.sum()),
        "started": started,
        "wall_s": round(wall, 1),
    }
    meta.update(runs=len(both), redone=[*meta.get("redone", []), rerun])
    (RESULTS / f"{name}.json").write_text(json.dumps(meta, indent=2) + "\n")
    print(f"{name}: {len(new)} runs of {rerun['experiments']} in place of {rerun['replaced']}",
          file=sys.stderr)  # fmt: skip


def markdown(table: pd.DataFrame) -> str:
    """A pipe table; ``|`` in cells escaped."""

    def row(values: list[str]) -> str:
        return "| " + " | ".join(str(v).replace("|", "\\|") for v in values) + " |"

    lines = [row(list(table.columns)), row(["---"] * len(table.columns))]
    return "\n".join([*lines, *(row(list(r)) for r in table.itertuples(index=False))])


def block(name: str) -> str:
    """What docs/studies.md shows of study ``name``'s results files."""
    study = STUDIES[name]
    meta = json.loads((RESULTS / f"{name}.json").read_text())
    runs = pd.read_csv(RESULTS / f"{name}.csv", keep_default_na=True)
    _, text = study.printed(runs, False)
    claims = study.claims(runs)
    numbers = sorted({int(s) for s in runs["seed"].dropna()}) if "seed" in runs.columns else []
    seeds = f"seeds {ranges(numbers)}" if numbers else ""
    if "seeds_option" in meta:
        seeds += f" (run first with `--seeds {meta['seeds_option']}` in place of the variant's own)"
    for added in meta.get("seeds_added", []):
        seeds += (
            f"; seeds {ranges(added['seeds'])} added to the earlier runs by `--add-seeds` "
            f"(started {added['started']}, {added['wall_s']} s wall)"
        )
    for again in meta.get("redone", []):
        seeds += (
            f"; the {again['runs']} runs of "
            f"{', '.join(again['experiments'])} rerun alone by `--experiments` in place of "
            f"{again['replaced']} (started {again['started']}, {again['wall_s']} s wall)"
        )
    parts = [
        f"*Generated by `make studies-doc` from `docs/results/{name}.csv`: the "
        f"**{meta['variant']}** variant{', ' + seeds if seeds else ''}, {meta['runs']} runs, "
        f"{meta['wall_s']} s wall with "
        f"{meta['jobs']} jobs, dcnsim {meta['dcnsim']}, started {meta['started']}.*",
        "",
        "```text",
        text,
        "```",
        "",
        "The seed's claims:",
        "",
        markdown(claims_table(claims)),
    ]
    checks = claims_table(claims, checks=True)
    if len(checks):
        parts += ["", "Checks (physical bounds and sanity checks, not the seed's claims):", ""]
        parts += [markdown(checks)]
    return "\n".join(parts) + "\n"


def render(doc: Path) -> tuple[str, str]:
    """The document as it is and as its results files make it."""
    old = doc.read_text(encoding="utf-8")
    new = BLOCK.sub(lambda m: m.group(1) + block(m.group(2)) + m.group(4), old)
    return old, new


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p_run = sub.add_parser("run", help="rerun studies, write their results files, render")
    p_run.add_argument("names", nargs="+", choices=[*STUDIES, "all"])
    p_run.add_argument("--quick", action="store_true")
    p_run.add_argument("--jobs", type=int)
    p_run.add_argument("--seeds", type=int, help="seeds 1..N instead of the variant's own")
    p_run.add_argument(
        "--add-seeds", action="store_true",
        help="run only the seeds of 1..N the results files lack and append them",
    )  # fmt: skip
    p_run.add_argument(
        "--experiments", nargs="+", metavar="E",
        help="rerun only these parts of the study (its rows' experiment) and replace their rows",
    )  # fmt: skip
    p_render = sub.add_parser("render", help="rewrite the document's results blocks")
    p_render.add_argument("--check", action="store_true", help="compare only; exit 1 if stale")
    p_render.add_argument("--doc", type=Path, default=DOC)
    args = parser.parse_args(argv)
    if args.command == "run":
        names = list(STUDIES) if "all" in args.names else args.names
        if args.experiments and (args.seeds is not None or args.add_seeds):
            parser.error("--experiments reruns the variant's own seeds: no --seeds")
        if args.add_seeds and args.seeds is None:
            parser.error("--add-seeds needs --seeds N")
        # An interrupted run resumes: the finished runs are kept until the files are written.
        with kept_runs(KEPT) as store:
            if args.experiments:
                for name in names:
                    redo(name, args.quick, args.jobs, args.experiments)
            elif args.add_seeds:
                add_seeds(names, args.quick, args.jobs, args.seeds)
            else:
                run(names, args.quick, args.jobs, args.seeds)
        if store.reused:
            print(f"{store.reused} runs taken from {KEPT} (an interrupted run's)", file=sys.stderr)
        store.remove()
        args.doc, args.check = DOC, False
    old, new = render(args.doc)
    blocks = {m.group(2) for m in BLOCK.finditer(old)}
    missing = sorted(set(STUDIES) - blocks)
    if missing:
        print(f"{args.doc}: no results block for {', '.join(missing)}", file=sys.stderr)
        return 1
    if args.check:
        if old != new:
            print(f"{args.doc} disagrees with docs/results: run make studies-doc", file=sys.stderr)
            return 1
        return 0
    args.doc.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
