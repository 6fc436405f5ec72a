"""The applications' samples in a run's row, kept as JSON lists so that the study's
``runs.csv`` holds them whole and reads back as it was written (``scripts/
studies_doc.py`` renders docs/studies.md from ``docs/results/qjump.csv``), and what
each seed's runs measure of them (``per_seed``)."""

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


#: Each application's metric and its ``ops`` application name.
METRICS = {
    "ptp": ("periodic", "offset error"),
    "memcached": ("request_response", "request latency"),
    "naiad": ("barrier", "sync time"),
    "hadoop": ("shuffle", "job runtime"),
}


def rms(x: np.ndarray) -> float:
    return float(np.sqrt(np.mean(np.square(x)))) if len(x) else np.nan


def p99(x: np.ndarray) -> float:
    return float(np.percentile(x, 99)) if len(x) else np.nan


def per_seed(runs: pd.DataFrame) -> pd.DataFrame:
    """One row per case and seed: ``ptp_max_s``, ``mc_p99_s``, ``mc_slow`` (requests
    over 200 ms) of ``mc_n``, ``nx_p99_s``, ``hadoop_jobs`` and ``rms_<app>``, each
    application's RMS metric over its RMS alone in the same seed (Figure 3; Hadoop's
    alone is the shuffle alone; a ``*_stack`` case's alone is ``alone_stack``, and
    Hadoop, which has no run alone with the stack, gets none)."""
    rows = []
    for seed, group in runs[runs["kind"] == "case"].groupby("seed", sort=True):
        decoded = {row["case"]: decode(row) for _, row in group.iterrows()}
        bases = {
            suffix: {
                app: rms(decoded["hadoop_alone" if app == "hadoop" else f"alone{suffix}"][app])
                if f"alone{suffix}" in decoded and (app != "hadoop" or not suffix)
                else np.nan
                for app in METRICS
            }
            for suffix in ("", "_stack")
        }
        for case, r in decoded.items():
            base = bases["_stack" if case.endswith("_stack") else ""]
            row: dict[str, Any] = {
                "case": case,
                "seed": seed,
                "ptp_max_s": float(np.max(r["ptp"])) if len(r["ptp"]) else np.nan,
                "mc_p99_s": p99(r["memcached"]),
                "mc_slow": int(np.sum(r["memcached"] > 0.2)),
                "mc_n": len(r["memcached"]),
                "nx_p99_s": p99(r["naiad"]),
                "hadoop_jobs": len(r["hadoop"]),
            }
            for app in METRICS:
                row[f"rms_{app}"] = rms(r[app]) / base[app] if base[app] > 0 else np.nan
            rows.append(row)
    return pd.DataFrame(rows)
