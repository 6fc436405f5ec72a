"""An estimate as the ``dcnsim estimate`` command prints it: said to be an estimate on
its first line, what was simulated, the wall times, and the slowdown percentiles per
flow-size bucket (with ``--check``, the packet level's and the error beside them)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dcnsim.estimation import Estimate
from dcnsim.formats import format_wall
from dcnsim.run_text import header_lines
from dcnsim.scenario import Scenario
from dcnsim.studies.text import format_table

__all__ = ["format_estimate"]


def format_estimate(est: Estimate, scenario: Scenario, changes: Sequence[tuple[str, Any]]) -> str:
    s = est.summary
    lines = header_lines(
        {"name": s.get("name"), "seed": s.get("seed")},
        scenario.to_dict(),
        changes,
        ": ESTIMATE by link-level decomposition, not a packet-level run",
    )
    finished = int(est.flows["fct_s"].notna().sum())
    lines += [
        f"  flows        {s['flows']:,} drawn, {finished:,} estimated to finish by stop_time",
        f"  links        {s['links']:,} with traffic; {s['link_runs']:,} simulated "
        f"(clustering tolerance {s['tolerance']:g}), {s['paced_runs']:,} again with "
        f"bottleneck pacing ({s['passes']} passes); {s['link_runs_now']:,} runs made now",
        f"  wall         estimate {format_wall(s['wall_s'])} (link simulations "
        f"{format_wall(s['link_wall_s'])}) on {s['on']}"
        + (f"; packet level {format_wall(s['packet_wall_s'])}" if "packet_wall_s" in s else ""),
        "  slowdown by flow size (estimates"
        + (" vs the packet level)" if "packet_wall_s" in s else ")"),
    ]
    table = est.buckets.copy()
    for column in table.columns:
        if column.startswith("error_"):
            table[column] = [f"{100 * v:+.1f}%" for v in table[column]]
    lines += ["    " + line for line in format_table(table).splitlines()]
    lines.append(
        f"wrote {est.out}: catalog.parquet, runs/ (query: dcnsim query {est.out} "
        "\"SELECT ... FROM flows WHERE role = 'estimate'\")"
    )
    return "\n".join(lines)
