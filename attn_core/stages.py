"""The base steps of a trace as ``Stage`` records, the same kind a variant's own steps are.

``base_stages(trace, head, focus)`` gives tokens, Q/K/V, scores, mask, softmax and output, each with
its formula (LaTeX), its PyTorch lines with this input's shapes, the trace's own tensors that the
Step-by-step page shows (not copies: ``stage.tensors["scores"] is trace.scores``, in the trace's
shapes) and the numbers it quotes. ``step_stages`` gives every step the page offers, in its order,
by its step key: the six base steps, or for a variant tokens, Q/K/V, the variant's own (``vs_<key>``)
and the output. No Streamlit here: the page draws these.
"""

from __future__ import annotations

from .kernels import KERNELS
from .kernels.explain import Stage
from .notebook_text import SOFTMAX_STAGES, WEIGHTED_SUM

SCORE_FORMULAS = {
    "dot": r"e_{ij} = q_i^\top k_j",
    "scaled_dot": r"e_{ij} = \frac{q_i^\top k_j}{\sqrt{d_k}}",
    "additive": r"e_{ij} = v^\top \tanh(W_a q_i + U_a k_j)",
}


def _tokens(tr, head: int, focus: int) -> Stage:
    s = tr.settings
    return Stage(
        "tokens",
        r"x_i = E[\mathrm{id}_i] + PE_i \qquad E \in \mathbb{R}^{|V| \times d_{model}}",
        f"embed = torch.nn.Embedding({len(tr.tokens.vocab)}, {s.d_model})\nx = embed(ids)  # {tuple(tr.x.shape)}",
        {"x": tr.x},
        {"x": "x"},
        {"ids": list(tr.tokens.ids), "vocab": len(tr.tokens.vocab)},
    )


def _qkv(tr, head: int, focus: int) -> Stage:
    s, W = tr.settings, tr.weights
    return Stage(
        "qkv",
        r"Q = X W_q^\top,\quad K = X W_k^\top,\quad V = X W_v^\top",
        f"W_q = torch.rand({s.d_q}, {s.d_model})   # head {head}: {tuple(W.W_q[head].shape)}\n"
        f"Q = x @ W_q.T   # {tuple(tr.Q[head].shape)}\n"
        f"K = x @ W_k.T   # {tuple(tr.K[head].shape)}\n"
        f"V = x @ W_v.T   # {tuple(tr.V[head].shape)}",
        {"Q": tr.Q, "K": tr.K, "V": tr.V, "W_q": W.W_q, "W_k": W.W_k, "W_v": W.W_v},
        {name: name for name in ("Q", "K", "V", "W_q", "W_k", "W_v")},
    )


def _scores(tr, head: int, focus: int) -> Stage:
    s = tr.settings
    return Stage(
        "scores",
        SCORE_FORMULAS[s.score] + (rf"\ /\ T,\ T = {s.temperature:g}" if s.temperature != 1 else ""),
        f"scores = Q @ K.T            # {tuple(tr.scores[head].shape)}\n"
        f"scaled = scores * {tr.scale:.6g}  # 1/sqrt(d_k) = 1/sqrt({s.d_k})",
        {"scores": tr.scores, "scaled_scores": tr.scaled_scores},
        {"scores": "Q Kᵀ", "scaled_scores": "Q Kᵀ · scale"},
        {"unscaled": tr.peak_weight(head, focus, scaled=False), "scaled": tr.peak_weight(head, focus)},
    )


def _mask(tr, head: int, focus: int) -> Stage:
    s = tr.settings
    L, S = len(tr.tokens.words), len(tr.key_tokens.words)
    return Stage(
        "mask",
        r"\tilde e_{ij} = \begin{cases} e_{ij} & \text{mask}_{ij} \\ -\infty & \text{otherwise}\end{cases}",
        f"mask = build_mask('{s.mask}', {L}, {S}{', also_causal=True' if s.causal else ''})"
        f"  # bool {tuple(tr.mask.shape)}, True = may attend\n"
        "scaled = scaled.masked_fill(~mask, float('-inf'))",
        {"mask": tr.mask},
        {"mask": "mask"},
        {"n": int(tr.mask.sum()), "total": tr.mask.numel()},
    )


def _softmax(tr, head: int, focus: int) -> Stage:
    sm = tr.softmax
    return Stage(
        "softmax",
        SOFTMAX_STAGES,
        "m = scaled.amax(-1, keepdim=True)\n"
        "p = (scaled - m).exp()   # masked entries -> 0\n"
        "Z = p.sum(-1, keepdim=True)\n"
        "weights = p / Z",
        {"row_max": sm.row_max, "row_sum": sm.row_sum, "exp": sm.exp, "weights": sm.weights},
        {"row_max": "m", "row_sum": "Z", "exp": "p", "weights": "α"},
    )


def _output(tr, head: int, focus: int) -> Stage:
    s = tr.settings
    own = tr.variant is not None
    return Stage(
        "output",
        KERNELS[s.kernel].formula if own else WEIGHTED_SUM,
        f"context = {s.kernel}_attention(Q, K, V)   # its own efficient path: {tuple(tr.context[head].shape)}\n"
        f"weights = ...   # the L × L matrix it amounts to, for display: {tuple(tr.attn[head].shape)}"
        if own
        else f"weights = F.softmax(scaled, dim=-1)  # {tuple(tr.attn[head].shape)}\n"
        f"context = weights @ V               # {tuple(tr.context[head].shape)}",
        {"attn": tr.attn, "context": tr.context},
        {"attn": "α", "context": "z"},
        {"dropout": s.dropout},
    )


# step key -> its builder, in the page's order
STEPS = {
    "st_tokens": _tokens,
    "st_qkv": _qkv,
    "st_scores": _scores,
    "st_mask": _mask,
    "st_softmax": _softmax,
    "st_output": _output,
}


def base_stages(trace, head: int, focus: int) -> tuple[Stage, ...]:
    """The six base steps of ``trace`` for head ``head`` and the focus query ``focus``."""
    return tuple(build(trace, head, focus) for build in STEPS.values())


def step_stages(trace, head: int, focus: int) -> dict[str, Stage]:
    """Every step the page offers, by step key, in order: the base steps, or for a variant the tokens,
    Q/K/V, its own steps on its efficient path and the output."""
    base = dict(zip(STEPS, base_stages(trace, head, focus), strict=True))
    if trace.variant is None:
        return base
    own = {f"vs_{stage.key}": stage for stage in trace.variant.stages}
    return {"st_tokens": base["st_tokens"], "st_qkv": base["st_qkv"], **own, "st_output": base["st_output"]}
