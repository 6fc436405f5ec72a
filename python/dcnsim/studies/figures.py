"""Figures of the studies: matplotlib without a display, one PNG per figure of a seed."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def pyplot() -> Any:
    """``matplotlib.pyplot`` on the Agg backend (no display needed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save(fig: Any, path: Path, dpi: int = 110, svg: bool = False) -> None:
    """Write ``fig`` as a PNG (and with ``svg`` also beside it as SVG, text kept as
    text) and free it."""
    plt = pyplot()
    fig.tight_layout()
    fig.savefig(path, dpi=dpi)
    if svg:
        with plt.rc_context({"svg.fonttype": "none"}):
            fig.savefig(path.with_suffix(".svg"))
    plt.close(fig)
