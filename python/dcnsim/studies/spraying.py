"""Random packet spraying: the spraying seed's static scenario (Figs. 2-4).

Long flows and one short flow into one host of a k = 4 fat-tree, with random packet
spraying or single-path routing: the short flow's FCT and reordering, the long
flows' goodput against the fair share. ``run_spraying`` / ``spraying_summary`` /
``spraying_checks`` from Python.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dcnsim.scenario import Scenario
from dcnsim.studies.figures import pyplot, save
from dcnsim.studies.readings import reading_lines, thawed
from dcnsim.studies.readings import spraying as reading
from dcnsim.studies.runner import Progress, run_scenarios
from dcnsim.studies.stats import by_seed, mean_ci, paired_difference, t95_half_width
from dcnsim.studies.study import Study
from dcnsim.studies.text import (
    Claim,
    claim_lines,
    compare,
    decided,
    every,
    format_table,
    interval,
    num_text,
    ranges,
    within,
)

__all__ = [
    "SPRAYING_FULL",
    "SPRAYING_POLICIES",
    "SPRAYING_QUICK",
    "STUDY",
    "run_spraying",
    "spraying_checks",
    "spraying_reference",
    "spraying_scenario",
    "spraying_summary",
    "spraying_wide",
]

SPRAYING_POLICIES = ("rps", "single")
SPRAYING_FULL = {"n_long": [0, 1, 2, 3, 4, 5], "seeds": list(range(1, 11))}
SPRAYING_QUICK = {"n_long": [0, 2, 5], "seeds": [1, 2, 3]}
SHORT_FLOW_BYTES = 200_000
LONG_FLOW_BYTES = 10_000_000
#: The last link's payload rate (bit/s): 1 Gbps x 1460 B of payload per 1500 B packet.
PAYLOAD_RATE = 1e9 * 1460 / 1500


def static_finish_ms(n_long: int) -> float:
    """The closed form of the single-path static scenario: every byte of the n_long
    long flows and the short flow crosses E7 -> S15 at its payload rate, so the long
    flows, sharing it fairly to the end, all finish at (bytes x 8 / rate)."""
    return (n_long * LONG_FLOW_BYTES + SHORT_FLOW_BYTES) * 8 / PAYLOAD_RATE * 1e3


SPRAYING_EXPECTATIONS = [
    "Seed's findings (qualitative; the text gives no exact numbers):",
    "  - with rps the short flow's mean FCT is smaller than with single-path TCP, and the",
    "    advantage grows as long flows are added (Fig. 3);",
    "  - with rps the short flow sees out-of-order packets, at about the same percentage",
    "    once there are two or more long flows (Fig. 4);",
    "  - the long flows' mean throughput is slightly larger with rps and bounded by the",
    "    fair share of the bottleneck E7->S15 (Fig. 2): 1000/n_long Mbps, the short flow",
    "    being gone after a few milliseconds.",
]


def spraying_scenario(policy: str, n_long: int, seed: int = 1) -> Scenario:
    """k = 4 fat-tree, 1 Gbps, 25 µs links, 1000-packet drop-tail queues, TCP as
    ns-3.23's TcpNewReno has it (profile ``ns3``: 128 KiB socket buffers, initial
    window 1, delayed ACKs, RTO_min 1 s) with the seed's 1500 B packets: MSS 1460 B
    and a 40 B header (the profile's 52 B, with ns-3.23's timestamp option, would make
    them 1512 B).

    Long flows of 10 MB from hosts 0..n_long-1 to host 15, then one 200 KB short
    flow from host 0 to host 15 (the last flow); everything starts at time 0.
    """
    if not 0 <= n_long <= 15:
        raise ValueError(f"n_long must be within 0..15, got {n_long}")
    flows = [{"src": i, "dst": 15, "size": "10MB"} for i in range(n_long)]
    flows.append({"src": 0, "dst": 15, "size": "200KB"})
    return seed_fat_tree(f"spraying policy={policy} long={n_long}", policy, seed, flows)


def seed_fat_tree(
    name: str,
    policy: str,
    seed: int,
    flows: list[dict[str, Any]],
    transport: dict[str, Any] | None = None,
) -> Scenario:
    """The seed's network and TCP (see ``spraying_scenario``) carrying ``flows``;
    ``transport`` keys, if given, are written over the seed's."""
    return Scenario(
        {
            "name": name,
            "seed": seed,
            "topology": {"kind": "fat_tree", "k": 4, "link": {"rate": "1Gbps", "delay": "25us"}},
            "network": {"queue": thawed(reading.QUEUE)},
            "forwarding": {"policy": policy},
            "transport": {**thawed(reading.TCP), **(transport or {})},
            "traffic": {"flows": flows},
        }
    )


