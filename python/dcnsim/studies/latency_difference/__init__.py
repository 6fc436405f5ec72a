"""The difference of packet latencies: the latency-difference seed, §3, Figs. 2-7.

127 test packets cross a 3-tier tree under all-to-all background load, with TCP or
pFabric, with or without equal-length routing (ELR); the study compares their
latencies' mean and spread with the seed's. ``run_latency_difference`` /
``latency_summary`` / ``latency_checks`` from Python.

``scenario``: the seed's tree, schemes and test packets, built from the flow-heavy
benchmark; ``reduction``: one row per run and the summaries; ``claims``: the seed's
claims checked; ``tables``: what the study prints; ``figures``: the seed's figures.
"""

from __future__ import annotations

from functools import partial

from dcnsim.studies.latency_difference.claims import latency_checks
from dcnsim.studies.latency_difference.figures import (
    LATENCY_PACKET_FIGURES,
    LATENCY_STAT_FIGURES,
    latency_packets_plot,
    latency_plot,
)
from dcnsim.studies.latency_difference.reduction import (
    latency_packets,
    latency_summary,
    latency_variant_table,
    run_latency_difference,
)
from dcnsim.studies.latency_difference.scenario import (
    LATENCY_FULL,
    LATENCY_OVERSUBSCRIPTIONS,
    LATENCY_QUICK,
    LATENCY_READINGS,
    LATENCY_SCHEMES,
    LATENCY_SEED,
    PFABRIC_RTT_US,
    PFABRIC_TRANSPORT,
    latency_closed_form_us,
    latency_host_load,
    latency_offered,
    latency_queue,
    latency_scenario,
)
from dcnsim.studies.latency_difference.tables import latency_extras, latency_tables
from dcnsim.studies.study import Study

__all__ = [
    "LATENCY_FULL",
    "LATENCY_OVERSUBSCRIPTIONS",
    "LATENCY_QUICK",
    "LATENCY_READINGS",
    "LATENCY_SCHEMES",
    "LATENCY_SEED",
    "PFABRIC_RTT_US",
    "PFABRIC_TRANSPORT",
    "STUDY",
    "latency_checks",
    "latency_closed_form_us",
    "latency_host_load",
    "latency_offered",
    "latency_packets",
    "latency_queue",
    "latency_scenario",
    "latency_summary",
    "latency_tables",
    "latency_variant_table",
    "run_latency_difference",
]

STUDY = Study(
    name="latency-difference",
    title="latency-difference seed §3, Figs. 2-7: test-packet latency in a 3-tier tree, "
    "TCP/pFabric with and without ELR",
    seed="the difference of packet latencies in a 3-tier tree (pFabric, ELR), §3, Figs. 2-7",
    runs=run_latency_difference,
    tables=latency_tables,
    claims=latency_checks,
    figures={
        **{name: partial(latency_packets_plot, name) for name in LATENCY_PACKET_FIGURES},
        **{name: partial(latency_plot, name) for name in LATENCY_STAT_FIGURES},
    },
    extras=latency_extras,
)
