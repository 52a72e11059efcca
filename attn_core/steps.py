"""The steps of attention, one pure function each, in the order a page shows them.

Legend (PyTorch's): H heads, L query length, S key length, d_model the embedding size,
d_q / d_k / d_v the query, key and value sizes of one head. Weights are stored as the tutorial
stores them, (out, in), so ``Q = X W_qᵀ``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from . import positions as positions_mod


def embed(
    ids: list[int] | tuple[int, ...], vocab_size: int, d_model: int, *, seed: int, pad_id: int | None = None
) -> torch.Tensor:
    """Rows of a seeded ``nn.Embedding(vocab_size, d_model)`` table: (L,) -> (L, d_model).

    ``torch.manual_seed(seed); nn.Embedding(...)`` draws N(0, 1) from the default generator;
    a fresh generator with the same seed gives the same table. ``pad_id`` rows are zero.
    """
    g = torch.Generator().manual_seed(seed)
    table = torch.randn(vocab_size, d_model, generator=g)  # (V, d_model)
    if pad_id is not None:
        table[pad_id] = 0.0
    return table[torch.tensor(list(ids), dtype=torch.long)]


def positions(kind: str, n: int, d_model: int, *, seed: int) -> torch.Tensor:
    """What position scheme ``kind`` adds to the embeddings: (n, d_model), zeros if it acts elsewhere."""
    return positions_mod.input_table(kind, n, d_model, seed=seed)


def project(x: torch.Tensor, W: torch.Tensor, b: torch.Tensor | None = None) -> torch.Tensor:
    """'... l m, h d m -> ... h l d': x (..., L, d_model), W (H, d, d_model), b (H, d) -> (..., H, L, d)."""
    out = torch.einsum("...lm,hdm->...hld", x, W)
    return out if b is None else out + b.unsqueeze(-2)


@dataclass(frozen=True)
class AdditiveParams:
    """Bahdanau's score vᵀ tanh(W_a q + U_a k): W_a (H, d_a, d_q), U_a (H, d_a, d_k), v (H, d_a)."""

    W_a: torch.Tensor
    U_a: torch.Tensor
    v: torch.Tensor


def draw_additive(heads: int, d_q: int, d_k: int, *, seed: int) -> AdditiveParams:
    d_a = d_k
    g = torch.Generator().manual_seed(seed + 2)

    def uniform(*shape: int, fan_in: int) -> torch.Tensor:
        return (torch.rand(*shape, generator=g) * 2 - 1) / math.sqrt(fan_in)

    return AdditiveParams(
        uniform(heads, d_a, d_q, fan_in=d_q), uniform(heads, d_a, d_k, fan_in=d_k), uniform(heads, d_a, fan_in=d_a)
    )


def scores(q: torch.Tensor, k: torch.Tensor, *, kind: str, additive: AdditiveParams | None = None) -> torch.Tensor:
    """Raw scores before any scaling. q (..., H, L, d_q), k (..., H, S, d_k) -> (..., H, L, S).

    dot and scaled_dot: q · k (the scaling is the next step); additive: vᵀ tanh(W_a q + U_a k).
    """
    if kind == "additive":
        assert additive is not None
        wq = torch.einsum("...hld,had->...hla", q, additive.W_a)  # (..., H, L, d_a)
        uk = torch.einsum("...hsd,had->...hsa", k, additive.U_a)  # (..., H, S, d_a)
        return torch.einsum("...hlsa,ha->...hls", torch.tanh(wq.unsqueeze(-2) + uk.unsqueeze(-3)), additive.v)
    return q @ k.transpose(-2, -1)


def score_scale(kind: str, d_k: int, temperature: float = 1.0) -> float:
    """The factor the raw scores are multiplied by: 1/√d_k for scaled_dot, then 1/temperature."""
    return (1.0 / math.sqrt(d_k) if kind == "scaled_dot" else 1.0) / temperature


@dataclass(frozen=True)
class Softmax:
    """The softmax in stages, over the last axis, masked positions excluded. Shapes (..., L[, S]).
    ``row_max``, ``exp`` and ``row_sum`` are None when only the weights were asked for (training)."""

    row_max: torch.Tensor | None  # (..., L)   max over allowed keys; 0 for an empty row
    exp: torch.Tensor | None  # (..., L, S) exp(x - max) where allowed, else 0
    row_sum: torch.Tensor | None  # (..., L)
    weights: torch.Tensor  # (..., L, S) exp / sum; an empty row is all zeros
    empty: torch.Tensor  # (..., L) bool: the row had nothing to attend to


def staged_softmax(x: torch.Tensor, mask: torch.Tensor, *, stages: bool = True) -> Softmax:
    """Numerically safe masked softmax: never NaN, never inf, even for fully masked rows.

    The weights are ``torch.softmax`` of the masked scores (its fused, differentiable kernel: what
    the Lab trains); the stages are the same softmax written out (exp(x - max) / sum, equal to the
    weights within float32 rounding), computed only with ``stages``."""
    mask = mask.expand_as(x)
    empty = ~mask.any(dim=-1)
    masked = x.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(masked, dim=-1).masked_fill(empty.unsqueeze(-1), 0.0)
    if not stages:
        return Softmax(None, None, None, weights, empty)
    row_max = masked.amax(dim=-1).masked_fill(empty, 0.0)
    exp = torch.where(mask, x - row_max.unsqueeze(-1), torch.full_like(x, float("-inf"))).exp()
    return Softmax(row_max, exp, exp.sum(dim=-1), weights, empty)


