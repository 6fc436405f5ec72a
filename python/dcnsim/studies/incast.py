"""Incast: the Packet Slicing seed, §II.C, Fig. 6(b).

N DCTCP workers answer one aggregator at once, round after round, with TCP and
DCTCP as ns-2.35 has them (``transport.profile = "ns2_sack"``, ``INCAST_PROFILE``:
why that agent, in ``docs/studies.md``); the study finds, per packet size,
the largest N without a timeout in steady state and prints it beside the seed's
maximum and the seed's analytic Incast probability (its equations 1-2).
``run_incast`` / ``incast_summary`` / ``incast_probability`` from Python.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dcnsim.models import packet_slicing as model
from dcnsim.scenario import Scenario
from dcnsim.studies.figures import pyplot, save, seed_values
from dcnsim.studies.readings import reading_lines
from dcnsim.studies.readings.packet_slicing import BUFFER, BUFFER_BYTES, READING, TCP
from dcnsim.studies.runner import Progress, run_scenarios
from dcnsim.studies.study import Study
from dcnsim.studies.text import Claim, claim_lines, format_table, int_text, num_text

__all__ = [
    "INCAST_FULL",
    "INCAST_PROFILE",
    "INCAST_PROFILES",
    "INCAST_QUICK",
    "INCAST_ROUNDS",
    "INCAST_SEED",
    "STUDY",
    "incast_claims",
    "incast_probability",
    "incast_reference",
    "incast_scenario",
    "incast_summary",
    "run_incast",
]

#: The seed's maximum number of concurrent workers without incast collapse, by packet
#: size in bytes, and its words. ``None``: the seed gives a lower bound only.
INCAST_SEED: dict[int, tuple[int, str, str]] = {
    1500: (25, "25", '"only 25 concurrent flows induce the TCP Incast throughput collapse"'),
    500: (76, "76", '"the maximum numbers of flows coexisting well without Time-Out" = 76'),
    250: (146, "146", "... = 146 for 250 B"),
    64: (500, "> 500", "no collapse up to 500 workers, but goodput only 570 Mbps"),
}

#: Worker counts per packet size: the full grid and the quick one (a few points
#: around the seed's number, which each grid holds with one point above it; 64 B only
#: up to 450, large N at 64 B is slow).
INCAST_FULL: dict[int, list[int]] = {
    1500: sorted([*range(2, 41, 2), 25]),
    500: [20, 30, 40, 50, 56, 60, 64, 68, 72, 76, 80, 90, 100],
    250: [40, 60, 80, 100, 110, 120, 125, 130, 135, 140, 146, 150, 160, 180],
    64: [100, 200, 300, 400, 450, 500, 550, 600, 650, 700],
}
INCAST_QUICK: dict[int, list[int]] = {
    1500: [4, 8, 10, 12, 16, 20, 24, 25, 26, 28],
    500: [40, 64, 68, 72, 80],
    250: [80, 125, 140, 146, 150],
    64: [100, 300, 450],
}

INCAST_ROUNDS = 8

#: The seed's one reading (``dcnsim.studies.readings.packet_slicing``, shared with the
#: ``packet-slicing`` study): FullTcp/Sack, K = 20 payloads in bytes, 64,000 B,
#: DCTCP's window floored at 1 as the DCTCP authors' ns-2 code has it.
INCAST_PROFILE = TCP.profile
#: Every reading of the agent: the chosen one, the one-way Agent/TCP/Newreno with
#: Agent/TCPSink (the example's ``DC-TCP-Newreno``: limited transmit, no handshake)
#: and plain FullTcp (no SACK).
INCAST_PROFILES = ("ns2_sack", "ns2_oneway", "ns2")

#: The switch's output buffer, as the scenario writes it and in bytes.
INCAST_BUFFER = BUFFER
INCAST_BUFFER_BYTES = BUFFER_BYTES


def incast_probability(
    size: int, workers: int, window: int = 2, buffer: int = INCAST_BUFFER_BYTES
) -> float:
    """The seed's Incast probability P, its equations (1)-(2)
    (``dcnsim.models.packet_slicing.incast_probability``) for ``workers`` flows of
    ``window`` packets of ``size`` bytes on the wire, sharing ``buffer`` bytes (the
    scenario's by default): 1 - (1 - (1 - B / (n s w))^w)^n, 0 when they all fit."""
    return model.incast_probability(workers, size, window, buffer)


def incast_scenario(
    size: int,
    workers: int,
    rounds: int = INCAST_ROUNDS,
    profile: str = INCAST_PROFILE,
) -> Scenario:
    """``workers`` DCTCP senders, one 64 KB response each per round, to host 0.

    1 Gbps star, 25 µs per link (100 µs round trip through the switch), 64 KB
    output buffers, RTO_min 200 ms, packets of ``size`` bytes on the wire: payload
    ``size - 40`` (ns-2's ``packetSize_``/``segsize_``) plus its 40 B header
    (``tcpip_base_hdr_size_``, counted in the queue's bytes). DCTCP marks at
    K = 20 packets of the payload, 20 x (``size`` - 40) bytes of queue, as ns-2's
    byte-mode RED with ``mean_pktsize_`` = ``packetSize`` does; alpha starts at 0
    (ns-2.35 ``Agent/TCP set dctcp_alpha_ 0.0``, tcl/lib/ns-default.tcl) with
    g = 1/16, and DCTCP's cut leaves at least one segment (the seed's ``TCP``). TCP
    is ``profile``'s (``INCAST_PROFILES``), persistent connections over ``rounds``
    rounds.
    """
    if size <= 40 + 23:
        raise ValueError(f"packet size must leave at least 24 B of payload, got {size} B")
    if profile not in INCAST_PROFILES:
        raise ValueError(f"profile must be one of {', '.join(INCAST_PROFILES)}, got {profile!r}")
    reading = replace(TCP, profile=profile)
    return Scenario(
        {
            "name": f"incast S={size}B N={workers}",
            "topology": {
                "kind": "star",
                "hosts": workers + 1,
                "link": {"rate": "1Gbps", "delay": "25us"},
            },
            "network": {"queue": reading.queue(size)},
            "transport": reading.transport("dctcp", size),
            "traffic": {
                "incast": [
                    {
                        "aggregator": 0,
                        "workers": "all",
                        "sru": "64KB",
                        "rounds": rounds,
                        "persistent": True,
                    }
                ]
            },
        }
    )


def _reduce_incast(results: Any) -> dict[str, Any]:
    rounds = results.rounds.sort_values("round")
    first, steady = rounds[rounds["round"] == 0], rounds[rounds["round"] > 0]
    flows = results.flows
    tcp = flows[flows["kind"] == "tcp"]
    return {
        "rounds": len(rounds),
        "round0_goodput_mbps": float(first["goodput_bps"].iloc[0]) / 1e6 if len(first) else np.nan,
        "round0_timeout": bool(first["any_timeout"].astype(bool).any()),
        "steady_rounds": len(steady),
        "steady_goodput_mbps": float(steady["goodput_bps"].mean()) / 1e6 if len(steady) else np.nan,
        "steady_timeout_rounds": int(steady["any_timeout"].astype(bool).sum()),
        "steady_timeouts": int(steady["timeouts"].sum()),
        "drops": int(tcp["drops"].sum()),
        "sim_time_s": float(results.summary["sim_time_s"]),
    }


def run_incast(
    quick: bool = False,
    jobs: int | None = None,
    sizes: Iterable[int] | None = None,
    grid: Mapping[int, Sequence[int]] | None = None,
    rounds: int = INCAST_ROUNDS,
    progress: Progress | None = None,
    profile: str = INCAST_PROFILE,
) -> pd.DataFrame:
    """One row per (packet size, workers): steady-state goodput and timeouts.

    ``grid`` (packet size -> worker counts) defaults to ``INCAST_QUICK`` or
    ``INCAST_FULL``; ``sizes`` keeps only some of its sizes. Steady state is rounds
    1..rounds-1 (round 0 is slow start from the initial window and is reported
    apart). ``profile``: the reading of the seed's ns-2 agent (``INCAST_PROFILES``).
    Columns:
    ``size_B, workers, profile, rounds, round0_goodput_mbps, round0_timeout, steady_rounds,
    steady_goodput_mbps, steady_timeout_rounds,
    timeout_fraction, steady_timeouts, drops, sim_time_s, wall_s, seed_P``
    (``seed_P``: the seed's equation (2) for w = 2).
    """
    if rounds < 2:
        raise ValueError("incast needs at least 2 rounds: round 0 is not steady state")
    # The study's full variant (its own grid, 1500 B in it) also runs the reference.
    full_variant = not quick and grid is None and (sizes is None or 1500 in sizes)
    grid = dict(grid if grid is not None else (INCAST_QUICK if quick else INCAST_FULL))
    if sizes is not None:
        grid = {s: grid[s] for s in sizes}
    points = [(s, n) for s in grid for n in sorted(grid[s])]
    # Largest runs first: they dominate the wall time, so the pool ends evenly.
    order = sorted(range(len(points)), key=lambda i: -points[i][1] * 1500 / points[i][0])
    tasks = [(_reduce_incast, incast_scenario(*points[i], rounds, profile)) for i in order]
    answers = run_scenarios(tasks, jobs=jobs, progress=progress)
    rows = [None] * len(points)
    for i, answer in zip(order, answers, strict=True):
        size, workers = points[i]
        rows[i] = {
            "size_B": size,
            "workers": workers,
            "profile": profile,
            **answer,
            "seed_P": incast_probability(size, workers),
        }
    table = pd.DataFrame(rows)
    table.insert(
        table.columns.get_loc("steady_timeout_rounds") + 1,
        "timeout_fraction",
        table["steady_timeout_rounds"] / table["steady_rounds"].clip(lower=1),
    )
    if full_variant:
        # The full variant's baseline beside ns-2.35 (issue 45 item 4), printed by
        # _incast_tables: the text, or why it was not run.
        table.attrs["reference"] = _reference_text(rounds)
    return table


def _reference_text(rounds: int) -> str:
    from dcnsim.crosscheck import reference_block

    title = "Incast baseline beside ns-2.35"
    return reference_block("ns2", title, lambda: incast_reference(rounds=rounds)[1])


def incast_summary(detail: pd.DataFrame) -> pd.DataFrame:
    """Per packet size: the seed's and dcnsim's maximum workers without collapse.

    dcnsim's maximum is the largest N of the grid such that N and every smaller N
    of the grid had no steady-state round with a timeout (NaN if even the smallest
    collapsed). ``goodput_below_mbps`` is the steady goodput at that N,
    ``first_collapse`` the next N of the grid and ``goodput_above_mbps`` its
    goodput (NaN when nothing collapsed: the maximum is then only a lower bound,
    ``bound = ">="``). ``clean_above`` lists the N above the first collapse
    without a steady timeout (empty: the curve is monotone). ``seed_P_below`` and
    ``seed_P_above`` are the seed's equation (2) (w = 2) at those two N, and
    ``seed_n_half`` the least N where it reaches 0.5.
    """
    rows = []
    for size, points in detail.groupby("size_B", sort=False):
        points = points.sort_values("workers")
        fine = (points["steady_timeout_rounds"] == 0).to_numpy()
        collapsed = int(np.argmin(fine)) if not fine.all() else len(points)
        below = points.iloc[collapsed - 1] if collapsed > 0 else None
        above = points.iloc[collapsed] if collapsed < len(points) else None
        seed_max, seed_shown, note = INCAST_SEED.get(int(size), (np.nan, "?", ""))
        workers = points["workers"].to_numpy()
        clean_above = workers[collapsed:][fine[collapsed:]]
        rows.append(
            {
                "size_B": int(size),
                "seed_max_workers": seed_max,
                "seed_shown": seed_shown,
                "dcnsim_max_workers": int(below["workers"]) if below is not None else np.nan,
                "bound": ">=" if above is None else ("<" if below is None else "="),
                "goodput_below_mbps": below["steady_goodput_mbps"] if below is not None else np.nan,
                "first_collapse": int(above["workers"]) if above is not None else np.nan,
                "goodput_above_mbps": above["steady_goodput_mbps"] if above is not None else np.nan,
                "grid": ",".join(str(n) for n in points["workers"]),
                "clean_above": ",".join(str(n) for n in clean_above),
                "seed_P_below": (
                    incast_probability(int(size), int(below["workers"]))
                    if below is not None
                    else np.nan
                ),
                "seed_P_above": (
                    incast_probability(int(size), int(above["workers"]))
                    if above is not None
                    else np.nan
                ),
                "seed_n_half": next(
                    n for n in range(1, 100_000) if incast_probability(int(size), n) >= 0.5
                ),
                "seed_note": note,
            }
        )
    return pd.DataFrame(rows)


def incast_reference(
    workers: Sequence[int] = (4, 8, 16, 25, 32),
    size: int = 1500,
    rounds: int = INCAST_ROUNDS,
) -> tuple[pd.DataFrame, str]:
    """The study's baseline run by dcnsim and by ns-2.35 (``dcnsim.crosscheck``).

    Stock ns-2.35 has no DCTCP (the seed's is the DCTCP authors' patch), so the
    baseline is the study's scenario without it: TCP (``newreno`` on
    ``INCAST_PROFILE``'s FullTcp/Sack) into the same 64 KB drop-tail port, no
    marking. What that changes: every loss is a buffer overflow, so collapse comes
    at fewer workers than with DCTCP, and the seed's number (25 at 1500 B, for
    DCTCP) is printed beside as the seed's, not as this baseline's. Per N: round
    0 and the steady rounds' median round time and the timeouts in each.
    Needs ``ns`` (apt-get install ns2).
    """
    from dcnsim.crosscheck import crosscheck

    rows = []
    for n in workers:
        scenario = incast_scenario(size, n, rounds).to_dict()
        transport = {k: v for k, v in scenario["transport"].items() if k != "dctcp"}
        scenario["transport"] = {**transport, "protocol": "newreno"}
        scenario["network"]["queue"] = {"capacity": scenario["network"]["queue"]["capacity"]}
        report = crosscheck(scenario, "ns2")
        row: dict[str, Any] = {"workers": n}
        for who, tables in (("dcnsim", report.dcnsim), ("ns2", report.tables)):
            times = tables["rounds"].sort_values("round")["round_time_s"]
            row[f"{who}_round0_ms"] = float(times.iloc[0]) * 1e3 if len(times) else np.nan
            row[f"{who}_steady_median_ms"] = float(times.iloc[1:].median()) * 1e3
            row[f"{who}_timeouts"] = int(tables["flows"]["timeouts"].sum())
        rows.append(row)
    table = pd.DataFrame(rows)
    seed = INCAST_SEED.get(size)
    most = {}
    for who in ("dcnsim", "ns2"):
        # Collapse: the steady rounds' median waits for RTO_min (200 ms).
        fine = (table[f"{who}_steady_median_ms"] < 200).to_numpy()
        upto = len(fine) if fine.all() else int(np.argmin(fine))
        most[who] = int(table["workers"].iloc[upto - 1]) if upto else None
    agree = "agree" if most["dcnsim"] == most["ns2"] else "DISAGREE"
    lines = [
        "Incast baseline without DCTCP: dcnsim beside ns-2.35 (dcnsim crosscheck)",
        f"  TCP ({INCAST_PROFILE}), 64 KB drop-tail, {size} B packets, {rounds} rounds",
        f"  the seed's most workers without collapse (DCTCP): {seed[1] if seed else 'n/a'}",
        f"  most workers of {list(table['workers'])} without collapse, without DCTCP: "
        f"dcnsim {most['dcnsim']}, ns-2 {most['ns2']} ({agree});",
        "  the seed's number is DCTCP's, which stock ns-2.35 lacks: no baseline should reach it",
        "",
        format_table(
            pd.DataFrame(
                {
                    "workers": table["workers"],
                    "round 0 ms (dcnsim / ns-2)": [
                        f"{num_text(a, 2)} / {num_text(b, 2)}"
                        for a, b in zip(table.dcnsim_round0_ms, table.ns2_round0_ms, strict=True)
                    ],
                    "steady median ms (dcnsim / ns-2)": [
                        f"{num_text(a, 2)} / {num_text(b, 2)}"
                        for a, b in zip(
                            table.dcnsim_steady_median_ms, table.ns2_steady_median_ms, strict=True
                        )
                    ],
                    "timeouts (dcnsim / ns-2)": [
                        f"{a} / {b}"
                        for a, b in zip(table.dcnsim_timeouts, table.ns2_timeouts, strict=True)
                    ],
                }
            )
        ),
    ]
    return table, "\n".join(lines)


INCAST_NOTES = [
    "max workers = the largest N of the grid such that N and every smaller N of the grid",
    "  had no timeout in a steady-state round (rounds 1..R-1; round 0 starts from the",
    "  initial window of 2 and is not counted). Goodput = mean of the steady rounds'",
    "  goodput (8 x workers x 64 KB / round time). Collapse need not be monotonic in N:",
    "  a larger N can happen to avoid timeouts (see --verbose); the first timeout counts.",
    "TCP: the seed names no ns-2 agent; ns-2.35's DCTCP example defaults to FullTcp/Sack",
    "  (profile ns2_sack, the study's), which has no limited transmit: with windows of 2-3",
    "  segments one loss leaves too few duplicate ACKs and waits for the 200 ms timeout.",
    "  The one-way Agent/TCP/Newreno + TCPSink (profile ns2_oneway) has limited transmit",
    "  (singledup_ 1): run_incast(profile='ns2_oneway'); plain FullTcp: profile='ns2'.",
    "K = 20 packets of payload (ns-2's byte-mode RED, mean_pktsize_ = packetSize): 20 x",
    "  (S - 40) bytes of queue; DCTCP's alpha starts at 0 as in ns-2.35; its cut leaves",
    "  at least 1 segment, as the DCTCP authors' ns-2 code has it (TcpAgent::slowdown);",
    "  the seed's one reading, shared with the packet-slicing study (docs/studies.md).",
    "eq. (2) P = the seed's Incast probability 1 - (1 - (1 - B/(N s w))^w)^N for w = 2,",
    "  B = 64 KB (64 000 B, the scenario's buffer) and s the packet size.",
    "Packet size: the seed's s is the packet on the wire for 1500 B (payload 1460 + 40 B",
    "  header, its eq. 8), as dcnsim's: a packet of S bytes carries S - 40, the buffer is",
    "  counted in bytes. 64 B then carries 24 B and goodput is at most 24/64 x 1 Gbps =",
    "  375 Mbps; the seed's 570 Mbps at 64 B (93 % of 64/104 x 1 Gbps = 615) suggests its",
    "  64 B was the payload with a 40 B header.",
    "  A 64 B round lasts N x 1.37 ms, longer than RTO_min from N = 150 on, so a round",
    "  with timeouts keeps most of its goodput: there, the timeout is the collapse signal.",
]


def _incast_tables(detail: pd.DataFrame, verbose: bool) -> tuple[pd.DataFrame, str]:
    summary = incast_summary(detail)
    profile = ", ".join(sorted(set(detail["profile"])))
    shown = pd.DataFrame(
        {
            "packet size": [f"{s} B" for s in summary["size_B"]],
            "seed: max workers": summary["seed_shown"],
            "dcnsim: max workers": [
                bound_text(b, m, first)
                for b, m, first in zip(
                    summary["bound"],
                    summary["dcnsim_max_workers"],
                    summary["first_collapse"],
                    strict=True,
                )
            ],
            "first collapse": [int_text(v) for v in summary["first_collapse"]],
            "goodput below (Mbps)": [num_text(v, 0) for v in summary["goodput_below_mbps"]],
            "goodput above (Mbps)": [num_text(v, 0) for v in summary["goodput_above_mbps"]],
            "eq. (2) P below": [num_text(v, 2) for v in summary["seed_P_below"]],
            "eq. (2) P above": [num_text(v, 2) for v in summary["seed_P_above"]],
            "eq. (2) P >= 0.5 from N": summary["seed_n_half"],
            "seed note": summary["seed_note"],
        }
    )
    lines = [
        "Incast: the Packet Slicing seed, §II.C, Fig. 6(b): N DCTCP workers -> 1 aggregator,",
        f'  TCP and DCTCP as ns-2.35 has them (transport.profile = "{profile}")',
        "  1 Gbps star, 100 µs RTT, 64 KB buffer per port, K = 20 x payload, RTO_min 200 ms,",
        f"  SRU 64 KB per worker per round, {int(detail['rounds'].max())} rounds, "
        "persistent connections, init_cwnd 2 (ns-2's windowInit_)",
        *reading_lines(READING),
        "",
        format_table(shown),
    ]
    lines += ["", "The seed's claims, against these numbers:", *claim_lines(incast_claims(detail))]
    if "reference" in detail.attrs:
        lines += ["", detail.attrs["reference"]]
    if verbose:
        lines += ["", "Per point:", format_table(_incast_detail_view(detail))]
    lines += ["", *INCAST_NOTES]
    return summary, "\n".join(lines)


def _incast_detail_view(detail: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "size": [f"{s} B" for s in detail["size_B"]],
            "N": detail["workers"],
            "round 0 (Mbps)": [num_text(v, 0) for v in detail["round0_goodput_mbps"]],
            "steady (Mbps)": [num_text(v, 1) for v in detail["steady_goodput_mbps"]],
            "rounds w/ timeout": [
                f"{t}/{r}"
                for t, r in zip(
                    detail["steady_timeout_rounds"], detail["steady_rounds"], strict=True
                )
            ],
            "timeouts": detail["steady_timeouts"],
            "drops": detail["drops"],
            "eq. (2) P": [num_text(v, 2) for v in detail["seed_P"]],
            "sim time (s)": [f"{v:.3f}" for v in detail["sim_time_s"]],
            "wall (s)": [f"{v:.2f}" for v in detail["wall_s"]],
        }
    )


