"""The latency-difference study's printed tables and notes, and its extra file."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from dcnsim.studies.latency_difference.claims import latency_checks
from dcnsim.studies.latency_difference.reduction import latency_summary, latency_variant_table
from dcnsim.studies.latency_difference.scenario import (
    LATENCY_EXPECTATIONS,
    LATENCY_OVERSUBSCRIPTIONS,
    LATENCY_READING_TEXT,
    TEST_INTERVAL_US,
    VARIANT_OVERSUB,
    latency_offered,
)
from dcnsim.studies.readings import first_seed, reading_lines
from dcnsim.studies.text import claim_lines, format_table, num_text, ranges


def latency_notes(runs: pd.DataFrame) -> list[str]:
    """How to read the table, with the numbers of these runs."""
    undecided = int(runs["undecided"].sum()) if len(runs) else 0
    return [
        f"Test: 127 packets of 1500 B from host 0 to hosts 1..127, back to back (one per "
        f"{TEST_INTERVAL_US:g} µs), from t = 0 with the background",
        "  (W0); latency = probes' latency_s (host delays included), lost = never received;",
        "  std = population standard deviation over the received packets of a run;",
        "  mean/std columns = means over seeds, +-95% = Student-t half-width over seeds.",
        "Offered background / capacity of an agg->core link at host-link load (A1), "
        "without (with) ELR for all (E2):",
        "  "
        + ", ".join(
            f"{o} {ld:.0%}: {latency_offered(ld, o)['agg_core']:.2f} "
            f"({latency_offered(ld, o, elr=True)['agg_core']:.2f})"
            for o in LATENCY_OVERSUBSCRIPTIONS
            for ld in (0.1, 0.9)
        )
        + ".",
        f"Lost vs still in flight: each run lasts 2 ms + 5 full switch queues after the last test"
        f" packet; {undecided} lost test packet(s)",
        "  could still have been in flight by the run's own queue bound (drain_bound_ms).",
        *reading_lines(first_seed.READING),
        "Flows: a connection per flow without handshake or FIN (C1); ELR for the test packets"
        " only (E1).",
    ]


def latency_tables(runs: pd.DataFrame, verbose: bool) -> tuple[pd.DataFrame, str]:
    summary = latency_summary(runs)
    shown = pd.DataFrame(
        {
            "scheme": summary["scheme"],
            "oversub": summary["oversub"],
            "load": [f"{v:.0%}" for v in summary["load"]],
            "mean (µs)": [num_text(v, 1) for v in summary["mean_us"]],
            "+-95%": [num_text(v, 1) for v in summary["mean_ci_us"]],
            "std (µs)": [num_text(v, 1) for v in summary["std_us"]],
            "+-95% ": [num_text(v, 1) for v in summary["std_ci_us"]],
            "min": [num_text(v, 1) for v in summary["min_us"]],
            "max": [num_text(v, 1) for v in summary["max_us"]],
            "lost/run": [num_text(v, 1) for v in summary["lost_mean"]],
            "seed": summary["seed"],
        }
    )
    seeds = sorted(set(runs.loc[runs["role"] == "grid", "seed"])) if len(runs) else []
    lines = [
        "Difference of packet latencies (latency-difference seed, §3, Figs. 2-7)",
        "  3-tier tree: 1 core, 2 agg, 8 ToR, 128 hosts; 1 Gbps host links, upper tiers",
        "  1/2/4 Gbps (64:4:1, 32:4:1, 16:4:1); 0.2 µs links, 2.5 µs host delay, 1500 B packets;",
        "  background: every host to every other host, DeTail-style flow sizes, at the load;",
        f"  seeds {ranges(seeds)} per point",
        "",
        *LATENCY_EXPECTATIONS,
        "",
        format_table(shown, keys=3),
        "",
        "Closed forms and the seed's claims, against these numbers:",
    ]
    lines += claim_lines(latency_checks(runs))
    variants = latency_variant_table(runs)
    if len(variants):
        lines += [
            "",
            f"Named variants at {VARIANT_OVERSUB} (each changes one reading; docs/studies.md):",
            *(f"  {r}: {text}" for r, text in LATENCY_READING_TEXT.items()),
            format_table(
                pd.DataFrame(
                    {
                        "reading": variants["reading"],
                        "scheme": variants["scheme"],
                        "load": [f"{v:.0%}" for v in variants["load"]],
                        "runs": variants["runs"],
                        "mean (µs)": [num_text(v, 1) for v in variants["mean_us"]],
                        "std (µs)": [num_text(v, 1) for v in variants["std_us"]],
                        "max (µs)": [num_text(v, 1) for v in variants["max_us"]],
                        "lost/run": [num_text(v, 1) for v in variants["lost_mean"]],
                        "switch drops/run": [num_text(v, 0) for v in variants["switch_drops"]],
                    }
                )
            ),
        ]
    if "reference" in runs.attrs:
        lines += ["", runs.attrs["reference"]]
    if verbose:
        lines += ["", "Per run:", format_table(_latency_run_view(runs))]
    lines += ["", *latency_notes(runs)]
    return summary, "\n".join(lines)


def _latency_run_view(runs: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "reading": runs["reading"],
            "scheme": runs["scheme"],
            "oversub": runs["oversub"],
            "load": [f"{v:.0%}" for v in runs["load"]],
            "seed": runs["seed"],
            "buffer": runs["buffer"],
            "mean (µs)": [num_text(v, 1) for v in runs["mean_us"]],
            "std (µs)": [num_text(v, 1) for v in runs["std_us"]],
            "min": [num_text(v, 1) for v in runs["min_us"]],
            "max": [num_text(v, 1) for v in runs["max_us"]],
            "lost": runs["lost"],
            "flows W/2": runs["flows_active_half"],
            "flows W": runs["flows_active_test"],
            "queue early": [num_text(v, 1) for v in runs["queue_early_pkts"]],
            "queue late": [num_text(v, 1) for v in runs["queue_late_pkts"]],
            "wall (s)": [f"{v:.2f}" for v in runs["wall_s"]],
        }
    )


def latency_extras(runs: pd.DataFrame, summary: pd.DataFrame, out: Path) -> list[Path]:
    path = out / "variants.csv"
    latency_variant_table(runs).to_csv(path, index=False)
    return [path]