def _reduce_spraying(results: Any) -> dict[str, Any]:
    tcp = results.flows[results.flows["kind"] == "tcp"].sort_values("flow_id")
    short, long = tcp.iloc[-1], tcp.iloc[:-1]
    return {
        "short_fct_ms": float(short["fct_s"]) * 1e3,
        "short_ooo_packets": int(short["ooo_packets"]),
        "short_packets_delivered": int(short["packets_delivered"]),
        "short_ooo_pct": 100.0
        * int(short["ooo_packets"])
        / max(int(short["packets_delivered"]), 1),
        "short_timeouts": int(short["timeouts"]),
        "long_goodput_mbps": float(long["goodput_bps"].mean()) / 1e6 if len(long) else np.nan,
        "long_goodput_max_mbps": float(long["goodput_bps"].max()) / 1e6 if len(long) else np.nan,
        # The last long flow to finish: all long flows' bytes had to cross the 1 Gbps
        # E7->S15 port before it ended, so it cannot beat the fair share 1000/n_long.
        "long_goodput_min_mbps": float(long["goodput_bps"].min()) / 1e6 if len(long) else np.nan,
        # All long flows' bytes over the time until the last of them finished: what
        # the bottleneck E7->S15 carried for them, at most its 1 Gbps.
        "long_aggregate_mbps": (
            8 * float(long["size_bytes"].sum()) / float(long["end_s"].max()) / 1e6
            if len(long)
            else np.nan
        ),
        "long_first_end_ms": float(long["end_s"].min()) * 1e3 if len(long) else np.nan,
        "long_last_end_ms": float(long["end_s"].max()) * 1e3 if len(long) else np.nan,
        "long_timeouts": int(long["timeouts"].sum()),
        "drops": int(tcp["drops"].sum()),
        "unfinished": int(tcp["fct_s"].isna().sum()),
    }


def run_spraying(
    quick: bool = False,
    jobs: int | None = None,
    n_long: Iterable[int] | None = None,
    seeds: Iterable[int] | None = None,
    policies: Iterable[str] = SPRAYING_POLICIES,
    progress: Progress | None = None,
) -> pd.DataFrame:
    """One row per run (policy, n_long, seed) of the static spraying scenario.

    Defaults: n_long 0..5 and seeds 1..10, or with ``quick`` n_long 0, 2, 5 and
    seeds 1..3; the full plan (no ``n_long`` or ``seeds`` given) also runs
    ``spraying_reference`` beside ns-3 into ``attrs["reference"]``, which the study
    prints. Columns: ``policy, n_long, seed, short_fct_ms, short_ooo_packets,
    short_packets_delivered, short_ooo_pct, short_timeouts, long_goodput_mbps,
    long_goodput_max_mbps, long_aggregate_mbps, long_first_end_ms, long_last_end_ms,
    long_timeouts, drops, unfinished,
    wall_s``.
    """
    plan = SPRAYING_QUICK if quick else SPRAYING_FULL
    # The study's full variant (its own plan, rps included) also runs the reference.
    full_variant = not quick and n_long is None and seeds is None and "rps" in policies
    n_long = list(plan["n_long"] if n_long is None else n_long)
    seeds = list(plan["seeds"] if seeds is None else seeds)
    points = [(p, n, s) for p in policies for n in n_long for s in seeds]
    order = sorted(range(len(points)), key=lambda i: -points[i][1])  # long runs first
    tasks = [(_reduce_spraying, spraying_scenario(*points[i])) for i in order]
    answers = run_scenarios(tasks, jobs=jobs, progress=progress)
    rows: list[dict[str, Any]] = [{}] * len(points)
    for i, answer in zip(order, answers, strict=True):
        policy, n, seed = points[i]
        rows[i] = {"policy": policy, "n_long": n, "seed": seed, **answer}
    table = pd.DataFrame(rows)
    if full_variant:
        # The full variant's spraying beside ns-3.37 (issue 45 item 4), printed by
        # _spraying_tables: the text, or what to install.
        from dcnsim.crosscheck import reference_block

        title = "Spraying beside ns-3.37"
        table.attrs["reference"] = reference_block("ns3", title, spraying_reference)
    return table


