"""The latency-difference study's checks: the closed forms at 0 % load and the seed's
four claims, each against the grid runs."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

from dcnsim.studies.latency_difference.reduction import latency_packets, latency_summary
from dcnsim.studies.latency_difference.scenario import (
    LATENCY_FULL,
    LATENCY_OVERSUBSCRIPTIONS,
    LATENCY_SCHEMES,
    LATENCY_SEED_ZERO_LOAD,
    latency_closed_form_us,
    scheme_parts,
)
from dcnsim.studies.stats import by_seed, paired_difference
from dcnsim.studies.text import RUN_BY_RUN, Claim, compare, decided, every, interval, runs_inside

#: The seed's "ELR cannot significantly minimize the difference" (TCP), read as: TCP+ELR's
#: std at least this share of TCP's.
ELR_KEEPS = 0.75
#: The seed's pFabric+ELR mean "slightly" above pFabric's, read as: at most this many times.
SLIGHTLY = 1.5


def latency_checks(runs: pd.DataFrame) -> list[Claim]:
    """The closed forms at 0 % load and the seed's four claims, each with whether the
    grid runs agree (``None``: the runs lack what the check needs)."""
    summary = latency_summary(runs)
    checks: list[Claim] = []
    grid = runs[runs["role"] == "grid"]
    packets = latency_packets(grid[grid["load"] == 0])
    if len(packets):
        exact = []
        for (scheme, oversub), group in packets.groupby(["scheme", "oversub"], sort=False):
            _, elr = scheme_parts(str(scheme))
            expected = np.array(
                [latency_closed_form_us(p + 1, str(oversub), elr) for p in group["packet"]]
            )
            exact.append(bool(np.all(np.abs(group["latency_us"].to_numpy() - expected) < 1e-3)))
        checks.append(
            Claim(
                "0 % load: every test packet at its closed-form latency (no ELR: 29.4, 53.8, "
                "78.2 µs at 64:4:1; ELR: 78.2 µs for all)",
                "29-78 µs (no ELR), 78 µs (ELR)",
                f"{sum(exact)} of {len(exact)} (scheme, oversubscription) exact to 1 ns",
                all(exact),
                tolerance="1 ns",
                check=True,
            )
        )
    zero = summary[(summary["load"] == 0) & (summary["oversub"] == "64:4:1")].set_index("scheme")
    plain = [s for s in ("TCP", "pFabric") if s in zero.index]
    if plain:
        seed_mean, seed_std = LATENCY_SEED_ZERO_LOAD
        means = [zero.loc[s, "mean_us"] for s in plain]
        stds = [zero.loc[s, "std_us"] for s in plain]
        checks.append(
            Claim(
                f"seed: 0 % load, 64:4:1, no ELR: mean {seed_mean} µs (+-0.2), std {seed_std} µs "
                "(+-0.2)",
                f"mean {seed_mean} µs, std {seed_std} µs",
                f"mean {means[0]:.2f} µs, std {stds[0]:.2f} µs",
                all(abs(m - seed_mean) <= 0.2 for m in means)
                and all(abs(s - seed_std) <= 0.2 for s in stds),
                tolerance="the seed's precision: its numbers to 0.1 µs, +-0.2 µs",
            )
        )
    elr = [s for s in ("TCP+ELR", "pFabric+ELR") if s in zero.index]
    if elr:
        low = min(zero.loc[s, "min_us"] for s in elr)
        high = max(zero.loc[s, "max_us"] for s in elr)
        checks.append(
            Claim(
                "seed: 0 % load, 64:4:1, ELR: every test packet 78.2 µs, std 0",
                "all 78 µs, std 0",
                f"{low:.2f}-{high:.2f} µs",
                all(
                    abs(zero.loc[s, "min_us"] - 78.2) < 1e-3
                    and abs(zero.loc[s, "max_us"] - 78.2) < 1e-3
                    for s in elr
                ),
                tolerance="the seed's 78 µs to its 1 µs; every packet the same latency to 1 ns",
            )
        )
    checks += [c for c in (_claim_numbered(grid, *p) for p in NUMBERED) if c is not None]
    checks += [_claim_tcp_grows(summary, grid), _claim_elr_spread(summary, grid)]
    checks += [_claim_pfabric_below(summary, grid), _claim_pfabric_elr(summary, grid)]
    return checks


#: The seed's numbered loaded points (§3.1, §3.2): (scheme, oversub, load, smallest
#: and largest latency in µs, test packets lost or None where the text gives none).
NUMBERED: list[tuple[str, str, float, float, float, int | None]] = [
    ("TCP", "64:4:1", 0.1, 29, 829, None),
    ("TCP+ELR", "64:4:1", 0.1, 83, 853, 8),
]


#: A run's lost test packets match the seed's count within this factor either way.
LOST_FACTOR = 1.5


def _claim_numbered(
    grid: pd.DataFrame, scheme: str, oversub: str, load: float, low: float, high: float,
    lost: int | None,
) -> Claim | None:  # fmt: skip
    """The seed's one run at a numbered point, judged run by run: a run of dcnsim
    falls inside when every test packet it delivered took between the seed's
    smallest and largest latency (+-1 µs, the seed's precision) and, where the seed
    counts lost packets, it lost within a factor ``LOST_FACTOR`` of them. The
    verdict is on the share of runs inside (``runs_inside``), never on the union of
    the runs' ranges."""
    runs = grid[(grid["scheme"] == scheme) & (grid["oversub"] == oversub) & (grid["load"] == load)]
    if not len(runs):
        return None
    inside = (runs["min_us"] >= low - 1.0) & (runs["max_us"] <= high + 1.0)
    if lost is not None:
        inside &= runs["lost"].between(lost / LOST_FACTOR, lost * LOST_FACTOR)
    ok, share = runs_inside(list(inside))
    shown = ", ".join(
        f"{r.min_us:.0f}-{r.max_us:.0f}" + (f" ({int(r.lost)} lost)" if lost is not None else "")
        for r in runs.itertuples()
    )
    seed = f"{low:g}-{high:g} µs" + (f", {lost} lost" if lost is not None else "")
    lost_words = f", lost within x{LOST_FACTOR:g} of the seed's" if lost is not None else ""
    return Claim(
        f"seed: {scheme}, {oversub}, {load:.0%}: latencies {seed}",
        seed,
        f"per run: {shown} µs; {share}",
        **decided(ok),
        tolerance=f"a run is inside when all its latencies are within the seed's range +-1 µs "
        f"(its precision){lost_words}; " + RUN_BY_RUN,
    )


def _by_point(summary: pd.DataFrame, scheme: str) -> pd.DataFrame:
    return summary[summary["scheme"] == scheme].set_index(["oversub", "load"])


def _loaded_points(summary: pd.DataFrame, *schemes: str) -> list[tuple[str, float]]:
    """(oversub, load > 0) points that every one of ``schemes`` has."""
    sets = [set(_by_point(summary, s).index) for s in schemes]
    common = set.intersection(*sets) if sets else set()
    order = {o: i for i, o in enumerate(LATENCY_OVERSUBSCRIPTIONS)}
    return sorted(((o, ld) for o, ld in common if ld > 0), key=lambda p: (order[p[0]], p[1]))


def _point_text(point: tuple[str, float]) -> str:
    return f"{point[0]} {point[1]:.0%}"


def _seeds(grid: pd.DataFrame, scheme: str, point: tuple[str, float], column: str) -> pd.Series:
    """``column`` of the grid runs of ``scheme`` at ``point`` (oversub, load), by seed."""
    return by_seed(grid, column, scheme=scheme, oversub=point[0], load=point[1])


def _claim_tcp_grows(summary: pd.DataFrame, grid: pd.DataFrame) -> Claim:
    tcp = _by_point(summary, "TCP")
    oversubs = [o for o in LATENCY_OVERSUBSCRIPTIONS if o in set(tcp.index.get_level_values(0))]
    loads = sorted(set(tcp.index.get_level_values(1)))
    steps: list[bool | None] = []
    parts = []

    def grows(low: tuple[str, float], high: tuple[str, float], key: str) -> None:
        difference, half = paired_difference(
            _seeds(grid, "TCP", high, key), _seeds(grid, "TCP", low, key)
        )
        steps.append(compare(difference, half))

    for oversub in oversubs:
        row = [ld for ld in loads if (oversub, ld) in tcp.index]
        for key in ("mean_us", "std_us"):
            for a, b in itertools.pairwise(row):
                grows((oversub, a), (oversub, b), key)
        m = [tcp.loc[(oversub, ld), "mean_us"] for ld in row]
        s = [tcp.loc[(oversub, ld), "std_us"] for ld in row]
        means, stds = "/".join(f"{v:.0f}" for v in m), "/".join(f"{v:.0f}" for v in s)
        parts.append(f"{oversub}: mean {means}, std {stds}")
    for load in [ld for ld in loads if ld > 0]:
        col = [o for o in oversubs if (o, load) in tcp.index]  # most oversubscribed first
        for key in ("mean_us", "std_us"):
            for a, b in itertools.pairwise(col):
                grows((b, load), (a, load), key)
    text = (
        "seed: TCP's mean and std grow with load (each step up, loads "
        + "/".join(f"{ld:.0%}" for ld in loads)
        + ") and with oversubscription (at each load > 0)"
    )
    shown = "; ".join(parts)
    missing = [o for o in LATENCY_FULL["oversubs"] if o not in oversubs]
    missing += [f"{ld:.0%}" for ld in LATENCY_FULL["loads"] if ld not in loads]
    if steps and missing:
        # A trend over the seed's whole grid: a grid without some of its points (the
        # quick variant's) cannot show it, whatever its own steps say.
        shown += f"; the runs lack {', '.join(missing)}: the trend is not shown"
        return Claim(text, "both grow (Figs. 6, 7)", shown, None, tolerance=interval(grid))
    verdict = decided(every(steps)) if steps else {"ok": None}
    return Claim(text, "both grow (Figs. 6, 7)", shown + " µs", tolerance=interval(grid), **verdict)


def _claim_elr_spread(summary: pd.DataFrame, grid: pd.DataFrame) -> Claim:
    points = _loaded_points(summary, "TCP", "TCP+ELR")
    tcp, elr = _by_point(summary, "TCP"), _by_point(summary, "TCP+ELR")
    ratios = [elr.loc[p, "std_us"] / tcp.loc[p, "std_us"] for p in points]
    decisions = [
        compare(
            *paired_difference(
                _seeds(grid, "TCP+ELR", p, "std_us"),
                _seeds(grid, "TCP", p, "std_us") * ELR_KEEPS,
            ),
            strict=False,
        )
        for p in points
    ]
    shown = (
        ", ".join(f"{_point_text(p)} {r:.2f}" for p, r in zip(points, ratios, strict=True)) or "-"
    )
    text = (
        f"seed: ELR does not shrink TCP's spread under load (TCP+ELR std >= {ELR_KEEPS:g} of "
        "TCP's at every load > 0)"
    )
    return Claim(
        text,
        "spread not smaller (Fig. 7)",
        f"TCP+ELR/TCP std: {shown}",
        tolerance=f"'cannot significantly minimize' read as >= {ELR_KEEPS:g}; {interval(grid)}",
        **(decided(every(decisions)) if decisions else {"ok": None}),
    )


def _claim_pfabric_below(summary: pd.DataFrame, grid: pd.DataFrame) -> Claim:
    points = _loaded_points(summary, "TCP", "pFabric")
    tcp, pf = _by_point(summary, "TCP"), _by_point(summary, "pFabric")
    mean_r = [pf.loc[p, "mean_us"] / tcp.loc[p, "mean_us"] for p in points]
    std_r = [pf.loc[p, "std_us"] / tcp.loc[p, "std_us"] for p in points]
    lost = int(grid.loc[grid["scheme"] == "pFabric", "lost"].sum())
    numbers = (
        "pFabric/TCP mean: "
        + (
            ", ".join(f"{_point_text(p)} {r:.2f}" for p, r in zip(points, mean_r, strict=True))
            or "-"
        )
        + "; std: "
        + (", ".join(f"{r:.2f}" for r in std_r) or "-")
        + f"; pFabric test packets lost: {lost}"
    )
    text = (
        "seed: pFabric's mean and std far below TCP's (at most half at every load > 0) and "
        "no test packet lost"
    )
    decisions: list[bool | None] = [
        compare(
            *paired_difference(_seeds(grid, "TCP", p, key) * 0.5, _seeds(grid, "pFabric", p, key)),
            strict=False,
        )
        for p in points
        for key in ("mean_us", "std_us")
    ]
    verdict = decided(every([*decisions, lost == 0])) if points else {"ok": None}
    tolerance = f"'far below' read as at most half; {interval(grid)}; losses exact"
    return Claim(text, "far below TCP, none lost (Figs. 4, 6, 7)", numbers, tolerance=tolerance,
                 **verdict)  # fmt: skip


def _claim_pfabric_elr(summary: pd.DataFrame, grid: pd.DataFrame) -> Claim:
    points = _loaded_points(summary, *LATENCY_SCHEMES)
    seed = "smallest spread, mean slightly above pFabric's (Figs. 5-7)"
    text = (
        "seed: pFabric+ELR has the smallest std of the four schemes and a mean above "
        "pFabric's by at most 50 % (at every load > 0)"
    )
    if not points:
        return Claim(text + ": needs all four schemes", seed, "-", None)
    by = {s: _by_point(summary, s) for s in LATENCY_SCHEMES}
    decisions: list[bool | None] = []
    parts = []
    for p in points:
        mine = _seeds(grid, "pFabric+ELR", p, "std_us")
        for other in LATENCY_SCHEMES:
            if other != "pFabric+ELR":
                decisions.append(
                    compare(*paired_difference(_seeds(grid, other, p, "std_us"), mine))
                )
        mean, base = (
            _seeds(grid, "pFabric+ELR", p, "mean_us"),
            _seeds(grid, "pFabric", p, "mean_us"),
        )
        decisions.append(compare(*paired_difference(mean, base)))
        decisions.append(compare(*paired_difference(base * SLIGHTLY, mean), strict=False))
        std = {s: by[s].loc[p, "std_us"] for s in LATENCY_SCHEMES}
        parts.append(
            f"{_point_text(p)} std {std['pFabric+ELR']:.1f} vs pFabric {std['pFabric']:.1f}, "
            f"mean {mean.mean():.1f} vs {base.mean():.1f}"
        )
    return Claim(
        text,
        seed,
        "; ".join(parts) + " µs",
        tolerance=f"'slightly above' read as at most {SLIGHTLY:g} times; {interval(grid)}",
        **decided(every(decisions)),
    )
