"""The suite's comparison rule (tests/tolerance.py) scales with magnitude and still catches a real error."""

import numpy as np
import pytest
import torch
from tolerance import assert_close, close


def test_rounding_that_grows_with_the_values_passes_on_large_values():
    x = torch.randn(64, 64, generator=torch.Generator().manual_seed(0)) * 6
    assert close(x, x + 1.14e-5)  # the Performer state's difference on another CPU, values ~6
    assert not torch.allclose(x, x + 1.14e-5, atol=1e-5, rtol=0)  # what a fixed absolute bound said


@pytest.mark.parametrize("size", [1e-3, 1.0, 6.0, 1e4])
def test_a_value_off_by_a_thousandth_fails_at_every_magnitude(size):
    x = torch.randn(32, 32, generator=torch.Generator().manual_seed(1)) * size
    bad = x.clone()
    i = int(x.abs().argmax())
    bad.view(-1)[i] *= 1 + 1e-3
    assert not close(x, bad)
    with pytest.raises(AssertionError, match="differ by"):
        assert_close(bad, x, msg="perturbed")


def test_nans_and_infinities_must_sit_at_the_same_places():
    a = np.array([1.0, np.nan, np.inf])
    assert close(a, a.copy())
    assert not close(a, np.array([1.0, 0.0, np.inf])) and not close(a, np.array([1.0, np.nan, -np.inf]))


def test_shapes_must_agree():
    with pytest.raises(AssertionError, match="shapes"):
        close(torch.zeros(2, 3), torch.zeros(3, 2))