#: The points run beside ns-3 (each 10 MB flow takes ns-3 about a minute).
REFERENCE_N_LONG = (1, 2, 5)


def spraying_reference(n_long: Iterable[int] = REFERENCE_N_LONG, seed: int = 1) -> str:
    """The static scenario with ``rps`` run by dcnsim and by ns-3.37 (``dcnsim
    crosscheck --with ns3``: ``RandomEcmpRouting``, the seed's simulator a later
    release, ns-3.23 being the one it names): per ``n_long`` the short flow's FCT, the
    long flows' mean FCT and the retransmits, in both. Single-path routing is not
    run: ns-3's global routing has no per-flow choice to match dcnsim's. Needs ns-3."""
    from dcnsim.crosscheck import crosscheck

    rows = []
    for n in n_long:
        flows = crosscheck(spraying_scenario("rps", n, seed).to_dict(), "ns3").flows()
        short, long = flows.iloc[-1], flows.iloc[:-1]
        rows.append(
            {
                "long flows": n,
                "short FCT ms (dcnsim / ns-3)": f"{short.fct_s * 1e3:.3f} / "
                f"{short.fct_s_ref * 1e3:.3f}",
                "long mean FCT ms": f"{long.fct_s.mean() * 1e3:.2f} / "
                f"{long.fct_s_ref.mean() * 1e3:.2f}",
                "retransmits": f"{flows.retransmits.sum()} / {flows.retransmits_ref.sum()}",
            }
        )
    return "\n".join(
        [
            f"Spraying (rps) beside ns-3.37 (dcnsim crosscheck), seed {seed}; the seed's",
            "  numbers are qualitative (above): here the two simulators, run for run",
            format_table(pd.DataFrame(rows)),
        ]
    )


def spraying_summary(runs: pd.DataFrame) -> pd.DataFrame:
    """Per (policy, n_long): means over the seeds.

    ``short_fct_ms`` (and its min and max over seeds, ``short_fct_ci_ms`` the half-width
    of its 95 % interval), ``short_ooo_pct`` (the mean of
    each run's ooo_packets / packets_delivered x 100), ``long_goodput_mbps`` (mean
    over the long flows and seeds; ``long_goodput_ci_mbps`` its 95 % interval over
    seeds), ``long_aggregate_mbps`` (the long flows' bytes over
    the time the last of them ended, mean over seeds), ``long_goodput_min_mbps`` (the
    slowest long flow, max over seeds), ``fair_share_mbps`` = 1000 / n_long (the
    short flow is gone after a few ms), ``runs``.
    """
    grouped = runs.groupby(["policy", "n_long"], sort=False)
    table = grouped.agg(
        runs=("seed", "count"),
        short_fct_ms=("short_fct_ms", "mean"),
        short_fct_min_ms=("short_fct_ms", "min"),
        short_fct_max_ms=("short_fct_ms", "max"),
        short_fct_ci_ms=("short_fct_ms", t95_half_width),
        short_ooo_pct=("short_ooo_pct", "mean"),
        long_goodput_mbps=("long_goodput_mbps", "mean"),
        long_goodput_ci_mbps=("long_goodput_mbps", t95_half_width),
        long_goodput_max_mbps=("long_goodput_max_mbps", "max"),
        long_goodput_min_mbps=("long_goodput_min_mbps", "max"),
        long_aggregate_mbps=("long_aggregate_mbps", "mean"),
        timeouts=("short_timeouts", "sum"),
    ).reset_index()
    table["fair_share_mbps"] = 1000.0 / table["n_long"].where(table["n_long"] > 0)
    return table


