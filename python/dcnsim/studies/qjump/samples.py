"""The applications' samples in a run's row, kept as JSON lists so that the study's
``runs.csv`` holds them whole and reads back as it was written (``scripts/
studies_doc.py`` renders docs/studies.md from ``docs/results/qjump.csv``)."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pandas as pd


def encode(row: dict[str, Any]) -> dict[str, Any]:
    """``row`` with every array as a JSON list."""
    return {k: json.dumps(v.tolist()) if isinstance(v, np.ndarray) else v for k, v in row.items()}


def decode(row: pd.Series) -> pd.Series:
    """``row`` with every JSON list as an array again."""
    return row.map(lambda v: np.asarray(json.loads(v)) if _is_list(v) else v)


def _is_list(v: Any) -> bool:
    return isinstance(v, str) and v[:1] == "["
