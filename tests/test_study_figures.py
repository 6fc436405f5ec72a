"""The studies' shared figure helpers (``dcnsim.studies.figures``): the seed's numbers
drawn beside ours, and means over seeds with their 95 % intervals."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from dcnsim.studies.figures import mean_over_seeds, pyplot, seed_values


def test_mean_over_seeds_draws_student_t_intervals_and_none_for_one_seed():
    runs = pd.DataFrame(
        {"load": [0.5, 0.5, 0.5, 0.8], "seed": [1, 2, 3, 1], "fct_s": [1.0, 2.0, 3.0, 4.0]}
    )
    plt = pyplot()
    fig, ax = plt.subplots()
    bars = mean_over_seeds(ax, runs, "load", "fct_s", 1e3, marker="o", label="x")
    x, y = bars.lines[0].get_data()
    assert list(x) == [0.5, 0.8] and list(y) == [2000.0, 4000.0]
    # 1, 2, 3: mean 2, s = 1, t(0.975, 2) = 4.303 -> half-width 4.303 / sqrt(3) s
    half = stats.t.ppf(0.975, 2) / np.sqrt(3) * 1e3
    segments = bars.lines[2][0].get_segments()
    assert np.allclose(segments[0][:, 1], [2000.0 - half, 2000.0 + half])
    assert np.allclose(segments[1][:, 1], [4000.0, 4000.0])  # one seed: no interval
    plt.close(fig)


def test_seed_values_are_labelled_seed_and_mark_lower_bounds():
    plt = pyplot()
    fig, ax = plt.subplots()
    seed_values(ax, [64, 1500], [500, 25], lower_bound=[True, False])
    _handles, labels = ax.get_legend_handles_labels()
    assert labels == ["seed"]
    assert len(ax.collections) == 2  # the diamonds, and one caret for the lower bound
    assert ax.collections[1].get_offsets().tolist() == [[64.0, 500.0]]
    plt.close(fig)
