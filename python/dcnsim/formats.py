"""Numbers as the command line, the progress line and the notebook summaries print
them: simulated durations, wall-clock durations, rates and counts."""

from __future__ import annotations

__all__ = ["format_count", "format_rate", "format_seconds", "format_wall"]


def format_seconds(seconds: float) -> str:
    """``0.0123`` -> ``"12.300 ms"``."""
    magnitude = abs(seconds)
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9)):
        if magnitude >= scale:
            return f"{seconds / scale:.3f} {unit}"
    return f"{seconds / 1e-9:.3f} ns" if seconds else "0 s"


def format_wall(seconds: float) -> str:
    """A wall-clock duration to the precision a reader uses: ``0.00042`` -> ``"420 µs"``,
    ``0.0123`` -> ``"12 ms"``, ``1.234`` -> ``"1.2 s"``, ``6.0`` -> ``"6.0 s"``,
    ``52.3`` -> ``"52 s"``, ``192`` -> ``"3 min 12 s"``, ``7384`` -> ``"2 h 03 min"``."""
    if seconds >= 3600:
        minutes = round(seconds / 60)
        return f"{minutes // 60} h {minutes % 60:02d} min"
    if seconds >= 60:
        whole = round(seconds)
        return f"{whole // 60} min {whole % 60:02d} s"
    if seconds <= 0:
        return "0 s"
    scale, unit = next(
        ((s, u) for s, u in ((1.0, "s"), (1e-3, "ms")) if seconds >= s), (1e-6, "µs")
    )
    value = seconds / scale
    return f"{value:.1f} {unit}" if value < 9.95 else f"{value:.0f} {unit}"


#: Rate units as the scenario writes them, largest first, in bits per second.
RATE_UNITS = (("Tbps", 1e12), ("Gbps", 1e9), ("Mbps", 1e6), ("Kbps", 1e3))


def format_rate(bps: float) -> str:
    """``812_300_000`` -> ``"812.30 Mbps"``."""
    for suffix, scale in RATE_UNITS:
        if abs(bps) >= scale:
            return f"{bps / scale:.2f} {suffix}"
    return f"{bps:.0f} bps"


def rate_bps(text: str) -> float:
    """A scenario's rate (``"1Gbps"``, ``"100 Mbps"``, ``"2.5Gbps"``) in bits per
    second; ``ValueError`` naming the text when it has no known unit."""
    for suffix, scale in (*RATE_UNITS, ("bps", 1.0)):
        if text.strip().endswith(suffix):
            return float(text.strip().removesuffix(suffix)) * scale
    raise ValueError(f"rate {text!r}: expected a number and a unit (Kbps, Mbps, Gbps, Tbps)")


def format_count(value: float) -> str:
    """``3_700_000`` -> ``"3.70 M"``."""
    for suffix, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(value) >= scale:
            return f"{value / scale:.2f} {suffix}"
    return f"{value:.0f}"
