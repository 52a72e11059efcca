"""The steps of attention, one pure function each, in the order a page shows them.

Legend (PyTorch's): H heads, L query length, S key length, d_model the embedding size,
d_q / d_k / d_v the query, key and value sizes of one head. Weights are stored as the tutorial
stores them, (out, in), so ``Q = X W_qᵀ``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch


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


def sinusoidal_positions(n: int, d_model: int) -> torch.Tensor:
    """Vaswani et al. 2017: PE[p, 2i] = sin(p / 10000^(2i/d)), PE[p, 2i+1] = cos(...). (n, d_model)."""
    pos = torch.arange(n, dtype=torch.float32).unsqueeze(1)  # (n, 1)
    i = torch.arange(0, d_model, 2, dtype=torch.float32)  # (ceil(d/2),)
    angle = pos / torch.pow(10000.0, i / d_model)  # (n, ceil(d/2))
    pe = torch.zeros(n, d_model)
    pe[:, 0::2] = torch.sin(angle)
    pe[:, 1::2] = torch.cos(angle[:, : d_model // 2])
    return pe


def learned_positions(n: int, d_model: int, *, seed: int) -> torch.Tensor:
    """A seeded random table standing in for learned position embeddings. (n, d_model)."""
    g = torch.Generator().manual_seed(seed + 1)
    return torch.randn(n, d_model, generator=g)


def positions(kind: str, n: int, d_model: int, *, seed: int) -> torch.Tensor:
    if kind == "sinusoidal":
        return sinusoidal_positions(n, d_model)
    if kind == "learned":
        return learned_positions(n, d_model, seed=seed)
    return torch.zeros(n, d_model)


def project(x: torch.Tensor, W: torch.Tensor, b: torch.Tensor | None = None) -> torch.Tensor:
    """'l m, h d m -> h l d': x (L, d_model), W (H, d, d_model), b (H, d) -> (H, L, d)."""
    out = torch.einsum("lm,hdm->hld", x, W)
    return out if b is None else out + b.unsqueeze(1)


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
    """Raw scores before any scaling. q (H, L, d_q), k (H, S, d_k) -> (H, L, S).

    dot and scaled_dot: q · k (the scaling is the next step); additive: vᵀ tanh(W_a q + U_a k).
    """
    if kind == "additive":
        assert additive is not None
        wq = torch.einsum("hld,had->hla", q, additive.W_a)  # (H, L, d_a)
        uk = torch.einsum("hsd,had->hsa", k, additive.U_a)  # (H, S, d_a)
        return torch.einsum("hlsa,ha->hls", torch.tanh(wq.unsqueeze(2) + uk.unsqueeze(1)), additive.v)
    return q @ k.transpose(-2, -1)


def score_scale(kind: str, d_k: int, temperature: float = 1.0) -> float:
    """The factor the raw scores are multiplied by: 1/√d_k for scaled_dot, then 1/temperature."""
    return (1.0 / math.sqrt(d_k) if kind == "scaled_dot" else 1.0) / temperature


@dataclass(frozen=True)
class Softmax:
    """The softmax in stages, over the last axis, masked positions excluded. Shapes (..., L[, S])."""

    row_max: torch.Tensor  # (..., L)   max over allowed keys; 0 for an empty row
    exp: torch.Tensor  # (..., L, S) exp(x - max) where allowed, else 0
    row_sum: torch.Tensor  # (..., L)
    weights: torch.Tensor  # (..., L, S) exp / sum; an empty row is all zeros
    empty: torch.Tensor  # (..., L) bool: the row had nothing to attend to


def staged_softmax(x: torch.Tensor, mask: torch.Tensor) -> Softmax:
    """Numerically safe masked softmax: never NaN, never inf, even for fully masked rows."""
    mask = mask.expand_as(x)
    empty = ~mask.any(dim=-1)
    masked = x.masked_fill(~mask, float("-inf"))
    row_max = masked.amax(dim=-1).masked_fill(empty, 0.0)
    exp = torch.where(mask, x - row_max.unsqueeze(-1), torch.full_like(x, float("-inf"))).exp()
    row_sum = exp.sum(dim=-1)
    weights = exp / row_sum.masked_fill(empty, 1.0).unsqueeze(-1)
    return Softmax(row_max, exp, row_sum, weights, empty)


@dataclass(frozen=True)
class Attended:
    """One pass through the shared pipeline (every field named as the pages show it)."""

    Q: torch.Tensor  # (H, L, d_q)
    K: torch.Tensor  # (H, S, d_k)
    V: torch.Tensor  # (H, S, d_v)
    scores: torch.Tensor  # (H, L, S) raw
    scale: float
    scaled: torch.Tensor  # (H, L, S) what enters the mask and the softmax
    softmax: Softmax  # over (H, L, S)


def attend(
    x: torch.Tensor, x_kv: torch.Tensor, w, mask: torch.Tensor, *, score: str = "scaled_dot", temperature: float = 1.0
) -> Attended:
    """The attention pipeline every path shares (the toy trace and a trained model's head):
    project with the weights ``w`` (W_q, W_k, W_v, their biases, the additive score's parameters),
    score, scale, and the masked staged softmax. x (L, d_model), x_kv (S, d_model), mask (L, S)."""
    Q = project(x, w.W_q, w.b_q)  # (H, L, d_q)
    K = project(x_kv, w.W_k, w.b_k)  # (H, S, d_k)
    V = project(x_kv, w.W_v, w.b_v)  # (H, S, d_v)
    raw = scores(Q, K, kind=score, additive=w.additive)  # (H, L, S)
    scale = score_scale(score, K.shape[-1], temperature)
    scaled = raw * scale
    return Attended(Q, K, V, raw, scale, scaled, staged_softmax(scaled, mask))


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
