"""Sparse attention: sliding window, dilated, global + window and block-local, on the banded
engine (``banded._local``); their patterns are ``masks.PATTERNS``' predicates, their FLOPs count
the pairs each pattern allows with the kernel's own options."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from .. import masks
from . import native
from .banded import _band, _block_for, _local, _merge
from .base import _check_pattern, _flat, _scale, _self_only
from .explain import _explain_sparse
from .full import _softmax_weights, sdpa_attention
from .notebook_cells import NotebookSteps, pattern_mask, sparse_cells
from .registry import Kernel, register


def _check_window(window: int) -> None:
    masks.check_positive("window", window)


def _windowed(q, k, v, window: int, causal: bool, scale: float, **edges):
    """The banded engine for a window of w on each side (before only, when causal) over (N, L, D)
    q, k, v: on the CPU the compiled band kernel (``native``), which scores each few queries
    against only their own keys; else blocks with the look-around chosen for w and the band's
    predicate. ``edges``: min_key, n_valid, need_lse as ``_local`` takes them."""
    if native.usable(q, k, v):
        return native.band_attention(q, k, v, before=window, after=0 if causal else window, scale=scale, **edges)
    block, look = _block_for(window, q.shape[-2], q.device)
    after = 0 if causal else look
    return _local(q, k, v, block=block, before=look, after=after, scale=scale, band=_band(window, causal), **edges)


def sliding_window_attention(q, k, v, *, causal: bool = False, scale: float | None = None, window: int = 2):
    """Sliding window (local) attention: token i attends to j with |i - j| <= w.

    Computed in blocks, each query block seeing the key blocks within reach of its window (only
    those before it when causal), like lucidrains' local-attention; scores are made a few blocks
    at a time: O(L·w·d) time, O(L·d) memory beyond a cache-sized chunk.
    Beltagy et al. 2020, "Longformer"; Child et al. 2019, "Sparse Transformers".
    """
    _self_only("sliding window", q, k)
    _check_window(window)
    B, H, L, _ = q.shape
    out, _ = _windowed(_flat(q), _flat(k), _flat(v), window, causal, _scale(q, scale))
    return out.view(B, H, L, -1)


def dilated_attention(
    q, k, v, *, causal: bool = False, scale: float | None = None, window: int = 2, dilation: int = 2
):
    """Dilated sliding window: token i attends to j = i ± t·r for t = 0..w (r the dilation).

    The positions with the same remainder mod r form r interleaved sequences; each runs the
    sliding window of size w. Receptive field w·r on each side at the cost of w.
    Child et al. 2019 ("strided" pattern); Beltagy et al. 2020 (dilated windows).
    """
    _self_only("dilated", q, k)
    masks.check_positive("dilation", dilation)
    _check_window(window)
    B, H, L, _ = q.shape
    r = dilation
    Lp = -(-L // r) * r
    pad = Lp - L

    def split(t):  # (B, H, L, d) -> (B·H·r, Lp/r, d), position p = m·r + rem
        t = F.pad(t, (0, 0, 0, pad))
        return t.view(B, H, Lp // r, r, t.shape[-1]).transpose(2, 3).reshape(B * H * r, Lp // r, t.shape[-1])

    n_valid = torch.tensor([-(-(L - rem) // r) for rem in range(r)], device=q.device).repeat(B * H)
    m = Lp // r
    out, _ = _windowed(split(q), split(k), split(v), window, causal, _scale(q, scale), n_valid=n_valid)
    out = out.view(B, H, r, m, -1).transpose(2, 3).reshape(B, H, Lp, -1)
    return out[:, :, :L]


def global_window_attention(
    q, k, v, *, causal: bool = False, scale: float | None = None, window: int = 2, global_tokens: int = 1
):
    """Global + sliding window (Longformer / BigBird): the first g tokens attend to all tokens and
    all tokens attend to them; everyone else sees a window of w on each side.

    Three parts, merged by their log-sum-exp: the band (keys j >= g), the g global keys for every
    row, and full rows for the g global queries. O(L·(w + g)·d) time and memory.
    Beltagy et al. 2020, "Longformer"; Zaheer et al. 2020, "Big Bird".
    """
    _self_only("global + window", q, k)
    _check_window(window)
    B, H, L, _ = q.shape
    g = min(global_tokens, L)
    sc = _scale(q, scale)
    out, lse = _windowed(_flat(q), _flat(k), _flat(v), window, causal, sc, min_key=g, need_lse=True)
    out, lse = out.view(B, H, L, -1), lse.view(B, H, L)
    if g == 0:
        return out
    sg = (q @ k[:, :, :g].transpose(-2, -1)) * sc  # (B, H, L, g)
    if causal:
        sg = sg.masked_fill(~masks.causal(L, g, device=q.device), float("-inf"))
    lse_g = torch.logsumexp(sg, dim=-1)
    pg = torch.exp(sg - torch.where(torch.isfinite(lse_g), lse_g, torch.zeros_like(lse_g)).unsqueeze(-1))
    out, _ = _merge(out, lse, pg @ v[:, :, :g], lse_g)
    rows = sdpa_attention(q[:, :, :g], k, v, scale=sc, mask=masks.causal(g, L, device=q.device) if causal else None)
    return torch.cat([rows, out[:, :, g:]], dim=2)


def block_attention(q, k, v, *, causal: bool = False, scale: float | None = None, block: int = 2):
    """Block-local attention: the sequence is cut into blocks of b tokens, and attention stays
    inside each block. O(L·b·d) time, O(L·b) memory. Qiu et al. 2020, "Blockwise Self-Attention"."""
    _self_only("block", q, k)
    masks.check_positive("block", block)
    B, H, L, _ = q.shape
    b = min(block, L)
    band = (
        (lambda d: d >= 0) if causal else (lambda d: torch.ones_like(d, dtype=torch.bool))
    )  # same block: any offset inside it
    out, _ = _local(_flat(q), _flat(k), _flat(v), block=b, before=0, after=0, scale=_scale(q, scale), band=band)
    return out.view(B, H, L, -1)


# Cost models. ``sh`` has batch, heads, d_head, causal and the kernels' options (window, dilation,
# global_tokens, block, features, proj_k: bench.Shape); each model reads its own kernel's options.
def _band_rows(L: int, window: int, causal: bool) -> torch.Tensor:
    """Per query row, how many keys j have |i - j| <= window (and j <= i when causal)."""
    i = torch.arange(L, dtype=torch.int64)
    hi = i if causal else (i + window).clamp_max(L - 1)
    return hi - (i - window).clamp_min(0) + 1


def pattern_pairs(
    pattern: str, L: int, *, causal: bool, window: int = 2, dilation: int = 2, global_tokens: int = 1, block: int = 2
) -> int:
    """The exact number of (query, key) pairs a sparse pattern allows on L tokens (j <= i when causal),
    counted row by row in O(L): what the pattern's mask sums to, without building it."""
    if L <= 0:
        return 0
    if pattern == "sliding_window":
        return int(_band_rows(L, window, causal).sum())
    if pattern == "dilated":  # r interleaved sequences, each with the window
        return sum(int(_band_rows(-(-(L - rem) // dilation), window, causal).sum()) for rem in range(min(dilation, L)))
    if pattern == "global_window":
        g = min(max(global_tokens, 0), L)
        i = torch.arange(L, dtype=torch.int64)
        lo = (i - window).clamp_min(0)
        hi = i if causal else (i + window).clamp_max(L - 1)
        seen_global = (i + 1).clamp_max(g) if causal else torch.full_like(i, g)  # keys j < g the row may see
        overlap = (hi.clamp_max(g - 1) - lo + 1).clamp_min(0)  # ... already inside its band
        rows = (hi - lo + 1) + seen_global - overlap
        rows[:g] = i[:g] + 1 if causal else L  # a global query sees every key
        return int(rows.sum())
    if pattern == "block":
        full, rest = divmod(L, max(block, 1))
        each = (lambda n: n * (n + 1) // 2) if causal else (lambda n: n * n)
        return full * each(block) + each(rest)
    raise KeyError(pattern)


def _pattern_flops(pattern: str | None):
    """Q Kᵀ and weights @ V over the pairs the pattern allows, with the kernel's own options
    (``pattern`` None: FlexAttention's, read from ``sh.pattern``)."""

    def flops(L: int, sh) -> float:
        opts = {n: getattr(sh, n) for n in ("window", "dilation", "global_tokens", "block") if hasattr(sh, n)}
        name = pattern or getattr(sh, "pattern", "sliding_window")
        return sh.batch * sh.heads * 4 * pattern_pairs(name, L, causal=sh.causal, **opts) * sh.d_head

    return flops


def _banded_bytes(L: int, sh, db: int) -> int:  # O(L·d) plus one cache-sized chunk of scores
    return 5 * sh.batch * sh.heads * L * sh.d_head * db + (1 << 20) * 2


def _pattern(mode: str):
    """The (L, S) mask of a sparse kernel: ``masks.PATTERNS[mode]`` bound to the kernel's options."""

    def build(L: int, S: int, causal: bool, **opts) -> torch.Tensor:
        return masks.pattern_mask(mode, L, S, causal=causal, **opts)

    return build


def _sparse(name, fn, mode, **spec) -> Kernel:
    """Register a sparse kernel: its pattern, weights, steps, check and cost models from ``mode``."""
    pattern = _pattern(mode)
    return register(
        name,
        fn,
        family="sparse",
        pattern=pattern,
        weights=_softmax_weights(pattern),
        explain=_explain_sparse(pattern, fn),
        notebook=NotebookSteps(sparse_cells, mask=pattern_mask(mode)),
        check=_check_pattern(name),
        flops=_pattern_flops(mode),
        peak_bytes=_banded_bytes,
        options=masks.PATTERNS[mode][1],
        **spec,
    )


_sparse(
    "sliding_window",
    sliding_window_attention,
    "sliding_window",
    formula=r"\mathrm{softmax}_{|i-j|\le w}\!\left(\frac{q_i k_j^\top}{\sqrt{d_k}}\right)v_j",
    time="O(L·w·d)",
    memory="O(L·w)",
    paper="Beltagy et al. 2020, Longformer",
    sweep="window",
)


_sparse(
    "dilated",
    dilated_attention,
    "dilated",
    formula=r"\mathrm{softmax}_{j=i\pm t r,\ t\le w}\!\left(\frac{q_i k_j^\top}{\sqrt{d_k}}\right)v_j",
    time="O(L·w·d)",
    memory="O(L·w)",
    paper="Child et al. 2019, Sparse Transformers; Beltagy et al. 2020",
    sweep="window",
)


_sparse(
    "global_window",
    global_window_attention,
    "global_window",
    formula=r"\mathrm{softmax}_{|i-j|\le w\ \lor\ i<g\ \lor\ j<g}\!\left(\frac{q_i k_j^\top}{\sqrt{d_k}}\right)v_j",
    time="O(L·(w+g)·d)",
    memory="O(L·(w+g))",
    paper="Beltagy et al. 2020, Longformer; Zaheer et al. 2020, Big Bird",
    sweep="window",
)


_sparse(
    "block",
    block_attention,
    "block",
    formula=r"\mathrm{softmax}_{\lfloor i/b\rfloor=\lfloor j/b\rfloor}"
    r"\!\left(\frac{q_i k_j^\top}{\sqrt{d_k}}\right)v_j",
    time="O(L·b·d)",
    memory="O(L·b)",
    paper="Qiu et al. 2020, Blockwise Self-Attention",
    sweep="block",
)
