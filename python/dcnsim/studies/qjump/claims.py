"""The QJUMP seed's claims (Figures 1 and 3, its f trade-off and the f = 1 bound)
against dcnsim's runs, every comparison decided on the 95 % interval over seeds
(paired by seed: the cases of one seed share their start offsets), every number of
the seed judged run by run."""

from __future__ import annotations

from itertools import pairwise

import pandas as pd

from dcnsim.studies.qjump.samples import per_seed
from dcnsim.studies.qjump.scenarios import EPOCH_S, SHARED
from dcnsim.studies.stats import by_seed, t95_half_width
from dcnsim.studies.text import (
    RUN_BY_RUN,
    Claim,
    compare,
    decided,
    every,
    interval,
    larger,
    runs_inside,
)

__all__ = ["qjump_claims"]

US = 1e6
#: The tolerance of "mitigated" and "nearly exactly as alone".
MITIGATED = (
    "at most 10 % of Hadoop's added p99 left (dcnsim's reading of the seed's words), "
    "on the 95 % interval over seeds"
)
#: The tolerance of a bound every run must keep.
EVERY_RUN = "a bound: every run, exact"

#: The seed's p99s in µs (§2, Fig. 1): memcached's request latency alone and with
#: Hadoop; Naiad's sync time alone (about) and the range it gives with Hadoop.
MC_P99_US = {"alone": 779, "contended": 1196}
NAIAD_P99_US = {"alone": 500, "contended": (1100, 1500)}


def _range(values: pd.Series, low: float, high: float, words: str) -> tuple[bool | None, str]:
    """A stated range judged run by run."""
    ok, share = runs_inside([bool(low <= v <= high) for v in values])
    return ok, f"{words}; {share}"


def _per_run(values: pd.Series, scale: float, digits: int) -> str:
    return ", ".join(f"{v * scale:.{digits}f}" for v in values)


def qjump_claims(runs: pd.DataFrame) -> list[Claim]:
    """The seed's claims of Figures 1 and 3, of its f trade-off and of the f = 1 bound."""
    m = per_seed(runs)
    if m.empty:
        return []
    tol = interval(m)

    def col(case: str, column: str) -> pd.Series:
        return by_seed(m, column, case=case)

    ptp_cont, ptp_qj = col("contended", "ptp_max_s"), col("qjump", "ptp_max_s")
    mc = {c: col(c, "mc_p99_s") for c in ("alone", "contended", "qjump")}
    nx = {c: col(c, "nx_p99_s") for c in ("alone", "contended", "qjump")}
    # The seed's memcached and Naiad numbers are read with the calibrated host stack.
    mc_s = {c: col(f"{c}_stack", "mc_p99_s") for c in ("alone", "contended")}
    nx_s = {c: col(f"{c}_stack", "nx_p99_s") for c in ("alone", "contended")}
    slow_share = col("contended_stack", "mc_slow") / col("contended_stack", "mc_n").clip(lower=1)
    rms = {(c, a): col(c, f"rms_{a}") for c in SHARED for a in ("ptp", "memcached", "hadoop")}

    ptp_range = _range(ptp_cont * US, 200, 500, f"max {_per_run(ptp_cont, US, 1)} µs")
    mc_alone = _range(
        mc_s["alone"] * US,
        MC_P99_US["alone"] / 1.25,
        MC_P99_US["alone"] * 1.25,
        f"{_per_run(mc_s['alone'], US, 1)} µs",
    )
    mc_ratio = mc_s["contended"] / mc_s["alone"]
    mc_x = _range(
        mc_ratio,
        1.2,
        2.0,
        f"{_per_run(mc_ratio, 1, 2)}x; p99 with Hadoop {_per_run(mc_s['contended'], US, 0)} µs",
    )
    slow = _range(
        slow_share,
        1 / 60_000,
        1 / 600,
        f"{_per_run(col('contended_stack', 'mc_slow'), 1, 0)} slow of "
        f"{_per_run(col('contended_stack', 'mc_n'), 1, 0)}",
    )
    nx_alone = _range(nx_s["alone"] * US, 400, 625, f"{_per_run(nx_s['alone'], US, 1)} µs")
    nx_ratio = nx_s["contended"] / nx_s["alone"]
    nx_x = _range(
        nx_ratio,
        2,
        3,
        f"{_per_run(nx_ratio, 1, 2)}x; p99 with Hadoop {_per_run(nx_s['contended'], US, 0)} µs",
    )
    claims = [
        Claim("PTP with Hadoop: offset error reaches 200-500 µs",
              '"fall 200-500 µs out of synchronization"', ptp_range[1], **decided(ptp_range[0]),
              tolerance="the seed's stated range; " + RUN_BY_RUN),
        Claim("PTP with Hadoop and QJUMP: unaffected (max offset within one epoch)",
              '"remains unaffected by Hadoop\'s traffic"',
              f"max {_per_run(ptp_qj, US, 2)} µs (epoch {EPOCH_S * US:.1f} µs)",
              bool((ptp_qj <= EPOCH_S).all()), tolerance="one network epoch (2nP/R), QJUMP's "
              "own bound; " + EVERY_RUN),
        Claim("memcached alone: p99 request latency", "779 µs", mc_alone[1], **decided(mc_alone[0]),
              tolerance="within a factor 1.25 of 779 µs (the issue's allowance; the seed gives no "
              "spread), host stack calibrated to it; " + RUN_BY_RUN),
        Claim("memcached with Hadoop: p99 degrades 1.5x", "779 -> 1196 µs (1.5x)", mc_x[1],
              **decided(mc_x[0]), tolerance="1.2-2.0x around the seed's 1.5x (dcnsim's allowance "
              "for a rounded ratio); " + RUN_BY_RUN),
        Claim("memcached with Hadoop: about 1 in 6,000 requests over 200 ms",
              '"around 1 in 6,000 requests takes over 200 ms"', slow[1], **decided(slow[0]),
              tolerance='a factor 10 either side of 1/6,000 (dcnsim\'s reading of "around"); '
              + RUN_BY_RUN),
        _mitigated("memcached with QJUMP: effects mitigated (at most 10 % of Hadoop's added "
                   "p99 left, none > 200 ms)", '"these effects are mitigated"', mc,
                   col("qjump", "mc_slow")),
        Claim("Naiad alone: p99 sync time about 500 µs", "~500 µs", nx_alone[1],
              **decided(nx_alone[0]), tolerance="400-625 µs (a factor 1.25 around ~500 µs, "
              "the issue's allowance), host stack calibrated to it; " + RUN_BY_RUN),
        Claim("Naiad with Hadoop: p99 grows 2-3x (1.1-1.5 ms)", "1.1-1.5 ms, 2-3x", nx_x[1],
              **decided(nx_x[0]), tolerance="the seed's stated range; " + RUN_BY_RUN),
        _mitigated("Naiad with QJUMP: nearly exactly as alone (at most 10 % of Hadoop's added "
                   "p99 left)", '"nearly exactly conforms to the interference-free situation"',
                   nx, None),
        _closest(rms, tol),
        _helps(rms, "ecn_wred", "Fig. 3: ECN/WRED [40, 80] helps PTP and memcached, at a cost to "
               "Hadoop", '"very effectively resolves ... at the expense of increased Hadoop job '
               'runtimes"', tol),
        _helps(rms, "dctcp", "Fig. 3: DCTCP (K = 65) helps PTP and memcached, at a cost to Hadoop",
               '"reduces the variance ... at an increase in Hadoop job runtimes"', tol),
        _pause(rms, tol),
    ]  # fmt: skip
    return claims + _level_claims(runs) + _worst_claims(runs)


