"""Linear attention: φ(x) = elu(x) + 1 features, non-causal and causal (chunked prefix sums), and the
shared sums Performer reads."""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F

from .. import masks
from .explain import _explain_features
from .registry import register


def _running(states: torch.Tensor) -> None:
    """The prefix sum over chunks (dim 1), in place. On the CPU one add per chunk: cumsum over a
    middle dimension is slow there (at L = 16,384, one thread, the whole kernel ran 5-20 % faster
    with the adds, 5 rounds of 5 interleaved with cumsum); elsewhere, and where autograd records,
    cumsum (one launch, not one per chunk)."""
    if states.device.type == "cpu" and not (torch.is_grad_enabled() and states.requires_grad):
        for t in range(1, states.shape[1]):
            states[:, t].add_(states[:, t - 1])
    else:
        states.cumsum_(dim=1)


def _linear_sums(phi_q, phi_k, v, *, causal: bool, chunk: int = 64) -> torch.Tensor:
    """Σ_j a_ij v_j and, in one more column, Σ_j a_ij, for a_ij = φ(q_i)·φ(k_j) (j ≤ i when causal):
    (B, H, L, Dv + 1), numerator and denominator together, without the L x S matrix.

    Non-causal: the state [φ(K)ᵀ V | Σ_j φ(k_j)] (D x (Dv + 1)) once, then one product with φ(Q):
    O(L·D·Dv). Causal, in chunks of ``chunk`` positions: inside a chunk the masked c x c product on a
    matmul, across chunks the running state (a prefix sum of the chunks' states, each chunk reading
    the one before it), so O(L·(D + c)·Dv) time and (L/c)·D·Dv of state, never one per position.
    """
    B, H, L, D = phi_q.shape
    Dv = v.shape[-1]
    if not causal:
        state = torch.cat([phi_k.transpose(-2, -1) @ v, phi_k.sum(-2).unsqueeze(-1)], dim=-1)  # (B, H, D, Dv + 1)
        return phi_q @ state
    T = max(L, phi_k.shape[-2])  # cross-attention (S keys): j <= i on the same positions, both padded to T
    c = max(1, min(chunk, T))
    nc = -(-T // c)
    va = torch.cat([v, v.new_ones(*v.shape[:-1], 1)], dim=-1)  # the ones column makes the denominator
    phi_q, phi_k, va = (F.pad(t, (0, 0, 0, nc * c - t.shape[-2])) for t in (phi_q, phi_k, va))  # padded rows: 0
    n = B * H * nc
    qc, kc, vc = phi_q.reshape(n, c, D), phi_k.reshape(n, c, D), va.reshape(n, c, Dv + 1)
    states = torch.bmm(kc.transpose(-2, -1), vc)  # (n, D, Dv + 1): each chunk's own φ(K)ᵀ [V | 1]
    _running(states.view(B * H, nc, D, Dv + 1))  # the running state at the end of each chunk
    sums = torch.empty(n, c, Dv + 1, dtype=va.dtype, device=va.device)
    if n > 1:  # chunk t reads the state at the end of chunk t - 1 ...
        torch.bmm(qc[1:], states[:-1], out=sums[1:])
    sums.view(B * H, nc, c, Dv + 1)[:, 0].zero_()  # ... and the first chunk of a sequence has none before it
    sums.baddbmm_(torch.bmm(qc, kc.transpose(-2, -1)).tril_(), vc)  # inside the chunk: j <= i
    return sums.view(B, H, nc * c, Dv + 1)[:, :, :L]


def _ratio(sums: torch.Tensor) -> torch.Tensor:
    return sums[..., :-1] / sums[..., -1:].clamp_min(torch.finfo(sums.dtype).tiny)


def _linear(phi_q, phi_k, v, *, causal: bool, chunk: int = 64):
    """Σ_j φ(q_i)·φ(k_j) v_j / Σ_j φ(q_i)·φ(k_j) (j ≤ i when causal) without the L x S matrix."""
    return _ratio(_linear_sums(phi_q, phi_k, v, causal=causal, chunk=chunk))


def elu_features(x: torch.Tensor) -> torch.Tensor:
    return F.elu(x).add_(1.0)  # elu's backward reads its input, so adding in place is safe for autograd


def linear_elu_attention(q, k, v, *, causal: bool = False, scale: float | None = None):
    """Linear attention with φ(x) = elu(x) + 1: out_i = φ(q_i)ᵀ Σ_j φ(k_j) v_jᵀ / φ(q_i)ᵀ Σ_j φ(k_j).

    O(L·d·dv) time, O(d·dv) state; the causal form works in chunks (a small masked product inside
    each, the running state across them). Katharopoulos et al. 2020, "Transformers are RNNs".
    (``scale`` is not used: φ replaces exp.)
    """
    return _linear(elu_features(q), elu_features(k), v, causal=causal)


def causal_linear_attention(q, k, v, *, causal: bool = True, scale: float | None = None):
    """Causal linear attention (elu + 1 features), the recurrent, decoder-style form, computed in
    chunks: inside a chunk the masked product on a matmul, across chunks the running state
    Σ_{j<chunk} φ(k_j) v_jᵀ. Katharopoulos et al. 2020, "Transformers are RNNs"."""
    return _linear(elu_features(q), elu_features(k), v, causal=True)


def _feature_weights(features: Callable):
    """φ(q_i)·φ(k_j) normalised per row (causal: j ≤ i only)."""

    def weights(q, k, *, causal: bool, scale: float, **opts) -> torch.Tensor:
        phi_q, phi_k = features(q, k, **opts)
        a = phi_q @ phi_k.transpose(-2, -1)
        if causal:
            a = a.masked_fill(~masks.causal(a.shape[-2], a.shape[-1], device=q.device), 0.0)
        return a / a.sum(-1, keepdim=True).clamp_min(1e-30)

    return weights


def _elu_pair(q, k, **_):
    return elu_features(q), elu_features(k)


# Cost models (``sh``: bench.Shape)
def _elu_flops(L: int, sh) -> float:  # φ(K)ᵀ V and φ(Q) · state
    return sh.batch * sh.heads * 4 * L * sh.d_head * sh.d_head


def _feature_bytes(m: Callable, *, prefix_sums: bool = False):
    def peak(L: int, sh, db: int) -> int:
        bh, d, mm = sh.batch * sh.heads, sh.d_head, m(sh)
        chunks = -(-L // 64)
        state = bh * chunks * mm * d * db * 2 if (sh.causal or prefix_sums) else bh * mm * d * db
        return 4 * bh * L * mm * db + state + 2 * bh * L * d * db

    return peak


register(
    "linear_elu",
    linear_elu_attention,
    family="linear",
    formula=r"\frac{\phi(q_i)^\top \sum_j \phi(k_j) v_j^\top}{\phi(q_i)^\top \sum_j \phi(k_j)},"
    r"\ \phi(x)=\mathrm{elu}(x)+1",
    time="O(L·d²)",
    memory="O(L·d + d²)",
    paper="Katharopoulos et al. 2020, Transformers are RNNs",
    weights=_feature_weights(_elu_pair),
    explain=_explain_features(_elu_pair, linear_elu_attention),
    flops=_elu_flops,
    peak_bytes=_feature_bytes(lambda sh: sh.d_head),
    softmax=False,
)


register(
    "causal_linear",
    causal_linear_attention,
    family="linear",
    formula=r"\frac{\phi(q_i)^\top \sum_{j\le i} \phi(k_j) v_j^\top}{\phi(q_i)^\top \sum_{j\le i} \phi(k_j)}",
    time="O(L·d²)",
    memory="O(L·d + (L/c)·d²)",
    paper="Katharopoulos et al. 2020, Transformers are RNNs",
    weights=_feature_weights(_elu_pair),
    explain=_explain_features(_elu_pair, causal_linear_attention),
    flops=_elu_flops,
    peak_bytes=_feature_bytes(lambda sh: sh.d_head, prefix_sums=True),
    always_causal=True,
    softmax=False,
)
