"""The timeout probability the seed's own model implies at its slicing ratio k̂,
beside the rate dcnsim measures, per worker count (issue 46, item 5).

At n workers the switch slices to packets of ⌊s/k̂⌋ bytes, k̂ = n·s·ŵ/Y (eq. 11, ŵ = 2
above Y/(2s) workers, §III.D), so the k the senders use is s/⌊s/k̂⌋. The model then
says two things:

- eq. (1)/(4) with Y for B (the approximation eq. 9 and k̂ are built on): windows of ŵ
  packets of s/k fill Y exactly, so no packet is lost and p = 0;
- eq. (6)/(7), the model's own next round: every flow adds one packet (additive
  increase), a share ns/(kY + ns) = 1/(ŵ + 1) of the packets is lost, and a flow loses
  its whole window of ŵ + 1 with p = (1/(ŵ + 1))^(ŵ + 1) = 1/27 at ŵ = 2; the chance
  that some flow of a round does is P = 1 - (1 - p)^n. The model counts full-window
  losses only (§II.C: "Time-Out is mainly caused by a full window of packet losses");
  a window of ŵ + 1 = 3 segments cannot bring three duplicate ACKs, so without limited
  transmit (the seed's FullTcp) any loss times out: ``eq6_any_loss``, 1 - (1 - 1/(ŵ +
  1))^(ŵ + 1) = 0.70 at ŵ = 2, is that probability under eq. (6)'s loss rate (blank
  where eq. (6)'s window, kY/(ns) + 1, is 4 or more: fast retransmit can then work).

dcnsim's rates are per response (a worker's flow in one round: ``outcome`` "timeout"
in ``ops.parquet``) and per round (``any_timeout``), over Fig. 11's DCTCP runs.
"""

from __future__ import annotations

import math

import pandas as pd

from dcnsim.models import packet_slicing as m
from dcnsim.studies.packet_slicing.scenarios import Y_1G
from dcnsim.studies.readings.packet_slicing import TCP

__all__ = ["W_HAT", "S", "model_timeouts", "timeout_table"]

#: The default packet on the wire and the seed's ŵ at high concurrency (§III.D).
S = 1500
W_HAT = 2.0
#: Fast retransmit's duplicate-ACK threshold: a window below DUPTHRESH + 1 segments
#: cannot bring it, so any loss there waits for the timeout.
DUPTHRESH = 3


def model_timeouts(n: int, slicing: bool) -> dict[str, float]:
    """The model's k (as the switch sets it: s over the whole-byte MTU), and per flow
    and per round the timeout probability of eq. (6) and of eq. (1) with Y."""
    k = S / int(S // m.k_hat(n, S, W_HAT, Y_1G)) if slicing else 1.0
    loss = n * S / (k * Y_1G + n * S)
    window = k * Y_1G / (n * S) + 1.0
    p6 = loss**window
    return {
        "k": k,
        "packet_B": S / k,
        "eq6_p_flow": p6,
        "eq6_P_round": m.incast_probability_sliced(n, S, k, Y_1G),
        "eq6_any_loss": 1.0 - (1.0 - loss) ** window if window < DUPTHRESH + 1 else math.nan,
        "eq1_p_flow": m.timeout_probability(n, S / k, W_HAT, Y_1G),
    }


def timeout_table(runs: pd.DataFrame, protocol: str = "dctcp") -> pd.DataFrame:
    """Per reading, slicing off/on and worker count of Fig. 11: the model's
    probabilities and dcnsim's measured rates (responses and rounds with a timeout)."""
    if not {"experiment", "flow_rounds"} <= set(runs.columns):
        return pd.DataFrame()
    rows = runs[
        runs["experiment"].isin(["fig11", "fig11_variant"]) & (runs["protocol"] == protocol)
    ]
    if "reading" not in rows:
        rows = rows.assign(reading=None)
    rows = rows.assign(reading=rows["reading"].fillna(TCP.name))
    out = []
    for _, r in rows.sort_values(["reading", "slicing", "workers"]).iterrows():
        n = int(r["workers"])
        out.append(
            {
                "reading": r["reading"],
                "slicing": bool(r["slicing"]),
                "workers": n,
                **model_timeouts(n, bool(r["slicing"])),
                "measured_p_flow": r["timeout_flow_rounds"] / max(r["flow_rounds"], 1),
                "measured_P_round": r["timeout_rounds"] / max(r["rounds_done"], 1),
                "rounds": int(r["rounds_done"]),
            }
        )
    return pd.DataFrame(out)