def _mitigated(words: str, seed: str, p99: dict[str, pd.Series], slow: pd.Series | None) -> Claim:
    """QJUMP leaves at most 10 % of what Hadoop added to a p99: per seed, 0.1 x
    (contended - alone) - (qjump - alone) >= 0, on its interval (a tie holds)."""
    left = 0.1 * (p99["contended"] - p99["alone"]) - (p99["qjump"] - p99["alone"])
    left = left.dropna()
    ok = compare(float(left.mean()), t95_half_width(left), strict=False)
    decisions = [ok] + ([bool((slow == 0).all())] if slow is not None else [])
    text = (
        f"p99 alone {p99['alone'].mean() * US:.1f}, contended {p99['contended'].mean() * US:.1f}, "
        f"QJUMP {p99['qjump'].mean() * US:.1f} µs (means)"
        + (f"; over 200 ms with QJUMP: {int(slow.sum())}" if slow is not None else "")
    )
    return Claim(words, seed, text, **decided(every(decisions)), tolerance=MITIGATED)


def _closest(rms: dict[tuple[str, str], pd.Series], tol: str) -> Claim:
    """QJUMP's distance from 1 is below every other case's, per application, paired."""
    decisions, texts = [], []
    for app in ("ptp", "memcached", "hadoop"):
        mine = (rms[("qjump", app)] - 1).abs()
        for other in (c for c in SHARED if c != "qjump"):
            ok, diff = larger((rms[(other, app)] - 1).abs(), mine)
            decisions.append(ok)
            if ok is not True:
                texts.append(f"{app}: {other} {diff}")
    return Claim(
        "Fig. 3: QJUMP's normalised RMS is the closest to 1 for PTP, memcached and Hadoop",
        '"QJUMP achieves the best results"',
        "closest in every pairing" if not texts else "not closer: " + "; ".join(texts),
        **decided(every(decisions)),
        tolerance=tol,
    )


