"""A run's memory, checked before it starts: the core's estimate by term against a
budget, so a scenario that cannot fit is refused with one line naming the dominant
term and the limit instead of aborting the process on an allocation failure.

The default budget is ``AVAILABLE_SHARE`` of the smallest of what this process may
still take: the memory available on the machine (``MemAvailable``), what its
address-space limit leaves (``ulimit -v``, ``prlimit --as``: the limit less the
address space already mapped) and what its cgroup's memory limit leaves (v2
``memory.max``, v1 ``memory.limit_in_bytes``, of its own cgroup and every
ancestor, less what the cgroup already uses). A refused run names the one that
refused it.
"""

from __future__ import annotations

import resource
from pathlib import Path

from dcnsim import _core
from dcnsim._core import ScenarioError

#: The default budget: this share of the memory the process may still take.
AVAILABLE_SHARE = 0.8


def available_bytes() -> int | None:
    """MemAvailable from /proc/meminfo (Linux), else None."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def address_space_left() -> int | None:
    """What the address-space limit (RLIMIT_AS) leaves of it, else None (no limit)."""
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft == resource.RLIM_INFINITY:
        return None
    mapped = 0
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmSize:"):
                    mapped = int(line.split()[1]) * 1024
    except OSError:
        pass
    return max(soft - mapped, 0)


def cgroup_left(root: Path = Path("/")) -> int | None:
    """What the memory limits of this process's cgroup and its ancestors leave (the
    smallest limit less its cgroup's use, file cache apart), v2 or v1; None without
    a limit. ``root`` is where ``/proc`` and ``/sys`` are (another root only in
    tests). Read by the core (``cgroup.rs``), which watches the same limits while a
    run goes."""
    return _core.cgroup_left(str(root))


def default_budget() -> tuple[int, str] | None:
    """``AVAILABLE_SHARE`` of the smallest of what the process may still take, and
    why (naming the limit); None when nothing is known."""
    known = [
        (left, what)
        for left, what in (
            (available_bytes(), "available"),
            (address_space_left(), "left by the address-space limit (ulimit -v)"),
            (cgroup_left(), "left by the cgroup's memory limit"),
        )
        if left is not None
    ]
    if not known:
        return None
    left, what = min(known)
    return int(AVAILABLE_SHARE * left), f"{AVAILABLE_SHARE:.0%} of the {format_bytes(left)} {what}"


def format_bytes(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if n < 1000 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    raise AssertionError("unreachable")


def check_memory(terms: list[tuple[str, int]], limit: int | None = None) -> list[tuple[str, int]]:
    """The core's estimate by term (largest first, as ``_core.run`` passes it);
    ScenarioError if its total exceeds ``limit`` bytes, or by default the
    :func:`default_budget`."""
    total = sum(b for _, b in terms)
    why = "memory_limit / --memory-limit"
    if limit is None:
        budget = default_budget()
        if budget is None:
            return terms
        limit, share = budget
        why = f"{share}; {why} to change"
    if total > limit:
        name, biggest = terms[0]
        raise ScenarioError(
            f"scenario: a run needs about {format_bytes(total)} ({name} "
            f"{format_bytes(biggest)}), more than the {format_bytes(limit)} allowed ({why})"
        )
    return terms


def parse_limit(text: str, name: str = "--memory-limit") -> int:
    """A memory limit such as ``"8GB"`` or ``"512MiB"``, in bytes; ScenarioError
    naming ``name`` (the option or argument that gave it) if it is not a size."""
    try:
        return _core.parse_bytes(text)
    except ValueError as exc:
        raise ScenarioError(f"{name}: {exc}") from None
