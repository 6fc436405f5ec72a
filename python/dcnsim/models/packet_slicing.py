"""The Packet Slicing seed's analytic model, its equations (1)-(11).

Notation as in the seed (§II.C, §III.B-C): ``n`` flows, each with a window of ``w``
packets of ``s`` bytes, share a bottleneck whose buffer holds ``B`` bytes; ``k`` is
the slicing ratio (window or packet size divided by ``k``); ``Y`` the bytes the
buffer and the link's pipe hold together; ``L_D`` and ``L_H`` the default payload
and header (1460 B and 40 B). Every function takes plain numbers and returns a
float; they are what ``dcnsim study packet-slicing`` draws as Figs. 4-9 and what the
``packet_slicing`` switch agent computes (``k_hat``, eq. 11).

Readings chosen where the seed is ambiguous:

- a probability base ``1 - B/(n s w)`` below zero (the windows all fit in the
  buffer) is taken as zero: no packet is lost, so no flow loses a whole window;
- eq. (9) and (10) are garbled in the seed's text (exponents lost); eq. (9) is read
  as ``(1 - (1 - kY/(n s ŵ))^ŵ)^n x L_D/(L_D + k L_H)`` (eq. 4 with ``Y`` for ``B``),
  and eq. (10) is that expression's exact derivative in ``k``;
- the slicing ratio is limited so packets stay at least 64 B (§III.C: "a viable
  slicing ratio k ranges from 1 to 23" for 1500 B packets).
"""

from __future__ import annotations

__all__ = [
    "L_D",
    "L_H",
    "MIN_PACKET",
    "approx_goodput",
    "approx_goodput_slope",
    "capacity_y",
    "goodput",
    "incast_probability",
    "incast_probability_cut_packet",
    "incast_probability_cut_window",
    "incast_probability_sliced",
    "k_hat",
    "k_max",
    "throughput",
    "timeout_probability",
]

#: Default payload and header bytes of a packet (§III.B, eq. 8).
L_D = 1460
L_H = 40
#: The smallest Ethernet packet (§III.C): a slicing ratio keeps packets at least this.
MIN_PACKET = 64


def _full_window_loss(buffer: float, in_flight: float, w: float) -> float:
    """``(1 - buffer/in_flight)^w``, zero when everything in flight fits."""
    if in_flight <= buffer:
        return 0.0
    return (1.0 - buffer / in_flight) ** w


def timeout_probability(n: float, s: float, w: float, buffer: float) -> float:
    """Eq. (1): one flow's chance of losing its whole window, ``p = (1 - B/(n s w))^w``.

    ``n`` flows of ``w`` packets of ``s`` bytes share ``buffer`` bytes fairly: a packet
    is lost with probability ``1 - B/(n s w)``, all ``w`` of a flow's with its ``w``-th
    power (zero when the ``n w`` packets fit).
    """
    return _full_window_loss(buffer, n * s * w, w)


def incast_probability(n: float, s: float, w: float, buffer: float) -> float:
    """Eq. (2): the chance that at least one of ``n`` flows times out, ``1 - (1 - p)^n``."""
    return 1.0 - (1.0 - timeout_probability(n, s, w, buffer)) ** n


def incast_probability_cut_window(n: float, s: float, w: float, k: float, buffer: float) -> float:
    """Eq. (3): ``P_cw``, every window cut to ``max(2, w/k)`` packets of ``s`` bytes."""
    return incast_probability(n, s, max(2.0, w / k), buffer)


def incast_probability_cut_packet(n: float, s: float, w: float, k: float, buffer: float) -> float:
    """Eq. (4): ``P_ps``, packets cut to ``s/k`` bytes, windows kept at ``w`` packets:
    ``1 - (1 - (1 - kB/(n s w))^w)^n``."""
    return incast_probability(n, s / k, w, buffer)


