"""Explanations that read more of the layer than its attention weights.

Attention norms (Kobayashi et al., 2020): what query i receives from piece j in layer l is
Σ_h α^h_ij f^h(x_j), with f^h(x) = (x W_v^h + b_v^h) W_o^h the value transformed by the output
projection; its norm ‖Σ_h α^h_ij f^h(x_j)‖ is small for a piece that gets weight but carries a small
vector (a sink such as [SEP]).

Value zeroing (Mohebbi et al., 2023): zero piece j's value vector in every head of layer l, re-run the
layer from the same input and score VZ[i, j] = 1 − cos(output_i without j, output_i); rows are
normalised to sum to 1 and the layers are rolled out (VZ_L ... VZ_1, no residual added: the
layer's residual is already inside its output).

A decoder (``pre.causal``): the same with its own modules (``decoder.attend``: a block's output is the residual
stream after it), each value read at the last position (``methods.per_token(..., last=True)``).
"""

from __future__ import annotations

import numpy as np
import torch

from ..models import out_proj
from . import decoder as D
from . import encoder as E
from .methods import per_token
from .sentence import is_decoder


def norm_matrix(pre, passed: E.Pass, layer: int) -> np.ndarray:
    """(n, n) ‖Σ_h α^h_ij f^h(x_j)‖ for the first sentence of the batch."""
    alpha = passed.attentions[layer][0]  # (H, n, n)
    v = passed.values[layer][0]  # (H, n, d_head)
    W_o = out_proj(pre, layer)[0]  # (d_model, H·d_head): attention's output = context W_oᵀ + b_o
    H, dh = pre.heads, pre.d_head
    W_oh = W_o.T.reshape(H, dh, W_o.shape[0])  # (H, d_head, d_model): head h's rows of W_oᵀ
    fx = v @ W_oh  # (H, n, d_model)
    per_pair = torch.einsum("hij,hjd->ijd", alpha, fx)
    return per_pair.norm(dim=-1).double().numpy()


def norms(pre, passed) -> np.ndarray:
    """(layers, n) one value per piece per layer: the mean over the outputs of the norm matrix (a decoder: its
    last row)."""
    last = is_decoder(pre)
    return np.stack([per_token(norm_matrix(pre, passed, layer), last) for layer in range(pre.layers)])


def vz_matrix(pre, x: torch.Tensor, layer: int) -> np.ndarray:
    """(n, n) raw value-zeroing scores of one layer for one sentence x (n, d_model), no padding."""
    n = x.shape[0]
    keys = torch.ones(n + 1, n, dtype=torch.bool)
    zero = torch.cat([torch.zeros(1, n, dtype=torch.bool), torch.eye(n, dtype=torch.bool)])
    attend = D.attend if is_decoder(pre) else E.attend
    out = attend(pre, layer, x.expand(n + 1, n, x.shape[-1]), keys, zero_value=zero)[0]
    # out[0] is the layer unchanged, out[1 + j] with piece j's value zeroed; VZ[i, j] from out[1 + j][i]
    dist = 1 - E.cosine(out[1:], out[:1]).T  # (n outputs i, n zeroed j)
    return dist.clamp_min(0).double().numpy()


def normalise_rows(M: np.ndarray) -> np.ndarray:
    s = M.sum(-1, keepdims=True)
    return np.divide(M, s, out=np.full_like(M, 1.0 / M.shape[-1]), where=s > 0)


def value_zeroing(pre, passed) -> np.ndarray:
    """(layers, n): value zeroing rolled out up to each layer, one value per piece (mean over outputs; a
    decoder: the last output)."""
    rolled, out = None, []
    last = is_decoder(pre)
    with torch.inference_mode():
        for layer in range(pre.layers):
            M = normalise_rows(vz_matrix(pre, passed.hidden[layer][0], layer))
            rolled = M if rolled is None else M @ rolled
            out.append(per_token(rolled, last))
    return np.stack(out)
