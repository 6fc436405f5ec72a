"""What ``dcnsim run`` prints of a run: the scenario, its counters, its probes, TCP
flows (with the unfinished ones counted), applications' operations and incast rounds.
Computed on the core's columns, so printing a run needs no DataFrame."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from dcnsim import _core
from dcnsim.formats import format_count, format_rate, format_seconds, format_wall
from dcnsim.labels import changes_line, scenario_line
from dcnsim.unfinished import excluded, warning

if TYPE_CHECKING:
    from dcnsim.results import Results


def header_lines(
    summary: Mapping[str, Any],
    scenario: Mapping[str, Any],
    changes: Sequence[tuple[str, Any]] = (),
    what: str = "",
) -> list[str]:
    """The first lines of what a command prints of a run (or an estimate, ``what``
    saying so after the seed): dcnsim's version, the scenario's name and seed, the
    scenario by its values and the ``changes`` (``--set``) made to its file."""
    head = f"dcnsim {summary.get('version', _core.__version__)}"
    if summary.get("name"):
        head += f": {summary['name']}"
    head += f", seed {summary.get('seed')}{what}"
    lines = [head, f"  scenario     {scenario_line(scenario)}"]
    if changes:
        lines.append(f"  set          {changes_line(changes)}")
    return lines


def format_summary(results: Results, changes: Sequence[tuple[str, Any]] = ()) -> str:
    """A short human summary of a run: its header names the scenario by its values
    (``dcnsim.labels``) and the ``changes`` (``--set``) made to its file."""
    s = results.summary
    lines = header_lines(s, results.scenario.to_dict(), changes)
    lines += [
        f"  simulated    {format_seconds(float(s['sim_time_s']))} "
        f"in {format_wall(float(s['wall_s']))} wall",
        f"  events       {s['events']:,}",
        f"  packet-hops  {s['packet_hops']:,} "
        f"({format_count(float(s['packet_hops_per_s']))} packet-hops/s)",
        f"  packets      {s['packets_injected']:,} injected, {s['packets_delivered']:,} delivered, "
        f"{s['packets_dropped']:,} dropped, {s['packets_in_flight']:,} in flight",
    ]
    lines.extend(f"  stage        {r['line']}" for r in s.get("stages", []))
    if s.get("stopped_by_agent"):
        lines.append(f"  stopped      by a switch agent: {s['stopped_by_agent']}")
    latency = results.probe_latency
    if latency.rows:
        line = f"  probes       {latency.received:,} received of {latency.rows:,}"
        if latency.received:
            line += (
                f"; latency µs: mean {latency.mean * 1e6:.2f}, std {latency.std * 1e6:.2f}, "
                f"min {latency.min * 1e6:.2f}, max {latency.max * 1e6:.2f}"
            )
        lines.append(line)
    lines.extend(_tcp_lines(results.columns("flows")))
    lines.extend(_no_flow_warning(results))
    lines.extend(_op_lines(results.columns("ops")))
    lines.extend(_round_lines(results.columns("rounds")))
    return "\n".join(lines)


def _no_flow_warning(results: Results) -> list[str]:
    """A warning line when the scenario has workloads and they opened no flow (their
    load, span and mean flow size left less than one arrival): the run is valid but
    its traffic is not what was meant (docs/scenario.md, Bounds)."""
    workloads = (results.scenario.get("traffic") or {}).get("workloads") or []
    if not workloads or "workload" in results.columns("flows").get("origin", []):
        return []
    return [
        f"  warning      traffic.workloads ({len(workloads)}) opened no flow: their "
        "load, span (start to stop) and mean flow size leave less than one arrival"
    ]


def _tcp_lines(flows: Mapping[str, Any]) -> list[str]:
    """TCP flows: how many finished, losses, FCT mean and 99th percentile, slowdown.
    Computed on the core's columns, so a summary needs no DataFrame (nor pandas, nor
    numpy for a run without TCP flows)."""
    if "kind" not in flows or "tcp" not in flows["kind"]:
        return []
    import numpy as np

    tcp = np.asarray(flows["kind"]) == "tcp"
    fct = np.asarray(flows["fct_s"], dtype=float)
    done = tcp & ~np.isnan(fct)
    retransmits = int(np.asarray(flows["retransmits"])[tcp].sum())
    timeouts = int(np.asarray(flows["timeouts"])[tcp].sum())
    finished, total = int(done.sum()), int(tcp.sum())
    lines = [
        f"  tcp flows    {finished:,} finished of {total:,}; "
        f"{retransmits:,} retransmits, {timeouts:,} timeouts"
    ]
    if done.any():
        fct = fct[done]
        slowdown = np.asarray(flows["slowdown"], dtype=float)[done]
        over = "" if finished == total else f" ({excluded(total - finished, total)})"
        lines.append(
            f"  flow times   FCT mean {format_seconds(float(fct.mean()))}, "
            f"p99 {format_seconds(float(np.percentile(fct, 99)))}; "
            f"slowdown mean {float(np.nanmean(slowdown)):.2f}{over}"
        )
    line = warning(total - finished, total)
    if line is not None:
        lines.append(f"  {line}")
    return lines


def _op_lines(ops: Mapping[str, Any]) -> list[str]:
    """Applications' operations: how many, by application and by outcome."""
    if "application" not in ops or not len(ops["application"]):
        return []
    from collections import Counter

    def counts(values: Any) -> str:
        return ", ".join(f"{k} {n:,}" for k, n in sorted(Counter(values).items()))

    return [
        f"  operations   {len(ops['application']):,} ({counts(ops['application'])}); "
        f"outcomes: {counts(ops['outcome'])}"
    ]


def _round_lines(rounds: Mapping[str, Any]) -> list[str]:
    """Incast rounds: how many, mean round time and goodput, share with a timeout."""
    if "round_time_s" not in rounds or not rounds.rows:
        return []
    import numpy as np

    with_timeout = float(np.asarray(rounds["any_timeout"]).astype(bool).mean())
    return [
        f"  incast       {len(rounds['round_time_s']):,} rounds; round time mean "
        f"{format_seconds(float(np.mean(rounds['round_time_s'])))}, goodput mean "
        f"{format_rate(float(np.mean(rounds['goodput_bps'])))}; "
        f"{100.0 * with_timeout:.1f}% of rounds with a timeout"
    ]
