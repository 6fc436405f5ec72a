"""Seed experiments, one module each: the seed's numbers beside dcnsim's.

A *study* builds the scenarios of one experiment of a seed paper, runs them (in
parallel worker processes), reduces each run to a few numbers and prints a table
with the seed's reported results next to dcnsim's::

    dcnsim study list
    dcnsim study NAME [--quick] [--jobs N] [--out DIR] [--verbose]

Each study is one module of this package ending with ``STUDY = Study(...)`` and one
line in ``MODULES`` below, ``"its-name": "its_module"``. The shared pieces: ``runner``
(parallel runs), ``stats`` (95 % intervals over seeds), ``text`` (tables and the seed-vs-dcnsim
claims), ``figures`` and ``study`` (running a study and writing its files and
``report.html``). Nothing here tunes the simulator towards the seed's numbers:
where dcnsim disagrees, the table says so. Scenarios, columns and how to read each
study: ``docs/studies.md``.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dcnsim.studies.study import Study, StudyOutput, run_study, write_study

__all__ = ["MODULES", "STUDIES", "Study", "StudyOutput", "run_study", "write_study"]


#: Every study, by the name ``dcnsim study NAME`` takes: the module of this package
#: whose ``STUDY`` it is. A new study adds its one line here.
MODULES: dict[str, str] = {
    "incast": "incast",
    "spraying": "spraying",
    "spraying-random": "spraying_random",
    "latency-difference": "latency_difference",
    "pfabric": "pfabric",
    "qjump": "qjump",
    "botcp": "botcp",
    "packet-slicing": "packet_slicing",
}


class _Registry(Mapping[str, "Study"]):
    """The studies of ``MODULES`` by name, each module imported when its study is first
    asked for: the names (``dcnsim list``, the ``study`` command's choices) import no
    study, nor pandas. ``tests/test_studies.py`` checks each module's ``STUDY.name`` is
    its name here."""

    def __init__(self, modules: dict[str, str]) -> None:
        self._modules = modules
        self._loaded: dict[str, Study] = {}

    def __getitem__(self, name: str) -> Study:
        if name not in self._loaded:
            module = importlib.import_module(f"{__name__}.{self._modules[name]}")
            self._loaded[name] = module.STUDY
        return self._loaded[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __len__(self) -> int:
        return len(self._modules)


#: Every study of ``MODULES``, by name.
STUDIES: Mapping[str, Study] = _Registry(MODULES)


def __getattr__(name: str) -> object:
    """``Study``, ``StudyOutput``, ``run_study`` and ``write_study``, imported on first
    use (PEP 562), with pandas."""
    if name not in ("Study", "StudyOutput", "run_study", "write_study"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from dcnsim.studies import study

    return getattr(study, name)
