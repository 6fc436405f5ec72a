"""The units of the output columns, for axis labels: the one table of them in code.

A column carries its unit in its name's suffix (``fct_s``: seconds, ``goodput_bps``:
bit/s, ``size_bytes``: bytes), except the few listed in ``_NAMED``; a column with
neither (a count such as ``packets_sent``, an index, a ratio such as ``slowdown``)
has no unit, as in the docs. The units
agree with docs/scenario.md's "Outputs" (``tests/test_reports.py`` checks every unit
its flows table documents).
"""

from __future__ import annotations

import math

__all__ = ["ROWS", "axis_label", "display_unit", "unit"]

#: Unit by name suffix.
_SUFFIXES = {"_s": "s", "_bps": "bit/s", "_bytes": "B"}
#: Columns whose unit is not their suffix's.
_NAMED = {
    "bytes": "B",
    "bytes_delivered": "B",
    "bytes_sent": "B",
    "src": "host index",
    "dst": "host index",
    "snd_una": "sequence number",
    "snd_nxt": "sequence number",
}
#: What one row of each table is, for "fraction of ..." (a CDF's axis).
ROWS = {
    "flows": "flows",
    "probes": "probe packets",
    "ports": "ports",
    "rounds": "incast rounds",
    "queues": "queue samples",
    "flow_trace": "trace samples",
    "links": "link intervals",
    "summary": "runs",
}
#: Units shown instead of a base unit, largest first: (factor, name).
_PREFIXED = {
    "s": [(1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns")],
    "bit/s": [(1e12, "Tbit/s"), (1e9, "Gbit/s"), (1e6, "Mbit/s"), (1e3, "kbit/s"), (1.0, "bit/s")],
    "B": [(1e9, "GB"), (1e6, "MB"), (1e3, "kB"), (1.0, "B")],
}


def unit(column: str) -> str:
    """The unit of an output column, ``""`` for none: ``fct_s`` -> ``s``."""
    if column in _NAMED:
        return _NAMED[column]
    for suffix, name in _SUFFIXES.items():
        if column.endswith(suffix):
            return name
    return ""


def display_unit(base: str, magnitude: float) -> tuple[float, str]:
    """The factor to divide values in unit ``base`` by, and its name, so that a typical
    value ``magnitude`` reads at least 1: ``("s", 0.0042)`` -> ``(1e-3, "ms")``."""
    scales = _PREFIXED.get(base)
    if not scales or not math.isfinite(magnitude) or magnitude == 0:
        return 1.0, base
    for factor, name in scales:
        if abs(magnitude) >= factor:
            return factor, name
    return scales[-1]


def axis_label(quantity: str, shown_unit: str) -> str:
    """``("p99 fct_s", "ms")`` -> ``"p99 fct_s (ms)"``; no unit, no brackets."""
    return f"{quantity} ({shown_unit})" if shown_unit else quantity
