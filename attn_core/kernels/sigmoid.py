"""Sigmoid attention: each weight the sigmoid of its own score, no normalisation across the row.

Ramapuram et al. 2024, "Theory, Analysis, and Best Practices for Sigmoid Self-Attention":
w_ij = σ(q_i·k_j · scale + b) with b = −log S, the bias that keeps a row's total near softmax's 1 at the start of
training. A row need not sum to 1, so a query with nothing to gather can take almost nothing; Gu et al. 2025, "When
attention sink emerges in language models", find that attention sinks (a large weight on the first token) do not
form under it.
"""

from __future__ import annotations

import torch

from .full import _full_bytes, _full_flops
from .notebook_cells import runnable_weights
from .registry import register


def sigmoid_weights(q, k, *, causal: bool, scale: float, **_) -> torch.Tensor:
    """(..., L, S) σ(q·k·scale − log S), 0 where a causal query may not look (j > i)."""
    L, S = q.shape[-2], k.shape[-2]
    w = torch.sigmoid((q @ k.transpose(-2, -1)) * scale - torch.log(torch.tensor(float(S))))
    if causal:
        i = torch.arange(L, device=q.device).view(-1, 1)
        j = torch.arange(S, device=q.device).view(1, -1)
        w = w * (j <= i).to(w.dtype)
    return w


def sigmoid_attention(q, k, v, *, causal: bool = False, scale: float | None = None):
    """Sigmoid attention (Ramapuram et al. 2024): σ(Q Kᵀ · scale − log S) V, the L x S matrix in memory; its
    rows are not normalised."""
    s = q.shape[-1] ** -0.5 if scale is None else scale
    return sigmoid_weights(q, k, causal=causal, scale=s) @ v


register(
    "sigmoid",
    sigmoid_attention,
    family="full",
    formula=r"\sigma\!\left(\frac{q_i k_j^\top}{\sqrt{d_k}} - \log S\right)v_j",
    time="O(L·S·d)",
    memory="O(L·S)",
    paper="Ramapuram et al. 2024, Theory, Analysis, and Best Practices for Sigmoid Self-Attention",
    weights=sigmoid_weights,
    flops=_full_flops,
    peak_bytes=_full_bytes,
    softmax=False,
    notebook=runnable_weights(sigmoid_weights),
)
