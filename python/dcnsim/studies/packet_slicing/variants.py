"""Figs. 10 and 11 under every reading of the seed's TCP, beside the chosen one
(``dcnsim.studies.readings.packet_slicing``: ``TCP`` and ``VARIANTS``), DCTCP only:
timeouts, the slowest flow and the AFCT cut of Fig. 10, and Fig. 11's most workers
without a timeout with and without slicing."""

from __future__ import annotations

import pandas as pd

from dcnsim.studies.packet_slicing.claims import max_without_timeout
from dcnsim.studies.readings.packet_slicing import TCP, VARIANTS

__all__ = ["variant_table"]


def _row(fig10: pd.DataFrame, fig11: pd.DataFrame, name: str) -> dict[str, object]:
    row: dict[str, object] = {"reading": name}
    if len(fig10) == 2:
        off, on = (fig10[fig10["slicing"] == s].iloc[0] for s in (False, True))
        row |= {
            "Fig. 10 timeouts off/on": f"{int(off['timeouts'])}/{int(on['timeouts'])}",
            "slowest off/on (ms)": f"{off['slowest_ms']:.1f}/{on['slowest_ms']:.1f}",
            "AFCT cut": f"{on['afct_ms'] / off['afct_ms'] - 1:+.0%}",
        }
    for slicing, label in ((False, "Fig. 11 most N off"), (True, "on")):
        part = fig11[fig11["slicing"] == slicing]
        if len(part):
            most, end = max_without_timeout(part)
            row[label] = f">= {most}" if end else str(most)
    return row


def variant_table(runs: pd.DataFrame) -> pd.DataFrame:
    """One row per reading (the chosen one first), from the runs that have it."""
    if "experiment" not in runs:
        return pd.DataFrame()
    dctcp = runs[runs["protocol"] == "dctcp"]
    rows = [
        _row(
            dctcp[dctcp["experiment"] == "fig10"],
            dctcp[dctcp["experiment"] == "fig11"],
            TCP.name,
        )
    ]
    for name in VARIANTS:
        of = dctcp[dctcp.get("reading", pd.Series(index=dctcp.index, dtype=object)) == name]
        rows.append(
            _row(
                of[of["experiment"] == "fig10_variant"],
                of[of["experiment"] == "fig11_variant"],
                name,
            )
        )
    return pd.DataFrame(rows)
