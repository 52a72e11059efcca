"""The suite's one rule for comparing floating-point results (float32 above all).

A float32 result differs from the same computation done another way (another CPU's vector width,
another BLAS path, another thread count splitting a sum differently) by rounding errors that grow
with the size of the numbers involved: about 1e-7 of them per operation, more over long sums. So a
tolerance scales with the magnitude of what is compared: ``|a - b| <= atol + rtol * scale`` for
every element, where ``scale`` is the largest magnitude in either tensor (rounding in a sum comes
from its terms, so a small entry of a large tensor may carry the large ones' error). ``atol`` only
covers results that are zero or nearly so.

``RTOL`` = 1e-5 is ~80 float32 units in the last place: loose enough for any summation order,
tight enough that a value off by 1e-3 of the tensor's size fails (tests/unit/test_tolerance.py).
Comparisons with a float64 oracle may pass a tighter ``rtol``.
"""

from __future__ import annotations

import numpy as np
import torch

RTOL = 1e-5
ATOL = 1e-6


def _arrays(a, b) -> tuple[np.ndarray, np.ndarray]:
    def arr(x):
        if isinstance(x, torch.Tensor):
            return x.detach().cpu().double().numpy()
        return np.asarray(x, dtype=np.float64)

    a, b = arr(a), arr(b)
    if a.shape != b.shape:
        raise AssertionError(f"shapes differ: {a.shape} and {b.shape}")
    return a, b


def error(a, b, *, rtol: float = RTOL, atol: float = ATOL) -> tuple[float, float]:
    """(the largest difference, the largest one allowed). NaNs must sit at the same places."""
    a, b = _arrays(a, b)
    nan_a, nan_b = np.isnan(a), np.isnan(b)
    if not np.array_equal(nan_a, nan_b):
        return float("inf"), 0.0
    a, b = np.where(nan_a, 0.0, a), np.where(nan_b, 0.0, b)
    if not np.array_equal(np.isinf(a), np.isinf(b)) or not np.array_equal(a[np.isinf(a)], b[np.isinf(b)]):
        return float("inf"), 0.0
    a, b = np.where(np.isinf(a), 0.0, a), np.where(np.isinf(b), 0.0, b)
    if a.size == 0:
        return 0.0, atol
    scale = max(float(np.abs(a).max()), float(np.abs(b).max()))
    return float(np.abs(a - b).max()), atol + rtol * scale


def close(a, b, *, rtol: float = RTOL, atol: float = ATOL) -> bool:
    """Whether ``a`` and ``b`` agree within the suite's rule (see the module)."""
    got, allowed = error(a, b, rtol=rtol, atol=atol)
    return got <= allowed


def assert_close(a, b, *, rtol: float = RTOL, atol: float = ATOL, msg: object = "") -> None:
    got, allowed = error(a, b, rtol=rtol, atol=atol)
    assert got <= allowed, f"{msg}: differ by {got:.3g}, allowed {allowed:.3g} (rtol {rtol:g}, atol {atol:g})"
