"""The ratio of two runs' speeds over alternating rounds (``dcnsim.bench``), as the
speed scripts (``scripts/*_speed.py``, ``scripts/bench_botcp.py``) and ``dcnsim bench``
use it."""

from __future__ import annotations

import pytest

from dcnsim import bench
from dcnsim.bench import Measurement, Versus, alternate


def hops_per_s(rate: float) -> Measurement:
    """A run of 1,000 packet-hops at ``rate`` packet-hops per second of loop."""
    return Measurement(
        events=1_000,
        packet_hops=1_000,
        sim_time_s=0.001,
        loop_s=1_000 / rate,
        whole_s=2_000 / rate,
        peak_rss=0,
    )


def test_versus_gives_the_fastest_rounds_ratio_each_rounds_and_the_medians():
    a = [hops_per_s(r) for r in (6.0, 9.0, 8.0, 3.0)]
    b = [hops_per_s(r) for r in (10.0, 12.0, 8.0, 6.0)]
    v = Versus.of(a, b)
    assert v.best == pytest.approx(9.0 / 12.0)
    assert v.rounds == pytest.approx([0.6, 0.75, 1.0, 0.5])
    assert v.medians == pytest.approx(7.0 / 9.0)
    line = v.line("a", "b")
    assert line.startswith("a / b, packet-hops/s (loop): best 0.750, rounds' ratios median ")
    # The rounds' quartiles (inclusive): 0.5, 0.6, 0.75, 1.0 -> 0.575, 0.675, 0.8125.
    assert "median 0.675 (quartiles 0.575-0.812)" in line
    assert line.endswith("medians 0.778, over 4 rounds")


def test_versus_of_one_round_is_its_ratio():
    v = Versus.of([hops_per_s(4.0)], [hops_per_s(5.0)])
    assert v.line("x", "y") == "x / y, packet-hops/s (loop): best 0.800"


@pytest.mark.parametrize(
    ("a", "b"),
    [([], []), ([hops_per_s(1.0)], []), ([hops_per_s(1.0)], [hops_per_s(1.0)] * 2)],
)
def test_versus_needs_two_series_of_the_same_rounds(a, b):
    with pytest.raises(ValueError, match="same rounds"):
        Versus.of(a, b)


def test_alternate_reverses_the_order_every_other_round(monkeypatch):
    ran: list[str] = []

    def fake_measure(scenario, progress=False):
        ran.append(scenario)
        return hops_per_s(float(len(ran)))

    monkeypatch.setattr(bench, "measure", fake_measure)
    told: list[tuple[int, str]] = []
    runs = alternate({"p": "P", "q": "Q", "r": "R"}, 3, lambda i, name, m: told.append((i, name)))
    assert ran == ["P", "Q", "R", "R", "Q", "P", "P", "Q", "R"]
    assert told == [(i, name) for i, order in enumerate(("pqr", "rqp", "pqr")) for name in order]
    # Each name keeps its own runs, in round order.
    assert [m.hops_per_s for m in runs["p"]] == pytest.approx([1.0, 6.0, 7.0])
    assert [m.hops_per_s for m in runs["r"]] == pytest.approx([3.0, 4.0, 9.0])


def test_print_run_names_the_round_from_one(capsys):
    m = hops_per_s(2.0)
    bench.print_run(1, "x", m)
    assert capsys.readouterr().out == f"round 2, x: {m.line()}\n"
