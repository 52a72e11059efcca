"""Which earlier head an induction head reads: K-composition (Elhage et al., 2021) and its causal check.

An induction head finds "the token after an earlier occurrence of mine" because its keys carry, from a
previous-token head of an earlier layer, what came before each token. Two measures of that, for a head
(layer, head) and every head of the layers before it:

    k_composition   ‖W_QK · W_OV‖_F / (‖W_QK‖_F ‖W_OV‖_F), with W_QK = (g W_q)ᵀ (g W_k) the later head's
                    query-key matrix and W_OV = W_O^h (g' W_v^h) the earlier head's output-value matrix (g, g':
                    the gains of the norms their attention reads). How much of what the earlier head writes the
                    later head's keys read; ``baseline`` is the same for random matrices of the same shapes.
                    Rotary positions are left out, as the framework leaves them (they turn q and k by position).
    drop            the later head's induction score on repeated random tokens, minus the same with the earlier
                    head's output zeroed: what the induction head loses without it (a causal measure).

    composition(m, layer, head) -> dict    rows sorted by ``drop`` (largest first), as plain values
    of_roles(m, roles) -> dict | None      the same for the best induction head of ``decoder.head_roles``
"""

from __future__ import annotations

import torch

from attn_core import models

from . import hooks
from .ablate import _check_decoder
from .decoder import HELD_OUT_SEED, repeated_tokens

BASELINE_DRAWS = 16


def _norm_gain(m, layer: int) -> torch.Tensor:
    fam = hooks._family(m)
    return fam.attn_norm(fam.blocks(m.hf)[layer]).weight.detach().float()


def qk_matrix(m, layer: int, head: int) -> torch.Tensor:
    """(d_model, d_model) the head's query-key matrix on the residual stream (the norm's gain folded in)."""
    w = models.head_weights(m, layer, head)
    g = _norm_gain(m, layer)
    q = w.W_q.reshape(m.d_head, m.d_model).float() * g
    k = w.W_k.reshape(m.d_head, m.d_model).float() * g
    return q.T @ k


def ov_matrix(m, layer: int, head: int) -> torch.Tensor:
    """(d_model, d_model) what the head writes into the residual stream per unit of what it reads."""
    w = models.head_weights(m, layer, head)
    W_O, _ = models.out_proj(m, layer)
    o = W_O[:, head * m.d_head : (head + 1) * m.d_head].float()
    v = w.W_v.reshape(m.d_head, m.d_model).float() * _norm_gain(m, layer)
    return o @ v


def score(qk: torch.Tensor, ov: torch.Tensor) -> float:
    return float(torch.linalg.matrix_norm(qk @ ov) / (torch.linalg.matrix_norm(qk) * torch.linalg.matrix_norm(ov)))


def baseline(m, *, seed: int = 0) -> float:
    """The mean K-composition of random Gaussian matrices of the same shapes (what 'unrelated' scores)."""
    g = torch.Generator().manual_seed(seed)
    d, dm = m.d_head, m.d_model

    def draw(*shape):
        return torch.randn(*shape, generator=g)

    found = [score(draw(d, dm).T @ draw(d, dm), draw(dm, d) @ draw(d, dm)) for _ in range(BASELINE_DRAWS)]
    return sum(found) / len(found)


def _induction(att: torch.Tensor, T: int) -> torch.Tensor:
    """(B,) per batch row, the mean weight of the second half's queries on the token after their earlier copy."""
    q = torch.arange(T + 1, 2 * T + 1)
    return att[:, q, q - T + 1].mean(-1)


def composition(m, layer: int, head: int, *, seed: int = HELD_OUT_SEED) -> dict:
    _check_decoder(m)
    models.check_layer_head(m, layer, head)
    earlier = [(lay, h) for lay in range(layer) for h in range(m.heads)]
    ids, T = repeated_tokens(m, seed=seed)  # (n, 1 + 2T)
    n = ids.shape[0]
    rows = 1 + len(earlier)
    x = ids.repeat(rows, 1)  # row block r: the n sequences with earlier head r - 1 zeroed (block 0: none)
    keep = torch.ones_like(x, dtype=torch.bool)
    modes = torch.zeros(rows * n, m.layers, m.heads, dtype=torch.int8)
    for r, (lay, h) in enumerate(earlier, start=1):
        modes[r * n : (r + 1) * n, lay, h] = hooks.ZERO
    att = hooks.run(m, hooks.Batch(x, keep, keep.clone()), hooks.Plan(modes, keep), attentions=True).attentions
    ind = _induction(att[layer, :, head].double(), T).view(rows, n).mean(-1)  # (rows,)
    qk = qk_matrix(m, layer, head)
    out = [
        {
            "layer": lay,
            "head": h,
            "k_composition": score(qk, ov_matrix(m, lay, h)),
            "induction_without": float(ind[r]),
            "drop": float(ind[0] - ind[r]),
        }
        for r, (lay, h) in enumerate(earlier, start=1)
    ]
    out.sort(key=lambda row: -row["drop"])
    return {"layer": layer, "head": head, "induction": float(ind[0]), "rows": out, "baseline": baseline(m)}


def of_roles(m, roles: dict) -> dict | None:
    """``composition`` for the best induction head that ``decoder.head_roles`` found (None in the first layer: it
    has no earlier head to read)."""
    best = roles["best"]["induction"]
    if best["layer"] == 0:
        return None
    return composition(m, best["layer"], best["head"], seed=roles["seed"])
