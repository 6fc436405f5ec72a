"""The BOTCP seed's claims (§5) against the study's runs, each decided on the 95 %
interval over seeds: a comparison of schemes paired by seed (the schemes of a seed
share its arrivals, or Figs. 8-10's start offsets), a bound on the mean over seeds,
or a state the seed reports of its one run (no drop, a queue near 89 KiB) judged run
by run, the share of runs in that state with its interval (issue 46)."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pandas as pd

from dcnsim.studies.botcp.analysis import summary
from dcnsim.studies.botcp.scenarios import LABELS, SCHEMES
from dcnsim.studies.stats import by_seed, paired_difference, t95_half_width
from dcnsim.studies.text import (
    RUN_BY_RUN,
    Claim,
    compare,
    decided,
    every,
    interval,
    larger,
    runs_inside,
    within,
)

__all__ = ["botcp_checks"]

#: Fig. 11's "not much difference": the slowest long-flow mean within this factor of
#: the fastest.
ABOUT_EQUAL = 1.2
#: Fig. 8's "regain all the link capacity": the long flows' goodput, over the 0.5 ms
#: after the last short flow finished, at least this share of the 10 Gbps link.
REGAIN_SHARE = 0.85
#: Fig. 9's "around 60 x 1500/1024 ≅ 89 Kb": within this share of 89 KiB.
NEAR = 0.15
SEED_QUEUE_KIB = 60 * 1500 / 1024
#: The seed's minRTO for all three schemes (§5).
MIN_RTO_S = 200e-6


NAMES = "BOTCP/TCP-ECN/DCTCP"


def _at(load_runs: pd.DataFrame, load: float) -> pd.DataFrame:
    return load_runs[load_runs["load"] == load]


def _faster(runs: pd.DataFrame, column: str, a: str, b: str) -> bool | None:
    """Whether ``a``'s ``column`` is below ``b``'s in ``runs`` (one point's runs): the
    difference paired by seed, outside its 95 % interval (a tie is not below; one
    seed: exact)."""
    return larger(by_seed(runs, column, scheme=b), by_seed(runs, column, scheme=a))[0]


def _lowest(frame: pd.DataFrame, load_runs: pd.DataFrame, column: str) -> tuple[bool | None, str]:
    values = [
        f"{load:g}: " + "/".join(f"{frame.loc[load, s]:.3f}" for s in SCHEMES)
        for load in frame.index
    ]
    ok = every(
        [
            _faster(_at(load_runs, load), column, "botcp", other)
            for load in frame.index
            for other in ("tcp_ecn", "dctcp")
        ]
    )
    return ok, "; ".join(values)


def _load_claims(runs: pd.DataFrame) -> list[Claim]:
    """Figs. 6, 7 and 11 and the drops, from the load runs (none without them)."""
    if not (runs["experiment"] == "load").any():
        return []
    checks: list[Claim] = []
    table = summary(runs)
    schemes = set(table["scheme"])
    full = set(SCHEMES) <= schemes
    load_runs = runs[runs["experiment"] == "load"]
    # The 95 % interval over the seeds (paired by seed), or exact with one.
    over_seeds = interval(load_runs)
    for column, fig, what in (("short_mean_ms", "6", "average"), ("short_p99_ms", "7", "p99")):
        frame = table.pivot(index="load", columns="scheme", values=column)
        source = column.replace("_ms", "_s")
        ok, text = _lowest(frame, load_runs, source) if full else (None, "-")
        checks.append(
            Claim(
                f"Fig. {fig}: BOTCP's short-flow {what} FCT is the lowest at every load",
                "BOTCP improves average and 99th percentile of FCT of short flows over both "
                "TCP and DCTCP (§5.1)",
                f"{what} FCT in ms ({NAMES}) by load: {text}",
                tolerance=over_seeds,
                **decided(ok),
            )
        )
    drops = table.pivot(index="load", columns="scheme", values="drops")
    if full and len(drops):
        fewer = every(
            [
                _faster(_at(load_runs, load), "drops", "botcp", other)
                for load in drops.index
                for other in ("tcp_ecn", "dctcp")
            ]
        )
        checks.append(
            Claim(
                "§5.1, §5.3: BOTCP drops fewer packets than TCP-ECN and DCTCP at every load",
                "BOTCP uses this information to opportunely adjust the sending rates and hence "
                "minimizes the chances of packet drops (§5.1); both TCP and DCTCP suffer from "
                "packet drops due to an inherently weak congestion signal (§5.3)",
                f"packets dropped per run ({NAMES}) by load: "
                + "; ".join(
                    f"{load:g}: " + "/".join(f"{drops.loc[load, s]:.0f}" for s in SCHEMES)
                    for load in drops.index
                ),
                tolerance=over_seeds,
                **decided(fewer),
            )
        )
    mean = table.pivot(index="load", columns="scheme", values="short_mean_ms")
    if full and len(mean):
        for load, better, worse, words in (
            (mean.index.min(), "tcp_ecn", "dctcp", "Under lighter loads, TCP performs better"),
            (mean.index.max(), "dctcp", "tcp_ecn", "Under heavier loads DCTCP performs better"),
        ):
            a, b = mean.loc[load, better], mean.loc[load, worse]
            checks.append(
                Claim(
                    f"Fig. 6: at load {load:g} {LABELS[better]}'s short-flow average FCT is "
                    f"below {LABELS[worse]}'s",
                    f"{words} (§5.1)",
                    f"{LABELS[better]} {a:.3f} ms vs {LABELS[worse]} {b:.3f} ms",
                    tolerance=over_seeds,
                    **decided(_faster(_at(load_runs, load), "short_mean_s", better, worse)),
                )
            )
    long_ = table.pivot(index="load", columns="scheme", values="long_mean_ms")
    if full and len(long_):
        ratio = long_.max(axis=1) / long_.min(axis=1)
        text = "; ".join(
            f"{load:g}: " + "/".join(f"{long_.loc[load, s]:.2f}" for s in SCHEMES)
            for load in long_.index
        )
        # Each pair of schemes within the factor: |log ratio| <= log factor, on the 95 %
        # interval of the log ratio paired by seed (exact with one seed).
        logs = load_runs.assign(log_long=np.log(load_runs["long_mean_s"]))
        decisions = [
            within(
                *paired_difference(
                    by_seed(logs[logs["load"] == load], "log_long", scheme=a),
                    by_seed(logs[logs["load"] == load], "log_long", scheme=b),
                ),
                np.log(ABOUT_EQUAL),
            )
            for load in long_.index
            for a, b in combinations(SCHEMES, 2)
        ]
        checks.append(
            Claim(
                f"Fig. 11: long flows' average FCT about equal (slowest within "
                f"{ABOUT_EQUAL:g}x the fastest) at every load",
                "There is not much difference in the three schemes in terms of average FCT of "
                "long flows (§5.4)",
                f"ms ({NAMES}): {text}; largest ratio {ratio.max():.2f}",
                tolerance=f"{ABOUT_EQUAL:g}x: dcnsim's reading of the seed's words, on each "
                f"pair's log ratio; {over_seeds}",
                **decided(every(decisions)),
            )
        )
    return checks


def _per_run(values: pd.Series, digits: int) -> str:
    return ", ".join(f"{v:.{digits}f}" for v in values)


def _at_least(values: pd.Series, bound: float) -> tuple[bool | None, str]:
    """Whether the mean of ``values`` (one per seed) is at least ``bound``, on its 95 %
    interval (exact with one seed), and the mean as text."""
    mean, half = float(values.mean()), t95_half_width(values)
    return compare(mean - bound, half, strict=False), f"{mean:.3f} ± {np.nan_to_num(half):.2g}"


def _fig8_claims(bw: pd.DataFrame) -> list[Claim]:
    """Fig. 8 (§5.2): who finishes first, and the long flows regaining the link."""
    fct = {s: by_seed(bw, "short_mean_s", scheme=s) * 1e3 for s in SCHEMES}
    ecn_ok, ecn = larger(fct["tcp_ecn"], fct["botcp"])
    dctcp_ok, dctcp = larger(fct["dctcp"], fct["tcp_ecn"])
    means = "/".join(f"{fct[s].mean():.3f}" for s in SCHEMES)
    share = {s: _at_least(by_seed(bw, "long_after_share", scheme=s), REGAIN_SHARE) for s in SCHEMES}
    return [
        Claim(
            "Fig. 8: short flows finish first with BOTCP, second with TCP-ECN, last with DCTCP",
            "Short flows of TCP finish second ... Short flows of DCTCP finish last (§5.2)",
            f"short flows' mean FCT in ms ({NAMES}), means over seeds: {means}; TCP-ECN - "
            f"BOTCP {ecn} ms, DCTCP - TCP-ECN {dctcp} ms",
            tolerance=interval(bw),
            **decided(every([ecn_ok, dctcp_ok])),
        ),
        Claim(
            f"Fig. 8: the long flows regain the link (≥ {REGAIN_SHARE:.0%} of 10 Gbps in "
            "the 0.5 ms after the short flows finish)",
            "After the short flows finish, the long flows regain all the link capacity (§5.2)",
            f"long flows' share, mean over seeds ({NAMES}): "
            + "; ".join(share[s][1] for s in SCHEMES),
            tolerance=f'{REGAIN_SHARE:.0%} of the link: dcnsim\'s reading of "all", on the '
            "95 % interval of the mean over seeds",
            **decided(every([share[s][0] for s in SCHEMES])),
        ),
    ]


def _fig9_botcp(b: pd.DataFrame) -> list[Claim]:
    """Fig. 9 (§5.3), BOTCP's own runs of the extreme flow load (``b``)."""
    claims: list[Claim] = []
    ok, share = runs_inside(list((b["drops"] == 0) & (b["timeouts"] == 0)))
    claims.append(
        Claim(
            "Fig. 9: BOTCP drops nothing at the bottleneck and never times out",
            "BOTCP ... keep[s] Bcr around Bm until the flow load decreases; all hundred "
            "flows continue to send data (§5.3)",
            f"per run: drops {_per_run(b['drops'], 0)}; timeouts {_per_run(b['timeouts'], 0)};"
            f" largest queue {b['max_queue_kib'].max():.1f} KiB of 128; runs with neither: "
            f"{share}",
            tolerance=RUN_BY_RUN,
            **decided(ok),
        )
    )
    q = b["extreme_queue_kib"]
    ok, share = runs_inside(list((q - SEED_QUEUE_KIB).abs() <= NEAR * SEED_QUEUE_KIB))
    claims.append(
        Claim(
            f"Fig. 9: BOTCP's queue during the extreme load is about {SEED_QUEUE_KIB:.0f} "
            f"KiB (within {NEAR:.0%})",
            "the queue length is kept around 60 x 1500/1024 ≅ 89 Kb for the duration of "
            "the extreme flow load (§5.3)",
            f"mean KiB while more than 87 flows are open, per run: {_per_run(q, 1)} (from "
            f"{b['extreme_from_s'].min() * 1e3:.2f} to {b['extreme_to_s'].max() * 1e3:.2f} "
            f"ms); {share}",
            tolerance=f"±{NEAR:.0%} of the seed's 89 KiB: dcnsim's reading of \"around\"; "
            + RUN_BY_RUN,
            **decided(ok),
        )
    )
    return claims


def _fig9_10_claims(ex: pd.DataFrame) -> list[Claim]:
    """Figs. 9 and 10 (§5.3): TCP-ECN and DCTCP in the extreme flow load, and against
    BOTCP."""
    claims: list[Claim] = []
    runs = {s: ex[ex["scheme"] == s].sort_values("seed") for s in SCHEMES}
    others = ("tcp_ecn", "dctcp")
    backed = {
        s: runs_inside(list((runs[s]["drops"] > 0) & (runs[s]["timeouts"] > 0))) for s in others
    }
    claims.append(
        Claim(
            "Fig. 9: TCP-ECN and DCTCP drop at the bottleneck and back off for the RTO",
            "both TCP and DCTCP cannot reduce the congestion window below 1 MSS even when "
            "packet drops occur; ... The flows that suffer from packet drop back off for "
            "the duration of RTO (§5.3)",
            "; ".join(
                f"{LABELS[s]} drops/timeouts per run: "
                + ", ".join(
                    f"{d}/{t}" for d, t in zip(runs[s]["drops"], runs[s]["timeouts"], strict=True)
                )
                + f"; runs with both: {backed[s][1]}"
                for s in others
            ),
            tolerance=RUN_BY_RUN,
            **decided(every([backed[s][0] for s in others])),
        )
    )
    late = {
        s: _at_least(
            by_seed(ex, "timed_out_median_fct_s", scheme=s) * 1e3
            - by_seed(ex, "clean_median_fct_s", scheme=s) * 1e3,
            MIN_RTO_S * 1e3,
        )
        for s in others
    }
    claims.append(
        Claim(
            "Fig. 9: with TCP-ECN and DCTCP the blocked flows resume after the RTO (the "
            "flows with a timeout finish at least RTO_min = "
            f"{MIN_RTO_S * 1e3:g} ms after those without, medians)",
            "In TCP and DCTCP, the blocked flows resume after the expiry of the RTO ... "
            "and finish after the expiry of the RTO (§5.3)",
            "median FCT of the flows with a timeout minus that of the flows without, ms, "
            "mean over seeds (TCP-ECN; DCTCP): " + "; ".join(late[s][1] for s in others),
            tolerance="a bound on the mean over seeds, on its 95 % interval",
            **decided(every([late[s][0] for s in others])),
        )
    )
    med = {s: by_seed(ex, "median_fct_s", scheme=s) * 1e3 for s in SCHEMES}
    earlier = {s: larger(med["botcp"], med[s]) for s in others}
    claims.append(
        Claim(
            "Fig. 10: with TCP-ECN and DCTCP the flows that keep sending finish earlier "
            "than with BOTCP (median FCT below BOTCP's)",
            "The remaining flows continue and finish earlier than in the case of BOTCP (§5.3)",
            f"median FCT in ms ({NAMES}), means over seeds: "
            + "/".join(f"{med[s].mean():.3f}" for s in SCHEMES)
            + "; BOTCP - TCP-ECN "
            + earlier["tcp_ecn"][1]
            + " ms, BOTCP - DCTCP "
            + earlier["dctcp"][1]
            + " ms",
            tolerance=interval(ex),
            **decided(every([earlier[s][0] for s in others])),
        )
    )
    return claims


def botcp_checks(runs: pd.DataFrame) -> list[Claim]:
    """The seed's claims, each with dcnsim's numbers and a verdict: those of Figs. 6,
    7, 11 and the drops when the load runs hold every scheme, those of Figs. 8-10
    when their runs do (BOTCP's own claims of Fig. 9 with BOTCP alone)."""
    claims = _load_claims(runs)
    bw = runs[runs["experiment"] == "bandwidth"]
    if set(SCHEMES) <= set(bw["scheme"]):
        claims += _fig8_claims(bw)
    ex = runs[runs["experiment"] == "extreme"]
    if "botcp" in set(ex["scheme"]):
        claims += _fig9_botcp(ex[ex["scheme"] == "botcp"].sort_values("seed"))
    if set(SCHEMES) <= set(ex["scheme"]):
        claims += _fig9_10_claims(ex)
    return claims
