"""What a notebook shows of a ``Scenario`` or ``Results`` (their ``_repr_html_``): a
short summary through the template ``templates/summary.html``, with the reports'
Jinja environment (``dcnsim.html``): a heading with the scenario's name, a line saying
what ran (``dcnsim.labels``), facts as key-value pairs and, of a run, its tables with
their row counts. The objects gather their own facts from their values, the run's
summary and columns, so showing a result makes no DataFrame; this module only lays
them out."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dcnsim.html import environment

__all__ = ["summary_html"]


def summary_html(
    name: Any,
    line: str,
    facts: Sequence[tuple[str, Any]],
    tables: Sequence[tuple[str, str, str]] = (),
) -> str:
    """The summary of the scenario named ``name`` (None: unnamed): ``line`` under the
    heading, then ``facts`` and ``tables`` (name, rows, columns or where they are)."""
    heading = f"dcnsim scenario: {name}" if name else "dcnsim scenario"
    return (
        environment()
        .get_template("summary.html")
        .render(heading=heading, line=line, facts=facts, tables=tables)
    )
