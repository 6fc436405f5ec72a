"""Figures of dcnsim (studies, sweeps, ``dcnsim plot``): matplotlib without a display,
each figure written ready for a paper in three formats."""

from __future__ import annotations

from pathlib import Path
from typing import Any

#: The formats every figure is written in, beside each other: PNG at ``PNG_DPI`` (for
#: a page or a slide), SVG (text kept as text, for editing) and PDF (for LaTeX).
FORMATS = ("png", "svg", "pdf")

#: A PNG's resolution: 300 dpi, what journals ask of line art at print size.
PNG_DPI = 300


def pyplot() -> Any:
    """``matplotlib.pyplot`` on the Agg backend (no display needed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save(fig: Any, path: Path) -> list[Path]:
    """Write ``fig`` as ``path`` (its ``.png``, at ``PNG_DPI``) and beside it as
    ``.svg`` and ``.pdf``, each whole (by rename), without the creation date (the same
    figure gives the same files), and free it. Returns the files written, in
    ``FORMATS`` order."""
    from dcnsim import outdir

    plt = pyplot()
    written = []
    try:
        fig.tight_layout()
        for fmt in FORMATS:
            target = path.with_suffix(f".{fmt}")
            options: dict[str, Any] = {"format": fmt}
            if fmt == "png":
                options["dpi"] = PNG_DPI
            else:
                options["metadata"] = {"CreationDate": None} if fmt == "pdf" else {"Date": None}
            with plt.rc_context({"svg.fonttype": "none"}):  # text stays text, for editing
                outdir.write_atomic(target, lambda p, o=options: fig.savefig(p, **o))
            written.append(target)
    finally:
        plt.close(fig)
    return written


#: How the seed's numbers look in every study figure: open black diamonds, beside
#: dcnsim's lines and markers, in the legend as "seed".
SEED_STYLE = {"marker": "D", "s": 45, "facecolors": "none", "edgecolors": "black", "zorder": 4}


def seed_values(ax: Any, x: Any, y: Any, label: str = "seed", lower_bound: Any = None) -> None:
    """Draw the seed's numbers (``x``, ``y``) on ``ax`` beside dcnsim's, labelled
    ``label`` in the legend; ``lower_bound`` (one bool per point): the seed gives only
    a lower bound there (``> 500``), drawn with an arrow up from the diamond."""
    import numpy as np

    x, y = np.atleast_1d(np.asarray(x, dtype=float)), np.atleast_1d(np.asarray(y, dtype=float))
    ax.scatter(x, y, label=label, **SEED_STYLE)
    if lower_bound is not None:
        up = np.asarray(lower_bound, dtype=bool)
        ax.scatter(x[up], y[up], marker="^", color="black", s=25, zorder=4)


def mean_over_seeds(ax: Any, runs: Any, x: str, y: str, scale: float = 1.0, **plot: Any) -> Any:
    """Draw ``y`` x ``scale`` against ``x`` from the runs ``runs`` (one row per run,
    the seeds of a point sharing its ``x``): the mean over the seeds at each ``x``,
    with error bars of its 95 % Student-t interval (none where one seed ran).
    ``plot``: matplotlib's ``errorbar`` options (``label``, ``marker``...)."""
    from dcnsim.studies.stats import t95_half_width

    grouped = runs.groupby(x, sort=True)[y]
    mean = grouped.mean() * scale
    half = grouped.agg(t95_half_width).fillna(0.0) * scale
    return ax.errorbar(mean.index, mean.to_numpy(), yerr=half.to_numpy(), capsize=3, **plot)