@dataclass(frozen=True)
class Attended:
    """One pass through the shared pipeline (every field named as the pages show it). Shapes with
    any leading batch dims (...) of the input."""

    Q: torch.Tensor  # (..., H, L, d_q) what enters the scores (rotated, for RoPE)
    K: torch.Tensor  # (..., H, S, d_k)
    V: torch.Tensor  # (..., H, S, d_v)
    scores: torch.Tensor | None  # (..., H, L, S) raw; None for a variant without a softmax
    scale: float
    scaled: torch.Tensor | None  # (..., H, L, S) what enters the mask and the softmax (with the position bias)
    softmax: Softmax | None  # over (..., H, L, S); None for a variant without a softmax
    mask: torch.Tensor | None = None  # (L, S) bool, True = may attend
    bias: torch.Tensor | None = None  # (H, L, S) the position scheme's bias on the scores (ALiBi)
    effective: torch.Tensor | None = None  # (..., H, L, S) a variant's matrix, in place of the softmax

    @property
    def weights(self) -> torch.Tensor:
        """The weights the values are summed with: the softmax's, or the variant's matrix."""
        return self.effective if self.effective is not None else self.softmax.weights


class AttendedView:
    """The names the pages read, on a record that holds ``attended`` (``steps.attend``'s result):
    Q, K, V (heads, rows, d), the raw and scaled scores (heads, L, S), the scale, the mask (L, S; True =
    may attend) and the softmax's stages. ``Trace`` and ``models.HeadTrace`` share them."""

    Q = property(lambda self: self.attended.Q)
    K = property(lambda self: self.attended.K)
    V = property(lambda self: self.attended.V)
    scores = property(lambda self: self.attended.scores, doc="raw: q · k (or the additive score)")
    scale = property(lambda self: self.attended.scale, doc="what the raw scores are multiplied by")
    scaled_scores = property(lambda self: self.attended.scaled, doc="what enters the mask and the softmax")
    mask = property(lambda self: self.attended.mask)
    softmax = property(lambda self: self.attended.softmax)


def attend(
    x: torch.Tensor,
    x_kv: torch.Tensor,
    w,
    mask: torch.Tensor | None,
    *,
    score: str = "scaled_dot",
    temperature: float = 1.0,
    positions=None,
    effective=None,
    stages: bool = True,
) -> Attended:
    """The attention pipeline every path shares (the toy trace, a trained model's head, the Lab's
    model): project with the weights ``w`` (W_q, W_k, W_v, their biases, the additive score's
    parameters), rotate Q and K (``positions.rotate``: RoPE), score, scale, add the scores' bias
    (``positions.bias``: ALiBi), and the masked staged softmax. x (..., L, d_model), x_kv
    (..., S, d_model), mask (L, S) or broadcastable; differentiable. ``effective`` (Q, K, scale) ->
    (..., H, L, S): a variant without a softmax (linear attention), whose matrix takes the softmax's
    place (no scores are computed). ``stages=False``: the softmax's weights only (training)."""
    Q = project(x, w.W_q, w.b_q)  # (..., H, L, d_q)
    K = project(x_kv, w.W_k, w.b_k)  # (..., H, S, d_k)
    V = project(x_kv, w.W_v, w.b_v)  # (..., H, S, d_v)
    if positions is not None and positions.rotate is not None:
        Q, K = positions.rotate(Q), positions.rotate(K)
    scale = score_scale(score, K.shape[-1], temperature)
    bias = None
    if positions is not None and positions.bias is not None:
        bias = positions.bias(Q.shape[-3], Q.shape[-2], K.shape[-2])  # (H, L, S)
    if effective is not None:
        if bias is not None:
            raise ValueError(f"{positions.name} biases the scores; a variant without a softmax has none")
        return Attended(Q, K, V, None, scale, None, None, mask, None, effective(Q, K, scale))
    raw = scores(Q, K, kind=score, additive=w.additive)  # (..., H, L, S)
    scaled = raw * scale
    if bias is not None:
        scaled = scaled + bias
    return Attended(Q, K, V, raw, scale, scaled, staged_softmax(scaled, mask, stages=stages), mask, bias)


def dropout(weights: torch.Tensor, p: float, *, seed: int) -> torch.Tensor:
    """Train-mode dropout on the weights, seeded: kept entries are scaled by 1/(1-p)."""
    if p <= 0:
        return weights
    g = torch.Generator().manual_seed(seed + 3)
    keep = torch.rand(weights.shape, generator=g) >= p
    return weights * keep / (1.0 - p)


def layer_norm(x: torch.Tensor, eps: float = 1e-5) -> torch.Tensor:
    """LayerNorm over the last axis without affine parameters (gain 1, bias 0)."""
    return torch.nn.functional.layer_norm(x, x.shape[-1:], eps=eps)
