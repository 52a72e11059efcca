"""Attention rollout (attn_core.vision.rollout) against an independent computation in plain Python loops, and its
invariants: rows are distributions, r = 1 leaves every token with itself, one layer with r = 0 is the heads' mean,
and under Swin's windows nothing flows outside the receptive field the masks give."""

from __future__ import annotations

import pytest
import torch
from tolerance import assert_close

from attn_core import vision as V
from attn_core.vision.model import VisionConfig, VisionModel


def softmax_weights(H: int, L: int, seed: int, mask: torch.Tensor | None = None) -> torch.Tensor:
    s = torch.randn(H, L, L, generator=torch.Generator().manual_seed(seed)) * 2
    if mask is not None:
        s = s.masked_fill(~mask, float("-inf"))
    return torch.softmax(s, -1)


def by_loops(weights: list[torch.Tensor], r: float) -> list[list[float]]:
    """The rollout written out: per layer, the heads' mean mixed with I, rows renormalised, then multiplied."""
    L = weights[0].shape[-1]
    R = [[1.0 if i == j else 0.0 for j in range(L)] for i in range(L)]
    for w in weights:
        H = w.shape[0]
        A = [
            [r * (i == j) + (1 - r) * sum(float(w[h, i, j]) for h in range(H)) / H for j in range(L)] for i in range(L)
        ]
        A = [[x / sum(row) for x in row] for row in A]
        R = [[sum(A[i][k] * R[k][j] for k in range(L)) for j in range(L)] for i in range(L)]
    return R


@pytest.mark.parametrize(("layers", "r"), [(1, 0.5), (3, 0.5), (2, 0.0), (4, 0.9)])
def test_rollout_is_the_product_of_the_mixed_layers(layers, r):
    weights = [softmax_weights(3, 7, seed=10 * layers + i) for i in range(layers)]
    got = V.rollout(weights, residual=r)
    assert_close(got, torch.tensor(by_loops(weights, r)))
    assert_close(got.sum(-1), torch.ones(7))
    assert bool((got >= 0).all())


def test_the_loop_oracle_catches_a_rollout_multiplied_in_the_wrong_order():
    weights = [softmax_weights(2, 5, seed=s) for s in (1, 2)]
    eye = torch.eye(5)
    mixed = [(0.5 * eye + 0.5 * w.mean(0)) / (0.5 * eye + 0.5 * w.mean(0)).sum(-1, keepdim=True) for w in weights]
    wrong = mixed[0] @ mixed[1]  # first layer last
    assert not torch.allclose(wrong, torch.tensor(by_loops(weights, 0.5)), rtol=1e-4, atol=1e-5)


def test_the_two_ends_of_the_residual():
    weights = [softmax_weights(4, 6, seed=s) for s in (3, 4)]
    assert_close(V.rollout(weights, residual=1.0), torch.eye(6))
    assert_close(V.rollout(weights[:1], residual=0.0), weights[0].mean(0))


def test_under_windows_nothing_flows_outside_the_receptive_field():
    c = VisionConfig(model="swin", patch=1, window=4, shift=True, layers=3)
    masks = [c.mask(layer) for layer in range(c.layers)]
    L = c.grid[0] * c.grid[1]
    weights = [softmax_weights(2, L, seed=20 + i, mask=m) for i, m in enumerate(masks)]
    for n in range(1, 4):
        reach = V.receptive_field(masks[:n])
        support = V.rollout(weights[:n]) > 0
        assert torch.equal(support, reach), n  # softmax weights are positive wherever the mask allows


def test_the_trained_models_weights_roll_out_per_image():
    model = VisionModel(VisionConfig(model="swin", patch=2, window=2, layers=2))
    with torch.no_grad():
        _, weights = model(torch.rand(3, 8, 8, generator=torch.Generator().manual_seed(0)))
    R = V.rollout(weights)
    assert R.shape == (3, 16, 16)
    assert_close(R.sum(-1), torch.ones(3, 16))
    for b in range(3):
        assert_close(R[b], V.rollout([w[b] for w in weights]))


@pytest.mark.parametrize(("weights", "r"), [([], 0.5), ([torch.ones(1, 3, 3) / 3], 1.5), ([torch.ones(1, 3, 4)], 0.5)])
def test_what_cannot_be_rolled_out_is_refused(weights, r):
    with pytest.raises(ValueError):
        V.rollout(weights, residual=r)
