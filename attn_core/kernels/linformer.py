"""Linformer: keys and values projected along the sequence to k rows (seeded random projections)."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from ..errors import AttentionConfigError
from .explain import Explained, Stage, _shape
from .notebook_cells import NotebookSteps, linformer_cells
from .registry import register


def linformer_projection(k_rows: int, S: int, *, seed: int, device=None, dtype=torch.float32) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(k_rows, S, generator=g) / math.sqrt(k_rows)).to(device=device, dtype=dtype)


def linformer_attention(q, k, v, *, causal: bool = False, scale: float | None = None, proj_k: int = 64, seed: int = 0):
    """Linformer: keys and values projected along the sequence to k rows, K' = E K, V' = F V,
    then softmax(Q K'ᵀ / √d) V'. O(L·k·d) time and memory. Wang et al. 2020, "Linformer"."""
    S = k.shape[-2]
    _check_linformer(q.shape[-2], S, causal=causal, cross=False, proj_k=proj_k)
    E = linformer_projection(proj_k, S, seed=seed, device=q.device, dtype=q.dtype)
    Fm = linformer_projection(proj_k, S, seed=seed + 1, device=q.device, dtype=q.dtype)
    return F.scaled_dot_product_attention(q, E @ k, Fm @ v, scale=scale)


def _check_linformer(L: int, S: int, *, causal: bool, cross: bool, proj_k: int = 64, **opts) -> None:
    if causal:
        raise AttentionConfigError("causal", "linformer_causal")
    if not 1 <= proj_k <= S:
        raise AttentionConfigError("proj_k", "linformer_k", k=proj_k, n=S)


def _linformer_weights(q, k, *, causal: bool, scale: float, proj_k: int = 64, seed: int = 0, **_) -> torch.Tensor:
    """softmax(Q (EK)ᵀ) F: mixes the values with signed weights."""
    S = k.shape[-2]
    E = linformer_projection(proj_k, S, seed=seed, device=q.device, dtype=q.dtype)
    Fm = linformer_projection(proj_k, S, seed=seed + 1, device=q.device, dtype=q.dtype)
    return torch.softmax((q @ (E @ k).transpose(-2, -1)) * scale, dim=-1) @ Fm


def _explain_linformer(q, k, v, *, causal: bool, scale: float, proj_k: int = 64, seed: int = 0, **_) -> Explained:
    """K and V projected along the sequence to k rows, then a softmax over those k columns."""
    S = k.shape[1]
    E = linformer_projection(proj_k, S, seed=seed, dtype=q.dtype)
    Fm = linformer_projection(proj_k, S, seed=seed + 1, dtype=q.dtype)
    k_proj, v_proj = E @ k, Fm @ v  # (H, k, D), (H, k, Dv)
    scores = (q @ k_proj.transpose(-2, -1)) * scale  # (H, L, k)
    w = torch.softmax(scores, dim=-1)
    out = linformer_attention(q[None], k[None], v[None], scale=scale, proj_k=proj_k, seed=seed)[0]
    L = q.shape[1]
    stages = (
        Stage(
            "projections",
            r"K' = E K,\ V' = F V,\quad E, F \in \mathbb{R}^{k \times S}",
            f"E, F = randn({proj_k}, {S}) / sqrt({proj_k})   # seeded\nK_proj = E @ K   # {_shape(k_proj[0])}\n"
            f"V_proj = F @ V   # {_shape(v_proj[0])}",
            {"E": E.unsqueeze(0), "F": Fm.unsqueeze(0), "K_proj": k_proj, "V_proj": v_proj},
            {"E": "E", "F": "F", "K_proj": "K' = EK", "V_proj": "V' = FV"},
            {"k": proj_k, "S": S},
        ),
        Stage(
            "low_rank_scores",
            r"e = \frac{Q K'^\top}{\sqrt{d_k}} \in \mathbb{R}^{L \times k}",
            f"e = Q @ K_proj.T * {scale:.4g}   # {_shape(scores[0])}: L × k, not L × S",
            {"scores_Lk": scores},
            {"scores_Lk": "Q K'ᵀ / √d_k"},
            {"k": proj_k, "L": L},
        ),
        Stage(
            "low_rank_softmax",
            r"o = \mathrm{softmax}(e)\, V'",
            f"alpha = softmax(e, dim=-1)   # {_shape(w[0])}\nout = alpha @ V_proj   # {_shape(out[0])}",
            {"weights_Lk": w},
            {"weights_Lk": "softmax(e)"},
            {"max_diff": float((w @ v_proj - out).abs().max())},
        ),
        Stage(
            "amounts_to",
            r"\alpha_{\text{eff}} = \mathrm{softmax}(e)\, F \in \mathbb{R}^{L \times S}",
            "alpha_eff = alpha @ F   # for display only: signed, rows sum to Σ of F's columns, not 1",
            {"amounts_to": w @ Fm},
            {"amounts_to": "softmax(e) F"},
            {"L": L},
        ),
    )
    return Explained(stages, out, w @ Fm)


register(
    "linformer",
    linformer_attention,
    family="low_rank",
    formula=r"\mathrm{softmax}\!\left(\frac{Q (EK)^\top}{\sqrt{d_k}}\right)(FV),\ E,F\in\mathbb{R}^{k\times S}",
    time="O(L·k·d)",
    memory="O(L·k)",
    paper="Wang et al. 2020, Linformer",
    weights=_linformer_weights,
    explain=_explain_linformer,
    notebook=NotebookSteps(linformer_cells),
    check=_check_linformer,
    flops=lambda L, sh: sh.batch * sh.heads * 8 * L * sh.proj_k * sh.d_head,
    peak_bytes=lambda L, sh, db: (
        2 * sh.batch * sh.heads * L * sh.proj_k * db + 4 * sh.batch * sh.heads * L * sh.d_head * db
    ),
    options=("proj_k", "seed"),
    sweep="proj_k",
    softmax=False,
)
