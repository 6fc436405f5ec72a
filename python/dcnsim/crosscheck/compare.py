"""dcnsim's tables beside a reference's: one row per metric, with the ratio
(dcnsim / reference) and a verdict against a tolerance."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import pandas as pd

__all__ = ["REFERENCE_COLUMNS", "TOLERANCES", "compare", "format_metrics", "reference_tables"]

#: Default relative tolerances by name (``--tolerance NAME=X``): the issue's bars
#: where it sets one (round times 1 %, drops 25 %, FCT spread 10 %, FCT median 2 %).
TOLERANCES: dict[str, float] = {
    "fct": 0.02,  # median over flows of dcnsim's FCT / the reference's
    "fct_worst": 0.10,  # the flow farthest from 1
    "fct_spread": 0.10,  # (max - min) FCT over flows
    "latency": 0.02,  # median over probes of the latency ratio
    "round_time": 0.01,  # median over incast rounds of the round-time ratio
    "drops": 0.25,  # packets dropped, all flows (and all ports)
    "retransmits": 0.25,
    "timeouts": 0.25,
    "queue": 0.10,  # the largest queue of any port, in packets
}


#: The columns of the tables a reference's run is read back into (``ns2.py``,
#: ``ns3.py``), the ones ``compare`` sets beside dcnsim's.
REFERENCE_COLUMNS = {
    "flows": ["flow_id", "fct_s", "drops", "retransmits", "timeouts"],
    "probes": ["probe_id", "latency_s"],
    "rounds": ["app", "round", "start_s", "end_s", "round_time_s"],
    "ports": ["port", "packets_dropped", "max_queue_packets", "max_queue_bytes"],
}


def reference_tables(
    flows: list, probes: list, rounds: list, ports: list
) -> dict[str, pd.DataFrame]:
    """A reference run's rows (dicts) as the tables ``compare`` reads, with their columns
    even when a table has no row."""
    rows = {"flows": flows, "probes": probes, "rounds": rounds, "ports": ports}
    return {
        name: pd.DataFrame(rows[name], columns=cols) for name, cols in REFERENCE_COLUMNS.items()
    }


@dataclass(frozen=True)
class Metric:
    table: str
    metric: str
    dcnsim: float
    reference: float
    ratio: float
    tolerance: str
    verdict: str


def _verdict(ratio: float, tol: float, a: float, b: float, slack: float = 0.0) -> str:
    if math.isnan(a) or math.isnan(b):
        return "n/a"
    if abs(a - b) <= slack:
        return "ok"
    if math.isnan(ratio):
        return "DIFF"
    return "ok" if abs(ratio - 1) <= tol + 1e-12 else "DIFF"


def _ratio(a: float, b: float) -> float:
    if math.isnan(a) or math.isnan(b):
        return math.nan
    if b == 0:
        return 1.0 if a == 0 else math.nan
    return a / b


def compare(
    dc: Mapping[str, pd.DataFrame], ref: Mapping[str, pd.DataFrame], tolerances: Mapping[str, float]
) -> list[Metric]:
    rows: list[Metric] = []

    def add(
        table: str,
        name: str,
        tol_key: str,
        a: float,
        b: float,
        ratio: float | None = None,
        slack: float = 0.0,
    ) -> None:
        tol = tolerances[tol_key]
        r = _ratio(a, b) if ratio is None else ratio
        rows.append(
            Metric(table, name, a, b, r, f"{tol_key} ±{tol:.3g}", _verdict(r, tol, a, b, slack))
        )

    flows = dc["flows"].merge(ref["flows"], on="flow_id", suffixes=("", "_ref"))
    if len(flows):
        both = flows[flows.fct_s.notna() & flows.fct_s_ref.notna()]
        add(
            "flows",
            "unfinished flows",
            "drops",
            float(flows.fct_s.isna().sum()),
            float(flows.fct_s_ref.isna().sum()),
        )
        if len(both):
            per_flow = both.fct_s / both.fct_s_ref
            add(
                "flows",
                "FCT median (per-flow ratio)",
                "fct",
                both.fct_s.median(),
                both.fct_s_ref.median(),
                float(per_flow.median()),
            )
            worst = per_flow.iloc[int((per_flow - 1).abs().to_numpy().argmax())]
            add(
                "flows",
                "FCT worst flow (ratio)",
                "fct_worst",
                math.nan if False else float(worst),
                1.0,
                float(worst),
            )
            if len(both) > 1:
                add(
                    "flows",
                    "FCT spread max-min (s)",
                    "fct_spread",
                    float(both.fct_s.max() - both.fct_s.min()),
                    float(both.fct_s_ref.max() - both.fct_s_ref.min()),
                )
        for col in ("drops", "retransmits", "timeouts"):
            add(
                "flows",
                f"{col} (sum)",
                col,
                float(flows[col].sum()),
                float(flows[f"{col}_ref"].sum()),
            )
    probes = dc["probes"].merge(ref["probes"], on="probe_id", suffixes=("", "_ref"))
    probes = probes[probes.latency_s.notna() & probes.latency_s_ref.notna()]
    if len(probes):
        per = probes.latency_s / probes.latency_s_ref
        add(
            "probes",
            "latency median (per-probe ratio)",
            "latency",
            probes.latency_s.median(),
            probes.latency_s_ref.median(),
            float(per.median()),
        )
        add(
            "probes",
            "latency max (s)",
            "latency",
            probes.latency_s.max(),
            probes.latency_s_ref.max(),
        )
    if "rounds" in dc and len(dc["rounds"]) + len(ref["rounds"]):
        rounds = dc["rounds"].merge(
            ref["rounds"], on=["app", "round"], suffixes=("", "_ref"), how="outer"
        )
        add(
            "rounds",
            "rounds finished",
            "round_time",
            float(rounds.round_time_s.notna().sum()),
            float(rounds.round_time_s_ref.notna().sum()),
        )
        both = rounds[rounds.round_time_s.notna() & rounds.round_time_s_ref.notna()]
        if len(both):
            per = both.round_time_s / both.round_time_s_ref
            add(
                "rounds",
                "round time median (per-round ratio)",
                "round_time",
                both.round_time_s.median(),
                both.round_time_s_ref.median(),
                float(per.median()),
            )
            add(
                "rounds",
                "round time mean (s)",
                "round_time",
                both.round_time_s.mean(),
                both.round_time_s_ref.mean(),
            )
    ports = dc["ports"].merge(ref["ports"], on="port", suffixes=("", "_ref"))
    if len(ports):
        add(
            "ports",
            "packets dropped (sum)",
            "drops",
            float(ports.packets_dropped.sum()),
            float(ports.packets_dropped_ref.sum()),
        )
        # One packet either way is a tie: an arrival at the instant the wire frees
        # waits in dcnsim (arrivals first) and not in ns-2.
        add(
            "ports",
            "largest queue (packets)",
            "queue",
            float(ports.max_queue_packets.max()),
            float(ports.max_queue_packets_ref.max()),
            slack=1.0,
        )
    return rows


def format_metrics(rows: list[Metric], reference: str) -> str:
    """The side-by-side table, values to 6 significant digits."""
    head = ("table", "metric", "dcnsim", reference, "ratio", "tolerance", "verdict")
    body = [
        (
            m.table,
            m.metric,
            f"{m.dcnsim:.6g}",
            f"{m.reference:.6g}",
            f"{m.ratio:.4f}",
            m.tolerance,
            m.verdict,
        )
        for m in rows
    ]
    widths = [max(len(r[i]) for r in [head, *body]) for i in range(len(head))]
    lines = [
        "  ".join(
            c.ljust(w) if i < 2 else c.rjust(w)
            for i, (c, w) in enumerate(zip(r, widths, strict=True))
        )
        for r in [head, *body]
    ]
    return "\n".join(line.rstrip() for line in lines)
