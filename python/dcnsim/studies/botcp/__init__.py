"""The BOTCP study: BOTCP against TCP-ECN and DCTCP on the seed's own fabric.

Ahmed and Arshad, "Buffer Occupancy-Based Transport to Reduce Flow Completion Time of
Short Flows in Data Center Networks", Symmetry 2019 (seed ``botcp.txt``), §5: a 6 x 6
leaf-spine of 192 hosts; Figs. 6-7 (short-flow average and 99th-percentile FCT
across loads), Fig. 8 (two long flows, then five short flows, at one bottleneck),
Figs. 9-10 (extreme flow load: 20 flows of 50 KB every 200 µs until 100 share one
port), Fig. 11 (long-flow average FCT). ``dcnsim study botcp`` runs it
(``run_botcp`` / ``summary`` / ``botcp_checks`` from Python); the scenarios and every
choice the seed leaves open are in ``scenarios`` and ``docs/studies.md``. Each claim
is checked as the seed states it and printed ``yes``, ``NO`` or ``within noise`` (every
experiment takes seeds: its comparisons are decided on the 95 % interval over seeds,
paired by seed, its states of one run judged run by run; ``claims``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dcnsim.studies.botcp.analysis import EXPERIMENTS, run_botcp, summary
from dcnsim.studies.botcp.claims import botcp_checks
from dcnsim.studies.botcp.plots import FIGURES
from dcnsim.studies.botcp.scenarios import (
    BOTCP_FULL,
    BOTCP_QUICK,
    INIT_CWND,
    IW_VARIANT,
    LABELS,
    SCHEMES,
    START_JITTER_NS,
    bandwidth_scenario,
    extreme_scenario,
    load_scenario,
)
from dcnsim.studies.stats import mean_ci
from dcnsim.studies.study import Study
from dcnsim.studies.text import claim_lines, format_table, num_text, ranges

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
    """Figs. 8-10 per scheme: Fig. 8's short-flow mean FCT or Figs. 9-10's median FCT,
    drops and timeouts, each the mean over seeds ± its 95 % interval."""
    part = runs[runs["experiment"].isin(["bandwidth", "extreme"])]
    fct = part["short_mean_s"].where(part["experiment"] == "bandwidth", part["median_fct_s"])
    columns = {"fct_ms": "short/median FCT ms", "drops": "drops", "timeouts": "timeouts"}
    table = mean_ci(part.assign(fct_ms=fct * 1e3), ["experiment", "scheme"], list(columns))
    order = {(e, s): i for i, (e, s) in enumerate(
        (e, s) for e in ("bandwidth", "extreme") for s in SCHEMES)}  # fmt: skip
    table = table.iloc[sorted(range(len(table)), key=lambda i: order[
        (table["experiment"].iloc[i], table["scheme"].iloc[i])])]  # fmt: skip
    digits = {"fct_ms": 3, "drops": 1, "timeouts": 1}
    return pd.DataFrame(
        {
            "run": [
                {"bandwidth": "Fig. 8", "extreme": "Figs. 9-10"}[e] for e in table["experiment"]
            ],
            "scheme": [LABELS[s] for s in table["scheme"]],
            "seeds": table["runs"].to_list(),
            **{
                title: [
                    f"{num_text(m, digits[c])} ± {num_text(np.nan_to_num(h), digits[c])}"
                    for m, h in zip(table[c], table[f"{c}_ci"], strict=True)
                ]
                for c, title in columns.items()
            },
        }
    )


def botcp_tables(runs: pd.DataFrame, verbose: bool) -> tuple[pd.DataFrame, str]:
    """The load summary (one row per load and scheme) and the printed text."""
    table = summary(runs)
    seeds = sorted({int(s) for s in runs.loc[runs["experiment"] == "load", "seed"]})
    lines = [
        "BOTCP (Ahmed and Arshad, Symmetry 2019, §5): BOTCP vs TCP-ECN vs DCTCP",
        *SETUP,
        f"  Load runs: seeds {ranges(seeds)} per point, means over seeds, comparisons on the 95 %",
        "  interval paired by seed; Figs. 8-10: their seeds' runs, every flow's start shifted",
        f"  by its seed's offset, uniform in [0, {START_JITTER_NS / 1e3:g} µs); cells: mean over"
        " seeds ± 95 % interval.",
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
    experiments=EXPERIMENTS,
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
        **{
            start: "quick: within noise, full: yes (quick seeds 1-3, full 1-5); judged run "
            "by run, three runs all inside give a 95 % Wilson interval of the share of "
            "0.44-1.00, which holds 1/2: three seeds cannot decide such a claim however "
            "the runs fall (five all inside: 0.57-1.00)"
            for start in (
                "Fig. 9: BOTCP drops nothing",
                "Fig. 9: BOTCP's queue during",
                "Fig. 9: TCP-ECN and DCTCP drop",
            )
        },
        "Fig. 11:": "quick: within noise, full: yes (largest ratio 1.02); the quick runs "
        "count a handful of long flows each, whose mean FCT varies by more than the 1.2x "
        "band over three seeds",
    },
)