def _incast_plot(detail: pd.DataFrame, summary: pd.DataFrame, path: Path) -> None:
    """(a) steady goodput against N per packet size; (b) the seed's Fig. 6(b): the
    most workers without collapse per packet size, dcnsim's bracket between grid
    points beside the seed's numbers."""
    plt = pyplot()
    fig, (ax, most) = plt.subplots(1, 2, figsize=(12, 5))
    for size, points in detail.groupby("size_B", sort=False):
        points = points.sort_values("workers")
        ax.plot(points["workers"], points["steady_goodput_mbps"], marker="o", label=f"{size} B")
        hit = points[points["steady_timeout_rounds"] > 0]
        ax.scatter(
            hit["workers"], hit["steady_goodput_mbps"], marker="x", s=60, color="black", zorder=3
        )
    ax.set_xscale("log")
    ax.set_xlabel("concurrent workers N")
    ax.set_ylabel("steady-state goodput (Mbps)")
    ax.set_ylim(bottom=0)
    ax.set_title("(a) goodput; x = a round with a timeout")
    ax.legend(title="packet size")
    ax.grid(True, which="both", alpha=0.3)
    low = summary["dcnsim_max_workers"].to_numpy(dtype=float)
    high = summary["first_collapse"].to_numpy(dtype=float)
    sizes = summary["size_B"].to_numpy(dtype=float)
    top = np.where(np.isnan(high), low, high)  # no collapse on the grid: a lower bound
    most.vlines(sizes, low, top, color="tab:blue", linewidth=2)
    most.scatter(sizes, low, marker="o", color="tab:blue", zorder=3,
                 label="dcnsim: most N without collapse .. first collapse")  # fmt: skip
    seed = summary.dropna(subset=["seed_max_workers"])
    seed_values(most, seed["size_B"], seed["seed_max_workers"],
                lower_bound=seed["seed_shown"].str.startswith(">"))  # fmt: skip
    most.set_xscale("log")
    most.set_yscale("log")
    for axis in (ax.xaxis, most.xaxis, most.yaxis):  # 20, not 2 x 10^1
        axis.set_major_formatter(plt.matplotlib.ticker.ScalarFormatter())
    most.set_xlabel("packet size (B)")
    most.set_ylabel("most workers without incast collapse")
    most.set_title("(b) Fig. 6(b); seed ^ = a lower bound")
    most.legend(fontsize=8)
    most.grid(True, which="both", alpha=0.3)
    fig.suptitle("Incast (Packet Slicing seed Fig. 6b)")
    save(fig, path)


