"""What a study is, running one, and writing its files.

A study is one module of this package that ends with ``STUDY = Study(...)``: how to
run its scenarios, how to print its tables, which claims of its seed it checks and
which of the seed's figures it draws. ``dcnsim.studies.STUDIES`` lists them.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd

from dcnsim import outdir
from dcnsim.report import figure, machine, page, table_html
from dcnsim.scenario import Scenario
from dcnsim.studies.figures import FORMATS
from dcnsim.studies.runner import Progress, recorded_scenarios
from dcnsim.studies.text import Claim, claims_table, fit_lines, marked_quick, quick_undecided

__all__ = [
    "Study",
    "StudyOutput",
    "check_study_dir",
    "run_study",
    "study_report",
    "write_study",
]

#: Draws one figure: (runs, the study's table, PNG path) -> None.
Figure = Callable[[pd.DataFrame, pd.DataFrame, Path], None]


@dataclass(frozen=True)
class Study:
    """One experiment of a seed paper, as dcnsim runs it."""

    name: str
    title: str
    #: The seed paper and the part of it the study reruns.
    seed: str
    #: ``runs(quick=, jobs=, progress=)`` -> one row per run (the study's own columns).
    runs: Callable[..., pd.DataFrame]
    #: ``(runs, verbose)`` -> (the main table, the printed text).
    tables: Callable[[pd.DataFrame, bool], tuple[pd.DataFrame, str]]
    #: ``runs`` -> the seed's claims with dcnsim's numbers and verdicts.
    claims: Callable[[pd.DataFrame], list[Claim]]
    #: One per figure of the seed: its file stem (``fig6b``) -> how to draw it (a
    #: drawer writes nothing when the runs hold nothing of its figure).
    figures: Mapping[str, Figure]
    #: Further files beside the standard ones: (runs, table, dir) -> their paths.
    extras: Callable[[pd.DataFrame, pd.DataFrame, Path], list[Path]] | None = None
    #: Whether ``runs`` takes ``seeds=`` (False: the scenarios hold no randomness).
    seeded: bool = True
    #: The parts of the study ``runs`` can run alone (``runs(experiments=[...])``),
    #: each named as its rows' ``experiment`` column: ``scripts/studies_doc.py run
    #: --experiments`` reruns them in place in the results files.
    experiments: tuple[str, ...] = ()
    #: Claims whose quick verdict disagreed with the full one when both were run:
    #: the start of the claim's text -> why the quick grid cannot decide it. On the
    #: quick variant their verdict is ``quick grid cannot decide``, with the reason.
    quick_undecided: Mapping[str, str] = field(default_factory=dict)

    def printed(self, runs: pd.DataFrame, verbose: bool = False) -> tuple[pd.DataFrame, str]:
        """The main table and the text ``dcnsim study`` prints, every line within
        ``LINE_WIDTH`` columns: ``tables``' text with its prose lines wrapped (its
        tables fit already, ``format_table``)."""
        table, text = self.tables(runs, verbose)
        return table, fit_lines(text)


@dataclass(frozen=True)
class StudyOutput:
    """A study's results: the printed text, the main table, every run, the claims,
    the scenarios it ran and when."""

    study: Study
    text: str
    table: pd.DataFrame
    detail: pd.DataFrame
    claims: list[Claim]
    scenarios: list[Scenario] = field(default_factory=list)
    #: ``started`` (UTC, ISO 8601), ``wall_s``, ``quick``, ``jobs``.
    timing: dict[str, object] = field(default_factory=dict)


def run_study(
    study: Study,
    quick: bool = False,
    jobs: int | None = None,
    verbose: bool = False,
    progress: Progress | None = None,
    seeds: int | None = None,
) -> StudyOutput:
    """Run ``study`` and format its tables; ``seeds``: run each point with seeds
    1..``seeds`` instead of the variant's own (``ValueError`` for a study that is not
    ``seeded``)."""
    options: dict[str, object] = {}
    if seeds is not None:
        if not study.seeded:
            raise ValueError(f"{study.name} has no randomness: every seed gives the same run")
        options["seeds"] = list(range(1, seeds + 1))
    started = datetime.now(UTC)
    clock = time.perf_counter()
    with recorded_scenarios() as scenarios:
        detail = study.runs(quick=quick, jobs=jobs, progress=progress, **options)
    timing = {
        "started": started.isoformat(timespec="seconds"),
        "wall_s": time.perf_counter() - clock,
        "quick": quick,
        "jobs": jobs or os.cpu_count() or 1,
    }
    with quick_undecided(study.quick_undecided if quick else {}):
        table, text = study.printed(detail, verbose)
        claims = marked_quick(study.claims(detail))
    return StudyOutput(study, text, table, detail, claims, scenarios, timing)


def write_study(output: StudyOutput, out_dir: str | os.PathLike[str]) -> list[Path]:
    """Write ``study.csv`` (the main table), ``runs.csv`` (every run), ``claims.csv``
    (seed vs dcnsim), ``checks.csv`` (physical bounds and sanity checks), each figure
    of the seed as PNG, SVG and PDF, the study's extras and ``report.html``, whole or not at all.
    Returns the paths, in that order."""
    study = output.study
    names: list[str] = []

    def write(tmp: Path) -> None:
        output.table.to_csv(tmp / "study.csv", index=False)
        output.detail.to_csv(tmp / "runs.csv", index=False)
        claims_table(output.claims).to_csv(tmp / "claims.csv", index=False)
        claims_table(output.claims, checks=True).to_csv(tmp / "checks.csv", index=False)
        names.extend(["study.csv", "runs.csv", "claims.csv", "checks.csv"])
        for stem, draw in study.figures.items():
            draw(output.detail, output.table, tmp / f"{stem}.png")
            # in FORMATS; a figure of nothing that was run is not drawn
            names.extend(f"{stem}.{f}" for f in FORMATS if (tmp / f"{stem}.{f}").exists())
        if study.extras is not None:
            names.extend(p.name for p in study.extras(output.detail, output.table, tmp))
        (tmp / "report.html").write_text(study_report(output, tmp), encoding="utf-8")
        names.append("report.html")

    out = outdir.write_whole(out_dir, write, _foreign_to_study)
    return [out / name for name in names]


def check_study_dir(out_dir: str | os.PathLike[str]) -> Path:
    """The output path, if ``write_study`` may create or replace it; else OSError."""
    return outdir.check_output_dir(out_dir, _foreign_to_study)


def _foreign_to_study(out: Path) -> list[str]:
    """Entries a study does not write: it writes tables (CSV), figures (PNG, SVG, PDF)
    and its report (HTML), nothing else."""
    kept = (".csv", ".html", *(f".{f}" for f in FORMATS))
    return outdir.foreign_files(out, lambda p: p.suffix in kept)


def study_scenarios(scenarios: Iterable[Scenario]) -> list[tuple[str, str]]:
    """Each distinct scenario as the TOML file that reproduces its run, by its name."""
    seen: dict[str, str] = {}
    for scenario in scenarios:
        text = scenario.to_toml()
        seen.setdefault(text, str(scenario.get("name") or f"scenario {len(seen) + 1}"))
    return [(name, text) for text, name in seen.items()]


def study_report(output: StudyOutput, directory: Path) -> str:
    """The report of a study whose tables and figures are in ``directory``."""
    study = output.study
    facts = {
        "study": study.name,
        "seed": study.seed,
        "variant": "quick" if output.timing.get("quick") else "full",
        "runs": len(output.detail),
        "started (UTC)": output.timing.get("started", "-"),
        "wall time (s)": f"{float(output.timing.get('wall_s', 0.0)):.1f}",
        "simulation time, summed over runs (s)": f"{float(output.detail['wall_s'].sum()):.1f}",
        "parallel jobs": output.timing.get("jobs", "-"),
        **machine(),
    }
    pngs = [directory / f"{stem}.png" for stem in study.figures]
    sections = [
        {"heading": "Run", "facts": facts},
        {
            "heading": "The seed's claims against dcnsim",
            "table": table_html(claims_table(output.claims), "verdict"),
        },
        {
            "heading": "Checks: physical bounds and sanity checks (not the seed's claims)",
            "table": table_html(claims_table(output.claims, checks=True), "verdict"),
        },
        {"heading": "Figures", "figures": [figure(p, p.name) for p in pngs if p.exists()]},
        {"heading": "Main table", "table": table_html(output.table)},
        {"heading": "As printed", "pre": output.text},
        {
            "heading": f"Scenario files ({len(output.scenarios)} runs)",
            "scenarios": study_scenarios(output.scenarios),
        },
    ]
    return page(f"dcnsim study {study.name}: {study.title}", sections)
