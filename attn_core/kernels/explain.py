"""A variant's own steps, for Step by step and the JSON export.

``explain(q, k, v, *, causal, scale, **opts) -> Explained`` (q (H, L, D), one sentence): the
intermediates a variant computes on its efficient path, named for what they are, with its output
from the variant's own function. The Step-by-step page draws them; the JSON export records them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from .. import masks
from ..tensors import VARIANT_AXES


@dataclass(frozen=True)
class Stage:
    key: str  # the catalogue's vs_<key> (its title) and vs_<key>_note (what to look at, quoting ``facts``)
    formula: str  # LaTeX
    code: str  # the PyTorch lines, with this input's shapes
    tensors: dict  # name -> (H or 1, rows, cols); NaN where the variant computes nothing
    labels: dict = field(default_factory=dict)  # name -> how the chart names it (math, language-neutral)
    facts: dict = field(default_factory=dict)  # numbers the note quotes


@dataclass(frozen=True)
class Explained:
    stages: tuple[Stage, ...]
    output: torch.Tensor  # (H, L, Dv): the variant's own function on this input
    weights: torch.Tensor  # (H, L, S): the matrix the output amounts to, for display (out = weights @ v)

    def tensors(self) -> dict:
        return {name: t for st in self.stages for name, t in st.tensors.items()}


# What the rows and columns of each named intermediate are (a query or key token, a feature, a dimension of d or
# d_v, one of Linformer's k rows, or nothing): the tensor table's, by the Stage's key
AXES = VARIANT_AXES


def _shape(t: torch.Tensor) -> str:
    return str(tuple(t.shape))


def _pair_softmax(q, k, v, i: torch.Tensor, j: torch.Tensor, scale: float):
    """For the pairs (i, j) alone: their scores (H, pairs), each row's softmax over its own pairs
    (H, pairs) and the weighted sums of the values (H, L, Dv)."""
    H, L, _ = q.shape
    s = (q[:, i] * k[:, j]).sum(-1) * scale  # (H, pairs)
    rows = i.expand(H, -1)
    top = torch.full((H, L), float("-inf"), dtype=q.dtype).scatter_reduce(1, rows, s, "amax")
    e = torch.exp(s - top[:, i])
    total = torch.zeros(H, L, dtype=q.dtype).index_add_(1, i, e)
    w = e / total[:, i].clamp_min(torch.finfo(q.dtype).tiny)
    mixed = torch.zeros(H, L, v.shape[-1], dtype=q.dtype).index_add_(1, i, w.unsqueeze(-1) * v[:, j])
    return s, w, mixed


def _explain_sparse(pattern: Callable, fn: Callable):
    """The pairs the pattern allows, scored one by one (no L x S product), a softmax over each
    row's pairs and the weighted sum of their values."""

    def explain(q, k, v, *, causal: bool, scale: float, **opts) -> Explained:
        H, L, _ = q.shape
        S, Dv = k.shape[1], v.shape[-1]
        allowed = pattern(L, S, causal, **opts)
        i, j = allowed.nonzero(as_tuple=True)  # the pairs computed
        s, w, mixed = _pair_softmax(q, k, v, i, j, scale)

        def dense(values: torch.Tensor, fill: float) -> torch.Tensor:
            out = torch.full((H, L, S), fill, dtype=q.dtype)
            out[:, i, j] = values
            return out

        pairs = int(i.numel())
        weights = dense(w, 0.0)
        out = fn(q[None], k[None], v[None], causal=causal, scale=scale, **opts)[0]
        stages = (
            Stage(
                "pattern",
                r"\mathcal{A} = \{(i, j) : (i, j)\ \text{allowed by the pattern}\}",
                f"allowed = pattern({L}, {S})   # bool {_shape(allowed)}\ni, j = allowed.nonzero(as_tuple=True)"
                f"   # {pairs} pairs, not {L * S}",
                {"pattern": allowed.to(q.dtype).unsqueeze(0)},
                {"pattern": "pattern"},
                {"pairs": pairs, "all": L * S, "share": 100.0 * pairs / max(L * S, 1)},
            ),
            Stage(
                "band_scores",
                r"e_{ij} = \frac{q_i \cdot k_j}{\sqrt{d_k}}\quad (i, j) \in \mathcal{A}",
                f"e = (Q[i] * K[j]).sum(-1) * {scale:.4g}   # {pairs} scores, one per allowed pair",
                {"band_scores": dense(s, float("nan"))},
                {"band_scores": "e_ij"},
                {"pairs": pairs},
            ),
            Stage(
                "band_softmax",
                r"\alpha_{ij} = \frac{\exp(e_{ij})}{\sum_{(i, j') \in \mathcal{A}} \exp(e_{ij'})}",
                "alpha = exp(e - row_max[i]) / row_sum[i]   # a softmax over each row's allowed pairs only\n"
                f"out = zeros({L}, {Dv}).index_add_(0, i, alpha[:, None] * V[j])   # {_shape(out[0])}",
                {"band_weights": dense(w, float("nan"))},
                {"band_weights": "α_ij"},
                {"max_diff": float((mixed - out).abs().max()) if out.numel() else 0.0},
            ),
        )
        return Explained(stages, out, weights)

    return explain


