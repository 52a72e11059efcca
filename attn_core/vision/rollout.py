"""Attention rollout (Abnar & Zuidema, 2020, "Quantifying Attention Flow in Transformers"): how much of each
token's input reaches each token's output through the layers' attention alone.

A layer's weights are averaged over its heads and mixed with the identity for the residual stream,
Â = r·I + (1 - r)·mean_h A_h (rows renormalised), and the layers are multiplied from the first up:
R = Â_n ⋯ Â_2 Â_1. Row i of R is a distribution over the input tokens; it is zero wherever no path of
attention reaches (so under Swin's windows its support is the receptive field, ``windows.receptive_field``).
"""

from __future__ import annotations

import torch


def rollout(weights: list[torch.Tensor], residual: float = 0.5) -> torch.Tensor:
    """(…, L, L) from each layer's weights (…, H, L, L) in order; ``residual`` r in [0, 1]."""
    if not weights:
        raise ValueError("rollout needs at least one layer's weights")
    if not 0.0 <= residual <= 1.0:
        raise ValueError(f"residual must be in [0, 1], not {residual}")
    L = weights[0].shape[-1]
    eye = torch.eye(L, dtype=weights[0].dtype, device=weights[0].device)
    out = None
    for w in weights:
        if w.shape[-2:] != (L, L):
            raise ValueError(f"every layer's weights must be (…, H, {L}, {L}), not {tuple(w.shape)}")
        a = residual * eye + (1.0 - residual) * w.mean(-3)
        a = a / a.sum(-1, keepdim=True)
        out = a if out is None else a @ out
    return out
