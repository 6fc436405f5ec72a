"""The BOTCP study: BOTCP against TCP-ECN and DCTCP on the seed's own fabric.

Ahmed and Arshad, "Buffer Occupancy-Based Transport to Reduce Flow Completion Time of
Short Flows in Data Center Networks", Symmetry 2019 (seed ``botcp.txt``), §5: a 6 x 6
leaf-spine of 192 hosts; Figs. 6-7 (short-flow average and 99th-percentile FCT
across loads), Fig. 8 (two long flows, then five short flows, at one bottleneck),
Figs. 9-10 (extreme flow load: 20 flows of 50 KB every 200 µs until 100 share one
port), Fig. 11 (long-flow average FCT). ``dcnsim study botcp`` runs it
(``run_botcp`` / ``summary`` / ``botcp_checks`` from Python); the scenarios and every
choice the seed leaves open are in ``scenarios`` and ``docs/studies.md``. Each claim
is checked as the seed states it and printed ``yes``, ``NO`` or ``within noise`` (the
load runs take seeds: their comparisons are decided on the 95 % interval over seeds).
"""

from __future__ import annotations

import pandas as pd

from dcnsim.studies.botcp.analysis import botcp_checks, run_botcp, summary
from dcnsim.studies.botcp.plots import FIGURES
from dcnsim.studies.botcp.scenarios import (
    BOTCP_FULL,
    BOTCP_QUICK,
    INIT_CWND,
    IW_VARIANT,
    LABELS,
    SCHEMES,
    bandwidth_scenario,
    extreme_scenario,
    load_scenario,
)
from dcnsim.studies.study import Study
from dcnsim.studies.text import claim_lines, format_table, ranges

__all__ = [
    "BOTCP_FULL",
    "BOTCP_QUICK",
    "BOTCP_TITLE",
    "SCHEMES",
    "STUDY",
    "bandwidth_scenario",
    "botcp_checks",
    "botcp_tables",
    "extreme_scenario",
    "load_scenario",
    "run_botcp",
    "summary",
]

BOTCP_TITLE = (
    "BOTCP seed §5 (Symmetry 2019): short- and long-flow FCT, bandwidth shift and extreme "
    "flow load, BOTCP vs TCP-ECN vs DCTCP, leaf-spine"
)

SETUP = [
    "  leaf-spine 6 x 6, 32 hosts per leaf (the quick variant: 2 x 2, 8 per leaf), 10 Gbps",
    "  host and 40 Gbps fabric links of 1 µs, 128 KiB per switch port, per-flow ECMP;",
    "  BOTCP: Bl/Bs/Bm = 20/40/60, X = 10 KB, MSS 1456 B (1500 B packets with the 4-byte",
    "  BOF option), max_occupancy stamps on every switch port, drop-tail; TCP-ECN and DCTCP:",
    "  marking at 20 packets, MSS 1460 B, initial window 2; min and initial RTO 0.2 ms.",
    "  Figs. 6, 7, 11: web-search sizes, Poisson arrivals all to all; flows arriving after",
    "  the warm-up are counted (short < 100 KB <= long). Figs. 8-10 cross leaf0->host0.",
]


def _load_view(table: pd.DataFrame) -> pd.DataFrame:
    def cells(column: str, load: float, digits: int) -> str:
        part = table[table["load"] == load].set_index("scheme")[column]
        return "  ".join(f"{part.get(s, float('nan')):.{digits}f}" for s in SCHEMES if s in part)

    loads = sorted(set(table["load"]))
    return pd.DataFrame(
        {
            "load": [f"{x:g}" for x in loads],
            "short mean ms (BOTCP TCP-ECN DCTCP)": [cells("short_mean_ms", x, 3) for x in loads],
            "short p99 ms": [cells("short_p99_ms", x, 3) for x in loads],
            "long mean ms": [cells("long_mean_ms", x, 2) for x in loads],
            "drops": [cells("drops", x, 0) for x in loads],
            "timeouts": [cells("timeouts", x, 0) for x in loads],
        }
    )


