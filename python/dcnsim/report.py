"""``report.html``: one self-contained page of a study or a sweep.

The page holds everything a reader needs to judge the numbers: the seed-vs-dcnsim
claims with their verdicts, the figures (PNG, embedded as data URIs, so the file
can be mailed or archived alone), the tables, the exact scenario files that ran,
the dcnsim version, the machine and the run times. No script, no external resource.
The page is the Jinja template ``templates/report.html`` (autoescaped); this module
makes the page and the parts every page has (tables, figures, the machine) and gathers
a sweep's sections; a study's are gathered by ``dcnsim.studies.study.study_report``.
"""

from __future__ import annotations

import base64
import os
import platform
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from dcnsim import _core, outdir
from dcnsim.html import environment
from dcnsim.scenario import Scenario

if TYPE_CHECKING:
    from dcnsim.sweeps import Sweep

__all__ = ["figure", "machine", "page", "table_html", "write_sweep_report"]

#: A section of a page: ``heading`` and one of ``facts`` (a mapping), ``table`` (HTML),
#: ``figures`` (``png`` base64, ``name``, ``caption``), ``pre`` (text), ``scenarios``
#: ((label, TOML) pairs) or ``text``.
Section = dict[str, Any]


def page(title: str, sections: Iterable[Section]) -> str:
    """A whole HTML page: ``title`` and its sections, through the template."""
    return environment().get_template("report.html").render(title=title, sections=list(sections))


def table_html(table: pd.DataFrame, verdicts: str | None = None) -> Any:
    """A table (pandas escapes its cells); with ``verdicts``, that column's cells are
    coloured by their verdict."""
    from markupsafe import Markup

    text = table.to_html(
        index=False, na_rep="-", border=0, escape=True, classes="prose" if verdicts else None
    )
    if verdicts is not None:
        for value, css in (("yes", "yes"), ("NO", "NO"), ("n/a", "n/a"), ("within noise", "noise")):
            text = text.replace(f"<td>{value}</td>", f"<td class='{css}'>{value}</td>")
    return Markup(text)


def machine() -> dict[str, str]:
    """Where results were made: host, system, CPUs, Python and dcnsim versions."""
    return {
        "dcnsim": _core.__version__,
        "host": platform.node(),
        "system": platform.platform(),
        "cpus": str(os.cpu_count() or 1),
        "python": platform.python_version(),
    }


def figure(png: Path, caption: str) -> dict[str, str]:
    """A figure of a page: the PNG file embedded as a data URI, and its caption."""
    data = base64.b64encode(png.read_bytes()).decode("ascii")
    return {"png": data, "name": png.stem, "caption": caption}