def spraying_wide(summary: pd.DataFrame) -> pd.DataFrame:
    """The summary with one row per n_long and the policies side by side."""
    wide = summary.pivot(index="n_long", columns="policy")
    out = pd.DataFrame(index=wide.index)
    out["fair_share_mbps"] = wide["fair_share_mbps"].iloc[:, 0]
    columns = ("short_fct_ms", "short_fct_ci_ms", "short_ooo_pct", "long_goodput_mbps")
    for column in (*columns, "long_goodput_ci_mbps", "long_aggregate_mbps"):
        for policy in summary["policy"].unique():
            out[f"{policy}_{column}"] = wide[(column, policy)]
    return out.reset_index()


#: "About the same" (the seed's Fig. 4: the out-of-order share with two or more long
#: flows), read as within a quarter of the mean share: the seed gives no number.
ABOUT_SAME = 0.25


def _difference_text(
    n: int, a: float, b: float, difference: float, half: float, digits: int
) -> str:
    shown = f"n={n}: rps {a:.{digits}f} vs single {b:.{digits}f}"
    return shown + (
        "" if pd.isna(half) else f" (difference {difference:+.{digits}f} +- {half:.{digits}f})"
    )


def spraying_checks(runs: pd.DataFrame) -> list[Claim]:
    """The seed's claims (Figs. 2-4), each decided on the 95 % interval over seeds of
    the difference it compares, then the physical bounds and sanity checks
    (``check``). ``ok`` is ``None`` when the runs do not have what a claim needs
    (e.g. one policy)."""
    summary = spraying_summary(runs)
    by = summary.set_index(["policy", "n_long"])
    checks: list[Claim] = []
    ci = interval(runs)
    policies = set(summary["policy"])
    n_values = sorted(set(summary["n_long"]))
    both = {"rps", "single"} <= policies
    at = [n for n in n_values if n >= 1]
    many = [n for n in n_values if n >= 2]

    def listed(values: Sequence[int]) -> str:
        return ", ".join(map(str, values)) or "-"

    def rps_against_single(column: str, larger: bool, digits: int) -> tuple[bool | None, str]:
        """rps's mean larger (or smaller) than single's at every n of ``at``."""
        decisions, parts = [], []
        for n in at:
            rps, single = (
                by_seed(runs, column, policy="rps", n_long=n),
                by_seed(runs, column, policy="single", n_long=n),
            )
            difference, half = paired_difference(rps, single)
            decisions.append(compare(difference if larger else -difference, half))
            parts.append(_difference_text(n, rps.mean(), single.mean(), difference, half, digits))
        return every(decisions), "; ".join(parts)

    if both and at:
        ok, shown = rps_against_single("short_fct_ms", False, 2)
        checks.append(
            Claim(
                f"seed: rps short-flow mean FCT < single at n_long = {listed(at)}",
                "rps faster (Fig. 3)",
                shown + " ms",
                tolerance=ci,
                **decided(ok),
            )
        )
        gains = {
            n: by_seed(runs, "short_fct_ms", policy="single", n_long=n)
            - by_seed(runs, "short_fct_ms", policy="rps", n_long=n)
            for n in at
        }
        steps = [paired_difference(gains[b], gains[a]) for a, b in itertools.pairwise(at)]
        shown = ", ".join(f"{gains[n].mean():.2f}" for n in at)
        checks.append(
            Claim(
                f"seed: rps's FCT advantage (single - rps) grows with n_long = {listed(at)}",
                "the gap grows (Fig. 3)",
                f"single - rps: {shown} ms",
                tolerance=ci,
                **(decided(every([compare(d, h) for d, h in steps])) if steps else {"ok": None}),
            )
        )
    if "rps" in policies and many:
        ooo = {n: by.loc[("rps", n), "short_ooo_pct"] for n in many}
        checks.append(
            Claim(
                f"seed: rps short flow has out-of-order packets at n_long = {listed(many)}",
                "out-of-order packets (Fig. 4)",
                "; ".join(f"n={n}: {v:.2f} %" for n, v in ooo.items()),
                all(v > 0 for v in ooo.values()),
            )
        )
        if len(many) > 1:
            mean = float(np.mean(list(ooo.values())))
            series = {n: by_seed(runs, "short_ooo_pct", policy="rps", n_long=n) for n in many}
            pairs = [
                paired_difference(series[b], series[a]) for a, b in itertools.combinations(many, 2)
            ]
            checks.append(
                Claim(
                    f"seed: rps short flow's out-of-order share about the same at n_long = "
                    f"{listed(many)} (every two within {ABOUT_SAME:.0%} of the mean share)",
                    "about the same with two or more long flows (Fig. 4)",
                    "; ".join(f"n={n}: {v:.2f} %" for n, v in ooo.items()),
                    tolerance=f"{ci}; 'about the same' read as +-{ABOUT_SAME:.0%} of the mean",
                    **decided(every([within(d, h, ABOUT_SAME * mean) for d, h in pairs])),
                )
            )
    if both and at:
        ok, shown = rps_against_single("long_goodput_mbps", True, 1)
        checks.append(
            Claim(
                f"seed: long-flow mean goodput with rps > single at n_long = {listed(at)}",
                "slightly larger with rps (Fig. 2)",
                shown + " Mbps",
                tolerance=ci,
                **decided(ok),
            )
        )
    if "single" in policies:
        single_ooo = by.loc["single", "short_ooo_pct"]
        checks.append(
            Claim(
                "single-path short flow has no out-of-order packets",
                "none (one path)",
                f"at most {single_ooo.max():.2f} %",
                bool((single_ooo == 0).all()),
                check=True,
            )
        )
    with_long = summary[summary["n_long"] > 0]
    if len(with_long):
        over = with_long["long_goodput_min_mbps"] / with_long["fair_share_mbps"]
        checks.append(
            Claim(
                "long flows capped by the fair share at the last hop: the slowest "
                "long flow's goodput <= 1000/n_long in every run",
                "bounded by the fair share at E7-S15 (Fig. 2)",
                f"at most {over.max():.3f} x the fair share",
                bool((over <= 1.001).all()),
                tolerance="0.1 % (timing of the last segments)",
                check=True,
            )
        )
        aggregate = runs["long_aggregate_mbps"].dropna()
        checks.append(
            Claim(
                "long flows' aggregate <= 1 Gbps in every run",
                "<= 1000 Mbps (the bottleneck)",
                f"at most {aggregate.max():.1f} Mbps",
                bool((aggregate <= 1000.0).all()),
                check=True,
            )
        )
    single_runs = runs[runs["policy"] == "single"]
    five = single_runs[single_runs["n_long"] == 5]
    if len(five):
        closed = static_finish_ms(5)
        first, last = five["long_first_end_ms"].min(), five["long_last_end_ms"].max()
        aggregate = five["long_aggregate_mbps"].min()
        rate = PAYLOAD_RATE / 1e6
        checks.append(
            Claim(
                f"single path, 5 long flows: each ends within 3 % of {closed:.1f} ms "
                f"(50.2 MB at {rate:.1f} Mbps) and within 5 ms of the others; their "
                "aggregate within 3 % of that rate",
                "fair, lossless sharing (128 KiB socket buffers)",
                f"{first:.1f}-{last:.1f} ms, aggregate {aggregate:.1f} Mbps",
                bool(
                    abs(first / closed - 1) <= 0.03
                    and abs(last / closed - 1) <= 0.03
                    and last - first <= 5.0
                    and abs(aggregate / rate - 1) <= 0.03
                ),
                tolerance="3 % of the closed form, 5 ms between flows",
                check=True,
            )
        )
    if single_runs["seed"].nunique() > 1:
        numbers = single_runs.drop(columns=["seed", "wall_s"]).groupby(["n_long"])
        same = bool((numbers.nunique(dropna=False) <= 1).all().all())
        checks.append(
            Claim(
                "single-path runs are the same for every seed",
                "one path: no randomness",
                "identical" if same else "differ",
                same,
                check=True,
            )
        )
    return checks


