"""What a notebook shows of a ``Scenario`` or ``Results`` (their ``_repr_html_``): a
short summary through the template ``templates/summary.html``, with the reports'
Jinja environment (``dcnsim.html``). Made from the scenario's values
(``dcnsim.labels``) and the run's summary and columns, so showing a result makes no
DataFrame."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dcnsim.labels import scenario_line
from dcnsim.results import (
    RECORDED,
    format_count,
    format_seconds,
    format_wall,
)

if TYPE_CHECKING:
    from dcnsim.results import Results
    from dcnsim.scenario import Scenario


def scenario_html(scenario: Scenario) -> str:
    """The scenario's name and seed, what it sets, and what it contains (hosts,
    switches, traffic, stop time, memory), or why it is not valid."""
    from dcnsim._core import ScenarioError
    from dcnsim.memory import format_bytes

    facts: list[tuple[str, Any]] = []
    if scenario.get("seed") is not None:
        facts.append(("seed", scenario.get("seed")))
    try:
        d = scenario.describe()
    except ScenarioError as exc:
        facts.append(("not valid", str(exc)))
    else:
        facts += [
            ("network", f"{d['hosts']:,} hosts, {d['switches']:,} switches, "
                        f"{d['links']:,} links ({d['ports']:,} ports)"),
            ("traffic", f"{d['probe_packets']:,} probe packets, {d['streams']:,} streams, "
                        f"{d['flows']:,} listed flows"),
            ("stops", "when traffic ends" if d["stop_time_s"] is None
                      else f"at {format_seconds(d['stop_time_s'])}"),
            ("memory", f"about {format_bytes(d['memory_bytes'])}"),
        ]  # fmt: skip
    return _render(_heading(scenario), scenario_line(scenario), facts, [])


def results_html(results: Results) -> str:
    """The run's scenario, its summary numbers (time, events, packets, probe
    latency) and its tables with their row counts."""
    s = results.summary
    facts: list[tuple[str, Any]] = [
        ("seed", s.get("seed")),
        ("simulated", f"{format_seconds(float(s['sim_time_s']))} in "
                      f"{format_wall(float(s['wall_s']))} wall"),
        ("events", f"{s['events']:,}"),
        ("packet-hops", f"{s['packet_hops']:,} "
                        f"({format_count(float(s['packet_hops_per_s']))} packet-hops/s)"),
        ("packets", f"{s['packets_injected']:,} injected, {s['packets_delivered']:,} delivered, "
                    f"{s['packets_dropped']:,} dropped, {s['packets_in_flight']:,} in flight"),
    ]  # fmt: skip
    latency = results.probe_latency
    if latency.received:
        facts.append(
            ("probe latency", f"mean {latency.mean * 1e6:.2f} µs, std {latency.std * 1e6:.2f}, "
                              f"min {latency.min * 1e6:.2f}, max {latency.max * 1e6:.2f} "
                              f"({latency.received:,} received of {latency.rows:,})")
        )  # fmt: skip
    if results.out_dir is not None:
        facts.append(("written to", str(results.out_dir)))
    tables = []
    for name in ("flows", "ops", "ports", "rounds", "agent_rows", *RECORDED):
        held = results._columns.get(name)
        if held is not None:
            tables.append((name, f"{held.rows:,}", ", ".join(held)))
        elif results.out_dir is not None and (results.out_dir / RECORDED[name][0]).is_file():
            rows_text = f"{latency.rows:,}" if name == "probes" else ""
            tables.append((name, rows_text, f"in {RECORDED[name][0]}"))
    return _render(_heading(results.scenario), scenario_line(results.scenario), facts, tables)


def _heading(scenario: Scenario) -> str:
    name = scenario.get("name")
    return f"dcnsim scenario: {name}" if name else "dcnsim scenario"


def _render(heading: str, line: str, facts: list[tuple[str, Any]], tables: list[Any]) -> str:
    from dcnsim.html import environment

    return (
        environment()
        .get_template("summary.html")
        .render(heading=heading, line=line, facts=facts, tables=tables)
    )
