"""Flows that did not finish: counted and named wherever FCT or slowdown is summarised.

An unfinished TCP flow (still sending at ``stop_time``, or stuck) has no ``fct_s``
and no ``slowdown``: a mean or a percentile over the finished flows alone flatters
whatever left the most flows unfinished. Every summary of dcnsim therefore says how
many flows it left out (``dcnsim run``'s flow line, a sweep's figures and report),
and one line warns when more than ``WARN_SHARE`` of a run's TCP flows did not finish.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = [
    "WARN_SHARE",
    "excluded",
    "named",
    "runs_sql",
    "sweep_warning",
    "unfinished_flows",
    "warning",
]

#: The share of a run's TCP flows left unfinished above which a run, a sweep or a
#: figure warns in one line (1 %: a percentile above p99 is then unknowable).
WARN_SHARE = 0.01


def excluded(unfinished: int, total: int) -> str:
    """``"3 of 120 flows unfinished, excluded"`` (or ``"all finished"``)."""
    if not unfinished:
        return f"all {total:,} flows finished"
    return f"{unfinished:,} of {total:,} flows unfinished, excluded"


def warning(unfinished: int, total: int, where: str = "") -> str | None:
    """The one-line warning for a run (or, with ``where``, a set of runs) whose share of
    unfinished TCP flows exceeds ``WARN_SHARE``; ``None`` below it."""
    if not total or unfinished / total <= WARN_SHARE:
        return None
    share = 100.0 * unfinished / total
    return (
        f"warning: {unfinished:,} of {total:,} TCP flows ({share:.1f}%){where} did not finish, "
        "left out of FCT and slowdown"
    )


def runs_sql() -> str:
    """DuckDB SQL over a sweep directory's ``flows`` view: per run, its TCP flows
    (``tcp_flows``), how many did not finish (``unfinished``) and those, as
    ``flow_id:size_bytes`` in flow_id order (``ids``)."""
    return (
        "SELECT run, count(*) AS tcp_flows, count(*) - count(fct_s) AS unfinished, "
        "list(flow_id::VARCHAR || ':' || size_bytes::VARCHAR ORDER BY flow_id) "
        "FILTER (WHERE fct_s IS NULL) AS ids FROM flows WHERE kind = 'tcp' GROUP BY run"
    )


def named(ids: Any, listed: int = 10) -> str:
    """The unfinished flows of one run as ``flow_id:size_bytes`` pairs, the first
    ``listed`` and how many more. A run with none has a null list (SQL's ``FILTER``
    of no row): ``""``."""
    ids = list(ids) if hasattr(ids, "__len__") else []
    shown = ", ".join(ids[:listed])
    return shown + (f", ... ({len(ids) - listed:,} more)" if len(ids) > listed else "")


def sweep_warning(directory: Any) -> list[str]:
    """One warning line when the sweep's runs left more than ``WARN_SHARE`` of their TCP
    flows unfinished, naming the worst run (the report lists them all)."""
    counts = unfinished_flows(directory)
    line = warning(int(counts["unfinished"].sum()), int(counts["tcp_flows"].sum()), " of the sweep")
    if line is None:
        return []
    worst = counts.assign(share=counts["unfinished"] / counts["tcp_flows"]).nlargest(1, "share")
    row = worst.iloc[0]
    return [
        f"{line}; worst run {row['run']}: {int(row['unfinished']):,} of "
        f"{int(row['tcp_flows']):,} (--report lists every run's)\n"
    ]


def unfinished_flows(directory: Path) -> Any:
    """Per run of a sweep that kept ``flows``: its TCP flows, how many did not finish and
    which (``dcnsim.unfinished.runs_sql``); empty when no run kept ``flows``."""
    import pandas as pd

    from dcnsim.store import query

    if not any((directory / "runs").glob("run=*/flows.parquet")):
        return pd.DataFrame(columns=["run", "tcp_flows", "unfinished", "ids"])
    return query(directory, runs_sql())
