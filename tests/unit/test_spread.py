"""attn_core.why.spread: entropies against numpy, dispersion against its closed form, the adaptive temperature's
published rule, and the window's error with global tokens against a masked softmax written here."""

import itertools
import math

import numpy as np
import pytest
import torch

from attn_core import Settings
from attn_core.compare import compared, head0
from attn_core.why import spread as sp


def _numpy_spread(w: np.ndarray) -> tuple[float, float]:
    """Mean row entropy and mean exp(row entropy), written out in float64 (0 log 0 = 0)."""
    h = np.array([-sum(x * math.log(x) for x in row if x > 0) for row in w.astype(np.float64)])
    return float(h.mean()), float(np.exp(h).mean())


def test_entropies_match_an_independent_computation():
    g = torch.Generator().manual_seed(0)
    w = torch.softmax(torch.randn(7, 9, generator=g) * 2.0, dim=-1)
    got = sp.spread(w)
    h, eff = _numpy_spread(w.numpy())
    assert got["entropy"] == pytest.approx(h, rel=1e-6, abs=1e-7)
    assert got["effective_keys"] == pytest.approx(eff, rel=1e-6, abs=1e-7)
    assert got["max_weight"] == pytest.approx(float(w.max(-1).values.double().mean()), rel=1e-6)


def test_causal_rows_count_only_the_keys_they_see():
    L = 6
    allowed = torch.ones(L, L, dtype=torch.bool).tril()
    w = allowed.double() / allowed.sum(-1, keepdim=True)  # each row uniform over the keys it sees
    got = sp.spread(w, allowed)
    logs = [math.log(i + 1) for i in range(L)]
    assert got["entropy"] == pytest.approx(sum(logs) / L, rel=1e-12)
    assert got["effective_keys"] == pytest.approx(sum(range(1, L + 1)) / L, rel=1e-12)
    assert got["max_entropy"] == pytest.approx(sum(logs) / L, rel=1e-12)
    assert got["uniform_rows"] == L - 1  # the first row sees one key: not counted as a uniform row


@pytest.mark.parametrize("n", [1, 2, 5, 64, 4096])
def test_a_uniform_row_has_entropy_log_n_and_n_effective_keys(n):
    got = sp.spread(torch.full((3, n), 1.0 / n, dtype=torch.float64))
    assert got["entropy"] == pytest.approx(math.log(n), rel=1e-12, abs=1e-12)
    assert got["effective_keys"] == pytest.approx(n, rel=1e-12)
    assert got["uniform_rows"] == (3 if n > 1 else 0)


def test_a_one_hot_row_has_entropy_0_and_one_effective_key():
    w = torch.eye(5)
    got = sp.spread(w)
    assert got["entropy"] == 0.0
    assert got["effective_keys"] == 1.0
    assert got["max_weight"] == 1.0


@pytest.mark.parametrize(
    "bad",
    [torch.tensor([[0.5, 0.6]]), torch.tensor([[1.5, -0.5]]), torch.tensor([[float("nan"), 1.0]]), torch.ones(2)],
)
def test_weights_that_are_not_a_distribution_are_refused(bad):
    with pytest.raises(ValueError):
        sp.spread(bad)


@pytest.mark.parametrize("gap", [0.0, 0.5, 2.0, 5.0, 10.0])
def test_dispersion_is_the_closed_form_and_falls_strictly_with_n(gap):
    rows = sp.dispersion(gap)
    assert [r["n"] for r in rows] == list(sp.DISPERSION_NS)
    for r in rows:
        oracle = math.exp(gap) / (math.exp(gap) + r["n"] - 1)
        assert r["max_weight"] == pytest.approx(oracle, rel=1e-6, abs=0)
        assert r["beta"] == 1.0
    weights = [r["max_weight"] for r in rows]
    assert all(a > b for a, b in itertools.pairwise(weights))


