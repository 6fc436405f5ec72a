"""The terms of an estimate's error, from the runs an ``dcnsim estimate --check`` left
in its directory (docs/estimate.md, "Where the error comes from"): slowdown p50 / p99
per size bucket of the packet level, of each flow's FCT alone, of the first pass as
Parsimon combines it (alone + the sum of the path's link delays), of the first pass's
bottleneck alone (alone + its delay at the bottleneck), of each paced pass (alone +
its delay at its bottleneck, paced traffic elsewhere; the last is the estimate), and
the estimate split by whether the bottleneck delay is the flow's own or drawn.

    python scripts/estimate_terms.py SCENARIO.toml OUT [--tolerance T] [--passes N]

Nothing is simulated: every run must be in OUT (the same scenario and tolerance).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

import dcnsim
from dcnsim import estimation, store
from dcnsim.estimation import combine


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("scenario")
    ap.add_argument("out", type=Path)
    ap.add_argument("--tolerance", type=float, default=estimation.DEFAULT_TOLERANCE)
    ap.add_argument("--passes", type=int, default=estimation.DEFAULT_PASSES)
    args = ap.parse_args()
    scenario = dcnsim.Scenario.from_toml(args.scenario)
    plan = estimation._plan(scenario, args.tolerance)

    def present(what: str, runs: list) -> None:
        missing = [r.id for r in runs if not store.has_run(args.out, r.id)]
        if missing:
            sys.exit(f"{args.out}: {len(missing)} of the {what} not run (run the estimate)")

    passes = estimation._passes(plan, scenario, args.out, args.passes, present)
    alone, bottleneck, d = passes.alone, passes.bottleneck, plan.drawn
    summed = np.bincount(d.flow, weights=passes.first, minlength=len(alone))
    rows = {
        "alone": alone,
        "first pass, summed (Parsimon)": alone + summed,
        "first pass, bottleneck only": alone + passes.first[bottleneck],
    }
    for k, delay in enumerate(passes.delay[1:], start=2):
        rows[f"pass {k}" + (" (the estimate)" if k == len(passes.delay) else "")] = alone + delay
    sys.stdout.write(f"rate change between pacings: {passes.change}\n")
    packet = [r for r in (args.out / "runs").glob("run=*/run.json") if _role(r) == "packet"]
    tables = {}
    if packet:
        flows = pq.read_table(packet[0].parent / "flows.parquet").to_pandas()
        tables["packet level"] = combine.bucket_table(flows)
    for name, fct in rows.items():
        flows = combine.estimate_flows(d, fct - alone, plan.stop_s, alone)
        tables[name] = combine.bucket_table(flows)
    if packet:
        # The same flows (the drawn flows are the run's), split by whether the delay
        # at their bottleneck is their own (the link was simulated itself) or drawn
        # from a representative's buckets.
        keys = ["src", "dst", "start_s", "size_bytes"]
        mine = pd.DataFrame({k: d.flows[k] for k in keys})
        est = combine.estimate_flows(d, passes.delay[-1], plan.stop_s, alone)
        mine["est"] = est["slowdown"]
        mine["own"] = plan.rep[np.searchsorted(plan.lf.ports, d.port[bottleneck])] == (
            np.searchsorted(plan.lf.ports, d.port[bottleneck])
        )
        both = mine.merge(flows_with(packet[0]), on=keys)
        for own, label in ((True, "own"), (False, "drawn")):
            part = both[both["own"] == own]
            for col, name in (("slowdown", "packet level"), ("est", "estimate")):
                t = combine.bucket_table({"size_bytes": part["size_bytes"], "slowdown": part[col]})
                tables[f"{name}, bottleneck delay {label} ({len(part)} flows)"] = t
    out = pd.DataFrame(
        {
            name: [f"{p50:.3g} / {p99:.3g}" for p50, p99 in zip(t["p50"], t["p99"], strict=True)]
            for name, t in tables.items()
        },
        index=next(iter(tables.values()))["bucket"],
    )
    sys.stdout.write(out.T.to_string() + "\n")


def flows_with(record: Path) -> pd.DataFrame:
    table = pq.read_table(record.parent / "flows.parquet").to_pandas()
    return table[["src", "dst", "start_s", "size_bytes", "slowdown"]]


def _role(record: Path) -> str:
    return json.loads(record.read_text(encoding="utf-8")).get("role", "")


if __name__ == "__main__":
    main()