SPRAYING_NOTES = [
    "OOO % = the short flow's ooo_packets / packets_delivered x 100 (data segments arriving",
    "  above the next expected byte, per data segment received), mean over seeds.",
    "fair share = 1000/n_long Mbps: the long flows share E7->S15 (the short flow is gone",
    "  after a few ms). The last long flow to finish cannot beat it; flows that finish",
    "  earlier can, so the mean goodput is above it when flows finish unevenly.",
    "goodput = mean over the long flows and seeds of 10 MB x 8 / FCT (handshake included);",
    "  aggregate = all long flows' bytes over the time the last one ended (<= 1 Gbps).",
    "Why rps is slower for the short flow: reordering across paths makes three duplicate",
    "  ACKs, the fast retransmit is spurious (rps runs retransmit without drops) and halves",
    "  the window; with transport.dupack_threshold = 10 rps is faster (docs/studies.md).",
]


def _spraying_tables(runs: pd.DataFrame, verbose: bool) -> tuple[pd.DataFrame, str]:
    summary = spraying_summary(runs)
    wide = spraying_wide(summary)
    shown = pd.DataFrame({"long flows": wide["n_long"]})
    shown["fair share"] = [num_text(v, 1) for v in wide["fair_share_mbps"]]
    policies = list(summary["policy"].unique())
    for column, title, digits, ci in (
        ("short_fct_ms", "FCT", 3, "short_fct_ci_ms"),
        ("short_ooo_pct", "OOO %", 2, None),
        ("long_goodput_mbps", "goodput", 1, "long_goodput_ci_mbps"),
        ("long_aggregate_mbps", "aggregate", 1, None),
    ):
        for policy in policies:
            shown[f"{title} {policy}"] = [num_text(v, digits) for v in wide[f"{policy}_{column}"]]
            if ci is not None:
                shown[f"{title} +-95% {policy}"] = [
                    num_text(v, digits) for v in wide[f"{policy}_{ci}"]
                ]
    seeds = sorted(set(runs["seed"]))
    lines = [
        "Random packet spraying, static scenario (spraying seed, Figs. 2-4)",
        "  k = 4 fat-tree, 1 Gbps, 25 µs links;",
        "  n_long 10 MB flows S0..S(n_long-1) -> S15 and one 200 KB flow S0 -> S15, all at t = 0;",
        f"  seeds {ranges(seeds)} per point (single-path routing depends on the host pair only)",
        *reading_lines(reading.READING),
        "",
        *SPRAYING_EXPECTATIONS,
        "",
        "FCT: the short flow's mean FCT (ms); OOO %: its out-of-order percentage;",
        "+-95%: half-width of the 95 % Student-t interval of the mean over seeds;",
        "goodput: the long flows' mean goodput (Mbps); aggregate: all long flows' bytes over",
        "the time the last of them ended (Mbps); fair share: 1000/(long flows) Mbps.",
        "",
        format_table(shown),
        "",
        "The seed's claims against these numbers (intervals: of the difference, paired by seed):",
    ]
    lines += claim_lines(spraying_checks(runs))
    if "reference" in runs.attrs:
        lines += ["", runs.attrs["reference"]]
    if verbose:
        lines += ["", "Per run:", format_table(_spraying_run_view(runs))]
    lines += ["", *SPRAYING_NOTES]
    return wide, "\n".join(lines)


