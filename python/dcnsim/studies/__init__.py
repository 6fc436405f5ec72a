"""Seed experiments, one module each: the seed's numbers beside dcnsim's.

A *study* builds the scenarios of one experiment of a seed paper, runs them (in
parallel worker processes), reduces each run to a few numbers and prints a table
with the seed's reported results next to dcnsim's::

    dcnsim study list
    dcnsim study NAME [--quick] [--jobs N] [--out DIR] [--verbose]

Each study is one module of this package ending with ``STUDY = Study(...)`` and one
line in ``STUDIES`` below. The shared pieces: ``runner`` (parallel runs),
``stats`` (95 % intervals over seeds), ``text`` (tables and the seed-vs-dcnsim
claims), ``figures`` and ``study`` (running a study and writing its files and
``report.html``). Nothing here tunes the simulator towards the seed's numbers:
where dcnsim disagrees, the table says so. Scenarios, columns and how to read each
study: ``docs/studies.md``.
"""

from __future__ import annotations

from dcnsim.studies import (
    incast,
    latency_difference,
    packet_slicing,
    pfabric,
    spraying,
    spraying_random,
)
from dcnsim.studies.study import Study, StudyOutput, run_study, write_study

__all__ = ["STUDIES", "Study", "StudyOutput", "run_study", "write_study"]

#: Every study, by the name ``dcnsim study NAME`` takes.
STUDIES: dict[str, Study] = {
    study.name: study
    for study in (
        incast.STUDY,
        spraying.STUDY,
        spraying_random.STUDY,
        latency_difference.STUDY,
        pfabric.STUDY,
        packet_slicing.STUDY,
    )
}
