"""The Packet Slicing seed's model (dcnsim.models.packet_slicing) against the seed's
own numbers: the worked example of §II.C (Fig. 4) and the limits of §III.C."""

from __future__ import annotations

import numpy as np
import pytest

from dcnsim.models import packet_slicing as m

# §II.C, Fig. 4: 40 flows, a buffer of 60 packets, windows of 4 packets.
N, BUFFER, W = 40, 60, 4


def digits(x: float) -> str:
    """``x`` to the seed's two decimals, which cut (its P = 0.99 is 0.9987; every other
    number of the example reads the same cut or rounded)."""
    return f"{int(x * 100) / 100:.2f}"


def test_the_worked_example_reproduces_exactly() -> None:
    # "p ... is (5/8)^4 = 0.15, and the Incast probability P is 0.99"
    p = m.timeout_probability(N, 1, W, BUFFER)
    assert p == pytest.approx((5 / 8) ** 4)
    assert digits(p) == "0.15"
    big = m.incast_probability(N, 1, W, BUFFER)
    assert big == pytest.approx(1 - (1 - (5 / 8) ** 4) ** 40)
    assert digits(big) == "0.99"
    # "if all flows halve their congestion windows, p and P become (1/4)^2 = 0.06 and 0.92"
    halved_w = m.incast_probability_cut_window(N, 1, W, 2, BUFFER)
    assert halved_w == m.incast_probability(N, 1, 2, BUFFER)
    assert m.timeout_probability(N, 1, 2, BUFFER) == pytest.approx(0.25**2)
    assert digits(m.timeout_probability(N, 1, 2, BUFFER)) == "0.06"
    assert digits(halved_w) == "0.92"
    # "if packet size is cut into half, the buffer accommodates 120 packets and the
    # congestion window size is still 4 ... p is (1/4)^4 = 0.004, and P becomes as small
    # as 0.14"
    halved_s = m.incast_probability_cut_packet(N, 1, W, 2, BUFFER)
    assert halved_s == m.incast_probability(N, 0.5, W, BUFFER)
    assert m.timeout_probability(N, 0.5, W, BUFFER) == pytest.approx(0.25**4)
    assert f"{m.timeout_probability(N, 0.5, W, BUFFER):.3f}" == "0.004"
    assert digits(halved_s) == "0.14"


def test_a_window_that_fits_loses_nothing() -> None:
    assert m.timeout_probability(10, 1, 4, 60) == 0.0
    assert m.incast_probability(10, 1, 4, 60) == 0.0
    # Eq. (3): windows are never cut below 2 packets.
    assert m.incast_probability_cut_window(N, 1, W, 8, BUFFER) == m.incast_probability(
        N, 1, 2, BUFFER
    )


def test_y_and_the_sliced_probability() -> None:
    # Eq. (5): 64 KB of buffer and 1 Gbps x 100 us of pipe.
    assert m.capacity_y(64_000, 1e9, 100e-6) == pytest.approx(76_500)
    # Eq. (6) is eq. (2) for windows of kY/(ns) + 1 packets sharing kY bytes.
    n, s, k, y = 60, 1500, 2.0, 76_500
    w = k * y / (n * s) + 1
    assert m.incast_probability_sliced(n, s, k, y) == pytest.approx(
        m.incast_probability(n, s, w, k * y)
    )


def test_throughput_and_goodput() -> None:
    y = m.capacity_y(64_000, 1e9, 100e-6)
    # Eq. (7)-(8): everything fits -> T = 1 and G is the header share alone.
    assert m.throughput(10, 1500, 1, y, 2) == 1.0
    assert m.goodput(10, 1500, 4, y, 2) == pytest.approx(1460 / (1460 + 4 * 40))
    # Overflowing: T = 1 - P of eq. (6).
    assert m.throughput(100, 1500, 1, y, 2) == pytest.approx(
        1 - m.incast_probability_sliced(100, 1500, 1, y)
    )


@pytest.mark.parametrize("n", [40, 80, 120, 300])
def test_k_hat_maximizes_the_approximate_goodput(n: int) -> None:
    """§III.C: Ĝ rises with k up to k̂ = nsŵ/Y (eq. 11) and falls after it."""
    y = m.capacity_y(64_000, 1e9, 100e-6)
    ks = np.linspace(1, m.k_max(1500), 4401)
    best = ks[int(np.argmax([m.approx_goodput(n, 1500, k, y, 2) for k in ks]))]
    assert best == pytest.approx(m.k_hat(n, 1500, 2, y), abs=0.01)


def test_eq10_is_the_slope_of_eq9() -> None:
    y = m.capacity_y(64_000, 1e9, 100e-6)
    for n, k in [(100, 3.0), (300, 5.0), (60, 1.5)]:
        h = 1e-6
        numeric = (
            m.approx_goodput(n, 1500, k + h, y, 2) - m.approx_goodput(n, 1500, k - h, y, 2)
        ) / (2 * h)
        assert m.approx_goodput_slope(n, 1500, k, y, 2) == pytest.approx(numeric, rel=1e-5)


def test_k_hat_keeps_packets_at_least_64_bytes() -> None:
    y = m.capacity_y(64_000, 1e9, 100e-6)
    # §III.C: "a viable slicing ratio k ranges from 1 to 23" for 1500 B packets.
    assert int(m.k_max(1500)) == 23
    assert m.k_hat(10_000, 1500, 2, y) == pytest.approx(1500 / 64)
    assert 1500 / m.k_hat(10_000, 1500, 2, y) == pytest.approx(64)
    assert m.k_hat(1, 1500, 2, y) == 1.0, "never above the default size"
    assert m.k_hat(100, 1500, 2, y) == pytest.approx(100 * 1500 * 2 / 76_500)