def test_the_adaptive_beta_is_the_published_polynomial():
    h = torch.tensor([0.3, 0.5, 0.6, 1.0, 2.0, 3.5, 5.0, 5.9, 6.0, 8.3], dtype=torch.float64)
    poly = np.polyval([-0.037, 0.481, -2.3, 4.917, -1.791], h.numpy())
    oracle = np.where(h.numpy() > 0.5, np.maximum(poly, 1.0), 1.0)
    assert np.allclose(sp.adaptive_beta(h).numpy(), oracle, rtol=1e-12, atol=0)
    assert sp.adaptive_beta(torch.tensor([5.9], dtype=torch.float64)) > 1.0
    assert sp.adaptive_beta(torch.tensor([6.0], dtype=torch.float64)) == 1.0  # the polynomial is below 1 there


def test_the_adaptive_softmax_is_softmax_of_beta_times_the_scores():
    s = torch.tensor([[3.0, 1.0, 0.5, 0.0, -1.0], [0.1, 0.0, 0.0, 0.0, 0.0]], dtype=torch.float64)
    w, beta = sp.adaptive_softmax(s)
    p = torch.softmax(s, dim=-1)
    h = -(p * p.log()).sum(-1)
    assert torch.allclose(beta, sp.adaptive_beta(h), rtol=1e-12, atol=0)
    assert torch.allclose(w, torch.softmax(s * beta[:, None], dim=-1), rtol=1e-12, atol=1e-15)
    assert beta[1] > 1.0  # a near-uniform row of 5 keys (H = log 5) is sharpened


def test_the_adaptive_temperature_sharpens_inside_its_fit_and_not_at_4096_keys():
    """Their claim holds at n = 16 and 256 (softmax's entropy 2.4 and 5.5 nats at Δ = 2). At n = 4096 the entropy is
    8.3 nats, where the published polynomial is below 1, so β = 1 and the largest weight is softmax's."""
    plain = {r["n"]: r for r in sp.dispersion(2.0, sp.QUOTED_NS)}
    adapt = {r["n"]: r for r in sp.dispersion(2.0, sp.QUOTED_NS, adaptive=True)}
    for n in (16, 256):
        assert adapt[n]["max_weight"] > plain[n]["max_weight"] * 1.5, n
        assert adapt[n]["beta"] > 1.0
    assert adapt[4096]["beta"] == 1.0
    assert adapt[4096]["max_weight"] == pytest.approx(plain[4096]["max_weight"], rel=1e-12)
    assert plain[4096]["entropy"] > 5.94


def _window_error(q, k, v, scale: float, window: int, causal: bool) -> float:
    """The sliding window's relative error against full attention, as masked softmaxes in float64."""
    q, k, v = (t[0, 0].double() for t in (q, k, v))
    L = q.shape[0]
    i = torch.arange(L)
    full = i[None, :] <= i[:, None] if causal else torch.ones(L, L, dtype=torch.bool)
    band = full & ((i[None, :] - i[:, None]).abs() <= window)
    s = q @ k.T * scale
    exact = torch.softmax(s.masked_fill(~full, float("-inf")), -1) @ v
    out = torch.softmax(s.masked_fill(~band, float("-inf")), -1) @ v
    return float((out - exact).norm() / exact.norm())


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("window", [1, 2])
def test_sink_table_g0_is_the_window_alone(window, causal):
    s = compared(Settings(causal=causal))
    q, k, v, base = head0(s)
    rows = sp.sink_errors(q, k, v, causal=causal, scale=base.scale, window=window)
    assert [r["g"] for r in rows] == list(sp.SINK_GS)
    assert all(math.isfinite(r["error"]) for r in rows)
    assert rows[0]["error"] == pytest.approx(_window_error(q, k, v, base.scale, window, causal), rel=1e-4, abs=1e-6)


def test_sink_tokens_bring_the_window_closer_on_the_default_sentence():
    """Observed on this fixed input (the default sentence, six tokens, window 1, not causal): each added global token
    lowers the error, and four of them (with the window of 1) see every pair, so the error is float32's rounding."""
    q, k, v, base = head0(compared(Settings()))
    errors = [r["error"] for r in sp.sink_errors(q, k, v, causal=False, scale=base.scale, window=1)]
    assert all(a > b for a, b in itertools.pairwise(errors)), errors
    assert errors[0] > 0.1 and errors[-1] < 1e-5