def _spraying_run_view(runs: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "policy": runs["policy"],
            "long": runs["n_long"],
            "seed": runs["seed"],
            "short FCT (ms)": [f"{v:.3f}" for v in runs["short_fct_ms"]],
            "short OOO": [
                f"{o}/{d}"
                for o, d in zip(
                    runs["short_ooo_packets"], runs["short_packets_delivered"], strict=True
                )
            ],
            "long goodput (Mbps)": [num_text(v, 1) for v in runs["long_goodput_mbps"]],
            "long aggregate (Mbps)": [num_text(v, 1) for v in runs["long_aggregate_mbps"]],
            "drops": runs["drops"],
            "timeouts": runs["short_timeouts"] + runs["long_timeouts"],
            "wall (s)": [f"{v:.2f}" for v in runs["wall_s"]],
        }
    )


#: The seed's Figs. 2-4: (column of the runs, y-axis label, long flows only).
SPRAYING_FIGURES = {
    "fig2": ("long_goodput_mbps", "long flows: mean goodput (Mbps)", True),
    "fig3": ("short_fct_ms", "short flow: mean FCT (ms)", False),
    "fig4": ("short_ooo_pct", "short flow: out-of-order packets (%)", False),
}


def _spraying_plot(figure: str, runs: pd.DataFrame, summary_wide: pd.DataFrame, path: Path) -> None:
    """One of the seed's Figs. 2-4: the mean over seeds against the number of long
    flows, a line per policy with 95 % intervals (and the fair share on Fig. 2)."""
    column, label, long_only = SPRAYING_FIGURES[figure]
    if long_only:
        runs = runs[runs["n_long"] > 0]
    with_long = summary_wide[summary_wide["n_long"] > 0]
    fair = (with_long["n_long"], with_long["fair_share_mbps"]) if long_only else None
    policy_figure(runs, ["policy"], column, f"{label} (seed {figure.replace('fig', 'Fig. ')})",
                  path, fair)  # fmt: skip


