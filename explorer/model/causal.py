"""The Real model page on a decoder: its causal pattern drawn as masked, and each family's own code for one head.

A decoder's query may not look at later keys; the model's weight there is exactly 0, but drawn as 0 it reads
as "looked and found nothing". So those cells are drawn blank (NaN: a gap in the heatmap, no hover), and the
page says that the blank upper triangle is the causal mask.
"""

from __future__ import annotations

import torch


def blank_future(weights: torch.Tensor) -> torch.Tensor:
    """``weights`` (..., L, L) with every key after its query set to NaN (drawn blank: masked)."""
    L = weights.shape[-1]
    future = torch.ones(L, L, dtype=torch.bool).triu(1)
    return weights.float().masked_fill(future, float("nan"))


def shown(weights: torch.Tensor, causal: bool) -> torch.Tensor:
    """What a heatmap of attention weights draws: a decoder's with the masked upper triangle blank."""
    return blank_future(weights) if causal else weights


def projection_code(pre, layer: int, head: int, shapes: dict) -> str:
    """How this family's own module holds the head's query weights (the first step of taking it apart).
    ``shapes``: the tuples of W_q, x and Q, for the comments."""
    d = pre.d_head
    lo, hi = head * d, (head + 1) * d
    if pre.family == "gpt2":
        return (
            f"attn = model.transformer.h[{layer}].attn   # GPT-2: Q, K and V fused in one Conv1D (y = x W + b)\n"
            f"W, b = attn.c_attn.weight, attn.c_attn.bias   # ({pre.d_model}, {3 * pre.d_model}): Q's columns first\n"
            f"W_q, b_q = W[:, {lo}:{hi}].T, b[{lo}:{hi}]   # head {head} of {pre.heads}: {shapes['W_q']}\n"
            f"x = model.transformer.h[{layer}].ln_1(resid[{layer}])   # {shapes['x']}\n"
            f"Q = x @ W_q.T + b_q   # {shapes['Q']}"
        )
    if pre.family == "llama":
        group = pre.heads // pre.kv_heads
        kv = head // group
        return (
            f"attn = model.model.layers[{layer}].self_attn   # Llama-style: rotary positions, grouped-query\n"
            f"W_q = attn.q_proj.weight[{lo}:{hi}]   # head {head} of {pre.heads}: {shapes['W_q']}\n"
            f"W_k = attn.k_proj.weight[{kv * d}:{(kv + 1) * d}]   # key/value head {kv} of {pre.kv_heads}, "
            f"shared by {group} query heads\n"
            f"x = model.model.layers[{layer}].input_layernorm(resid[{layer}])   # RMSNorm: {shapes['x']}\n"
            f"Q = rotate(x @ W_q.T, position)   # {shapes['Q']}: each pair of dims turned by its angle"
        )
    return (
        f"sa = model.encoder.layer[{layer}].attention.self\n"
        f"rows = slice({lo}, {hi})   # head {head} of {pre.heads}\n"
        f"W_q, b_q = sa.query.weight[rows], sa.query.bias[rows]   # {shapes['W_q']}, ({d},)\n"
        f"x = hidden_states[{layer}][0]   # {shapes['x']}\nQ = x @ W_q.T + b_q   # {shapes['Q']}"
    )


NORMS = {"gpt2": "LayerNorm (ln_1)", "llama": "RMSNorm (input_layernorm)"}  # what a family's attention reads


def apart_intro(pre, weights, layer: int, head: int) -> str:
    """What taking a decoder's head apart starts from, true of its family: the normalised residual stream as x,
    biases only where the model has them, rotary positions only where it turns its queries and keys."""
    from ..i18n import t

    parts = [t("dec.apart_intro", h=head, l=layer, norm=NORMS.get(pre.family, t("dec.apart_norm")))]
    if weights.b_q is not None:
        parts.append(t("dec.apart_bias"))
    if getattr(weights, "inv_freq", None) is not None:
        parts.append(t("dec.apart_rotary"))
    return " ".join(parts)


CAUSAL_LATEX = (
    r"\tilde e_{ij} = \begin{cases} e_{ij} & j \le i \text{ (a key at or before the query)} \\"
    r" -\infty & j > i\end{cases}"
)


def causal_code(L: int) -> str:
    return (
        f"mask = torch.ones({L}, {L}, dtype=torch.bool).tril()   # True = may attend: keys up to the query\n"
        "scaled = scaled.masked_fill(~mask, float('-inf'))   # a later key gets weight exactly 0"
    )
