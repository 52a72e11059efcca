"""Linear attention: φ(x) = elu(x) + 1 features, non-causal and causal (chunked prefix sums: ``linear_sums``),
its registrations and cost models (the peak-memory model Performer shares)."""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F

from .. import masks
from . import native
from .explain import _explain_features
from .linear_sums import CHUNK, _in_steps, _ratio, _span_sums, _whole_sums
from .notebook_cells import NotebookSteps
from .notebook_features import linear_cells
from .registry import register


def elu_features(x: torch.Tensor) -> torch.Tensor:
    return F.elu(x).add_(1.0)  # elu's backward reads its input, so adding in place is safe for autograd


def _elu_into(x: torch.Tensor, out: torch.Tensor, tmp: torch.Tensor) -> torch.Tensor:
    """``elu_features(x)`` written into ``out`` (``tmp`` a scratch tensor of the same shape), as
    max(x, 0) + exp(min(x, 0)): the same function (x + 1 above 0, eˣ below) in four cheap passes
    instead of elu's expm1 and an add, about 1.4x faster on the CPU; it agrees with ``elu_features``
    to float rounding (a relative 1e-7)."""
    torch.clamp_min(x, 0, out=out)
    return out.add_(torch.clamp_max(x, 0, out=tmp).exp_())


def _elu_linear(q, k, v, *, causal: bool):
    if (not causal or q.shape[-2] == k.shape[-2]) and native.usable(q, k, v):  # compiled (native/linear.cpp)
        B, H, L, _ = q.shape
        flat = [t.reshape(B * H, t.shape[-2], t.shape[-1]) for t in (q, k, v)]
        out = native.causal_linear(*flat, chunk=CHUNK) if causal else native.linear(*flat)
        return out.view(B, H, L, -1)
    if _in_steps(q, k, v, causal=causal):
        return _span_sums(q, k, v, causal=causal, chunk=CHUNK, ratio=True, feature=_elu_into)
    return _ratio(_whole_sums(elu_features(q), elu_features(k), v, causal=causal))


def linear_elu_attention(q, k, v, *, causal: bool = False, scale: float | None = None):
    """Linear attention with φ(x) = elu(x) + 1: out_i = φ(q_i)ᵀ Σ_j φ(k_j) v_jᵀ / φ(q_i)ᵀ Σ_j φ(k_j).

    O(L·d·dv) time, O(d·dv) state; the causal form works in chunks (a small masked product inside
    each, the running state across them). Katharopoulos et al. 2020, "Transformers are RNNs".
    (``scale`` is not used: φ replaces exp.)
    """
    return _elu_linear(q, k, v, causal=causal)


def causal_linear_attention(q, k, v, *, causal: bool = True, scale: float | None = None):
    """Causal linear attention (elu + 1 features), the recurrent, decoder-style form, computed in
    chunks: inside a chunk the masked product on a matmul, across chunks the running state
    Σ_{j<chunk} φ(k_j) v_jᵀ. Katharopoulos et al. 2020, "Transformers are RNNs"."""
    return _elu_linear(q, k, v, causal=True)


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
def chunk_pairs(L: int, chunk: int = CHUNK) -> int:
    """The (i, j) pairs with j <= i inside the chunks of the causal form (``chunk`` positions each)."""
    if L <= 0:
        return 0
    c = min(chunk, L)
    full, rest = divmod(L, c)
    return full * c * (c + 1) // 2 + rest * (rest + 1) // 2


def _elu_flops(L: int, sh) -> float:
    """φ(K)ᵀ V and φ(Q) · state (the state built and read once per position); causal, the chunked
    form's products inside each chunk too: φ(q_i)·φ(k_j) and its weight times v_j for the pairs
    j <= i of a chunk (the masked-out half of the c x c product is not counted)."""
    d = sh.d_head
    inside = 2 * chunk_pairs(L) * (d + d) if sh.causal else 0
    return sh.batch * sh.heads * (4 * L * d * d + inside)


def _feature_bytes(m: Callable, *, prefix_sums: bool = False):
    def peak(L: int, sh, db: int) -> int:
        bh, d, mm = sh.batch * sh.heads, sh.d_head, m(sh)
        chunks = -(-L // CHUNK)  # the whole-sequence path (a GPU): every chunk's state at once
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
    notebook=NotebookSteps(linear_cells),
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
    notebook=NotebookSteps(linear_cells),
    flops=_elu_flops,
    peak_bytes=_feature_bytes(lambda sh: sh.d_head, prefix_sums=True),
    always_causal=True,
    softmax=False,
)
