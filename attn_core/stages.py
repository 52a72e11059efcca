"""The base steps of a trace as ``Stage`` records, the same kind a variant's own steps are.

``base_stages(trace, head, focus)`` gives tokens, Q/K/V, scores, mask, softmax and output, each with
its formula (LaTeX), its PyTorch lines with this input's shapes, the trace's own tensors that the
Step-by-step page shows (not copies: ``stage.tensors["scores"] is trace.scores``, in the trace's
shapes) and the numbers it quotes. ``step_stages`` gives every step the page offers, in its order,
by its step key: the six base steps, or for a variant tokens, Q/K/V, the variant's own (``vs_<key>``)
and the output. No Streamlit here: the page draws these. The steps, their URL keys and each step's tensors are
the table's (``attn_core.tensors``).
"""

from __future__ import annotations

from .kernels import KERNELS
from .kernels.explain import Stage
from .notebook_text import SOFTMAX_STAGES, WEIGHTED_SUM
from .tensors import BASE_STEPS, stage_tensors, url_step

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
        stage_tensors(tr, "tokens"),
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
        stage_tensors(tr, "qkv"),
        {name: name for name in ("Q", "K", "V", "W_q", "W_k", "W_v")},
    )


def _scores(tr, head: int, focus: int) -> Stage:
    s = tr.settings
    return Stage(
        "scores",
        SCORE_FORMULAS[s.score] + (rf"\ /\ T,\ T = {s.temperature:g}" if s.temperature != 1 else ""),
        f"scores = Q @ K.T            # {tuple(tr.scores[head].shape)}\n"
        f"scaled = scores * {tr.scale:.6g}  # 1/sqrt(d_k) = 1/sqrt({s.d_k})",
        stage_tensors(tr, "scores"),
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
        stage_tensors(tr, "mask"),
        {"mask": "mask"},
        {"n": int(tr.mask.sum()), "total": tr.mask.numel()},
    )


def _softmax(tr, head: int, focus: int) -> Stage:
    return Stage(
        "softmax",
        SOFTMAX_STAGES,
        "m = scaled.amax(-1, keepdim=True)\n"
        "p = (scaled - m).exp()   # masked entries -> 0\n"
        "Z = p.sum(-1, keepdim=True)\n"
        "weights = p / Z",
        stage_tensors(tr, "softmax"),
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
        stage_tensors(tr, "output"),
        {"attn": "α", "context": "z"},
        {"dropout": s.dropout},
    )


_BUILDERS = {"tokens": _tokens, "qkv": _qkv, "scores": _scores, "mask": _mask, "softmax": _softmax, "output": _output}
STEPS = {url_step(key): _BUILDERS[key] for key in BASE_STEPS}  # step key -> its builder, in the page's order


def base_stages(trace, head: int, focus: int) -> tuple[Stage, ...]:
    """The six base steps of ``trace`` for head ``head`` and the focus query ``focus``."""
    return tuple(build(trace, head, focus) for build in STEPS.values())


def step_stages(trace, head: int, focus: int) -> dict[str, Stage]:
    """Every step the page offers, by step key, in order: the base steps, or for a variant the tokens,
    Q/K/V, its own steps on its efficient path and the output."""
    base = dict(zip(STEPS, base_stages(trace, head, focus), strict=True))
    if trace.variant is None:
        return base
    own = {url_step(stage.key, variant=True): stage for stage in trace.variant.stages}
    first, last = [url_step(key) for key in ("tokens", "qkv")], url_step("output")
    return {**{key: base[key] for key in first}, **own, last: base[last]}
