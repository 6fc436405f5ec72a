"""Statistics over the seeds of a point: means and 95 % confidence intervals."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd


def t95_half_width(values: Iterable[float]) -> float:
    """Half-width of the 95 % confidence interval of the mean of ``values``: Student's
    t quantile (SciPy's, for any number of values) times the standard error; NaN for
    fewer than two values."""
    from scipy.special import stdtrit  # the inverse of Student's t CDF

    x = np.asarray([v for v in values if not pd.isna(v)], dtype=float)
    if len(x) < 2:
        return np.nan
    return float(stdtrit(len(x) - 1, 0.975) * x.std(ddof=1) / np.sqrt(len(x)))


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


def paired_difference(a: pd.Series, b: pd.Series) -> tuple[float, float]:
    """The mean of ``a - b`` and the half-width of its 95 % interval, ``a`` and ``b``
    one value per seed (indexed by seed). The seeds both have are paired: the runs of
    one seed share their flows, so the per-seed differences are what varies. NaN
    half-width with fewer than two common seeds."""
    common = a.index.intersection(b.index)
    differences = (a.loc[common] - b.loc[common]).to_numpy(dtype=float)
    if not len(differences):
        return np.nan, np.nan
    return float(np.nanmean(differences)), t95_half_width(differences)


def by_seed(runs: pd.DataFrame, column: str, **point: object) -> pd.Series:
    """``column`` of the runs at ``point`` (column=value, e.g. ``policy="rps"``), one
    value per seed, indexed by seed (missing values left out)."""
    mask = np.ones(len(runs), dtype=bool)
    for key, value in point.items():
        mask &= (runs[key] == value).to_numpy()
    return runs[mask].set_index("seed")[column].dropna()


def share_interval(inside: int, runs: int) -> tuple[float, float]:
    """The 95 % Wilson score interval of the share ``inside / runs`` (SciPy's
    ``binomtest``): unlike the normal approximation it stays within [0, 1] and is not
    empty at 0 or ``runs``."""
    from scipy.stats import binomtest

    ci = binomtest(inside, runs).proportion_ci(confidence_level=0.95, method="wilson")
    return float(ci.low), float(ci.high)
