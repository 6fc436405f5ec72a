"""Statistics over the seeds of a point: means and 95 % confidence intervals."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

#: Two-sided 95 % quantiles of Student's t for 1..30 degrees of freedom.
_T95 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
)  # fmt: skip


def t95_half_width(values: Iterable[float]) -> float:
    """Half-width of the 95 % confidence interval of the mean of ``values`` (Student t;
    NaN for fewer than two values; 1.96 beyond 30 degrees of freedom)."""
    x = np.asarray([v for v in values if not pd.isna(v)], dtype=float)
    if len(x) < 2:
        return np.nan
    t = _T95[len(x) - 2] if len(x) - 1 <= len(_T95) else 1.96
    return float(t * x.std(ddof=1) / np.sqrt(len(x)))


def mean_ci(runs: pd.DataFrame, keys: Sequence[str], columns: Sequence[str]) -> pd.DataFrame:
    """Per group of ``keys``: ``runs`` (how many), then for each of ``columns`` its mean
    over the group and ``<column>_ci``, the half-width of its 95 % interval."""
    rows = []
    for point, group in runs.groupby(list(keys), sort=False):
        row = dict(zip(keys, point, strict=True))
        row["runs"] = len(group)
        for column in columns:
            row[column] = group[column].mean()
            row[f"{column}_ci"] = t95_half_width(group[column])
        rows.append(row)
    names = [*keys, "runs", *(n for c in columns for n in (c, f"{c}_ci"))]
    return pd.DataFrame(rows, columns=names)
