"""How spread or peaked each head's attention is, and how much of it goes to the first token: one forward pass.

Per layer and head, over the real query rows (padding apart; a decoder's rows over the keys they may see):

    entropy                     mean of −Σ_j w_ij log w_ij, in nats (0: one key; log n: uniform over n keys)
    effective_keys              mean of exp(row entropy): how many keys a row spreads over
    max_weight                  mean of each row's largest weight
    first_token                 mean weight on the first token (a BOS, [CLS], or the first word)
    first_token_value_weighted  mean of w_i0 ‖f(x_0)‖ / Σ_j w_ij ‖f(x_j)‖, f(x_j) = v_j W_O,hᵀ what the head writes
                                for key j (Kobayashi et al., 2020): a sink whose value writes nothing scores ~0
    uniform_rows                rows whose weights are all equal (entropy at its maximum), said, not hidden
"""

from __future__ import annotations

import torch

from .. import models as M


def row_stats(w: torch.Tensor, keys: torch.Tensor) -> dict[str, torch.Tensor]:
    """Per-row statistics of a weight matrix (rows, L) whose rows sum to 1 over ``keys`` (rows, L) bool."""
    w = w.masked_fill(~keys, 0.0)
    logs = torch.where(w > 0, w.clamp_min(1e-30).log(), torch.zeros_like(w))
    h = -(w * logs).sum(-1)
    n = keys.sum(-1)
    top = w.max(-1).values
    low = w.masked_fill(~keys, float("inf")).min(-1).values
    uniform = (top - low) <= 1e-6 * top.clamp_min(1e-30)
    return {"entropy": h, "effective": h.exp(), "max": top, "uniform": uniform, "n": n}


def _writes(m: M.Model, run: M.Run, layer: int, head: int) -> torch.Tensor:
    """(L,) ‖v_j W_O,hᵀ‖: the size of what head ``head`` writes for each key."""
    w = M.head_weights(m, layer, head)
    x = run.attn_in[layer]
    v = x @ w.W_v[0].T + (0 if w.b_v is None else w.b_v[0])
    W_O, _ = M.out_proj(m, layer)
    block = W_O[:, head * m.d_head : (head + 1) * m.d_head]  # (d_model, d)
    return (v @ block.T).norm(dim=-1)


@torch.inference_mode()
def atlas(m: M.Model, run: M.Run) -> list[dict]:
    """One entry per layer and head (the CLI's ``heads``)."""
    n = run.encoding.n_real
    L = len(run.encoding.ids)
    keys = (torch.arange(L) < n).expand(n, L)
    if m.causal:
        keys = keys & (torch.arange(L)[None, :] <= torch.arange(n)[:, None])
    out = []
    for layer in range(m.layers):
        for head in range(m.heads):
            w = run.attentions[layer, head, :n]  # (n, L)
            s = row_stats(w, keys)
            f = _writes(m, run, layer, head)
            written = (w * f).masked_fill(~keys, 0.0).sum(-1)
            first = w[:, 0] * f[0] / written.clamp_min(1e-30)
            out.append(
                {
                    "layer": layer,
                    "head": head,
                    "entropy": float(s["entropy"].mean()),
                    "effective_keys": float(s["effective"].mean()),
                    "max_weight": float(s["max"].mean()),
                    "first_token": float(w[:, 0].mean()),
                    "first_token_value_weighted": float(first.mean()),
                    "uniform_rows": int((s["uniform"] & (s["n"] > 1)).sum()),
                }
            )
    return out
