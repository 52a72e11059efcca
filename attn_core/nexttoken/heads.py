"""What a head writes, and every component's direct effect on one logit.

The residual stream before the final norm is a sum: the embeddings, then per layer what each head writes
(its context times its slice of the output projection), the output projection's bias and the MLP's output. The
final norm is not linear, but with its scale *frozen* at the value it takes on the whole stream at that position
(LayerNorm: 1/std, its centering being linear; RMSNorm: 1/rms) it is: norm(x) = γ ⊙ centre(x) / s + β. So
logit[t] = Σ_c (γ ⊙ centre(c) / s) · W_U[t] + β · W_U[t] + b_U[t] exactly, one term per component c: its direct
effect (what it adds to the logit through the unembedding alone, not through later layers).
"""

from __future__ import annotations

import torch

from .. import models
from .prompt import label, piece

SHOWN = 10


def frozen(m, run, position: int) -> tuple[torch.Tensor, torch.Tensor | None, float, bool]:
    """(γ, β or None, the scale s at ``position``, whether the norm centres): the final norm as a linear map."""
    norm = models.final_norm(m)
    x = run.resid[-1, position].double()
    centred = isinstance(norm, torch.nn.LayerNorm)
    eps = float(getattr(norm, "eps", getattr(norm, "variance_epsilon", 1e-6)))
    s = (x.var(unbiased=False) + eps).sqrt() if centred else (x.pow(2).mean() + eps).sqrt()
    gamma = norm.weight.detach().double()
    beta = None if getattr(norm, "bias", None) is None else norm.bias.detach().double()
    return gamma, beta, float(s), centred


def through_norm(vectors: torch.Tensor, gamma: torch.Tensor, s: float, centred: bool) -> torch.Tensor:
    """(..., d_model) components through the frozen final norm, without its bias."""
    v = vectors.double()
    if centred:
        v = v - v.mean(-1, keepdim=True)
    return v / s * gamma


def direct_effects(m, run, position: int, token: int) -> dict:
    """Every component's direct effect on logit[token] at ``position``, and their sum beside the model's logit."""
    gamma, beta, s, centred = frozen(m, run, position)
    W_U, b_U = models.unembed(m)
    u = W_U[token].double()

    def effect(vectors: torch.Tensor) -> torch.Tensor:
        return through_norm(vectors, gamma, s, centred) @ u

    heads = torch.stack([effect(models.head_writes(m, run, layer)[:, position]) for layer in range(m.layers)])
    biases = [models.out_proj(m, layer)[1] for layer in range(m.layers)]
    attn_bias = torch.stack([effect(b) if b is not None else torch.zeros((), dtype=torch.float64) for b in biases])
    parts = {
        "embeddings": float(effect(run.resid[0, position])),
        "heads": heads,  # (layers, heads)
        "attn_bias": attn_bias,  # (layers,)
        "mlp": effect(run.mlp_out[:, position]),  # (layers,)
        "norm_bias": 0.0 if beta is None else float(beta @ u),
        "unembed_bias": 0.0 if b_U is None else float(b_U[token]),
    }
    total = parts["embeddings"] + float(heads.sum() + attn_bias.sum() + parts["mlp"].sum())
    total += parts["norm_bias"] + parts["unembed_bias"]
    logit = float(run.logits[position, token])
    return parts | {"total": total, "logit": logit, "scale": s, "centred": centred, "token": token}


def head_vocab(m, run, layer: int, head: int, position: int, token: int | None = None, n: int = SHOWN) -> dict:
    """A head's output at ``position`` read through the frozen final norm and the unembedding: the tokens it
    promotes and suppresses most, and (``token``) its direct effect on that token's logit."""
    models.check_layer_head(m, layer, head)
    gamma, _, s, centred = frozen(m, run, position)
    W_U, _ = models.unembed(m)
    written = models.head_writes(m, run, layer)[head, position]
    scores = through_norm(written, gamma, s, centred) @ W_U.double().T  # (vocab,)
    order = torch.sort(scores, descending=True, stable=True).indices

    def listed(ids) -> list[dict]:
        return [
            {
                "id": int(i),
                "token": piece(m.tokenizer, int(i)),
                "label": label(m.tokenizer, int(i)),
                "effect": float(scores[i]),
            }
            for i in ids
        ]

    out = {"layer": layer, "head": head, "position": position, "norm": float(written.norm())}
    out |= {"promoted": listed(order[:n]), "suppressed": listed(order.flip(0)[:n])}
    if token is not None:
        out["effect"] = float(scores[token])
    return out
