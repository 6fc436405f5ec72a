"""What a scenario is, in one line made from its values: the run header's second line.

A scenario's ``name`` is free text written once, in a file; ``--set`` and a sweep's
grid change the values it may describe ("1500 B packets", "k=4"). So what is printed
about a run is made from the values that ran, as written in the scenario (a default
the scenario does not set is not repeated): the topology's kind and size, its links,
the queues, forwarding, transport, and the traffic. The values are the scenario's
nested tables as in its TOML file (``Scenario.to_dict()``), so this module needs
nothing of ``dcnsim.scenario``, whose notebook view uses it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["changes_line", "scenario_line"]


def scenario_line(values: Mapping[str, Any]) -> str:
    """``fat_tree k=8, links 10Gbps 1us; queues 1000pkt threshold k=65pkt; ecmp;
    dctcp mss=460B; workload websearch load=0.4 stop=40ms``: the parts the scenario
    whose tables are ``values`` sets."""
    parts = [
        _topology(_at(values, "topology")),
        _queues(_at(values, "network", "queue")),
        _text(_at(values, "forwarding", "policy")),
        _transport(_at(values, "transport")),
        _traffic(_at(values, "traffic")),
    ]
    return "; ".join(p for p in parts if p)


def changes_line(changes: Sequence[tuple[str, Any]]) -> str:
    """The keys changed from the scenario file, as given: ``transport.mss=460B, ...``."""
    return ", ".join(f"{key}={_text(value)}" for key, value in changes)


def _at(values: Any, *path: str) -> Any:
    """The value at ``path`` in nested tables, or None (a table missing or not a table)."""
    for part in path:
        if not isinstance(values, Mapping):
            return None
        values = values.get(part)
    return values


def _topology(topology: Any) -> str:
    if not isinstance(topology, Mapping):
        return ""
    words = [_text(topology.get("kind", "")), *_scalars(topology, skip=("kind",))]
    link = topology.get("link")
    if isinstance(link, Mapping):
        words.append("links " + " ".join(_text(v) for k, v in link.items() if _scalar(v)))
    return " ".join(w for w in words if w)


def _queues(queue: Any) -> str:
    if not isinstance(queue, Mapping):
        return ""
    words = [_text(queue[k]) for k in ("kind", "capacity") if k in queue]
    aqm = queue.get("aqm")
    if isinstance(aqm, Mapping):
        words += [_text(aqm.get("kind", "aqm")), *_scalars(aqm, skip=("kind",))]
    return "queues " + " ".join(words) if words else ""


def _transport(transport: Any) -> str:
    if not isinstance(transport, Mapping):
        return ""
    words = [_text(transport.get("protocol", "")), *_scalars(transport, skip=("protocol",))]
    return " ".join(w for w in words if w)


def _traffic(traffic: Any) -> str:
    """Each workload by its CDF and load; other entries by how many there are."""
    if not isinstance(traffic, Mapping):
        return ""
    words = []
    for section, entries in traffic.items():
        if not isinstance(entries, list):
            continue
        if section == "workloads":
            for w in entries:
                if isinstance(w, Mapping):
                    words.append(" ".join(["workload", *_scalars(w, skip=("src", "dst"))]))
        elif entries:
            words.append(f"{len(entries)} {section}")
    return ", ".join(words)


def _scalars(table: Mapping[str, Any], skip: Sequence[str]) -> list[str]:
    return [f"{k}={_text(v)}" for k, v in table.items() if k not in skip and _scalar(v)]


def _scalar(value: Any) -> bool:
    return isinstance(value, str | int | float | bool)


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value) if value is not None else ""