def _helps(
    rms: dict[tuple[str, str], pd.Series], case: str, words: str, seed: str, tol: str
) -> Claim:
    """``case`` lowers PTP's and memcached's RMS below contended's and raises Hadoop's
    above contended's (its cost is against the shared network without it)."""
    parts = [
        ("ptp", *larger(rms[("contended", "ptp")], rms[(case, "ptp")])),
        ("memcached", *larger(rms[("contended", "memcached")], rms[(case, "memcached")])),
        ("hadoop", *larger(rms[(case, "hadoop")], rms[("contended", "hadoop")])),
    ]
    return Claim(
        words,
        seed,
        _fig3_text(rms, case)
        + "; contended - case (hadoop: case - contended): "
        + ", ".join(f"{a} {d}" for a, _, d in parts),
        **decided(every([ok for _, ok, _ in parts])),
        tolerance=tol,
    )


def _pause(rms: dict[tuple[str, str], pd.Series], tol: str) -> Claim:
    mc_ok, mc = larger(rms[("contended", "memcached")], rms[("pause", "memcached")])
    ptp_ok, ptp = larger(rms[("pause", "ptp")], rms[("contended", "ptp")])
    return Claim(
        "Fig. 3: PAUSE helps memcached a little and hurts PTP",
        '"limited positive impact on memcached but increases the RMS offset for PTPd"',
        _fig3_text(rms, "pause")
        + f"; memcached contended - pause {mc}, ptp pause - contended {ptp}",
        **decided(every([mc_ok, ptp_ok])),
        tolerance=tol,
    )


def _fig3_text(rms: dict[tuple[str, str], pd.Series], case: str) -> str:
    return ", ".join(
        f"{a} {rms[(case, a)].mean():.2f} (contended {rms[('contended', a)].mean():.2f})"
        for a in ("ptp", "memcached", "hadoop")
    )


def _grows(levels: pd.DataFrame, column: str) -> tuple[bool | None, list[str]]:
    """Whether ``column`` grows from each f to the next, paired by seed."""
    fs = sorted(set(levels["f"]))
    decisions, texts = [], []
    for a, b in pairwise(fs):
        ok, diff = larger(by_seed(levels, column, f=b), by_seed(levels, column, f=a))
        decisions.append(ok)
        texts.append(f"{a}->{b}: {diff}")
    return every(decisions), texts


def _level_claims(runs: pd.DataFrame) -> list[Claim]:
    levels = runs[runs["kind"] == "level"]
    if levels.empty:
        return []
    tol = interval(levels)
    grows_t, t_text = _grows(levels, "throughput_bps")
    grows_s, s_text = _grows(levels, "latency_std_s")
    first = levels[levels["f"] == levels["f"].min()]
    means = levels.groupby("f")
    return [
        Claim(
            "f: a level's throughput grows with f (f·P per epoch)",
            '"as the value of f grows, so does the available bandwidth"',
            ", ".join(f"{t / 1e6:.0f}" for t in means["throughput_bps"].mean())
            + " Mbps; "
            + "; ".join(t_text),
            **decided(grows_t),
            tolerance=tol + "; follows from the offered load (1.25x the level's rate), so a "
            "check of the shaper, not a test of the seed",
            check=True,
        ),
        Claim(
            "f: a level's latency variance grows with f",
            '"the probability that interference occurs increases with increasing values of f"',
            ", ".join(f"{s * US:.2f}" for s in means["latency_std_s"].mean())
            + " µs std; "
            + "; ".join(s_text),
            **decided(grows_s),
            tolerance=tol,
        ),
        Claim(
            "f = 1, random destinations: no packet waits longer than one epoch",
            '"no packet will take more than one network epoch"',
            f"max {_per_run(first['latency_max_s'], US, 2)} µs (epoch {EPOCH_S * US:.1f} µs)",
            bool((first["latency_max_s"] <= EPOCH_S).all()),
            tolerance="one network epoch (2nP/R), the seed's guarantee; " + EVERY_RUN,
        ),
    ]


def _worst_claims(runs: pd.DataFrame) -> list[Claim]:
    worst = runs[runs["kind"] == "worst"]
    if worst.empty:
        return []
    return [
        Claim(
            "f = 1 in its worst case (every host to one, in phase, lower level saturating): "
            "no top-level packet waits longer than one epoch",
            '"no packet will take more than one network epoch to be delivered ... even in '
            'the worst case"',
            f"max {_per_run(worst['latency_max_s'], US, 2)} µs, p99 "
            f"{_per_run(worst['latency_p99_s'], US, 2)} µs (epoch {EPOCH_S * US:.1f} µs); "
            f"delivered {int(worst['delivered'].sum())} of {int(worst['sent'].sum())} sent",
            bool((worst["latency_max_s"] <= EPOCH_S).all()),
            tolerance="one network epoch (2nP/R), the seed's guarantee; " + EVERY_RUN,
        )
    ]
