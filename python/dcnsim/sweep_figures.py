"""The ``[[figures]]`` of a sweep, drawn from its directory (``dcnsim.report`` puts them
in ``report.html``; each is also written beside it as ``NAME.png`` and ``NAME.svg``).

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
values of the runs, from the tables the runs wrote.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dcnsim import outdir
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
    caption: str
    data: pd.DataFrame


def draw(directory: Path, sweep: Sweep, figure: Mapping[str, str], catalog: pd.DataFrame) -> Drawn:
    """Draw one ``[[figures]]`` entry of ``sweep`` from its directory and write
    ``NAME.png`` and ``NAME.svg`` there (each whole, by rename)."""
    from dcnsim.studies.figures import pyplot

    keys = {column_name(k): k for k in [*sweep.grid, *(k for g in sweep.zipped for k in g)]}
    keys["seed"] = "seed"
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    try:
        if figure.get("kind", "line") == "cdf":
            caption, data = _cdf(directory, figure, keys, catalog, ax)
        else:
            caption, data = _line(directory, figure, keys, catalog, ax)
        if "y" in figure.get("log", ""):
            ax.set_yscale("log")
        for axis in (ax.xaxis, ax.yaxis):
            if axis.get_scale() == "log":
                _plain_log_ticks(axis)
        ax.grid(True, which="both", alpha=0.3)
        if figure.get("by"):
            ax.legend(fontsize=8)
        fig.tight_layout()
        name = figure["name"]
        png, svg = directory / f"{name}.png", directory / f"{name}.svg"
        outdir.write_atomic(png, lambda p: fig.savefig(p, format="png", dpi=110))
        with plt.rc_context({"svg.fonttype": "none"}):  # text stays text, for editing
            outdir.write_atomic(
                svg, lambda p: fig.savefig(p, format="svg", metadata={"Date": None})
            )
    finally:
        plt.close(fig)
    return Drawn(name, png, svg, caption, data)


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
    keys: Mapping[str, str],
    catalog: pd.DataFrame,
    ax: Any,
) -> tuple[str, pd.DataFrame]:
    from dcnsim.studies.stats import mean_ci

    x, y, by, table = figure["x"], figure["y"], figure.get("by"), figure["table"]
    stat = figure.get("stat", "mean")
    group = [k for k in (by, x) if k]
    per_run = figure_query(directory, figure, line_sql(figure))
    points = mean_ci(per_run, group, ["value"])
    factor, shown = display_unit(unit(y), float(np.nanmax(np.abs(points["value"]), initial=0)))
    numeric = pd.api.types.is_numeric_dtype(points[x])
    order = _grid_order(catalog, x)
    position = (lambda v: v) if numeric else order.index
    lines = [(v, points[points[by] == v]) for v in _grid_order(catalog, by)] if by else []
    for value, line in lines or [(None, points)]:
        line = line.assign(at=line[x].map(position)).sort_values("at")
        ax.errorbar(
            line["at"], line["value"] / factor, yerr=line["value_ci"].fillna(0) / factor,
            marker="o", capsize=3, label=None if by is None else f"{keys[by]} = {value}",
        )  # fmt: skip
    if not numeric:
        ax.set_xticks(range(len(order)), [str(v) for v in order])
        ax.set_xlim(-0.5, len(order) - 0.5)
    elif "x" in figure.get("log", ""):
        ax.set_xscale("log")
    elif len(order) <= 12:
        ax.set_xticks(order)
    ax.set_xlabel(axis_label(keys[x], ""))
    ax.set_ylabel(axis_label(f"{stat} {y}", shown))
    seeds = int(points["runs"].max()) if len(points) else 0
    over = f"mean of {seeds} seeds, 95 % interval" if seeds > 1 else "one seed"
    ax.set_title(f"{stat} of {table}.{y} per run: {over}{_rows(figure)}", fontsize=10)
    rows = f" of the {ROWS.get(table, 'rows')} where {figure['where']}" if "where" in figure else ""
    caption = (
        f"{figure['name']}: the {stat} of {y}{rows} in each run, against {keys[x]}"
        + (f", a line per {keys[by]}" if by else "")
        + (
            f"; each point the mean over the seeds (up to {seeds}), with its 95 % interval."
            if seeds > 1
            else "; one seed per point."
        )
    )
    return caption, points


def _cdf(
    directory: Path,
    figure: Mapping[str, str],
    keys: Mapping[str, str],
    catalog: pd.DataFrame,
    ax: Any,
) -> tuple[str, pd.DataFrame]:
    y, by, table = figure["y"], figure.get("by"), figure["table"]
    found = figure_query(directory, figure, cdf_sql(figure))
    found = found[found["n"] > 0]
    largest = max((np.nanmax(np.abs(q)) for q in found["q"]), default=0.0)
    factor, shown = display_unit(unit(y), float(largest))
    rows = ROWS.get(table, "rows")
    lines = [(v, found[found[by] == v]) for v in _grid_order(catalog, by)] if by else []
    drawn = []
    for value, line in lines or [(None, found)]:
        if not len(line):
            continue
        n = int(line["n"].iloc[0])
        label = f"{n} {rows}" if by is None else f"{keys[by]} = {value} ({n} {rows})"
        quantiles = np.asarray(line["q"].iloc[0], dtype=float)
        ax.plot(quantiles / factor, CDF_POINTS, label=label)
        curve = pd.DataFrame({"n": n, "probability": CDF_POINTS, "value": quantiles})
        drawn.append(curve if by is None else curve.assign(**{by: value}))
    if "x" in figure.get("log", ""):
        ax.set_xscale("log")
    ax.set_xlabel(axis_label(y, shown))
    ax.set_ylabel(f"fraction of {rows} at or below")
    ax.set_title(f"CDF of {table}.{y}, all seeds pooled{_rows(figure)}", fontsize=10)
    where = f" where {figure['where']}" if "where" in figure else ""
    caption = (
        f"{figure['name']}: the distribution (CDF) of {y} over the {rows}{where} of every run, "
        "all seeds pooled" + (f", a line per {keys[by]}." if by else ".")
    )
    return caption, pd.concat(drawn, ignore_index=True) if drawn else pd.DataFrame()
