"""How spread attention is: one weight matrix's entropy, softmax's dispersion as the keys grow, and a window's
error with global (sink) tokens. Plain tensors in, plain numbers out.

    spread(w, allowed)        mean row entropy −Σ w log w (nats), mean exp(H) (the effective number of keys),
                              the mean of log n (entropy at its maximum) and the rows that are uniform
    dispersion(gap, ns)       the largest softmax weight over n keys when one key's score is ``gap`` above the
                              n − 1 others (Veličković et al. 2024): e^Δ / (e^Δ + n − 1), falling to 0 as n grows
    adaptive_softmax(scores)  their adaptive temperature: β from the softmax's entropy by their fitted polynomial
    sink_errors(q, k, v, ...) the window alone and the window with g global tokens against full attention

The adaptive temperature is the rule of the paper's published code (arXiv 2410.01104, Figure 5's fit):
β = max(p(H), 1) where H > 0.5 nats, else 1, with p(H) = −0.037 H⁴ + 0.481 H³ − 2.3 H² + 4.917 H − 1.791, and
the weights softmax(β · scores), one step. p falls below 1 above H ≈ 5.9 nats (about 380 equal keys), outside
the entropies it was fitted on, so there β is 1 and the rule changes nothing: at n = 4096 it leaves the
largest weight as softmax has it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch

from ..kernels import full_attention, run_kernel
from .atlas import row_stats

POLY = (-0.037, 0.481, -2.3, 4.917, -1.791)  # highest power first (numpy.polyval's order), as published
LOW_ENTROPY = 0.5  # nats: rows at or below it keep β = 1 ("don't overcorrect low-entropy heads")
DISPERSION_NS = (2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096)
QUOTED_NS = (16, 256, 4096)
SINK_GS = (0, 1, 2, 4)


def _rows_ok(w: torch.Tensor, allowed: torch.Tensor) -> None:
    if w.ndim != 2 or w.shape != allowed.shape or w.shape[0] == 0:
        raise ValueError(f"spread: weights must be (rows, keys) with a mask of the same shape, got {tuple(w.shape)}")
    if not torch.isfinite(w).all() or (w < -1e-6).any():
        raise ValueError("spread: weights must be finite and non-negative (signed weights have no entropy)")
    sums = w.masked_fill(~allowed, 0.0).sum(-1)
    if not torch.allclose(sums, torch.ones_like(sums), rtol=1e-4, atol=1e-4):
        raise ValueError("spread: each row's weights must sum to 1 over the keys it may see")


def spread(w: torch.Tensor, allowed: torch.Tensor | None = None) -> dict:
    """{"entropy", "effective_keys", "max_entropy", "max_weight", "uniform_rows", "rows"} of the (rows, keys)
    weights ``w`` (each row summing to 1 over ``allowed``; None: every key): means over the rows, in float64."""
    allowed = torch.ones_like(w, dtype=torch.bool) if allowed is None else allowed.bool()
    _rows_ok(w, allowed)
    s = row_stats(w.double().clamp_min(0.0), allowed)
    n = s["n"].double()
    return {
        "entropy": float(s["entropy"].mean()),
        "effective_keys": float(s["effective"].mean()),
        "max_entropy": float(n.log().mean()),
        "max_weight": float(s["max"].mean()),
        "uniform_rows": int((s["uniform"] & (s["n"] > 1)).sum()),
        "rows": int(w.shape[0]),
    }


def entropy(p: torch.Tensor) -> torch.Tensor:
    """−Σ p log p over the last dimension (0 log 0 = 0)."""
    return -(p * torch.where(p > 0, p.clamp_min(1e-300).log(), torch.zeros_like(p))).sum(-1)


def adaptive_beta(h: torch.Tensor) -> torch.Tensor:
    """The inverse temperature β for rows of entropy ``h`` (nats): max(p(h), 1) above 0.5 nats, else 1."""
    poly = torch.zeros_like(h)
    for c in POLY:  # Horner, highest power first
        poly = poly * h + c
    return torch.where(h > LOW_ENTROPY, poly.clamp_min(1.0), torch.ones_like(h))


def adaptive_softmax(scores: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(weights, β): softmax(β · scores) over the last dimension, β from softmax(scores)'s entropy per row."""
    beta = adaptive_beta(entropy(torch.softmax(scores, dim=-1))).unsqueeze(-1)
    return torch.softmax(scores * beta, dim=-1), beta.squeeze(-1)


def gap_scores(gap: float, n: int) -> torch.Tensor:
    """(n,) float64 scores: ``gap`` for key 0, 0 for the n − 1 others."""
    s = torch.zeros(n, dtype=torch.float64)
    s[0] = gap
    return s


def dispersion(gap: float, ns: Sequence[int] = DISPERSION_NS, *, adaptive: bool = False) -> list[dict]:
    """Per n: the largest weight of softmax (or of the adaptive temperature's) over ``gap_scores(gap, n)``,
    run through ``torch.softmax``; with the row's entropy and β (1 for plain softmax)."""
    if not math.isfinite(gap) or any(int(n) < 1 for n in ns):
        raise ValueError("dispersion: the gap must be finite and every n at least 1")
    rows = []
    for n in ns:
        s = gap_scores(gap, int(n))
        w, beta = adaptive_softmax(s) if adaptive else (torch.softmax(s, dim=-1), torch.tensor(1.0))
        rows.append({"n": int(n), "max_weight": float(w.max()), "entropy": float(entropy(w)), "beta": float(beta)})
    return rows


def closed_form(gap: float, n: int) -> float:
    """e^Δ / (e^Δ + n − 1): the largest weight ``dispersion`` computes, written out."""
    return 1.0 / (1.0 + (n - 1) * math.exp(-gap))


def relative_error(out: torch.Tensor, exact: torch.Tensor) -> float:
    """‖out − exact‖_F / ‖exact‖_F, in float64."""
    exact = exact.double()
    return float((out.double() - exact).norm() / exact.norm().clamp_min(1e-300))


def sink_errors(q, k, v, *, causal: bool, scale: float, window: int, gs: Sequence[int] = SINK_GS) -> list[dict]:
    """Per g: the relative Frobenius error of the window's output against full attention's on (B, H, L, d) q, k,
    v; g = 0 is the sliding window alone, g > 0 the global + window kernel with the first g tokens global."""
    exact = full_attention(q, k, v, causal=causal, scale=scale)
    rows = []
    for g in gs:
        if g == 0:
            out = run_kernel("sliding_window", q, k, v, causal=causal, scale=scale, window=window)
        else:
            out = run_kernel("global_window", q, k, v, causal=causal, scale=scale, window=window, global_tokens=g)
        rows.append({"g": int(g), "error": relative_error(out, exact)})
    return rows