def policy_figure(
    runs: pd.DataFrame,
    series: list[str],
    column: str,
    title: str,
    path: Path,
    fair: tuple[Any, Any] | None = None,
) -> None:
    """``column`` (mean over seeds, 95 % intervals) against the number of long flows,
    one line per value of ``series``; ``title`` is "what: unit label"; nothing drawn
    when ``runs`` is empty."""
    from matplotlib.ticker import MaxNLocator

    if runs.empty:
        return
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5.5, 4.2))
    points = mean_ci(runs, [*series, "n_long"], [column])
    for key, line in points.groupby(series, sort=False):
        line = line.sort_values("n_long")
        name = " ".join(
            f"{v}" if s == "policy" else f"{s}={v}" for s, v in zip(series, key, strict=True)
        )
        ax.errorbar(
            line["n_long"], line[column], yerr=line[f"{column}_ci"].fillna(0), marker="o",
            capsize=3, label=name,
        )  # fmt: skip
    if fair is not None:
        ax.plot(*fair, "k--", linewidth=1, label="fair share 1000/n")
    ax.set_title(title, fontsize=10)
    ax.set_xlabel("number of long flows")
    ax.set_ylabel(title.split(": ")[1].split(" (seed")[0])
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    ax.legend(title="95 % intervals over seeds", title_fontsize=7)
    save(fig, path)


STUDY = Study(
    name="spraying",
    title="random packet spraying seed, static scenario (Figs. 2-4): rps vs single-path TCP",
    seed="random packet spraying in a fat-tree, static scenario, Figs. 2-4",
    runs=run_spraying,
    tables=_spraying_tables,
    claims=spraying_checks,
    figures={name: partial(_spraying_plot, name) for name in SPRAYING_FIGURES},
)
