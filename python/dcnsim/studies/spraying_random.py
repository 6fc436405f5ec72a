"""Random packet spraying: the spraying seed's randomized scenario (Figs. 5-9).

Short (200 KB) and long (10 MB) flows between random host pairs of the seed's k = 4
fat-tree, with random packet spraying or single-path routing: the short flows' FCT
and reordering and the long flows' throughput against the number of long flows
(Figs. 5-7, 20 short flows), and with 10 against 20 short flows (Figs. 8-9). Beside
the seed's two, the policies users compare spraying against (``RANDOM_POLICIES``):
ECMP, LetFlow (flowlets on random paths, Vanini et al., NSDI 2017) and DRILL
(the shortest of d random and m remembered queues, Ghorbani et al., SIGCOMM 2017),
each at its defaults.
``run_spraying_random`` / ``spraying_random_summary`` / ``spraying_random_checks``;
``run_reordering_tolerance`` / ``reordering_tolerance_summary``: the rps short-flow
result under the TCP variants of ``TOLERANCE``.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dcnsim.scenario import Scenario
from dcnsim.studies.readings import reading_lines
from dcnsim.studies.readings import spraying as reading
from dcnsim.studies.runner import Progress, run_scenarios
from dcnsim.studies.spraying import (
    LONG_FLOW_BYTES,
    SHORT_FLOW_BYTES,
    SPRAYING_POLICIES,
    policy_figure,
    seed_fat_tree,
)
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
    "RANDOM_FULL",
    "RANDOM_POLICIES",
    "RANDOM_QUICK",
    "STUDY",
    "TOLERANCE",
    "random_scenario",
    "reordering_tolerance_summary",
    "run_reordering_tolerance",
    "run_spraying_random",
    "spraying_random_checks",
    "spraying_random_summary",
]

HOSTS = 16
#: The policies compared: the seed's (rps, single), then per-flow hashing, flowlets
#: and DRILL(2, 1), the schemes users compare spraying against.
RANDOM_POLICIES = (*SPRAYING_POLICIES, "ecmp", "letflow", "drill")
RANDOM_FULL = {"n_long": [0, 1, 2, 3, 4, 5], "n_short": [20, 10], "seeds": list(range(1, 11))}
RANDOM_QUICK = {"n_long": [0, 2, 5], "n_short": [20, 10], "seeds": [1, 2, 3]}
#: The seed's only number for the randomized scenario: "about 20 %" of the short
#: flows' packets arrive out of order with rps (Fig. 7); read as 10-30 %.
SEED_OOO_PCT = (10.0, 30.0)
METRICS = ("short_fct_ms", "short_ooo_pct", "long_goodput_mbps")
UNITS = {"short_fct_ms": "ms", "short_ooo_pct": "%", "long_goodput_mbps": "Mbps"}
#: How TCP tolerates reordering: `[transport]` keys over the seed's (profile ns3).
TOLERANCE: dict[str, dict[str, Any]] = {
    "dupack3": {},  # the seed's: fast retransmit on the third duplicate ACK
    "sack": {"sack": True},  # SACK recovery (RFC 6675), still DupThresh 3
    "rack": {"sack": True, "rack": True},  # RACK-TLP (RFC 8985)
    "dsack_undo": {"sack": True, "dsack": True, "dsack_undo": True},  # RFC 3708
    "eifel": {"undo": True},  # Eifel detection and response (RFC 3522, RFC 4015)
}


def random_pairs(count: int, rng: np.random.Generator) -> list[tuple[int, int]]:
    """``count`` (src, dst) host pairs, uniform over the ordered pairs with src != dst."""
    src = rng.integers(0, HOSTS, count)
    dst = (src + rng.integers(1, HOSTS, count)) % HOSTS
    return [(int(s), int(d)) for s, d in zip(src, dst, strict=True)]


def random_scenario(
    policy: str,
    n_long: int,
    n_short: int = 20,
    seed: int = 1,
    transport: dict[str, Any] | None = None,
) -> Scenario:
    """The seed's network and TCP (``spraying_scenario``) with n_long 10 MB flows and
    then n_short 200 KB flows between random host pairs, all starting at t = 0;
    ``transport`` keys, if given, over the seed's.

    The pairs come from ``seed`` alone, so rps and single run the same pairs; the
    first n_long pairs are the long flows, the next n_short the short ones.
    """
    if not 0 <= n_long <= 50 or not 1 <= n_short <= 50:
        raise ValueError(f"n_long must be within 0..50 and n_short 1..50, got {n_long}, {n_short}")
    pairs = random_pairs(n_long + n_short, np.random.default_rng(seed))
    flows = [
        {"src": s, "dst": d, "size": "10MB" if i < n_long else "200KB"}
        for i, (s, d) in enumerate(pairs)
    ]
    name = f"spraying random policy={policy} long={n_long} short={n_short}"
    return seed_fat_tree(name, policy, seed, flows, transport)


def _reduce_random(results: Any) -> dict[str, Any]:
    tcp = results.flows[results.flows["kind"] == "tcp"]
    short = tcp[tcp["size_bytes"] == SHORT_FLOW_BYTES]
    long = tcp[tcp["size_bytes"] == LONG_FLOW_BYTES]
    delivered = int(short["packets_delivered"].sum())
    return {
        "short_fct_ms": float(short["fct_s"].mean()) * 1e3,
        "short_ooo_pct": 100.0 * int(short["ooo_packets"].sum()) / max(delivered, 1),
        "long_goodput_mbps": float(long["goodput_bps"].mean()) / 1e6 if len(long) else np.nan,
        "drops": int(tcp["drops"].sum()),
        "timeouts": int(tcp["timeouts"].sum()),
        "unfinished": int(tcp["fct_s"].isna().sum()),
    }


def run_spraying_random(
    quick: bool = False,
    jobs: int | None = None,
    n_long: Iterable[int] | None = None,
    n_short: Iterable[int] | None = None,
    seeds: Iterable[int] | None = None,
    policies: Iterable[str] = RANDOM_POLICIES,
    progress: Progress | None = None,
) -> pd.DataFrame:
    """One row per run (policy, n_short, n_long, seed) of the randomized scenario, for
    every policy of ``policies`` (default ``RANDOM_POLICIES``).

    Defaults: ``RANDOM_FULL`` (n_long 0..5, 20 and 10 short flows, seeds 1..10) or
    with ``quick`` ``RANDOM_QUICK``. Columns: ``policy, n_short, n_long, seed,
    short_fct_ms`` (mean over the short flows), ``short_ooo_pct`` (all short flows'
    out-of-order packets per packet delivered x 100), ``long_goodput_mbps`` (mean
    over the long flows), ``drops, timeouts, unfinished, wall_s``.
    """
    plan = RANDOM_QUICK if quick else RANDOM_FULL
    longs = list(plan["n_long"] if n_long is None else n_long)
    shorts = list(plan["n_short"] if n_short is None else n_short)
    seeds = list(plan["seeds"] if seeds is None else seeds)
    points = [(p, n, m, s) for p in policies for m in shorts for n in longs for s in seeds]
    order = sorted(range(len(points)), key=lambda i: -points[i][1])  # long runs first
    tasks = [(_reduce_random, random_scenario(*points[i])) for i in order]
    answers = run_scenarios(tasks, jobs=jobs, progress=progress)
    rows: list[dict[str, Any]] = [{}] * len(points)
    for i, answer in zip(order, answers, strict=True):
        policy, n, m, seed = points[i]
        rows[i] = {"policy": policy, "n_short": m, "n_long": n, "seed": seed, **answer}
    return pd.DataFrame(rows)


def run_reordering_tolerance(
    n_long: Iterable[int] = (0, 5),
    seeds: Iterable[int] = range(1, 11),
    variants: Iterable[str] = TOLERANCE,
    jobs: int | None = None,
    progress: Progress | None = None,
) -> pd.DataFrame:
    """One row per run (variant, policy, n_long, seed) with 20 short flows, TCP as
    the seed's with the ``TOLERANCE`` variant's keys; columns as ``run_spraying_random``
    with ``variant`` first."""
    points = [
        (v, p, n, s) for v in variants for p in SPRAYING_POLICIES for n in n_long for s in seeds
    ]
    tasks = [(_reduce_random, random_scenario(p, n, 20, s, TOLERANCE[v])) for v, p, n, s in points]
    answers = run_scenarios(tasks, jobs=jobs, progress=progress)
    return pd.DataFrame(
        [
            {"variant": v, "policy": p, "n_short": 20, "n_long": n, "seed": s, **answer}
            for (v, p, n, s), answer in zip(points, answers, strict=True)
        ]
    )


def reordering_tolerance_summary(runs: pd.DataFrame) -> pd.DataFrame:
    """Per (variant, n_long): the short flows' mean FCT with rps and single and the
    paired difference rps - single (same pairs per seed), each with the half-width of
    its 95 % interval over seeds, and rps's short flows' out-of-order share."""
    keys = ["variant", "n_long", "seed"]
    wide = runs.pivot_table(index=keys, columns="policy", values="short_fct_ms").reset_index()
    wide["rps_minus_single"] = wide["rps"] - wide["single"]
    fct = mean_ci(wide, ["variant", "n_long"], ["rps", "single", "rps_minus_single"])
    rps = runs[runs["policy"] == "rps"]
    ooo = mean_ci(rps, ["variant", "n_long"], ["short_ooo_pct"])
    return fct.merge(ooo.drop(columns="runs"), on=["variant", "n_long"])


def spraying_random_summary(runs: pd.DataFrame) -> pd.DataFrame:
    """Per (policy, n_short, n_long): ``runs`` and the mean over seeds of each metric
    with ``<metric>_ci``, the half-width of its 95 % interval."""
    return mean_ci(runs, ["policy", "n_short", "n_long"], METRICS)


def spraying_random_checks(runs: pd.DataFrame) -> list[Claim]:
    """The seed's claims on Figs. 5-9, each decided on the 95 % interval over seeds of
    the difference it compares (paired by seed: the pairs come from the seed), and the
    single-path sanity check (``check``); ``ok`` is ``None`` when the runs lack what a
    claim needs."""
    checks: list[Claim] = []
    n_values = sorted(set(runs["n_long"]))
    ci = interval(runs)

    def compare_series(title: str, seed_says: str, column: str, first: tuple[str, int],
                       second: tuple[str, int], larger: bool) -> None:  # fmt: skip
        """``first``'s mean larger (or smaller) than ``second``'s at every n_long."""
        names = (first[0], second[0]) if first[0] != second[0] else (str(first[1]), str(second[1]))
        decisions, parts = [], []
        for n in n_values:
            a, b = (
                by_seed(runs, column, policy=p, n_short=m, n_long=n) for p, m in (first, second)
            )
            if not len(a) or not len(b):
                continue
            difference, half = paired_difference(a, b)
            decisions.append(compare(difference if larger else -difference, half))
            parts.append(
                f"n={n}: {names[0]} {a.mean():.2f} vs {names[1]} {b.mean():.2f}"
                + ("" if pd.isna(half) else f" ({difference:+.2f} +- {half:.2f})")
            )
        shown = "; ".join(parts) or "-"
        verdict = decided(every(decisions)) if decisions else {"ok": None}
        checks.append(Claim(title, seed_says, f"{shown} {UNITS[column]}", tolerance=ci, **verdict))

    policies, counts = (("rps", 20), ("single", 20)), (("rps", 20), ("rps", 10))
    for column, what, fig, seed_says, larger, (first, second) in (
        ("long_goodput_mbps", "20 short flows, long flows' throughput rps > single", 5,
         "larger with rps", True, policies),
        ("short_fct_ms", "20 short flows, short flows' FCT rps < single", 6,
         "smaller with rps", False, policies),
        ("long_goodput_mbps", "rps, long flows' throughput with 20 < with 10 short flows", 8,
         "slightly smaller with 20", False, counts),
        ("short_fct_ms", "rps, short flows' FCT with 20 > with 10 short flows", 9,
         "larger with 20", True, counts),
    ):  # fmt: skip
        compare_series(
            f"seed Fig. {fig}: {what} at every n_long", f"{seed_says} (Fig. {fig})",
            column, first, second, larger,
        )  # fmt: skip
    low, high = SEED_OOO_PCT
    middle, margin = (low + high) / 2, (high - low) / 2
    decisions, parts = [], []
    for n in n_values:
        share = by_seed(runs, "short_ooo_pct", policy="rps", n_short=20, n_long=n)
        if len(share):
            half = t95_half_width(share)
            decisions.append(within(share.mean() - middle, half, margin))
            parts.append(
                f"n={n}: {share.mean():.2f} %" + ("" if pd.isna(half) else f" +- {half:.2f}")
            )
    checks.append(
        Claim(
            f"seed Fig. 7: rps short flows' out-of-order share {low:.0f}-{high:.0f} % "
            "at every n_long",
            "about 20 % (Fig. 7)",
            "; ".join(parts) or "-",
            tolerance=f"the seed's 'about 20 %' read as {low:.0f}-{high:.0f} %; {ci}",
            **(decided(every(decisions)) if decisions else {"ok": None}),
        )
    )
    single_ooo = runs.loc[runs["policy"] == "single", "short_ooo_pct"]
    checks.append(
        Claim(
            "single-path short flows have no out-of-order packets",
            "none (one path)",
            f"at most {single_ooo.max() if len(single_ooo) else np.nan:.2f} %",
            bool((single_ooo == 0).all()) if len(single_ooo) else None,
            check=True,
        )
    )
    return checks


NOTES = [
    "FCT: the short flows' mean FCT (ms); OOO %: all short flows' out-of-order packets per",
    "  packet delivered x 100; goodput: the long flows' mean goodput, 10 MB x 8 / FCT (Mbps);",
    "  each the mean over seeds, +-95%: half-width of the 95 % Student-t interval.",
    "The pairs are drawn from the seed alone: every policy carries the same flows.",
    "ecmp: per-flow hash; letflow: a random path per flowlet (500 us gap); drill: the",
    "  shortest queue of 2 random next hops and 1 remembered, per packet (DRILL(2, 1)).",
]


def _random_tables(runs: pd.DataFrame, verbose: bool) -> tuple[pd.DataFrame, str]:
    summary = spraying_random_summary(runs)
    shown = pd.DataFrame(
        {"policy": summary["policy"], "short": summary["n_short"], "long": summary["n_long"]}
    )
    for column, title, digits in zip(METRICS, ("FCT", "OOO %", "goodput"), (3, 2, 1), strict=True):
        shown[title] = [num_text(v, digits) for v in summary[column]]
        shown[f"{title} +-95%"] = [num_text(v, digits) for v in summary[f"{column}_ci"]]
    shown["runs"] = summary["runs"]
    lines = [
        "Random packet spraying, randomized scenario (spraying seed, Figs. 5-9)",
        "  the static scenario's network and TCP (profile ns3, 1500 B packets); n_long 10 MB",
        "  and n_short 200 KB flows between random host pairs (src != dst), all at t = 0;",
        f"  seeds {ranges(sorted(set(runs['seed'])))} per point",
        *reading_lines(reading.READING),
        "",
        "Seed's findings (no numbers but the out-of-order share): with rps the long flows'",
        "  throughput is larger (Fig. 5), the short flows' FCT smaller (Fig. 6), about 20 % of",
        "  the short flows' packets out of order (Fig. 7); with 20 short flows instead of 10",
        "  the long flows' throughput slightly smaller (Fig. 8), the short flows' FCT larger",
        "  (Fig. 9).",
        "",
        format_table(shown),
        "",
        "The seed's claims against these numbers:",
        *claim_lines(spraying_random_checks(runs)),
    ]
    if verbose:
        lines += ["", "Per run:", format_table(runs)]
    lines += ["", *NOTES]
    return summary, "\n".join(lines)


#: The seed's Figs. 5-9: (column, "what: unit" label, short-flow counts drawn).
RANDOM_FIGURES = {
    "fig5": ("long_goodput_mbps", "long flows: mean throughput (Mbps)", (20,)),
    "fig6": ("short_fct_ms", "short flows: mean FCT (ms)", (20,)),
    "fig7": ("short_ooo_pct", "short flows: out-of-order packets (%)", (20,)),
    "fig8": ("long_goodput_mbps", "long flows: mean throughput (Mbps)", (10, 20)),
    "fig9": ("short_fct_ms", "short flows: mean FCT (ms)", (10, 20)),
}


def _random_plot(figure: str, runs: pd.DataFrame, _table: pd.DataFrame, path: Path) -> None:
    column, label, shorts = RANDOM_FIGURES[figure]
    runs = runs[runs["n_short"].isin(shorts)]
    if column == "long_goodput_mbps":
        runs = runs[runs["n_long"] > 0]
    series = ["policy"] if len(shorts) == 1 else ["policy", "n_short"]
    title = f"{label} (seed {figure.replace('fig', 'Fig. ')})"
    policy_figure(runs, series, column, title, path)


STUDY = Study(
    name="spraying-random",
    title="random packet spraying seed, randomized scenario (Figs. 5-9): rps vs single-path "
    "TCP, beside ecmp, letflow and drill",
    seed="random packet spraying in a fat-tree, randomized scenario, Figs. 5-9",
    runs=run_spraying_random,
    tables=_random_tables,
    claims=spraying_random_checks,
    figures={name: partial(_random_plot, name) for name in RANDOM_FIGURES},
)
