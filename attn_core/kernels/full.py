"""Full softmax attention: the materialised matrix and PyTorch's fused SDPA, the reference every
variant is compared with."""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F

from .. import masks
from ..steps import staged_softmax
from .base import _scale
from .registry import register


def full_attention(q, k, v, *, causal: bool = False, scale: float | None = None, mask: torch.Tensor | None = None):
    """Materialised softmax attention: softmax(Q Kᵀ · scale + mask) V, the L x S matrix in memory.

    Vaswani et al. 2017, "Attention Is All You Need". A row with nothing to attend to gives 0.
    """
    s = (q @ k.transpose(-2, -1)) * _scale(q, scale)  # (B, H, L, S)
    allowed = torch.ones(s.shape[-2:], dtype=torch.bool, device=q.device) if mask is None else mask
    if causal:
        allowed = allowed & masks.causal(*s.shape[-2:], device=q.device)
    if mask is None and not causal:
        return torch.softmax(s, dim=-1) @ v
    p = torch.softmax(s.masked_fill_(~allowed, float("-inf")), dim=-1).nan_to_num_(0.0)  # empty rows: 0, not NaN
    return p @ v


def sdpa_attention(q, k, v, *, causal: bool = False, scale: float | None = None, mask: torch.Tensor | None = None):
    """Fused softmax attention: ``torch.nn.functional.scaled_dot_product_attention`` (Flash /
    memory-efficient kernels where the device has them). Same math as the materialised path."""
    if mask is not None:
        if causal:
            mask = mask & masks.causal(*mask.shape[-2:], device=q.device)
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=masks.to_bias(mask, q.dtype), scale=scale)
        return out.nan_to_num(0.0)  # a fully masked row: 0, not NaN
    return F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale)


def _softmax_weights(pattern: Callable | None):
    """Softmax of the scaled scores under the variant's pattern (or causal / nothing), through the
    same staged softmax the trace shows (``steps.staged_softmax``: a row with no key gives 0)."""

    def weights(q, k, *, causal: bool, scale: float, **opts) -> torch.Tensor:
        L, S = q.shape[-2], k.shape[-2]
        if pattern is not None:
            mask = pattern(L, S, causal, **opts)
        else:
            mask = masks.causal(L, S) if causal else masks.full(L, S)
        s = (q @ k.transpose(-2, -1)) * scale
        return staged_softmax(s, mask.to(q.device)).weights

    return weights


# Cost models. ``sh`` has batch, heads, d_head, causal and the kernels' options (bench.Shape).
def _full_flops(L: int, sh) -> float:  # Q Kᵀ and weights @ V over every pair (j <= i when causal)
    return sh.batch * sh.heads * 4 * (L * (L + 1) // 2 if sh.causal else L * L) * sh.d_head


def _full_bytes(L: int, sh, db: int) -> int:  # scores and probabilities
    return 2 * sh.batch * sh.heads * L * L * db + 2 * sh.batch * sh.heads * L * sh.d_head * db


def _sdpa_bytes(L: int, sh, db: int) -> int:  # worst case: the math backend materialises the scores
    return sh.batch * sh.heads * L * L * db + 2 * sh.batch * sh.heads * L * sh.d_head * db


_SOFTMAX = r"\mathrm{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}}\right)V"


register(
    "full",
    full_attention,
    family="full",
    formula=_SOFTMAX,
    time="O(L·S·d)",
    memory="O(L·S)",
    paper="Vaswani et al. 2017, Attention Is All You Need",
    weights=_softmax_weights(None),
    flops=_full_flops,
    peak_bytes=_full_bytes,
    dot_product=False,
)


register(
    "sdpa",
    sdpa_attention,
    family="full",
    formula=_SOFTMAX,
    time="O(L·S·d)",
    memory="O(L) to O(L·S) by backend",
    paper="Dao et al. 2022, FlashAttention; PyTorch scaled_dot_product_attention",
    weights=_softmax_weights(None),
    flops=_full_flops,
    peak_bytes=_sdpa_bytes,
    teaching=False,
)
