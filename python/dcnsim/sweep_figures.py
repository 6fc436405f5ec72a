"""The ``[[figures]]`` of a sweep, drawn from its directory (``dcnsim.report`` puts them
in ``report.html``; each is also written beside it as ``NAME.png`` (300 dpi),
``NAME.svg`` and ``NAME.pdf``).

Two kinds (the entry's keys: ``sweeps.FIGURE_KEYS``, checked when the sweep is read):

- ``line`` (the default): per run one statistic of ``y`` over the table's rows
  (``stat``: mean, median, min, max or a percentile ``pNN``), then per ``x`` (and
  ``by``) the mean over seeds with the half-width of its 95 % Student-t interval as
  error bars;
- ``cdf``: the distribution of ``y`` over the table's rows of every run (every seed
  pooled), a line per ``by`` value.

``where`` (an SQL condition over the table's and the grid's columns) chooses the
rows, ``log`` the logarithmic axes (``x``, ``y`` or ``xy``). Axes are labelled with
the scenario keys the grid varied and the columns' units (``dcnsim.columns``), shown
in the prefixed unit that suits the values (ms, Gbit/s, kB); legends say the grid
values of the runs, from the tables the runs wrote, and name every key varied with
the legend's (a ``[[zip]]`` group's keys together).

Rows without a value of ``y`` are never dropped silently (``dcnsim.unfinished``): a
line figure's statistic is over the rows with a value and its legend and caption
count the rows left out (of ``flows``: the TCP flows that did not finish); a CDF is
over every row, those without a value counted above every value, so its curve stops
at the share that has one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dcnsim.columns import ROWS, axis_label, display_unit, unit
from dcnsim.figure_sql import CDF_POINTS, cdf_sql, line_sql
from dcnsim.sweeps import Sweep, column_name, figure_query

__all__ = ["Drawn", "draw"]


@dataclass(frozen=True)
class Drawn:
    """A figure written beside ``report.html``: its files, the caption that says what
    it shows, and the points drawn (in the columns' own units). A line figure's
    ``data``: the ``by`` and ``x`` columns, ``runs`` (seeds), ``value`` (the mean over
    seeds of the statistic per run) and ``value_ci``; a CDF's: ``by``, ``n`` (rows),
    ``probability`` and ``value`` (its quantile of ``y``)."""

    name: str
    png: Path
    svg: Path
    pdf: Path
    caption: str
    data: pd.DataFrame


def draw(directory: Path, sweep: Sweep, figure: Mapping[str, str], catalog: pd.DataFrame) -> Drawn:
    """Draw one ``[[figures]]`` entry of ``sweep`` from its directory and write
    ``NAME.png``, ``NAME.svg`` and ``NAME.pdf`` there (each whole, by rename)."""
    from dcnsim.studies.figures import pyplot, save

    keys = {column_name(k): k for k in [*sweep.grid, *(k for g in sweep.zipped for k in g)]}
    keys["seed"] = "seed"
    together = {
        column_name(k): [column_name(o) for o in group if o != k]
        for group in sweep.zipped
        for k in group
    }
    name_of = _Names(keys, together, catalog)
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    try:
        if figure.get("kind", "line") == "cdf":
            caption, data = _cdf(directory, figure, name_of, catalog, ax)
        else:
            caption, data = _line(directory, figure, name_of, catalog, ax)
        if "y" in figure.get("log", ""):
            ax.set_yscale("log")
        for axis in (ax.xaxis, ax.yaxis):
            if axis.get_scale() == "log":
                _plain_log_ticks(axis)
        ax.grid(True, which="both", alpha=0.3)
        if figure.get("by") or len(ax.get_legend_handles_labels()[0]):
            ax.legend(fontsize=8)
    except BaseException:
        plt.close(fig)
        raise
    png, svg, pdf = save(fig, directory / f"{figure['name']}.png")
    return Drawn(figure["name"], png, svg, pdf, caption, data)


class _Names:
    """How a figure names a grid column: by its scenario key, and a value of it with
    the values the keys zipped with it take at the same point
    (``topology.link.rate = 1Gbps, stop_time = 200ms``)."""

    def __init__(
        self, keys: Mapping[str, str], together: Mapping[str, list[str]], catalog: pd.DataFrame
    ) -> None:
        self.keys, self.together, self.catalog = keys, together, catalog

    def key(self, column: str) -> str:
        """``column``'s key, with those zipped with it: ``a.b (with c)``."""
        others = [self.keys[c] for c in self.together.get(column, [])]
        return self.keys[column] + (f" (with {', '.join(others)})" if others else "")

    def value(self, column: str, value: Any) -> str:
        """``key = value`` and each zipped key's value at the same grid point."""
        parts = [f"{self.keys[column]} = {value}"]
        rows = self.catalog[self.catalog[column] == value]
        for other in self.together.get(column, []):
            seen = list(dict.fromkeys(rows[other]))
            shown = seen[0] if len(seen) == 1 else "/".join(map(str, seen))
            parts.append(f"{self.keys[other]} = {shown}")
        return ", ".join(parts)


def _left_out(table: str, missing: int) -> str:
    """What a statistic left out, for a legend: ``3 unfinished flows left out``."""
    what = "unfinished flows" if table == "flows" else "rows without a value"
    return f"{missing:,} {what} left out"


def _plain_log_ticks(axis: Any) -> None:
    """A log axis's ticks labelled as plain numbers (0.2, 50, 100 rather than 2x10^-1),
    the minor ticks matplotlib would label (2, 3, 4, 6 within a decade or two) too."""
    from matplotlib import ticker

    class Plain(ticker.LogFormatter):
        def __call__(self, x: float, pos: int | None = None) -> str:
            return f"{x:g}" if super().__call__(x, pos) else ""

    axis.set_major_formatter(Plain(labelOnlyBase=False))
    axis.set_minor_formatter(Plain(labelOnlyBase=False, minor_thresholds=(2, 0.5)))


def _rows(figure: Mapping[str, str]) -> str:
    """A title's second line naming the rows chosen, if the figure chooses."""
    return f"\nrows where {figure['where']}" if "where" in figure else ""


def _grid_order(catalog: pd.DataFrame, column: str) -> list[Any]:
    """A grid column's values in grid order (the catalog's)."""
    return list(dict.fromkeys(catalog[column]))


def _line(
    directory: Path,
    figure: Mapping[str, str],
    names: _Names,
    catalog: pd.DataFrame,
    ax: Any,
) -> tuple[str, pd.DataFrame]:
    from dcnsim.studies.stats import mean_ci

    x, y, by, table = figure["x"], figure["y"], figure.get("by"), figure["table"]
    stat = figure.get("stat", "mean")
    group = [k for k in (by, x) if k]
    per_run = figure_query(directory, figure, line_sql(figure))
    points = mean_ci(per_run, group, ["value"])
    missing = per_run.groupby(group, dropna=False)["missing"].sum().rename("missing")
    points = points.merge(missing.reset_index(), on=group, how="left")
    factor, shown = display_unit(unit(y), float(np.nanmax(np.abs(points["value"]), initial=0)))
    numeric = pd.api.types.is_numeric_dtype(points[x])
    order = _grid_order(catalog, x)
    position = (lambda v: v) if numeric else order.index
    lines = [(v, points[points[by] == v]) for v in _grid_order(catalog, by)] if by else []
    for value, line in lines or [(None, points)]:
        line = line.assign(at=line[x].map(position)).sort_values("at")
        label = None if by is None else names.value(by, value)
        left_out = int(line["missing"].sum())
        if left_out:
            label = ("" if label is None else f"{label}; ") + _left_out(table, left_out)
        ax.errorbar(
            line["at"], line["value"] / factor, yerr=line["value_ci"].fillna(0) / factor,
            marker="o", capsize=3, label=label,
        )  # fmt: skip
    if not numeric:
        ax.set_xticks(range(len(order)), [str(v) for v in order])
        ax.set_xlim(-0.5, len(order) - 0.5)
    elif "x" in figure.get("log", ""):
        ax.set_xscale("log")
    elif len(order) <= 12:
        ax.set_xticks(order)
    ax.set_xlabel(axis_label(names.key(x), ""))
    ax.set_ylabel(axis_label(f"{stat} {y}", shown))
    seeds = int(points["runs"].max()) if len(points) else 0
    over = f"mean of {seeds} seeds, 95 % interval" if seeds > 1 else "one seed"
    ax.set_title(f"{stat} of {table}.{y} per run: {over}{_rows(figure)}", fontsize=10)
    rows = f" of the {ROWS.get(table, 'rows')} where {figure['where']}" if "where" in figure else ""
    left_out = int(points["missing"].sum())
    caption = (
        f"{figure['name']}: the {stat} of {y}{rows} in each run, against {names.key(x)}"
        + (f", a line per {names.key(by)}" if by else "")
        + (
            f"; each point the mean over the seeds (up to {seeds}), with its 95 % interval."
            if seeds > 1
            else "; one seed per point."
        )
        + (
            f" The {stat} is over the rows with a value: {_left_out(table, left_out)}"
            " (counted per line in the legend)."
            if left_out
            else ""
        )
    )
    return caption, points


def _cdf(
    directory: Path,
    figure: Mapping[str, str],
    names: _Names,
    catalog: pd.DataFrame,
    ax: Any,
) -> tuple[str, pd.DataFrame]:
    y, by, table = figure["y"], figure.get("by"), figure["table"]
    found = figure_query(directory, figure, cdf_sql(figure))
    found = found[found["n"] + found["missing"] > 0]
    largest = max((np.nanmax(np.abs(q)) for q in found["q"]), default=0.0)
    factor, shown = display_unit(unit(y), float(largest))
    rows = ROWS.get(table, "rows")
    lines = [(v, found[found[by] == v]) for v in _grid_order(catalog, by)] if by else []
    drawn = []
    for value, line in lines or [(None, found)]:
        if not len(line):
            continue
        n, missing = int(line["n"].iloc[0]), int(line["missing"].iloc[0])
        counted = f"{n:,} {rows}" + (f", {_left_out(table, missing)}" if missing else "")
        counted = counted.replace("left out", "above the curve")
        label = counted if by is None else f"{names.value(by, value)} ({counted})"
        # Rows without a value (unfinished flows) lie above every value: the curve
        # over all n + missing rows reaches n / (n + missing), not 1.
        reached = n / (n + missing)
        quantiles = np.asarray(line["q"].iloc[0], dtype=float) if n else np.full(1, np.nan)
        probability = CDF_POINTS * reached if n else np.zeros(1)
        ax.plot(quantiles / factor, probability, label=label)
        curve = pd.DataFrame(
            {"n": n, "missing": missing, "probability": probability, "value": quantiles}
        )
        drawn.append(curve if by is None else curve.assign(**{by: value}))
    if "x" in figure.get("log", ""):
        ax.set_xscale("log")
    ax.set_xlabel(axis_label(y, shown))
    ax.set_ylabel(f"fraction of {rows} at or below")
    ax.set_ylim(0, 1.02)
    ax.set_title(f"CDF of {table}.{y}, all seeds pooled{_rows(figure)}", fontsize=10)
    where = f" where {figure['where']}" if "where" in figure else ""
    missing = int(found["missing"].sum())
    caption = (
        f"{figure['name']}: the distribution (CDF) of {y} over the {rows}{where} of every run, "
        "all seeds pooled"
        + (f", a line per {names.key(by)}." if by else ".")
        + (
            f" {_left_out(table, missing).replace('left out', 'lie above every value')}: "
            "each curve stops at the share of its rows with a value."
            if missing
            else ""
        )
    )
    return caption, pd.concat(drawn, ignore_index=True) if drawn else pd.DataFrame()