def write_sweep_report(directory: str | os.PathLike[str], sweep: Sweep) -> Path:
    """Write ``report.html`` into a sweep directory (whole: by rename) and return its path;
    each of the sweep's figures (``dcnsim.sweep_figures``) is also written beside it as
    ``NAME.png``, ``NAME.svg`` and ``NAME.pdf``; a section counts and names the
    TCP flows each run left unfinished (left out of every FCT and slowdown figure).

    Every label is made from what ran: a run's scenario is named by the values its
    scenario file has at the grid's keys (not by the base scenario's ``name``, which
    the grid may have made untrue), legends and axes by the grid's keys.
    """
    from dcnsim.store import load, sessions
    from dcnsim.sweep_figures import draw

    directory = Path(directory)
    catalog = load(directory, "catalog")
    counts = catalog["status"].value_counts()
    varied = [*sweep.grid, *(k for g in sweep.zipped for k in g)]
    facts: dict[str, object] = {
        "sweep": sweep.name,
        "base scenario": f"{sweep.base.get('name') or '-'} (before the grid's changes)",
        "grid keys": ", ".join(varied),
        "runs": len(catalog),
        **{f"runs {status}": int(n) for status, n in counts.items()},
        "seeds": ", ".join(map(str, sweep.seeds)),
        "tables kept": ", ".join(sweep.tables),
        "simulation time, summed over runs (s)": f"{catalog['wall_s'].sum():.1f}",
        **machine(),
    }
    failed = catalog[catalog["status"] == "failed"][["run", *sweep.columns(), "error"]]
    drawn = [draw(directory, sweep, f, catalog) for f in sweep.figures]
    scenarios = []
    for run_id in catalog["run"]:
        path = directory / "runs" / f"run={run_id}" / "scenario.toml"
        if path.is_file():
            text = path.read_text(encoding="utf-8")
            scenarios.append((run_label(Scenario.from_toml_str(text), varied, run_id), text))
    sections: list[Section] = [
        {"heading": "Sweep", "facts": facts},
        {
            "heading": "Sessions (each call of the sweep)",
            "table": table_html(pd.DataFrame(sessions(directory))),
        },
        {
            "heading": "Figures",
            "figures": [
                figure(d.png, f"{d.caption} Files: {d.png.name}, {d.svg.name}, {d.pdf.name}.")
                for d in drawn
            ],
        },
        _unfinished_section(directory, catalog, varied),
        {"heading": "Failed runs", "table": table_html(failed)}
        if len(failed)
        else {"heading": "Failed runs", "text": "None."},
        {"heading": "Catalog", "table": table_html(catalog)},
        {"heading": "Sweep file (base scenario inline)", "pre": _toml(sweep)},
        {"heading": f"Scenario files ({len(scenarios)} runs)", "scenarios": scenarios},
    ]
    out = directory / "report.html"
    text = page(f"dcnsim sweep {sweep.name}", sections)
    outdir.write_atomic(out, lambda p: p.write_text(text, encoding="utf-8"))
    return out


def _unfinished_section(directory: Path, catalog: pd.DataFrame, varied: Sequence[str]) -> Section:
    """The report's account of the flows left out of every FCT and slowdown figure:
    per run its grid values, TCP flows, how many did not finish and which."""
    from dcnsim.unfinished import WARN_SHARE, named, unfinished_flows

    counts = unfinished_flows(directory)
    heading = "Unfinished flows (left out of every FCT and slowdown statistic)"
    if not len(counts):
        return {"heading": heading, "text": "No run kept a flows table with TCP flows."}
    if not counts["unfinished"].any():
        return {
            "heading": heading,
            "text": f"None: every TCP flow of the {len(counts)} runs finished.",
        }
    from dcnsim.sweeps import column_name

    shown = [column_name(k) for k in varied if k != "seed"]
    table = catalog[["run", *shown, "seed"]].merge(counts, on="run")
    table["share %"] = (100.0 * table["unfinished"] / table["tcp_flows"]).round(1)
    table["unfinished flows (flow_id:size_bytes)"] = table["ids"].map(named)
    table = table.drop(columns="ids")
    over = int((table["unfinished"] > WARN_SHARE * table["tcp_flows"]).sum())
    text = (
        f"{int(table['unfinished'].sum()):,} of {int(table['tcp_flows'].sum()):,} TCP flows did "
        f"not finish; {over} of {len(table)} runs left more than {100 * WARN_SHARE:g}% "
        "unfinished. The figures' means and percentiles are over finished flows only, their "
        "legends count those left out; a CDF stops at the share that finished."
    )
    return {"heading": heading, "text": text, "table": table_html(table)}


def run_label(scenario: Scenario, keys: Sequence[str], run_id: str) -> str:
    """A run of a sweep named by its scenario's values at the grid's ``keys`` and its
    seed: ``transport.protocol = dctcp, topology.k = 8, seed 2 (run 3f2a...)``."""
    values = [f"{key} = {_value(scenario.get(key))}" for key in keys if key != "seed"]
    return ", ".join([*values, f"seed {scenario.get('seed')}"]) + f" (run {run_id})"


def _value(value: object) -> str:
    import json

    return value if isinstance(value, str) else json.dumps(value)


def _toml(sweep: Sweep) -> str:
    import tomli_w

    return tomli_w.dumps(sweep.to_dict())
