"""The bootstrap interval of Spearman's ρ computed for every resample at once equals scipy's
``spearmanr`` called once per resample (the same seeded draws), ties and constant resamples included."""

import numpy as np
import pytest

from attn_core.explain import correlation as C


@pytest.mark.parametrize("n", [3, 4, 5, 8, 20, 32])
def test_the_interval_equals_one_spearmanr_per_resample(n):
    rng = np.random.default_rng(n)
    for trial in range(12):
        x, y = rng.normal(size=n), rng.normal(size=n)
        if trial % 3 == 0:
            x = np.round(x)  # ties: average ranks
        if trial % 4 == 0:
            y[:2] = y[2]  # many constant resamples in short sentences
        fast, slow = C.bootstrap(x, y), C.bootstrap_loop(x, y)
        assert (fast is None) == (slow is None), (trial, fast, slow)
        if slow is not None:
            np.testing.assert_allclose(fast, slow, rtol=1e-12, atol=1e-12)


def test_a_constant_side_has_no_interval():
    assert C.bootstrap(np.ones(8), np.arange(8.0)) is None
    assert C.bootstrap_loop(np.ones(8), np.arange(8.0)) is None