def bound_text(bound: str, value: Any, first_collapse: Any) -> str:
    if bound == "<":
        return f"< {int_text(first_collapse)}"
    if bound == ">=":
        return f">= {int_text(value)}"
    return int_text(value)


#: Where the incast claims' margin comes from.
INCAST_TOLERANCE = "the seed's number as its text states it; dcnsim's bracket between grid points"


def incast_claims(detail: pd.DataFrame) -> list[Claim]:
    """Per packet size: does the seed's maximum lie in dcnsim's bracket? Then, as a
    check, whether the 1500 B curve is monotone.

    dcnsim's bracket is [largest N without collapse, first N with one) of its grid.
    The seed's exact maxima must lie in it (``n/a`` when the grid stops below the
    seed's number without a collapse); its lower bound (64 B: no collapse up to 500)
    holds when dcnsim's first collapse is above it, and is ``n/a`` when the grid stops
    below it without a collapse.
    """
    claims = []
    for row in incast_summary(detail).itertuples(index=False):
        low = 0 if pd.isna(row.dcnsim_max_workers) else int(row.dcnsim_max_workers)
        high = np.inf if pd.isna(row.first_collapse) else int(row.first_collapse)
        seed = row.seed_max_workers
        bound = row.seed_shown.startswith(">")
        if pd.isna(seed) or (high == np.inf and low < seed):
            ok = None  # no seed number, or the grid ends below it without a collapse
        else:
            ok = bool(high > seed) if bound else bool(low <= seed < high)
        shown = bound_text(row.bound, row.dcnsim_max_workers, row.first_collapse)
        if high != np.inf:
            shown += f" (collapse at {int(high)})"
        elif ok is None:
            shown += f" (the grid ends at {low}, below the seed's {row.seed_shown})"
        claims.append(
            Claim(
                f"{row.size_B} B packets: the most workers without incast collapse",
                row.seed_shown,
                shown,
                ok,
                tolerance=INCAST_TOLERANCE,
            )
        )
        if row.size_B == 1500:
            claims.append(
                Claim(
                    "1500 B: no N without a timeout above the first collapse (monotone)",
                    "monotone",
                    f"clean above: {row.clean_above}" if row.clean_above else "monotone",
                    not row.clean_above if not pd.isna(row.first_collapse) else None,
                    check=True,
                )
            )
    return claims


STUDY = Study(
    name="incast",
    title="Packet Slicing seed §II.C, Fig. 6(b): max workers without incast collapse, "
    "by packet size",
    seed="Packet Slicing (incast), §II.C, Fig. 6(b)",
    runs=run_incast,
    tables=_incast_tables,
    claims=incast_claims,
    figures={"fig6b": _incast_plot},
    seeded=False,  # no random choice in a star with synchronized senders
)
