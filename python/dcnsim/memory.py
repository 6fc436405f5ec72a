"""A run's memory, checked before it starts: the core's estimate by term against a
budget, so a scenario that cannot fit is refused with one line naming the dominant
term instead of aborting the process on an allocation failure."""

from __future__ import annotations

from dcnsim import _core
from dcnsim._core import ScenarioError

#: The default budget: this share of the memory available when the run starts.
AVAILABLE_SHARE = 0.8


def available_bytes() -> int | None:
    """MemAvailable from /proc/meminfo (Linux), else None (no default budget)."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def format_bytes(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if n < 1000 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    raise AssertionError("unreachable")


def check_memory(terms: list[tuple[str, int]], limit: int | None = None) -> list[tuple[str, int]]:
    """The core's estimate by term (largest first, as ``_core.run`` passes it);
    ScenarioError if its total exceeds ``limit`` bytes, or by default
    ``AVAILABLE_SHARE`` of the available memory."""
    total = sum(b for _, b in terms)
    why = "memory_limit / --memory-limit"
    if limit is None:
        available = available_bytes()
        if available is None:
            return terms
        limit = int(AVAILABLE_SHARE * available)
        why = f"{AVAILABLE_SHARE:.0%} of the {format_bytes(available)} available; {why} to change"
    if total > limit:
        name, biggest = terms[0]
        raise ScenarioError(
            f"scenario: a run needs about {format_bytes(total)} ({name} "
            f"{format_bytes(biggest)}), more than the {format_bytes(limit)} allowed ({why})"
        )
    return terms


def parse_limit(text: str) -> int:
    """``--memory-limit``: a size such as ``"8GB"`` or ``"512MiB"``, in bytes."""
    try:
        return _core.parse_bytes(text)
    except ValueError as exc:
        raise ScenarioError(f"--memory-limit: {exc}") from None
