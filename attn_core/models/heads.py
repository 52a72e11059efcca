"""One head taken apart through ``attn_core.steps.attend`` with the model's own weights, for every family.

head_weights(m, layer, head) -> HeadWeights     W_q, W_k, W_v and biases (the shared key/value head under
                                                grouped-query attention), the scale, the rotary frequencies
take_apart(run, w, layer, head) -> HeadTrace    project, rotate (Llama-style), score, scale, mask (padding;
                                                causal for decoders), staged softmax, weighted sum; and the
                                                max difference from the model's own probabilities
"""

from __future__ import annotations

import math

import torch

from .. import steps
from ..masks import padding
from ..positions import SCHEMES
from .base import HeadTrace, HeadWeights, Model, Run, check_layer_head
from .run import family


def head_weights(m: Model, layer: int, head: int) -> HeadWeights:
    check_layer_head(m, layer, head)
    return family(m).head_weights(m, layer, head)


def random_weights(m: Model, *, seed: int, layer: int = 0) -> HeadWeights:
    """Untrained weights of one head's shapes, drawn as ``nn.Linear`` draws them: U(±1/√d_model); scored and
    rotated as the model's head in ``layer`` is (its scale, its rotary frequencies)."""
    g = torch.Generator().manual_seed(seed)
    d, dm = m.d_head, m.d_model

    def draw(*shape: int) -> torch.Tensor:
        return (torch.rand(*shape, generator=g) * 2 - 1) / math.sqrt(dm)

    W = [draw(1, d, dm) for _ in range(3)]  # drawn before the biases, in this order since the first release
    drawn = list(zip(W, [draw(1, d) for _ in range(3)], strict=True))  # (W, b) of the query, key and value
    if m.family == "bert":
        return HeadWeights.of(*drawn)
    own = head_weights(m, layer, 0)
    how = {"score": own.score, "temperature": own.temperature, "inv_freq": own.inv_freq}
    return HeadWeights.of(*drawn, rope_scaling=own.rope_scaling, **how)


def head_mask(run: Run) -> torch.Tensor:
    """(L, L) True where a query may attend: keys before any padding, and no later key for a decoder."""
    L, n_real = run.attn_in.shape[1], run.encoding.n_real
    mask = padding([n_real], L, L)[0]
    if run.causal:
        mask = mask & torch.ones(L, L, dtype=torch.bool).tril()
    return mask


def take_apart(run: Run, w, layer: int, head: int, *, compare: bool = True) -> HeadTrace:
    """Recompute one head from what its attention sees with ``attn_core.steps``: project (with bias), rotate
    Q and K (rotary positions), score, scale, mask, staged softmax, weighted sum. With ``compare``, the result
    is checked against the model's own probabilities for that head."""
    x = run.attn_in[layer]  # (L, d_model)
    rotary = w.rotary() if isinstance(w, HeadWeights) else None
    # learned absolute positions (BERT, GPT-2) are added to the embeddings: already in x
    positions = rotary if rotary is not None else SCHEMES["learned"]
    score = getattr(w, "score", "scaled_dot")
    temperature = getattr(w, "temperature", 1.0)
    a = steps.attend(x, x, w, head_mask(run), score=score, temperature=temperature, positions=positions)
    context = a.softmax.weights @ a.V  # (1, L, d)
    model_attn = run.attentions[layer, head] if compare else None
    diff = float((a.softmax.weights[0] - model_attn).abs().max()) if compare else None
    return HeadTrace(
        run.encoding.pieces, layer, head, x, w, attended=a, context=context, model_attn=model_attn, max_diff=diff
    )


def recompute_all(m: Model, run: Run) -> torch.Tensor:
    """max |attn_core - model| for every (layer, head): (layers, H)."""
    out = torch.zeros(m.layers, m.heads)
    for layer in range(m.layers):
        for head in range(m.heads):
            out[layer, head] = take_apart(run, head_weights(m, layer, head), layer, head).max_diff
    return out


def overview(run: Run, *, max_side: int = 64) -> tuple[torch.Tensor, list[str]]:
    """Every head's weights for a small-multiples view, (layers, H, n, n), and a label per row.

    Up to ``max_side`` pieces, the weights themselves (labels "3 didn"). Longer inputs are
    average-pooled to max_side x max_side blocks (labels "8–15": the pieces a block covers), so
    the view stays a few hundred kilobytes instead of 72 full L x L matrices.
    """
    A = run.attentions  # (layers, H, L, L)
    layers, H, L, _ = A.shape
    pieces = run.encoding.pieces
    if L <= max_side:
        return A, [f"{i} {p}" for i, p in enumerate(pieces)]
    pooled = torch.nn.functional.adaptive_avg_pool2d(A.reshape(layers * H, 1, L, L), max_side).reshape(
        layers, H, max_side, max_side
    )
    bounds = [(i * L // max_side, -(-(i + 1) * L // max_side)) for i in range(max_side)]  # adaptive pooling's blocks
    return pooled, [f"{a}–{b - 1}" for a, b in bounds]


def row_entropy(weights: torch.Tensor, mask: torch.Tensor) -> float:
    """Mean entropy (nats) of the rows of real queries: low = focused, log(n) = uniform."""
    w = weights.reshape(-1, weights.shape[-1])
    real = mask.reshape(-1, mask.shape[-1]).any(-1)
    h = -(w * torch.log(w.clamp_min(1e-30))).sum(-1)
    return float(h[real].mean())


def uniform_entropy(mask: torch.Tensor) -> float:
    """The mean row entropy (nats) a head would have if it spread each real query's weight evenly over the keys its
    mask allows: log(n) for an encoder's n real pieces, the mean of log(i + 1) for a decoder's causal rows (its
    first query has one key). What ``row_entropy`` is read against."""
    allowed = mask.reshape(-1, mask.shape[-1]).sum(-1)
    allowed = allowed[allowed > 0].double()
    return float(allowed.log().mean()) if len(allowed) else 0.0


def to_dict(m, head_trace, run) -> dict:
    """The CLI's and the download's JSON: tokens, recomputed weights, the model's, and every step."""
    from ..export import head_dict

    e = run.encoding
    w = head_trace.weights
    step_trace = head_dict(head_trace, 0)
    step_trace["x"] = head_trace.x.tolist()
    step_trace["scale"] = head_trace.scale
    out = {
        "model": m.name,
        "family": m.family,
        "causal": m.causal,
        "layer": head_trace.layer,
        "head": head_trace.head,
        "kv_head": getattr(w, "kv_head", head_trace.head),
        "d_model": m.d_model,
        "d_head": m.d_head,
        "layers": m.layers,
        "heads": m.heads,
        "kv_heads": m.kv_heads,
        "tokens": list(e.pieces),
        "token_ids": list(e.ids),
        "n_real": e.n_real,
        "truncated": e.truncated,
        "cut": e.cut,
        "unk": e.unk,
        "weights": head_trace.attn[0].tolist(),
        "model_weights": None if head_trace.model_attn is None else head_trace.model_attn.tolist(),
        "max_abs_diff": head_trace.max_diff,
        "trace": step_trace,
    }
    angles = w.angles(len(e.ids)) if hasattr(w, "angles") else None
    if angles is not None:
        out["rotary_angles"] = angles.tolist()  # (L, d/2): position p's angle for each pair (i, i + d/2)
    return out
