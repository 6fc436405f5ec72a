"""Packet Slicing: the seed's evaluation (Huang et al., §II-V), ``dcnsim study
packet-slicing``.

The model's figures (4-7) come from ``dcnsim.models.packet_slicing``; the simulated
ones run incasts with and without the ``packet_slicing`` switch agent
(``scenarios``, ``runs``), and every claim of the seed is printed beside dcnsim's
number with a verdict (``claims``, ``model``). Fig. 6(b) (fixed packet sizes) is the
``incast`` study; Fig. 14 (switch and host hardware) is out of scope. The quick
variant runs Figs. 3 and 10 whole and small grids of Figs. 8, 11 and 13; the full one
adds the rest (§IV.B.3, Fig. 12) and the seed's grids.
"""

from __future__ import annotations

import pandas as pd

from dcnsim.studies.packet_slicing.claims import simulated_claims
from dcnsim.studies.packet_slicing.figures import simulated_figures
from dcnsim.studies.packet_slicing.model import model_claims, model_figures
from dcnsim.studies.packet_slicing.runs import run_packet_slicing
from dcnsim.studies.study import Study
from dcnsim.studies.text import Claim, claims_table, format_table

__all__ = ["STUDY", "packet_slicing_claims", "run_packet_slicing"]

COLUMNS = {
    "experiment": "experiment",
    "protocol": "protocol",
    "slicing": "slicing",
    "workers": "N",
    "packet_B": "packet (B)",
    "sru_KB": "SRU (KB)",
    "buffer_KB": "buffer (KB)",
    "goodput_mbps": "goodput (Mbps)",
    "timeouts": "timeouts",
    "afct_ms": "AFCT (ms)",
    "peak_queue_kb": "peak queue (KB)",
    "srt_ms": "SRT (ms)",
    "timeout_fraction": "queries w/ timeout",
    "wall_s": "wall (s)",
}


def packet_slicing_claims(runs: pd.DataFrame) -> list[Claim]:
    """The model's claims, then the simulated ones."""
    return [*model_claims(), *simulated_claims(runs)]


def _tables(runs: pd.DataFrame, verbose: bool) -> tuple[pd.DataFrame, str]:
    claims = claims_table(packet_slicing_claims(runs))
    lines = [
        "Packet Slicing (Huang et al.): the seed's claims, the model's (eq. 1-11) and",
        "  the simulated ones (star, 1 Gbps, 100 µs RTT, 64 KB buffers, K = 20, RTO_min",
        "  200 ms, ns-2 TCP with limited transmit; the testbed: 100 Mbps bottleneck, 48 KB)",
        "",
        format_table(claims),
    ]
    if verbose:
        shown = runs[[c for c in COLUMNS if c in runs]].rename(columns=COLUMNS)
        lines += ["", "Per run:", format_table(shown.round(3))]
    return claims, "\n".join(lines)


STUDY = Study(
    name="packet-slicing",
    title="Packet Slicing seed §II-V: slicing packets at the ToR against incast",
    seed="Packet Slicing (incast), §II-V, Figs. 3-13",
    runs=run_packet_slicing,
    tables=_tables,
    claims=packet_slicing_claims,
    figures={**model_figures(), **simulated_figures()},
    seeded=False,
)
