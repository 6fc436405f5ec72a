"""``report.html``: one self-contained page of a study or a sweep.

The page holds everything a reader needs to judge the numbers: the seed-vs-dcnsim
claims with their verdicts, the figures (PNG, embedded as data URIs, so the file
can be mailed or archived alone), the tables, the exact scenario files that ran,
the dcnsim version, the machine and the run times. No script, no external resource.
"""

from __future__ import annotations

import base64
import html
import os
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from dcnsim import outdir
from dcnsim.scenario import Scenario

if TYPE_CHECKING:
    from dcnsim.studies.study import StudyOutput
    from dcnsim.sweeps import Sweep

__all__ = ["page", "study_report", "write_sweep_report"]

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1200px; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 2em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0; }
th, td { border: 1px solid #ddd; padding: 3px 8px; text-align: right; vertical-align: top; }
th { background: #f3f3f3; } td.text, th.text, table.prose td { text-align: left; }
td.yes { background: #dff0d8; } td.NO { background: #f8d7da; } td.n\\/a { color: #888; }
figure { margin: 1em 0; } figure img { max-width: 100%; border: 1px solid #eee; }
figcaption { font-size: 0.9em; color: #555; }
pre { background: #f7f7f7; padding: 0.8em; overflow-x: auto; font-size: 0.8em; }
details { margin: 0.3em 0; } summary { cursor: pointer; }
"""


def page(title: str, sections: Iterable[tuple[str, str]]) -> str:
    """A whole HTML page: ``title`` and (heading, HTML body) sections."""
    body = "\n".join(f"<h2>{html.escape(h)}</h2>\n{content}" for h, content in sections)
    return (
        "<!DOCTYPE html>\n<html lang='en'>\n<head>\n<meta charset='utf-8'>\n"
        f"<title>{html.escape(title)}</title>\n<style>{_STYLE}</style>\n</head>\n<body>\n"
        f"<h1>{html.escape(title)}</h1>\n{body}\n</body>\n</html>\n"
    )


def table_html(table: pd.DataFrame, verdicts: str | None = None) -> str:
    """A table; with ``verdicts``, that column's cells are coloured by their verdict."""
    text = table.to_html(
        index=False, na_rep="-", border=0, escape=True, classes="prose" if verdicts else None
    )
    if verdicts is not None:
        for value in ("yes", "NO", "n/a"):
            text = text.replace(f"<td>{value}</td>", f"<td class='{value}'>{value}</td>")
    return text


def facts_html(facts: Mapping[str, object]) -> str:
    """Key-value facts (version, machine, times) as a two-column table."""
    rows = "".join(
        f"<tr><th class='text'>{html.escape(str(k))}</th>"
        f"<td class='text'>{html.escape(str(v))}</td></tr>"
        for k, v in facts.items()
    )
    return f"<table>{rows}</table>"


def figures_html(paths: Sequence[Path]) -> str:
    """Each PNG embedded as a data URI, captioned with its file name."""
    parts = []
    for path in paths:
        data = base64.b64encode(path.read_bytes()).decode("ascii")
        parts.append(
            f"<figure><img src='data:image/png;base64,{data}' alt='{html.escape(path.stem)}'>"
            f"<figcaption>{html.escape(path.name)}</figcaption></figure>"
        )
    return "\n".join(parts) or "<p>No figures.</p>"


def scenarios_html(scenarios: Iterable[Scenario]) -> str:
    """Each distinct scenario as the TOML file that reproduces its run, folded."""
    seen: dict[str, str] = {}
    for scenario in scenarios:
        text = scenario.to_toml()
        seen.setdefault(text, str(scenario.get("name") or f"scenario {len(seen) + 1}"))
    return "\n".join(
        f"<details><summary>{html.escape(name)}</summary><pre>{html.escape(text)}</pre></details>"
        for text, name in seen.items()
    )


def study_report(output: StudyOutput, directory: Path) -> str:
    """The report of a study whose tables and figures are in ``directory``."""
    from dcnsim.studies.study import machine
    from dcnsim.studies.text import claims_table

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
    figures = [directory / f"{stem}.png" for stem in study.figures]
    sections = [
        ("Run", facts_html(facts)),
        ("The seed's claims against dcnsim", table_html(claims_table(output.claims), "verdict")),
        ("Figures", figures_html([p for p in figures if p.exists()])),
        ("Main table", table_html(output.table)),
        ("As printed", f"<pre>{html.escape(output.text)}</pre>"),
        (f"Scenario files ({len(output.scenarios)} runs)", scenarios_html(output.scenarios)),
    ]
    return page(f"dcnsim study {study.name}: {study.title}", sections)


def write_sweep_report(directory: str | os.PathLike[str], sweep: Sweep) -> Path:
    """Write ``report.html`` into a sweep directory (whole: by rename) and return its path.

    The sweep's figures (its ``[[figures]]``): per run the mean of ``y`` over the
    table's rows, then per ``x`` (and ``by``) the mean over seeds with its 95 %
    interval.
    """
    from dcnsim.store import load, sessions
    from dcnsim.studies.study import machine

    directory = Path(directory)
    catalog = load(directory, "catalog")
    counts = catalog["status"].value_counts()
    facts: dict[str, object] = {
        "sweep": sweep.name,
        "runs": len(catalog),
        **{f"runs {status}": int(n) for status, n in counts.items()},
        "seeds": ", ".join(map(str, sweep.seeds)),
        "tables kept": ", ".join(sweep.tables),
        "simulation time, summed over runs (s)": f"{catalog['wall_s'].sum():.1f}",
        **machine(),
    }
    failed = catalog[catalog["status"] == "failed"][["run", *sweep.columns(), "error"]]
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for figure in sweep.figures:
            path = Path(tmp) / f"{figure['name']}.png"
            _sweep_figure(directory, figure, path)
            paths.append(path)
        figures = figures_html(paths)
    scenarios = []
    for run_id in catalog["run"]:
        path = directory / "runs" / f"run={run_id}" / "scenario.toml"
        if path.is_file():
            scenarios.append(Scenario.from_toml_str(path.read_text(encoding="utf-8")))
    sections = [
        ("Sweep", facts_html(facts)),
        ("Sessions (each call of the sweep)", table_html(pd.DataFrame(sessions(directory)))),
        ("Figures", figures),
        ("Failed runs", table_html(failed) if len(failed) else "<p>None.</p>"),
        ("Catalog", table_html(catalog)),
        ("Sweep file (base scenario inline)", f"<pre>{html.escape(_toml(sweep))}</pre>"),
        (f"Scenario files ({len(scenarios)} runs)", scenarios_html(scenarios)),
    ]
    out = directory / "report.html"
    text = page(f"dcnsim sweep {sweep.name}", sections)
    outdir.write_atomic(out, lambda p: p.write_text(text, encoding="utf-8"))
    return out


def _toml(sweep: Sweep) -> str:
    import tomli_w

    return tomli_w.dumps(sweep.to_dict())


#: Units of a column, from the suffix of its name (docs/scenario.md: "columns carry
#: their unit in the name").
_UNITS = {"_s": "s", "_bps": "bit/s", "_bytes": "B", "_us": "µs", "_ms": "ms", "_pkts": "packets"}


def axis_label(column: str) -> str:
    """``fct_s`` -> ``fct_s (s)``; a column without a unit suffix as it is."""
    for suffix, unit in _UNITS.items():
        if column.endswith(suffix):
            return f"{column} ({unit})"
    return column


def _sweep_figure(directory: Path, figure: Mapping[str, str], path: Path) -> None:
    """One ``[[figures]]`` entry of a sweep, drawn into ``path``."""
    from dcnsim.store import query
    from dcnsim.studies.figures import pyplot, save
    from dcnsim.studies.stats import mean_ci

    x, y, by = figure["x"], figure["y"], figure.get("by")
    keys = [k for k in (by, x) if k]
    columns = ", ".join(f'"{k}"' for k in keys)
    table = figure["table"]
    per_run = query(
        directory, f'SELECT {columns}, seed, avg("{y}") AS "{y}" FROM {table} GROUP BY ALL'
    )
    points = mean_ci(per_run, keys, [y])
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for label, line in points.groupby(by, sort=True) if by else [(None, points)]:
        line = line.sort_values(x)
        ax.errorbar(
            line[x], line[y], yerr=line[f"{y}_ci"].fillna(0), marker="o", capsize=3,
            label=None if label is None else f"{by} = {label}",
        )  # fmt: skip
    ax.set_xlabel(axis_label(x))
    ax.set_ylabel(f"mean {axis_label(y)}")
    ax.set_title(f"{figure['name']}: {figure['table']}.{y}, 95 % intervals over seeds", fontsize=10)
    ax.grid(True, alpha=0.3)
    if by:
        ax.legend(fontsize=8)
    save(fig, path)
