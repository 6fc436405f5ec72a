"""``report.html``: one self-contained page of a study or a sweep.

The page holds everything a reader needs to judge the numbers: the seed-vs-dcnsim
claims with their verdicts, the figures (PNG, embedded as data URIs, so the file
can be mailed or archived alone), the tables, the exact scenario files that ran,
the dcnsim version, the machine and the run times. No script, no external resource.
"""

from __future__ import annotations

import base64
import html
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from dcnsim.scenario import Scenario

if TYPE_CHECKING:
    from dcnsim.studies.study import StudyOutput

__all__ = ["page", "study_report"]

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1200px; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 2em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0; }
th, td { border: 1px solid #ddd; padding: 3px 8px; text-align: right; vertical-align: top; }
th { background: #f3f3f3; } td.text, th.text { text-align: left; }
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
    text = table.to_html(index=False, na_rep="-", border=0, escape=True)
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
