"""Sigmoid attention: each weight the sigmoid of its own score, no normalisation across the row.

Ramapuram et al. 2024, "Theory, Analysis, and Best Practices for Sigmoid Self-Attention":
w_ij = σ(q_i·k_j · scale + b) with b = −log S, the bias that keeps a row's total near softmax's 1 at the start of
training. A row need not sum to 1, so a query with nothing to gather can take almost nothing; Gu et al. 2025, "When
attention sink emerges in language models", find that attention sinks (a large weight on the first token) do not
form under it.
"""

from __future__ import annotations

import math

import torch

from .. import masks
from .base import _scale
from .explain import Explained, Stage, _shape
from .full import _full_bytes, _full_flops
from .notebook_cells import Cells, NotebookSteps
from .registry import register


def sigmoid_weights(q, k, *, causal: bool, scale: float, **_) -> torch.Tensor:
    """(..., L, S) σ(q·k·scale − log S), 0 where a causal query may not look (j > i)."""
    L, S = q.shape[-2], k.shape[-2]
    w = torch.sigmoid((q @ k.transpose(-2, -1)) * scale - math.log(S))
    return w * masks.causal(L, S, device=q.device).to(w.dtype) if causal else w


def sigmoid_attention(q, k, v, *, causal: bool = False, scale: float | None = None):
    """Sigmoid attention (Ramapuram et al. 2024): σ(Q Kᵀ · scale − log S) V, the L x S matrix in memory; its
    rows are not normalised."""
    return sigmoid_weights(q, k, causal=causal, scale=_scale(q, scale)) @ v


def sigmoid_cells(causal: bool, **_) -> Cells:
    """The take-home notebook's steps: the scores with the bias, then each weight its own sigmoid."""
    scores = (
        "sigmoid_scores = Q @ K.transpose(-2, -1) * scale - math.log(S)  # (heads, L, S): the bias -log S\n"
        "recomputed.update(sigmoid_scores=sigmoid_scores)\n"
        "print(f'scores of {words[FOCUS]}:', sigmoid_scores[HEAD, FOCUS])\n"
    )
    only_earlier = "torch.arange(S)[None, :] <= torch.arange(L)[:, None]"
    weights = (
        "sigmoid_weights = torch.sigmoid(sigmoid_scores)  # each pair on its own: no softmax, no division\n"
        + (f"sigmoid_weights = sigmoid_weights * ({only_earlier})  # causal: no later key\n" if causal else "")
        + "variant_out = sigmoid_weights @ V\n"
        "amounts_to = sigmoid_weights  # the matrix the output is: out = amounts_to @ V\n"
        "recomputed.update(sigmoid_weights=sigmoid_weights)\n"
        "print(f'the weights of {words[FOCUS]} add up to {float(sigmoid_weights[HEAD, FOCUS].sum()):.3f}, not 1')\n"
    )
    return (("sigmoid_scores", scores), ("sigmoid_weights", weights))


def _explain_sigmoid(q, k, v, *, causal: bool, scale: float, **_) -> Explained:
    """The scores with the −log S bias, then each weight its own sigmoid: no row total, no division."""
    L, S = q.shape[1], k.shape[1]
    bias = -math.log(S)
    e = (q @ k.transpose(-2, -1)) * scale + bias  # (H, L, S)
    w = sigmoid_weights(q, k, causal=causal, scale=scale)
    out = sigmoid_attention(q[None], k[None], v[None], causal=causal, scale=scale)[0]
    totals = w.sum(-1)  # (H, L): what a softmax would have made 1
    stages = (
        Stage(
            "sigmoid_scores",
            r"e_{ij} = \frac{q_i k_j^\top}{\sqrt{d_k}} - \log S",
            f"e = Q @ K.T * {scale:.4g} - math.log({S})   # {_shape(e[0])}",
            {"sigmoid_scores": e},
            {"sigmoid_scores": "Q Kᵀ / √d_k − log S"},
            {"S": S, "bias": bias},
        ),
        Stage(
            "sigmoid_weights",
            r"o_i = \sum_j \sigma(e_{ij})\, v_j",
            f"alpha = torch.sigmoid(e){' * causal_mask' if causal else ''}   # {_shape(w[0])}: rows not 1\n"
            f"out = alpha @ V   # {_shape(out[0])}",
            {"sigmoid_weights": w},
            {"sigmoid_weights": "σ(e)"},
            {
                "lo": float(totals.min()),
                "hi": float(totals.max()),
                "L": L,
                "max_diff": float((w @ v - out).abs().max()),
            },
        ),
    )
    return Explained(stages, out, w)


register(
    "sigmoid",
    sigmoid_attention,
    family="full",
    formula=r"\sigma\!\left(\frac{q_i k_j^\top}{\sqrt{d_k}} - \log S\right)v_j",
    time="O(L·S·d)",
    memory="O(L·S)",
    paper="Ramapuram et al. 2024, Theory, Analysis, and Best Practices for Sigmoid Self-Attention",
    weights=sigmoid_weights,
    explain=_explain_sigmoid,
    flops=_full_flops,
    peak_bytes=_full_bytes,
    softmax=False,
    notebook=NotebookSteps(sigmoid_cells),
)