def prefix_state(phi_k: torch.Tensor, v: torch.Tensor, i: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Causal linear attention's running state after position ``i``: Σ_{j≤i} φ(k_j) v_jᵀ and Σ_{j≤i} φ(k_j)."""
    return phi_k[:, : i + 1].transpose(-2, -1) @ v[:, : i + 1], phi_k[:, : i + 1].sum(1)


def _explain_features(pair: Callable, fn: Callable, *, omega: Callable | None = None, finish: Callable | None = None):
    """φ(Q) and φ(K), the d × d_v state Σ φ(k_j) v_jᵀ and the normaliser Σ φ(k_j), then the output:
    (φ(Q) (φ(K)ᵀ V)) in that order, so no L x S matrix is formed. Random features (Performer): the
    two halves read out apart, then their mean shrunk toward uniform attention by λ: ``omega(opts, d,
    dtype)`` draws the features, ``finish(stages, q, k, v, out, ...)`` appends those steps and
    returns the weights (both given for random features only)."""
    random_features = omega is not None

    def explain(q, k, v, *, causal: bool, scale: float, **opts) -> Explained:
        phi_q, phi_k = pair(q, k, scale=scale, **opts)
        a = phi_q @ phi_k.transpose(-2, -1)  # display only: what the output amounts to
        if causal:
            a = a.tril()
        weights = a / a.sum(-1, keepdim=True).clamp_min(1e-30)
        out = fn(q[None], k[None], v[None], causal=causal, scale=scale, **opts)[0]
        stages = []
        if random_features:
            stages.append(_omega_stage(omega(opts, q.shape[-1], q.dtype), phi_q.shape[-1], q.shape[-1], opts["seed"]))
        stages.append(_features_stage(phi_q, phi_k, random_features))
        stages.append(_state_stage(phi_k, v, causal))
        if random_features:
            weights = finish(stages, q, k, v, out, causal=causal, scale=scale, **opts)
        else:
            stages.append(_normalise_stage(phi_q, phi_k, v, a, out, causal))
        facts = {"L": phi_q.shape[1]}
        if random_features:  # how good the approximation is on this sentence, beside the trivial baseline
            facts.update(_against_exact(q, k, weights, causal=causal, scale=scale))
        stages.append(_amounts_to_stage(weights, facts, random_features))
        return Explained(tuple(stages), out, weights)

    return explain


def _omega_stage(drawn: torch.Tensor, m: int, d: int, seed: int) -> Stage:
    return Stage(
        "random_features",
        r"\omega \in \mathbb{R}^{m \times d},\ \text{rows orthogonal in blocks of } d",
        f"omega = orthogonal_features({m}, {d}, seed={seed})   # {_shape(drawn)}",
        {"omega": drawn.unsqueeze(0)},
        {"omega": "ω"},
        {"m": m, "d": d},
    )


def _features_stage(phi_q: torch.Tensor, phi_k: torch.Tensor, random_features: bool) -> Stage:
    feature = (
        r"\phi(x) = \exp\!\left(A\|\omega\|^2 + \sqrt{1-4A}\,\omega x - \tfrac{\|x\|^2}{2}\right) > 0"
        if random_features
        else r"\phi(x) = \mathrm{elu}(x) + 1 > 0"
    )
    make = "performer_features(Q, omega, a=A)" if random_features else "F.elu(Q) + 1"
    return Stage(
        "features",
        feature,
        f"phi_q = {make}   # {_shape(phi_q[0])}\nphi_k = {make.replace('Q', 'K')}   # {_shape(phi_k[0])}",
        {"phi_q": phi_q, "phi_k": phi_k},
        {"phi_q": "φ(Q)", "phi_k": "φ(K)"},
        {"m": phi_q.shape[-1]},
    )


def _state_stage(phi_k: torch.Tensor, v: torch.Tensor, causal: bool) -> Stage:
    m, Dv, L = phi_k.shape[-1], v.shape[-1], phi_k.shape[1]
    state = phi_k.transpose(-2, -1) @ v  # (H, m, Dv)
    z = phi_k.sum(1)  # (H, m)
    prefix = r"\sum_{j \le i}" if causal else r"\sum_j"
    return Stage(
        "prefix_state" if causal else "state",
        rf"S = {prefix} \phi(k_j) v_j^\top \in \mathbb{{R}}^{{{m} \times {Dv}}},\quad z = {prefix} \phi(k_j)",
        (
            "S_i = S_{i-1} + outer(phi_k[i], V[i]);  z_i = z_{i-1} + phi_k[i]   # one state, updated per token"
            if causal
            else f"S = phi_k.T @ V   # {_shape(state[0])}: d × d_v, whatever L is\nz = phi_k.sum(0)   # ({m},)"
        ),
        {"state": state, "normaliser": z.unsqueeze(1)},
        {"state": "S = Σ φ(k_j) v_jᵀ", "normaliser": "z = Σ φ(k_j)"},
        {"m": m, "dv": Dv, "L": L},
    )


def _normalise_stage(phi_q, phi_k, v, a, out, causal: bool) -> Stage:
    L = phi_q.shape[1]
    if causal:
        num, den = a @ v, a.sum(-1, keepdim=True)
    else:
        num, den = phi_q @ (phi_k.transpose(-2, -1) @ v), phi_q @ phi_k.sum(1).unsqueeze(-1)
    return Stage(
        "normalise",
        r"o_i = \frac{\phi(q_i)^\top S}{\phi(q_i)^\top z}",
        f"num = phi_q @ S   # {_shape(num[0])}\nden = phi_q @ z   # ({L},)\nout = num / den[:, None]"
        f"   # {_shape(out[0])}: O(L·m·d_v), never L × L",
        {"numerator": num, "denominator": den},
        {"numerator": "φ(Q)ᵀ S", "denominator": "φ(Q)ᵀ z"},
        {"max_diff": float((num / den.clamp_min(1e-30) - out).abs().max())},
    )


def _against_exact(q, k, weights, *, causal: bool, scale: float) -> dict:
    """The relative distance of the weights, and of uniform attention, from exact softmax attention."""
    L, S = q.shape[1], k.shape[1]
    s = (q @ k.transpose(-2, -1)) * scale
    allowed = masks.causal(L, S) if causal else masks.full(L, S)
    exact = torch.softmax(s.masked_fill(~allowed, float("-inf")), dim=-1)
    uniform = allowed.to(q.dtype) / allowed.sum(-1, keepdim=True)
    return {
        "error": float((weights - exact).norm() / exact.norm()),
        "uniform": float((uniform - exact).norm() / exact.norm()),
    }


def _amounts_to_stage(weights: torch.Tensor, facts: dict, random_features: bool) -> Stage:
    return Stage(
        "amounts_to",
        (
            r"\alpha = U + \lambda\,(\bar\alpha - U)"
            if random_features
            else r"\alpha_{ij} = \frac{\phi(q_i)\cdot\phi(k_j)}{\sum_{j'} \phi(q_i)\cdot\phi(k_{j'})}"
        ),
        "alpha = (phi_q @ phi_k.T) / den[:, None]   # for display only: the efficient path never makes it"
        if not random_features
        else "alpha = U + lam * (alpha_mean - U)   # for display only: the efficient path never makes it",
        {"amounts_to": weights},
        {"amounts_to": "α"},
        facts,
    )