def capacity_y(buffer: float, rate_bps: float, rtt_s: float) -> float:
    """Eq. (5): ``Y = B + C x RTT_min`` in bytes, what the buffer and the pipe hold."""
    return buffer + rate_bps / 8.0 * rtt_s


def incast_probability_sliced(n: float, s: float, k: float, y: float) -> float:
    """Eq. (6): ``1 - (1 - (ns/(kY + ns))^(kY/(ns) + 1))^n``.

    With packets of ``s/k`` the ``Y`` bytes hold windows of ``kY/(ns)`` packets per
    flow; one more packet each (additive increase) loses a fraction ``ns/(kY + ns)``.
    """
    loss = n * s / (k * y + n * s)
    return 1.0 - (1.0 - loss ** (k * y / (n * s) + 1.0)) ** n


def throughput(n: float, s: float, k: float, y: float, w: float) -> float:
    """Eq. (7): normalized throughput ``T``: ``1 - P`` (eq. 6) when ``nsw + ns > kY``
    (the windows plus one packet each overflow ``Y``), else 1."""
    if n * s * w + n * s <= k * y:
        return 1.0
    return 1.0 - incast_probability_sliced(n, s, k, y)


def _header_share(k: float, l_d: float, l_h: float) -> float:
    """``L_D / (L_D + k L_H)``: the payload's share once a packet is cut in ``k``."""
    return l_d / (l_d + k * l_h)


def goodput(n: float, s: float, k: float, y: float, w: float, l_d=L_D, l_h=L_H) -> float:
    """Eq. (8): normalized goodput ``G = T x L_D / (L_D + k L_H)``, ``T`` of eq. (7)."""
    return throughput(n, s, k, y, w) * _header_share(k, l_d, l_h)


def approx_goodput(n: float, s: float, k: float, y: float, w_hat: float, l_d=L_D, l_h=L_H) -> float:
    """Eq. (9): ``Ĝ``, eq. (8) with every window at the mean ``ŵ`` and ``P`` of eq. (4)
    with ``Y`` for ``B``: ``(1 - (1 - kY/(nsŵ))^ŵ)^n x L_D/(L_D + k L_H)`` when
    ``nsŵ + ns > kY``, else the header share alone."""
    share = _header_share(k, l_d, l_h)
    if n * s * w_hat + n * s <= k * y:
        return share
    return (1.0 - _full_window_loss(k * y, n * s * w_hat, w_hat)) ** n * share


def approx_goodput_slope(
    n: float, s: float, k: float, y: float, w_hat: float, l_d=L_D, l_h=L_H
) -> float:
    """Eq. (10): ``dĜ/dk`` where ``nsŵ + ns > kY`` and ``nsŵ > kY``.

    With ``q = 1 - kY/(nsŵ)``, ``A = 1 - q^ŵ`` and ``H = L_D/(L_D + k L_H)``:
    ``dĜ/dk = A^n H [n q^(ŵ-1) Y / (ns A) - L_H / (L_D + k L_H)]``.
    """
    q = 1.0 - k * y / (n * s * w_hat)
    a = 1.0 - q**w_hat
    share = _header_share(k, l_d, l_h)
    return a**n * share * (n * q ** (w_hat - 1.0) * y / (n * s * a) - l_h / (l_d + k * l_h))


def k_max(s: float, floor: float = MIN_PACKET) -> float:
    """The largest slicing ratio that keeps packets of ``s`` bytes at least ``floor``."""
    return s / floor


def k_hat(n: float, s: float, w_hat: float, y: float, floor: float = MIN_PACKET) -> float:
    """Eq. (11): the optimal slicing ratio ``k̂ = nsŵ / Y``, within ``[1, s/floor]``.

    Below ``k̂`` the approximate goodput rises with ``k`` (the incast probability
    falls faster than the header share), above it only the header share changes.
    """
    return min(max(n * s * w_hat / y, 1.0), k_max(s, floor))