def _iw_lines(runs: pd.DataFrame, table: pd.DataFrame) -> list[str]:
    """The initial-window variant beside the reading: short-flow mean FCT by load."""
    variant = runs[runs["experiment"] == "load_iw"]
    if variant.empty:
        return []
    scheme, iw = IW_VARIANT
    ms = variant.groupby("load")["short_mean_s"].mean() * 1e3
    mine = table.set_index(["load", "scheme"])["short_mean_ms"]
    cells = [
        f"{x:g}: {mine.get((x, 'botcp'), float('nan')):.3f} / {ms[x]:.3f} / "
        f"{mine.get((x, scheme), float('nan')):.3f}"
        for x in ms.index
    ]
    return [
        f"Initial-window variant: {LABELS[scheme]} starting at {iw} segment, as BOTCP"
        f" (the reading: {INIT_CWND[scheme]}, ns-2.35's windowInit_);",
        f"  short-flow mean FCT ms (BOTCP / {LABELS[scheme]} IW {iw} / IW "
        f"{INIT_CWND[scheme]}) by load:",
        *[f"  {c}" for c in cells],
    ]


def _small_view(runs: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for experiment in ("bandwidth", "extreme"):
        part = runs[runs["experiment"] == experiment]
        for _, r in part.iterrows():
            rows.append(
                {
                    "run": {"bandwidth": "Fig. 8", "extreme": "Figs. 9-10"}[experiment],
                    "scheme": LABELS[r["scheme"]],
                    "short/median FCT ms": (
                        r["short_mean_s"] if experiment == "bandwidth" else r["median_fct_s"]
                    )
                    * 1e3,
                    "drops": r["drops"],
                    "timeouts": r["timeouts"],
                }
            )
    return pd.DataFrame(rows)


def botcp_tables(runs: pd.DataFrame, verbose: bool) -> tuple[pd.DataFrame, str]:
    """The load summary (one row per load and scheme) and the printed text."""
    table = summary(runs)
    seeds = sorted({int(s) for s in runs.loc[runs["experiment"] == "load", "seed"]})
    lines = [
        "BOTCP (Ahmed and Arshad, Symmetry 2019, §5): BOTCP vs TCP-ECN vs DCTCP",
        *SETUP,
        f"  Load runs: seeds {ranges(seeds)} per point, means over seeds, comparisons on the 95 %",
        "  interval paired by seed; Figs. 8-10: one deterministic run per scheme.",
        "",
        "Figs. 6, 7 and 11 (cells: BOTCP, TCP-ECN, DCTCP):",
        format_table(_load_view(table)),
        "",
        *_iw_lines(runs, table),
        "",
        format_table(_small_view(runs)),
        "",
        "The seed's claims, against these numbers:",
        *claim_lines(botcp_checks(runs)),
    ]
    if verbose:
        lines += ["", "Per load and scheme:", format_table(table)]
    return table, "\n".join(lines)


STUDY = Study(
    name="botcp",
    title=BOTCP_TITLE,
    seed="BOTCP (Ahmed and Arshad, Symmetry 2019), §5, Figs. 6-11",
    runs=run_botcp,
    tables=botcp_tables,
    claims=botcp_checks,
    figures=FIGURES,
    quick_undecided={
        **{
            start: "quick: within noise, full: NO (quick seeds 1-3, full 1-5); the quick "
            "load runs count 16-39 short flows each, so the paired interval over three "
            "seeds (BOTCP - TCP-ECN mean FCT at 0.3: +0.029 +- 0.050 ms) holds zero where "
            "the full runs' 328-2,997 give +0.037 +- 0.002 ms"
            for start in ("Fig. 6: BOTCP's", "Fig. 7: BOTCP's")
        },
        "Fig. 6: at load 0.3 TCP-ECN's": "quick: within noise at its lightest load 0.3 "
        "(-0.004 +- 0.014 ms), full: yes at 0.1 (-0.005 +- 0.003 ms); 16-39 short flows "
        "a run cannot separate two schemes 5 % apart",
        "Fig. 11:": "quick: within noise, full: yes (largest ratio 1.02); the quick runs "
        "count a handful of long flows each, whose mean FCT varies by more than the 1.2x "
        "band over three seeds",
    },
)
