"""The first seed's TCP baseline beside ns-2.35 (issue 45 item 4).

The seed ran ns-2's FullTcp (pFabric's scripts: FullTcp/Sack, reading T1), so its
numbered point (TCP, 64:4:1, 10 % load: 127 test packets of 29-829 µs) is run by
``dcnsim crosscheck`` in dcnsim and in Debian's ns-2.35 on the same drawn flows, and
printed with the seed's range. One change from the study's scenario: the chosen
reading opens connections without a handshake (C1), which FullTcp cannot do; here
both simulators open each flow with FullTcp's SYN, which moves each flow's first data
by one round trip and leaves the test packets (datagrams) as they are.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from dcnsim.studies.latency_difference.scenario import LATENCY_SEED, latency_scenario
from dcnsim.studies.text import format_table, num_text

__all__ = ["REFERENCE_POINT", "latency_reference", "reference_text"]

#: The seed's one numbered TCP point: (scheme, oversubscription, load).
REFERENCE_POINT = ("TCP", "64:4:1", 0.1)


def latency_reference(seeds: Sequence[int] = (1, 2, 3, 4, 5)) -> pd.DataFrame:
    """Per seed: the test packets' smallest, median and largest latency (µs) and the
    lost ones, in dcnsim and in ns-2.35, with the flows' drops in each. Needs ``ns``."""
    from dcnsim.crosscheck import crosscheck

    rows = []
    for seed in seeds:
        scenario = latency_scenario(*REFERENCE_POINT, seed=seed).to_dict()
        scenario.pop("trace", None)  # queue traces: not part of the comparison
        scenario["transport"]["handshake"] = True  # FullTcp always opens with a SYN
        report = crosscheck(scenario, "ns2")
        row: dict[str, float] = {"seed": seed}
        for who, tables in (("dcnsim", report.dcnsim), ("ns2", report.tables)):
            latency = tables["probes"]["latency_s"].to_numpy(dtype=float) * 1e6
            row[f"{who}_min_us"] = float(np.nanmin(latency))
            row[f"{who}_median_us"] = float(np.nanmedian(latency))
            row[f"{who}_max_us"] = float(np.nanmax(latency))
            row[f"{who}_lost"] = int(np.isnan(latency).sum())
            row[f"{who}_drops"] = int(tables["flows"]["drops"].sum())
        rows.append(row)
    return pd.DataFrame(rows)


def reference_text(table: pd.DataFrame) -> str:
    """The table with the seed's range and what it shows."""

    def pair(a: str, b: str, digits: int = 0) -> list[str]:
        return [
            f"{num_text(x, digits)} / {num_text(y, digits)}"
            for x, y in zip(table[a], table[b], strict=True)
        ]

    seed = LATENCY_SEED[REFERENCE_POINT]
    inside = {
        who: int(((table[f"{who}_min_us"] >= 28) & (table[f"{who}_max_us"] <= 830)).sum())
        for who in ("dcnsim", "ns2")
    }
    ratio = table["dcnsim_max_us"] / table["ns2_max_us"]
    scheme, oversub, load = REFERENCE_POINT
    return "\n".join(
        [
            "The seed's FullTcp baseline beside ns-2.35 (dcnsim crosscheck): "
            f"{scheme}, {oversub}, {load:.0%} load,",
            "  FullTcp/Sack as reading T1 but opening with its SYN",
            f"  the seed: {seed}; runs inside it (+-1 µs): dcnsim {inside['dcnsim']} of "
            f"{len(table)}, ns-2 {inside['ns2']} of {len(table)}",
            f"  largest latency, dcnsim / ns-2: {ratio.min():.3f}-{ratio.max():.3f}",
            format_table(
                pd.DataFrame(
                    {
                        "seed": table["seed"],
                        "min µs (dcnsim / ns-2)": pair("dcnsim_min_us", "ns2_min_us"),
                        "median µs": pair("dcnsim_median_us", "ns2_median_us"),
                        "max µs": pair("dcnsim_max_us", "ns2_max_us"),
                        "lost": pair("dcnsim_lost", "ns2_lost"),
                        "drops": pair("dcnsim_drops", "ns2_drops"),
                    }
                )
            ),
        ]
    )
