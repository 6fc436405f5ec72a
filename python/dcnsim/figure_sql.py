"""The queries of a sweep's ``[[figures]]`` (``sweeps.FIGURE_KEYS``), as DuckDB SQL over
a sweep directory's views (``dcnsim.store.query``): what ``dcnsim.sweep_figures`` draws
and what ``dcnsim.sweeps`` tries on empty tables before the first run.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

__all__ = ["CDF_POINTS", "cdf_sql", "figure_sql", "line_sql"]

#: The probabilities at which a CDF is drawn (the quantiles of ``y``).
CDF_POINTS = np.linspace(0.0, 1.0, 1001)


def figure_sql(figure: Mapping[str, str]) -> str:
    """The query of a figure of either kind."""
    return cdf_sql(figure) if figure.get("kind", "line") == "cdf" else line_sql(figure)


def line_sql(figure: Mapping[str, str]) -> str:
    """A line figure's query: its statistic of ``y`` per run (and ``by``, ``x``), over
    the rows with a value, and how many rows had none (``missing``)."""
    group = [k for k in (figure.get("by"), figure["x"]) if k]
    selected = ", ".join(f'"{k}"' for k in dict.fromkeys([*group, "seed"]))
    stat = _stat_sql(figure.get("stat", "mean"), figure["y"])
    return (
        f"SELECT {selected}, {stat} AS value, {_missing(figure)} AS missing "
        f"FROM {figure['table']}{_where(figure)} GROUP BY ALL"
    )


def cdf_sql(figure: Mapping[str, str]) -> str:
    """A CDF figure's query: the quantiles of ``y`` at ``CDF_POINTS`` (per ``by``) over
    the ``n`` rows with a value, and how many rows had none (``missing``)."""
    y, by = figure["y"], figure.get("by")
    probabilities = ", ".join(repr(float(p)) for p in CDF_POINTS)
    selected = f'"{by}", ' if by else ""
    return (
        f'SELECT {selected}quantile_cont("{y}", [{probabilities}]) AS q, count("{y}") AS n, '
        f"{_missing(figure)} AS missing FROM {figure['table']}{_where(figure)}"
        + (" GROUP BY ALL" if by else "")
    )


def _missing(figure: Mapping[str, str]) -> str:
    """The rows a statistic of ``y`` leaves out for want of a value: of ``flows``, the
    TCP flows that did not finish (a stream has no FCT by nature, so is not counted;
    ``dcnsim.unfinished``); of another table, every row whose ``y`` is null."""
    tcp = " AND kind = 'tcp'" if figure["table"] == "flows" else ""
    return f'count(*) FILTER (WHERE "{figure["y"]}" IS NULL{tcp})'


def _where(figure: Mapping[str, str], *conditions: str) -> str:
    terms = [*conditions, *([f"({figure['where']})"] if "where" in figure else [])]
    return f" WHERE {' AND '.join(terms)}" if terms else ""


def _stat_sql(stat: str, column: str) -> str:
    """The DuckDB aggregate of ``stat`` (``sweeps.FIGURE_STAT``) over ``column``."""
    if stat == "mean":
        return f'avg("{column}")'
    if stat in ("median", "min", "max"):
        return f'{stat}("{column}")'
    return f'quantile_cont("{column}", {float(stat[1:]) / 100!r})'
