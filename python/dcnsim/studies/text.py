"""Plain-text output of the studies: aligned tables, numbers, the seed-vs-dcnsim claims.

Every study prints through these, so the tables of all studies look alike.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd


@dataclass(frozen=True)
class Claim:
    """One claim of a seed checked against dcnsim's runs.

    ``claim`` says what is checked, ``seed`` what the seed reports (its number or its
    words), ``dcnsim`` what dcnsim measured, ``ok`` the verdict (``None``: the runs
    do not have what the check needs, e.g. a single policy).
    """

    claim: str
    seed: str
    dcnsim: str
    ok: bool | None


def verdict(ok: bool | None) -> str:
    """``yes``, ``NO`` or ``n/a``: the verdict column of every claims table."""
    return "n/a" if ok is None else ("yes" if ok else "NO")


def claim_lines(claims: Sequence[Claim]) -> list[str]:
    """The claims as printed under a study's table: ``[yes] claim (dcnsim: ...)``."""
    return [f"  [{verdict(c.ok):<3}] {c.claim}" for c in claims]


def claims_table(claims: Sequence[Claim]) -> pd.DataFrame:
    """The "seed's number | dcnsim's number | verdict" table of a study."""
    return pd.DataFrame(
        {
            "claim": [c.claim for c in claims],
            "seed": [c.seed for c in claims],
            "dcnsim": [c.dcnsim for c in claims],
            "verdict": [verdict(c.ok) for c in claims],
        },
        columns=["claim", "seed", "dcnsim", "verdict"],
    )


def format_table(table: pd.DataFrame) -> str:
    """A plain-text table: a header row, a rule, one line per row; numbers to the right."""
    columns = [str(c) for c in table.columns]
    cells = [[_cell(v) for v in row] for row in table.itertuples(index=False)]
    numeric = [
        all(_looks_numeric(row[j]) for row in cells) and len(cells) > 0 for j in range(len(columns))
    ]
    widths = [max([len(c), *(len(row[j]) for row in cells)]) for j, c in enumerate(columns)]

    def line(values: Sequence[str]) -> str:
        parts = [
            v.rjust(w) if num else v.ljust(w)
            for v, w, num in zip(values, widths, numeric, strict=True)
        ]
        return "  ".join(parts).rstrip()

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(columns), rule, *(line(row) for row in cells)])


def _cell(value: Any) -> str:
    if isinstance(value, float | np.floating):
        return "-" if np.isnan(value) else f"{value:g}"
    return str(value)


def _looks_numeric(text: str) -> bool:
    if text in ("-", ""):
        return True
    try:
        float(text.lstrip("<>=≥ ").removesuffix("%"))
    except ValueError:
        return False
    return True


def num_text(value: Any, digits: int) -> str:
    """``value`` with ``digits`` decimals, ``-`` when missing."""
    return "-" if value is None or pd.isna(value) else f"{float(value):.{digits}f}"


def int_text(value: Any) -> str:
    """``value`` as a whole number, ``-`` when missing."""
    return "-" if value is None or pd.isna(value) else str(int(value))


def ranges(values: Sequence[int]) -> str:
    """``1..5`` for a run of consecutive numbers, else the numbers with commas."""
    if values and list(values) == list(range(values[0], values[-1] + 1)) and len(values) > 2:
        return f"{values[0]}..{values[-1]}"
    return ", ".join(map(str, values))
