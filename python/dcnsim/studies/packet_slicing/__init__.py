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
from dcnsim.studies.packet_slicing.timeouts import timeout_table
from dcnsim.studies.packet_slicing.variants import variant_table
from dcnsim.studies.readings import reading_lines
from dcnsim.studies.readings.packet_slicing import READING
from dcnsim.studies.study import Study
from dcnsim.studies.text import Claim, claim_lines, claims_table, format_table

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
    claims = packet_slicing_claims(runs)
    lines = [
        "Packet Slicing (Huang et al.): the seed's claims, the model's (eq. 1-11) and",
        "  the simulated ones (star, 1 Gbps, 100 µs RTT, 64,000 B buffers, K = 20 x 1460 B,",
        "  RTO_min 200 ms, the seed's one reading: ns-2 FullTcp/Sack without limited",
        "  transmit, DCTCP's window floored at 1; the testbed: 100 Mbps bottleneck, 48 KB,",
        "  floor 2 as Linux has it); each claim whole in claims.csv and report.html",
        *reading_lines(READING),
        "",
        *claim_lines(claims),
    ]
    variants = variant_table(runs)
    if len(variants.columns) > 1:
        lines += [
            "",
            "The seed's reading (seed: FullTcp/Sack, no limited transmit, DCTCP floor 1,",
            "  K = 20 x 1460 B) beside the others: floor2 (floor 2, chosen before issue 46",
            "  because it reproduces Fig. 10(b)); former (the study's reading before issue",
            "  46: FullTcp with limited transmit, K = 20 packets of any size, floor 2):",
            format_table(variants),
        ]
    timeouts = timeout_table(runs)
    if not timeouts.empty:
        lines += [
            "",
            "Timeouts, the seed's model at its k̂ (eq. 11, ŵ = 2) against dcnsim (Fig. 11,",
            "  DCTCP): per flow and round, eq. (6)'s p = (1/(ŵ+1))^(ŵ+1) after one additive",
            "  increase and eq. (1) with Y (windows of ŵ exactly fill Y: 0); per round, eq. (6)'s",
            "  P = 1 - (1 - p)^n; eq6_any_loss: the chance of any loss under eq. (6), which",
            "  times out a window of 3 without limited transmit; measured: responses with a",
            "  timeout / responses, rounds with one / rounds.",
            format_table(timeouts.round(4), keys=3),
        ]
    if verbose:
        shown = runs[[c for c in COLUMNS if c in runs]].rename(columns=COLUMNS)
        lines += ["", "Per run:", format_table(shown.round(3))]
    return claims_table(claims), "\n".join(lines)


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
