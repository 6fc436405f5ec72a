"""The host stack's calibration (``readings.qjump.HOST_STACK``): a model of the hosts'
stacks alone, in which the lognormal's two parameters were solved for the seed's two
numbers alone (memcached's p99 779 µs, Naiad's about 500 µs) before any run of
dcnsim with the stack.

The model leaves the network out (a few µs at zero load) and counts traversals of a
stack, each one draw of the lognormal, the same on sending and receiving:

- a memcached request is four: the client's send, the server's receive, the
  server's send, the client's receive;
- a four-way Naiad barrier ends when its 12 messages (each host to the 3 others) have
  arrived; each host's stack is a FIFO, so a host's k-th message leaves its send
  stack no earlier than the one before it (the running maximum of its draws), then
  takes one receive draw.

``solve_median`` finds the median that puts the model's memcached p99 on the seed's
779 µs for a given sigma; the sigma is then the one whose Naiad p99 is the seed's
~500 µs (0.22: 780 and 501 µs at a median of 148 µs).
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import brentq

__all__ = ["model_p99s", "solve_median"]

#: Draws of the model (enough for its p99s to settle within about 1 µs).
DRAWS = 200_000
#: A four-way barrier: each of 4 hosts sends one message to each of the 3 others.
HOSTS, PEERS = 4, 3


def model_p99s(median_s: float, sigma: float, seed: int = 1) -> tuple[float, float]:
    """memcached's request latency and Naiad's barrier time at the 99th percentile, in
    seconds, with a stack of ``median_s`` and ``sigma`` per traversal."""
    rng = np.random.default_rng(seed)

    def draw(*shape: int) -> np.ndarray:
        return median_s * np.exp(sigma * rng.standard_normal(shape))

    request = draw(DRAWS, 4).sum(axis=1)
    sent = np.maximum.accumulate(draw(DRAWS, HOSTS, PEERS), axis=2)
    barrier = (sent + draw(DRAWS, HOSTS, PEERS)).reshape(DRAWS, -1).max(axis=1)
    return float(np.percentile(request, 99)), float(np.percentile(barrier, 99))


def solve_median(sigma: float, memcached_p99_s: float = 779e-6) -> float:
    """The median per traversal whose model memcached p99 is ``memcached_p99_s``."""
    return float(
        brentq(lambda m: model_p99s(m, sigma)[0] - memcached_p99_s, 10e-6, 1e-3, xtol=1e-8)
    )
