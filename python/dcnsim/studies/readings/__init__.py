"""Each seed's reading: the settings every study of that seed runs, in one place.

A seed paper leaves its TCP agent, marking threshold, buffers and header convention
partly unsaid; a *reading* fills them in from the seed's text and its reference code,
before any run (``docs/studies.md``, "Readings of the seeds"). Each seed has one
module here holding its ``READING`` and the settings objects its studies share
(``first_seed``, ``spraying``, ``qjump``, ``packet_slicing``); every study of the seed builds its
scenarios from those objects, never from a copy (``tests/test_readings.py`` checks
they are the same objects). Other readings are named variants, printed beside the
chosen one; a reading chosen because it reproduces a result says so
(``Reading.reproduces``) and its study shows the result both ways.

A new seed's reading is one module here ending with ``READING = register(Reading(...))``
and one line in ``MODULES``.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

__all__ = ["MODULES", "Reading", "frozen", "reading_lines", "readings", "register"]

#: Every seed's reading module (of this package), by the seed's file in the seeds folder.
MODULES: dict[str, str] = {
    "latency-difference-3tier-pfabric-elr.txt": "first_seed",
    "packet-spraying-fat-tree.txt": "spraying",
    "qjump.txt": "qjump",
    "packet-slicing-incast.txt": "packet_slicing",
}

_REGISTERED: dict[str, Reading] = {}


def frozen(settings: Mapping[str, Any]) -> Mapping[str, Any]:
    """``settings`` as a read-only mapping (nested tables too): a reading's settings are
    shared by its studies, so none may change them in place (a study copies what it
    extends, ``{**settings, ...}``)."""
    return MappingProxyType(
        {k: frozen(v) if isinstance(v, Mapping) else v for k, v in settings.items()}
    )


def thawed(settings: Mapping[str, Any]) -> dict[str, Any]:
    """A plain, nested ``dict`` copy of ``frozen`` settings, for a scenario table."""
    return {k: thawed(v) if isinstance(v, Mapping) else v for k, v in settings.items()}


@dataclass(frozen=True)
class Reading:
    """One seed's reading: what it decides and why, and the named variants beside it.

    ``tcp``, ``marking``, ``buffer`` and ``header`` say in words what the seed's
    studies run (the objects themselves live in the seed's module); ``why`` is the
    reasoning from the seed's text and reference code; ``reproduces`` is empty unless
    the reading was chosen because it reproduces a result (then it names the result,
    and the study shows it both ways); ``variants``: name -> what it changes.
    """

    seed: str
    studies: tuple[str, ...]
    tcp: str
    marking: str
    buffer: str
    header: str
    why: str
    reproduces: str = ""
    variants: Mapping[str, str] = field(default_factory=dict)


def register(reading: Reading) -> Reading:
    """Add ``reading`` as its seed's one reading (a second one for a seed is an error)."""
    if reading.seed in _REGISTERED and _REGISTERED[reading.seed] is not reading:
        raise ValueError(f"seed {reading.seed!r} already has a reading")
    _REGISTERED[reading.seed] = reading
    return reading


def readings() -> dict[str, Reading]:
    """Every seed's reading, by seed file (importing each module of ``MODULES``)."""
    for module in MODULES.values():
        importlib.import_module(f"{__name__}.{module}")
    return dict(_REGISTERED)


def reading_lines(reading: Reading) -> list[str]:
    """The reading as a study prints it above its claims: what it runs, and the named
    variants beside it."""
    lines = [
        f"Reading of the seed ({reading.seed}; shared by {', '.join(reading.studies)}):",
        f"  TCP agent: {reading.tcp}",
        f"  marking: {reading.marking}",
        f"  buffers: {reading.buffer}",
        f"  header: {reading.header}",
    ]
    if reading.reproduces:
        lines.append(f"  chosen because it reproduces: {reading.reproduces}")
    lines += [f"  variant {name}: {text}" for name, text in reading.variants.items()]
    return lines
