"""The latency-difference study's printed tables and notes, and its extra file."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from dcnsim.studies.latency_difference.claims import latency_checks
from dcnsim.studies.latency_difference.reduction import latency_buffer_table, latency_summary
from dcnsim.studies.latency_difference.scenario import (
    DROPTAIL_BUFFER_PKTS,
    LATENCY_BUFFERS,
    LATENCY_EXPECTATIONS,
    LATENCY_OVERSUBSCRIPTIONS,
    LATENCY_TRACED_PORTS,
    PFABRIC_BUFFER_PKTS,
    PFABRIC_RTT_US,
    PFABRIC_TRANSPORT,
    TEST_INTERVAL_US,
    latency_offered,
)
from dcnsim.studies.text import claim_lines, format_table, num_text, ranges


def latency_notes(runs: pd.DataFrame) -> list[str]:
    """How to read the table, with the numbers of these runs."""
    grid = runs[runs["role"] == "grid"]
    loaded = grid[grid["load"] > 0]
    warm = float(runs["warmup_ms"].iloc[0]) if len(runs) else np.nan
    lines = [
        f"Test: 127 packets of 1500 B from host 0 to hosts 1..127, back to back (one per "
        f"{TEST_INTERVAL_US:g} µs), from t = {warm:g} ms",
        "  (the warm-up); latency = probes' latency_s (host delays included), lost = never",
        "  received; std = population standard deviation over the received packets of a run;",
        "  mean/std columns = means over seeds, +-95% = Student-t half-width over seeds.",
        "Overload: offered background / capacity of an agg->core link, without (with) ELR:",
        "  "
        + ", ".join(
            f"{o} {ld:.0%}: {latency_offered(ld, o)['agg_core']:.2f} "
            f"({latency_offered(ld, o, elr=True)['agg_core']:.2f})"
            for o in LATENCY_OVERSUBSCRIPTIONS
            for ld in (0.1, 0.9)
        )
        + ".",
        "  Every loaded point but 10 % at 16:4:1 without ELR offers more than the core carries,",
        "  so the number of unfinished background flows grows for the whole run: there is no",
        "  steady state of the flow count, only of the queues (TCP keeps the bottlenecks full).",
    ]
    if len(loaded):
        half, test = loaded["flows_active_half"].sum(), loaded["flows_active_test"].sum()
        early, late = loaded["queue_early_pkts"].mean(), loaded["queue_late_pkts"].mean()
        lines += [
            "  Here: flows in progress at the test / at half the warm-up (W): "
            f"{test / max(half, 1):.2f} (all loaded runs); queue of",
            f"  {' + '.join(LATENCY_TRACED_PORTS)}, mean over [W/2, 3W/4) vs [3W/4, W): "
            f"{early:.1f} vs {late:.1f} packets (mean over loaded runs).",
        ]
    undecided = int(runs["undecided"].sum()) if len(runs) else 0
    lines += [
        f"Lost vs still in flight: each run lasts 2 ms + 5 full switch queues after the last test"
        f" packet; {undecided} lost test packet(s)",
        "  could still have been in flight by the run's own queue bound (drain_bound_ms).",
        f"TCP: NewReno, drop-tail {DROPTAIL_BUFFER_PKTS} packets (225 KB, pFabric's TCP-DropTail"
        " buffer) per switch port, dcnsim's transport defaults.",
        f"pFabric: pFabric queues of {PFABRIC_BUFFER_PKTS} packets (36 KB) on every port, "
        f"init_cwnd {PFABRIC_TRANSPORT['init_cwnd']}, max_cwnd {PFABRIC_TRANSPORT['max_cwnd']}, "
        f"rto {PFABRIC_TRANSPORT['rto']},",
        f"  probe_after {PFABRIC_TRANSPORT['probe_after']}: pFabric's rules (BDP, 3 RTTs) at this "
        f"tree's round trip of {PFABRIC_RTT_US:.2f} µs (docs/studies.md).",
    ]
    return lines


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
    seeds = sorted(set(runs["seed"])) if len(runs) else []
    lines = [
        "Difference of packet latencies (latency-difference seed, §3, Figs. 2-7)",
        "  3-tier tree: 1 core, 2 agg, 8 ToR, 128 hosts; 1 Gbps host links, upper tiers",
        "  1/2/4 Gbps (64:4:1, 32:4:1, 16:4:1); 0.2 µs links, 2.5 µs host delay, 1500 B packets;",
        "  background: every host to every other host, DeTail-style flow sizes, at the load;",
        f"  seeds {ranges(seeds)} per point",
        "",
        *LATENCY_EXPECTATIONS,
        "",
        format_table(shown),
        "",
        "Closed forms and the seed's claims, against these numbers:",
    ]
    lines += claim_lines(latency_checks(runs))
    buffers = latency_buffer_table(runs)
    if len(buffers):
        lines += [
            "",
            f"Buffer size (packets per switch port) at {LATENCY_BUFFERS['oversub']}, "
            f"{LATENCY_BUFFERS['load']:.0%} load (* = the study's default):",
            format_table(
                pd.DataFrame(
                    {
                        "scheme": buffers["scheme"],
                        "buffer": [
                            f"{b}{'*' if d else ''}"
                            for b, d in zip(buffers["buffer_pkts"], buffers["default"], strict=True)
                        ],
                        "mean (µs)": [num_text(v, 1) for v in buffers["mean_us"]],
                        "std (µs)": [num_text(v, 1) for v in buffers["std_us"]],
                        "max (µs)": [num_text(v, 1) for v in buffers["max_us"]],
                        "lost/run": [num_text(v, 1) for v in buffers["lost_mean"]],
                        "switch drops/run": [num_text(v, 0) for v in buffers["switch_drops"]],
                    }
                )
            ),
        ]
    if verbose:
        lines += ["", "Per run:", format_table(_latency_run_view(runs))]
    lines += ["", *latency_notes(runs)]
    return summary, "\n".join(lines)


def _latency_run_view(runs: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "scheme": runs["scheme"],
            "oversub": runs["oversub"],
            "load": [f"{v:.0%}" for v in runs["load"]],
            "seed": runs["seed"],
            "buffer": runs["buffer_pkts"],
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
    path = out / "buffers.csv"
    latency_buffer_table(runs).to_csv(path, index=False)
    return [path]
