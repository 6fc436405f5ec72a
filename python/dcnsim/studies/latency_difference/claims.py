"""The latency-difference study's checks: the closed forms at 0 % load and the seed's
four claims, each against the grid runs."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

from dcnsim.studies.latency_difference.reduction import latency_packets, latency_summary
from dcnsim.studies.latency_difference.scenario import (
    LATENCY_OVERSUBSCRIPTIONS,
    LATENCY_SCHEMES,
    LATENCY_SEED_ZERO_LOAD,
    latency_closed_form_us,
    scheme_parts,
)
from dcnsim.studies.text import Claim


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
                f"(+-0.2) (dcnsim: mean {means[0]:.2f}, std {stds[0]:.2f} µs)",
                f"mean {seed_mean} µs, std {seed_std} µs",
                f"mean {means[0]:.2f} µs, std {stds[0]:.2f} µs",
                all(abs(m - seed_mean) <= 0.2 for m in means)
                and all(abs(s - seed_std) <= 0.2 for s in stds),
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
            )
        )
    checks += [_claim_tcp_grows(summary), _claim_elr_spread(summary)]
    checks += [_claim_pfabric_below(summary, grid), _claim_pfabric_elr(summary)]
    return checks


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


def _claim_tcp_grows(summary: pd.DataFrame) -> Claim:
    tcp = _by_point(summary, "TCP")
    oversubs = [o for o in LATENCY_OVERSUBSCRIPTIONS if o in set(tcp.index.get_level_values(0))]
    loads = sorted(set(tcp.index.get_level_values(1)))
    steps: list[bool] = []
    parts = []
    for oversub in oversubs:
        row = [ld for ld in loads if (oversub, ld) in tcp.index]
        m = [tcp.loc[(oversub, ld), "mean_us"] for ld in row]
        s = [tcp.loc[(oversub, ld), "std_us"] for ld in row]
        steps += [b > a for a, b in itertools.pairwise(m)]
        steps += [b > a for a, b in itertools.pairwise(s)]
        means, stds = "/".join(f"{v:.0f}" for v in m), "/".join(f"{v:.0f}" for v in s)
        parts.append(f"{oversub}: mean {means}, std {stds}")
    for load in [ld for ld in loads if ld > 0]:
        col = [o for o in oversubs if (o, load) in tcp.index]  # most oversubscribed first
        for key in ("mean_us", "std_us"):
            v = [tcp.loc[(o, load), key] for o in col]
            steps += [a > b for a, b in itertools.pairwise(v)]
    text = (
        "seed: TCP's mean and std grow with load (each step up, loads "
        + "/".join(f"{ld:.0%}" for ld in loads)
        + ") and with oversubscription (at each load > 0); µs: "
        + "; ".join(parts)
    )
    return Claim(text, "both grow (Figs. 6, 7)", "; ".join(parts), all(steps) if steps else None)


def _claim_elr_spread(summary: pd.DataFrame) -> Claim:
    points = _loaded_points(summary, "TCP", "TCP+ELR")
    tcp, elr = _by_point(summary, "TCP"), _by_point(summary, "TCP+ELR")
    ratios = [elr.loc[p, "std_us"] / tcp.loc[p, "std_us"] for p in points]
    shown = (
        ", ".join(f"{_point_text(p)} {r:.2f}" for p, r in zip(points, ratios, strict=True)) or "-"
    )
    text = (
        "seed: ELR does not shrink TCP's spread under load (TCP+ELR std >= 3/4 of TCP's at "
        "every load > 0); TCP+ELR/TCP std: " + shown
    )
    return Claim(
        text,
        "spread not smaller (Fig. 7)",
        f"TCP+ELR/TCP std: {shown}",
        all(r >= 0.75 for r in ratios) if ratios else None,
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
        "no test packet lost; " + numbers
    )
    ok = all(r <= 0.5 for r in mean_r + std_r) and lost == 0 if points else None
    return Claim(text, "far below TCP, none lost (Figs. 4, 6, 7)", numbers, ok)


def _claim_pfabric_elr(summary: pd.DataFrame) -> Claim:
    points = _loaded_points(summary, *LATENCY_SCHEMES)
    seed = "smallest spread, mean slightly above pFabric's (Figs. 5-7)"
    if not points:
        return Claim(
            "seed: pFabric+ELR has the smallest std and a mean slightly above pFabric's: "
            "needs all four schemes",
            seed,
            "-",
            None,
        )
    by = {s: _by_point(summary, s) for s in LATENCY_SCHEMES}
    ok = True
    parts = []
    for p in points:
        std = {s: by[s].loc[p, "std_us"] for s in LATENCY_SCHEMES}
        mine, base = by["pFabric+ELR"].loc[p, "mean_us"], by["pFabric"].loc[p, "mean_us"]
        smallest = std["pFabric+ELR"] <= min(v for s, v in std.items() if s != "pFabric+ELR")
        slightly = base < mine <= 1.5 * base
        ok = ok and smallest and slightly
        parts.append(
            f"{_point_text(p)} std {std['pFabric+ELR']:.1f} vs pFabric {std['pFabric']:.1f}, "
            f"mean {mine:.1f} vs {base:.1f}"
        )
    return Claim(
        "seed: pFabric+ELR has the smallest std of the four schemes and a mean above "
        "pFabric's by at most 50 % (at every load > 0); µs: " + "; ".join(parts),
        seed,
        "; ".join(parts) + " µs",
        ok,
    )
