"""Attention kernels behind one registry: full, sparse (banded/blocked) and linear.

Every kernel has one signature, ``fn(q, k, v, *, causal, scale, **options) -> out``, with
q (B, H, L, D), k (B, H, S, D), v (B, H, S, Dv) -> out (B, H, L, Dv). The efficient paths never
build an L x S tensor; ``effective_weights`` gives the L x S matrix each kernel amounts to, for
display at small L (sparse: softmax under the pattern; linear: normalised feature products).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F

from . import masks
from .errors import AttentionConfigError


def _scale(q: torch.Tensor, scale: float | None) -> float:
    return 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale


# ---------------------------------------------------------------------------- full


def full_attention(q, k, v, *, causal: bool = False, scale: float | None = None, mask: torch.Tensor | None = None):
    """Materialised softmax attention: softmax(Q Kᵀ · scale + mask) V, the L x S matrix in memory.

    Vaswani et al. 2017, "Attention Is All You Need". A row with nothing to attend to gives 0.
    """
    s = (q @ k.transpose(-2, -1)) * _scale(q, scale)  # (B, H, L, S)
    allowed = torch.ones(s.shape[-2:], dtype=torch.bool, device=q.device) if mask is None else mask
    if causal:
        allowed = allowed & masks.causal(*s.shape[-2:], device=q.device)
    if mask is None and not causal:
        return torch.softmax(s, dim=-1) @ v
    p = torch.softmax(s.masked_fill_(~allowed, float("-inf")), dim=-1).nan_to_num_(0.0)  # empty rows: 0, not NaN
    return p @ v


def sdpa_attention(q, k, v, *, causal: bool = False, scale: float | None = None, mask: torch.Tensor | None = None):
    """Fused softmax attention: ``torch.nn.functional.scaled_dot_product_attention`` (Flash /
    memory-efficient kernels where the device has them). Same math as the materialised path."""
    if mask is not None:
        if causal:
            mask = mask & masks.causal(*mask.shape[-2:], device=q.device)
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=masks.to_bias(mask, q.dtype), scale=scale)
        return out.nan_to_num(0.0)  # a fully masked row: 0, not NaN
    return F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale)


# ---------------------------------------------------------------------------- sparse


def _merge(out_a, lse_a, out_b, lse_b):
    """Combine two partial softmax results over disjoint key sets (flash-attention style)."""
    lse = torch.logaddexp(lse_a, lse_b)
    safe = torch.where(torch.isfinite(lse), lse, torch.zeros_like(lse))
    wa = torch.exp(lse_a - safe).nan_to_num(0.0).unsqueeze(-1)
    wb = torch.exp(lse_b - safe).nan_to_num(0.0).unsqueeze(-1)
    return out_a * wa + out_b * wb, lse


_CHUNK_BYTES = {"cpu": 1 << 20, "default": 256 << 20}  # scores per step: cache-sized on the CPU, few launches on a GPU


def _local(
    q,
    k,
    v,
    *,
    block: int,
    before: int,
    after: int,
    scale: float,
    band: Callable,
    min_key: int = 0,
    n_valid=None,
    need_lse: bool = False,
):
    """Blocked local attention: queries in block n see key blocks n-before .. n+after.

    q (N, L, D), k (N, L, D), v (N, L, Dv). ``band(d)`` says which offsets d = i - j are
    allowed; keys below ``min_key`` or at/after ``n_valid`` ((N,) or int, default L) are not.
    Key windows are strided views (no copies); scores are made a few blocks at a time, so
    memory is O(L·d) plus one cache-sized chunk: no L x L tensor, ever. The scale is folded into
    Q once, the band's -inf bias is added by the score product itself (``baddbmm``) and the
    softmax is one fused call: each chunk of scores is passed over as few times as possible.
    Returns out (N, L, Dv) and, with ``need_lse``, the row log-sum-exp (N, L) (-inf for a row
    with no key; such a row's output is 0), else None.
    """
    N, L, D = q.shape
    Dv = v.shape[-1]
    nb = -(-L // block)
    width = (before + 1 + after) * block
    pad = nb * block - L
    kp = F.pad(k, (0, 0, before * block, after * block + pad)).contiguous()
    vp = F.pad(v, (0, 0, before * block, after * block + pad)).contiguous()
    kw = kp.as_strided((N, nb, width, D), (kp.stride(0), block * D, D, 1))  # (N, nb, width, D) view
    vw = vp.as_strided((N, nb, width, Dv), (vp.stride(0), block * Dv, Dv, 1))

    c = torch.arange(width, device=q.device) - before * block  # key offset from the block start
    r = torch.arange(block, device=q.device)
    bias = torch.zeros(block, width, dtype=q.dtype, device=q.device)
    bias.masked_fill_(~band(r.view(-1, 1) - c.view(1, -1)), float("-inf"))  # (block, width)
    limit = torch.as_tensor(L if n_valid is None else n_valid, device=q.device).reshape(-1, 1, 1, 1)
    lo_edge = min_key + before * block  # blocks before this start may see keys < min_key
    hi_edge = int(limit.min()) - (1 + after) * block  # blocks after this may see keys >= n_valid

    if not need_lse and q.device.type == "cpu":
        qb = F.pad(q, (0, 0, 0, pad)).reshape(N, nb, block, D)
        out = _local_fused(qb, kw, vw, bias, scale, (lo_edge, hi_edge), block, c, min_key, limit)
        return out.reshape(N, nb * block, Dv)[:, :L], None
    qb = (F.pad(q, (0, 0, 0, pad)) * scale).reshape(N, nb, block, D)
    out = torch.empty(N, nb, block, Dv, dtype=q.dtype, device=q.device)
    lse = torch.empty(N, nb, block, dtype=q.dtype, device=q.device) if need_lse else None
    per_block = block * width * q.element_size()
    chunk = _CHUNK_BYTES.get(q.device.type, _CHUNK_BYTES["default"])
    step = max(1, chunk // per_block)

    # two score buffers reused by every chunk: a fresh megabyte per chunk costs page faults (glibc
    # maps and unmaps allocations of this size), which made short sequences 30 % slower
    rows = min(N * nb, step)
    bufs = [torch.empty(rows, block, width, dtype=q.dtype, device=q.device) for _ in range(2)]

    def edges(n0: int, n1: int, lim) -> torch.Tensor | None:
        if n0 * block >= lo_edge and n1 * block <= hi_edge:
            return None
        j = torch.arange(n0, n1, device=q.device).view(-1, 1, 1) * block + c.view(1, 1, -1)
        return (j < min_key) | (j >= lim)  # (n, 1, width), or (N, n, 1, width) for a per-sequence limit

    if N * nb <= step:  # short sequences: every block of every sequence in one product
        masked = edges(0, nb, limit)
        _softmax_blocks(
            qb.reshape(N * nb, block, D),
            kw.reshape(N * nb, width, D),
            vw.reshape(N * nb, width, Dv),
            bias,
            None if masked is None else masked.expand(N, nb, 1, width).reshape(N * nb, 1, width),
            out.view(N * nb, block, Dv),
            None if lse is None else lse.view(N * nb, block),
            bufs,
        )
    else:
        # the few blocks at either end that may see keys outside [min_key, n_valid) apart, the rest in chunks
        a = min(nb, max(0, -(-lo_edge // block)))
        b = max(a, min(nb, hi_edge // block))
        ranges = [(n0, min(end, n0 + step)) for lo, end in ((0, a), (a, b), (b, nb)) for n0 in range(lo, end, step)]
        for n in range(N):
            lim = limit[n if limit.shape[0] > 1 else 0, 0, 0]
            for n0, n1 in ranges:
                _softmax_blocks(
                    qb[n, n0:n1],
                    kw[n, n0:n1],
                    vw[n, n0:n1],
                    bias,
                    edges(n0, n1, lim),
                    out[n, n0:n1],
                    None if lse is None else lse[n, n0:n1],
                    bufs,
                )
    out, lse = out.view(N, nb * block, Dv)[:, :L], None if lse is None else lse.view(N, nb * block)[:, :L]
    return out, lse


def _local_fused(qb, kw, vw, bias, scale: float, edges: tuple[int, int], block: int, c, min_key: int, limit):
    """The blocks on the CPU's fused attention (``scaled_dot_product_attention``, a flash-style
    kernel: scores, softmax and the weighted sum in one pass over cache-sized tiles, reading the key
    windows through their strided views, no copies). Each query block is one "head" of the call,
    its key window that head's keys and ``bias`` (block, width) the band, the same for every block;
    the few blocks at either end whose windows reach keys outside [min_key, n_valid) get their own
    call with those keys masked as well. Rows left with no key give 0."""
    nb = qb.shape[1]
    lo_edge, hi_edge = edges
    a = min(nb, max(0, -(-lo_edge // block)))
    b = max(a, min(nb, hi_edge // block))
    if a == 0 and b == nb:  # no block reaches past either end
        return F.scaled_dot_product_attention(qb, kw, vw, attn_mask=bias, scale=scale)
    out = torch.empty(*qb.shape[:-1], vw.shape[-1], dtype=qb.dtype, device=qb.device)
    if b > a:
        out[:, a:b] = F.scaled_dot_product_attention(qb[:, a:b], kw[:, a:b], vw[:, a:b], attn_mask=bias, scale=scale)
    for n0, n1 in ((0, a), (b, nb)):
        if n1 <= n0:
            continue
        j = torch.arange(n0, n1, device=qb.device).view(-1, 1, 1) * block + c.view(1, 1, -1)  # (n, 1, width)
        outside = (j < min_key) | (j >= limit)  # (N or 1, n, 1, width)
        mask = bias.masked_fill(outside, float("-inf"))  # (N or 1, n, block, width)
        part = F.scaled_dot_product_attention(qb[:, n0:n1], kw[:, n0:n1], vw[:, n0:n1], attn_mask=mask, scale=scale)
        out[:, n0:n1] = part.nan_to_num_(0.0)  # a row with no key: 0, not NaN
    return out


def _softmax_blocks(qs, ks, vs, bias, masked, out, lse, bufs) -> None:
    """softmax(bias + Q Kᵀ) V for a batch of query blocks and their key windows, into ``out``
    (and the row log-sum-exp into ``lse`` when given); ``bufs``: two score buffers to reuse."""
    n = qs.shape[0]
    s = torch.baddbmm(bias, qs, ks.transpose(-1, -2), out=bufs[0][:n])  # (n, block, width)
    if masked is not None:
        s.masked_fill_(masked, float("-inf"))
    if lse is None:
        p = torch.ops.aten._softmax.out(s, -1, False, out=bufs[1][:n])  # torch.softmax, into the buffer
        if masked is not None:  # a row left with no key (past the end, before min_key) gives 0, not NaN
            p.nan_to_num_(0.0)
        torch.bmm(p, vs, out=out)
        return
    m = torch.logsumexp(s, dim=-1, keepdim=True)  # -inf for a row with no key
    safe = torch.where(torch.isfinite(m), m, torch.zeros_like(m))
    torch.bmm(s.sub_(safe).exp_(), vs, out=out)
    if lse is not None:
        lse.copy_(m.squeeze(-1))


def _band(window: int, causal: bool) -> Callable:
    return (lambda d: (d >= 0) & (d <= window)) if causal else (lambda d: d.abs() <= window)


def _block_for(window: int, length: int, device: torch.device | str = "cpu") -> tuple[int, int]:
    """Block size and look-around for a window: blocks of about w/2 (at least 16) keep the wasted
    part of each key window small while the matrix products stay large; on the CPU's fused kernel
    (which tiles the products itself) about w/4, wasting less of each window: 288 keys scored per
    query for w = 128 instead of 320 (257 are allowed)."""
    cpu = torch.device(device).type == "cpu"
    block = max(16, min(64, (window // 4 if cpu else window // 2) or 1), 1)
    block = min(block, max(length, 1))
    return block, -(-window // block)


def _flat(t: torch.Tensor) -> torch.Tensor:
    return t.reshape(-1, *t.shape[-2:])


def _self_only(name: str, q, k) -> None:
    if q.shape[-2] != k.shape[-2]:
        raise AttentionConfigError("kernel", "pattern_cross", kernel=name)


def _check_window(window: int) -> None:
    masks.check_positive("window", window)


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
    block, look = _block_for(window, L, q.device)
    out, _ = _local(
        _flat(q),
        _flat(k),
        _flat(v),
        block=block,
        before=look,
        after=0 if causal else look,
        scale=_scale(q, scale),
        band=_band(window, causal),
    )
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
    block, look = _block_for(window, m, q.device)
    out, _ = _local(
        split(q),
        split(k),
        split(v),
        block=block,
        before=look,
        after=0 if causal else look,
        scale=_scale(q, scale),
        band=_band(window, causal),
        n_valid=n_valid,
    )
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
    block, look = _block_for(window, L, q.device)
    out, lse = _local(
        _flat(q),
        _flat(k),
        _flat(v),
        block=block,
        before=look,
        after=0 if causal else look,
        scale=sc,
        band=_band(window, causal),
        min_key=g,
        need_lse=True,
    )
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


# ---------------------------------------------------------------------------- linear


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
    states.view(B * H, nc, D, Dv + 1).cumsum_(dim=1)  # the running state at the end of each chunk
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


def performer_split(m: int) -> int:
    """The first half of Performer's m features (the rest is the second): two independent draws."""
    return m if m == 1 else m // 2


def orthogonal_features(m: int, d: int, *, seed: int, device=None, dtype=torch.float32) -> torch.Tensor:
    """FAVOR+ random features, (m, d), in two independent halves (``performer_split``): in each, blocks
    of d mutually orthogonal directions with lengths drawn like a Gaussian vector's norm (chi with d
    degrees of freedom), every direction beside its negation (antithetic pairs: exp(ωᵀx) and
    exp(-ωᵀx) err in opposite directions, so their mean varies less)."""
    g = torch.Generator().manual_seed(seed)
    split = performer_split(m)
    halves = []
    for size in (split, m - split):
        if size == 0:
            continue
        n = -(-size // 2)
        blocks = [torch.linalg.qr(torch.randn(d, d, generator=g))[0].T for _ in range(-(-n // d))]
        base = torch.cat(blocks)[:n] * torch.randn(n, d, generator=g).norm(dim=1, keepdim=True)
        halves.append(torch.cat([base, -base])[:size])
    return torch.cat(halves).to(device=device, dtype=dtype)


def oprf_parameter(qs: torch.Tensor, ks: torch.Tensor) -> torch.Tensor:
    """A of the optimal positive random features, per sequence and head (..., 1, 1): the A that
    makes φ(x) = exp(A|ω|² + √(1-4A) ωᵀx - |x|²/2) vary least for this input's average |q + k|²
    (A = 0 is FAVOR+'s φ; both are unbiased for exp(qᵀk)). Likhosherstov et al. 2022,
    "Chefs' Random Tables: Non-Trigonometric Random Features" (FAVOR++)."""
    d = qs.shape[-1]
    z = qs.pow(2).sum(-1).mean(-1) + ks.pow(2).sum(-1).mean(-1) + 2 * (qs.mean(-2) * ks.mean(-2)).sum(-1)
    rho = z / d  # the mean of |q_i + k_j|² over all pairs, per dimension
    return ((1 - 2 * rho - ((2 * rho + 1) ** 2 + 8 * rho).sqrt()) / 16)[..., None, None]


def performer_features(x: torch.Tensor, omega: torch.Tensor, *, is_query: bool, a=0.0) -> torch.Tensor:
    """Positive random features φ(x) = exp(A|ω|² + √(1-4A) ωᵀx - |x|²/2) (x already scaled by
    √scale; A = 0: FAVOR+'s). The largest exponent is subtracted first (per row for queries, one
    constant per sequence for keys), as the reference does: it cancels in the ratio and keeps exp
    finite. The constant factor (1-4A)^(d/4) / √m is left out for the same reason."""
    a = torch.as_tensor(a, dtype=x.dtype, device=x.device)
    ex = (x @ omega.T) * (1 - 4 * a).sqrt() + a * (omega * omega).sum(-1) - (x * x).sum(-1, keepdim=True) / 2
    stab = ex.amax(dim=-1, keepdim=True) if is_query else ex.amax(dim=(-2, -1), keepdim=True)
    return ex.sub_(stab).exp_()


SHRINK_ROWS = 16  # query rows (evenly spaced) on which Performer measures its own noise


def _scaled_qk(q, k, scale: float | None):
    """q and k scaled so that q'·k' = scale · q·k (a negative scale flips the keys)."""
    sc = _scale(q, scale)
    r = math.sqrt(abs(sc))
    return q * r, k * (r if sc >= 0 else -r)


def performer_halves(q, k, *, scale: float | None, features: int, seed: int) -> list[tuple]:
    """[(φ(Q), φ(K))] per independent half of the m features (one pair when m = 1): the
    ``performer_features`` of q·√scale and k·√scale, computed for all m at once. Every term of the
    exponent comes out of one matrix product, [x | 1 | -scale·|x|²/2] times
    [√scale·√(1-4A)·ω | A|ω|² | 1]ᵀ (no pass over the L x m exponents to add them); a query's
    features are then one softmax per half (dividing a row by a constant cancels in the ratio),
    a key's have their half's largest exponent subtracted before exp."""
    sc = _scale(q, scale)
    r = math.sqrt(abs(sc))
    d = q.shape[-1]
    omega = orthogonal_features(features, d, seed=seed, device=q.device, dtype=q.dtype)
    a = _oprf_from(q, k, sc)  # (..., 1, 1)
    cols = torch.cat(
        [
            omega * (r * (1 - 4 * a).sqrt()),  # (..., m, d)
            (a[..., 0] * (omega * omega).sum(-1)).unsqueeze(-1),  # (..., m, 1)
            torch.ones_like(a).expand(*a.shape[:-2], features, 1),
        ],
        dim=-1,
    )  # (..., m, d + 2)

    def exponents(x, sign: float):
        one = torch.ones_like(x[..., :1])
        return torch.cat([x * sign, one, (x * x).sum(-1, keepdim=True) * (-abs(sc) / 2)], dim=-1) @ cols.transpose(
            -2, -1
        )

    eq, ek = exponents(q, 1.0), exponents(k, 1.0 if sc >= 0 else -1.0)  # (..., L, m), (..., S, m)
    split = performer_split(features)
    parts = [slice(0, split), slice(split, features)] if split < features else [slice(0, features)]
    for sl in parts:
        ek[..., sl].sub_(ek[..., sl].amax(dim=(-2, -1), keepdim=True))
    ek.exp_()
    return [(torch.softmax(eq[..., sl], dim=-1), ek[..., sl]) for sl in parts]


def _oprf_from(q, k, sc: float) -> torch.Tensor:
    """``oprf_parameter`` of q·√|sc| and ±k·√|sc| from q's and k's own statistics (no scaled copies)."""
    d = q.shape[-1]
    z = abs(sc) * (q.pow(2).sum(-1).mean(-1) + k.pow(2).sum(-1).mean(-1)) + 2 * sc * (q.mean(-2) * k.mean(-2)).sum(-1)
    rho = z / d
    return ((1 - 2 * rho - ((2 * rho + 1) ** 2 + 8 * rho).sqrt()) / 16)[..., None, None]


def _uniform_rows(rows: torch.Tensor, S: int, causal: bool, dtype) -> torch.Tensor:
    """Uniform attention on the given query rows: 1/S, or 1/(i+1) over j <= i when causal."""
    j = torch.arange(S, device=rows.device)
    allowed = (j.view(1, -1) <= rows.view(-1, 1)) if causal else torch.ones(len(rows), S, dtype=torch.bool)
    allowed = allowed.to(rows.device)
    return allowed.to(dtype) / allowed.sum(-1, keepdim=True).clamp_min(1).to(dtype), allowed


def performer_shrinkage(halves: list[tuple], *, causal: bool) -> tuple[torch.Tensor, dict]:
    """λ (B, H, 1, 1) for out = uniform + λ·(Performer - uniform): positive-part James-Stein.

    Random features are unbiased but noisy; where their noise is larger than attention's own
    departure from uniform (large logits, few features) they do worse than averaging the values.
    The two independent halves measure the noise on ``SHRINK_ROWS`` query rows: the halves'
    weights W₁, W₂ differ by noise only, so N = |W₁ - W₂|²/4 estimates the noise of their mean W,
    whose distance T = |W - U|² from uniform is signal plus noise; λ = max(0, 1 - N/T) keeps the
    part of the estimate that is signal (λ → 1 as m grows, λ → 0 where the features are noise).
    From q and k alone, so the weights stay a matrix (out = weights @ v)."""
    if len(halves) == 1:
        return torch.ones(*halves[0][0].shape[:-2], 1, 1, dtype=halves[0][0].dtype), {}
    pq1, pk1 = halves[0]
    L, S = pq1.shape[-2], pk1.shape[-2]
    rows = torch.linspace(0, L - 1, min(SHRINK_ROWS, L), device=pq1.device).round().long()
    u, allowed = _uniform_rows(rows, S, causal, pq1.dtype)
    w = []
    for pq, pk in halves:
        a = pq[..., rows, :] @ pk.transpose(-2, -1)
        if causal:
            a = a.masked_fill(~allowed, 0.0)
        w.append(a / a.sum(-1, keepdim=True).clamp_min(torch.finfo(a.dtype).tiny))
    noise = (w[0] - w[1]).pow(2).sum((-2, -1)) / 4
    total = ((w[0] + w[1]) / 2 - u).pow(2).sum((-2, -1))
    lam = (1 - noise / total.clamp_min(torch.finfo(total.dtype).tiny)).clamp(0.0, 1.0)
    return lam[..., None, None], {"noise": noise, "total": total}


def _uniform_out(v: torch.Tensor, causal: bool) -> torch.Tensor:
    if not causal:
        return v.mean(-2, keepdim=True)
    count = torch.arange(1, v.shape[-2] + 1, device=v.device, dtype=v.dtype).unsqueeze(-1)
    return v.cumsum(-2) / count


def performer_attention(
    q, k, v, *, causal: bool = False, scale: float | None = None, features: int = 64, seed: int = 0
):
    """Performer (FAVOR+): softmax attention approximated with m positive orthogonal random
    features, E[φ(q)·φ(k)] = exp(scale · q·k). O(L·m·d) time. Choromanski et al. 2021, "Rethinking
    Attention with Performers". As the reference (performer-pytorch): orthogonal features, the
    largest exponent subtracted, features redrawn per seed. Beyond it, three variance reductions:
    antithetic pairs (ω and -ω), the optimal positive features' A for this input (FAVOR++,
    Likhosherstov et al. 2022), and the estimate shrunk toward uniform attention by as much as its
    own measured noise says (James-Stein; the two halves of the features are drawn independently and
    their disagreement is the noise): never much worse than averaging the values, close to exact
    softmax as m grows."""
    _check_performer(q.shape[-2], k.shape[-2], causal=causal, cross=False, features=features)
    halves = performer_halves(q, k, scale=scale, features=features, seed=seed)
    lam, _ = performer_shrinkage(halves, causal=causal)
    # out = (1 - λ) u + λ · mean over the halves of num_h / den_h, written straight into one tensor
    out = _uniform_out(v, causal) * (1 - lam)
    for pq, pk in halves:
        sums = _linear_sums(pq, pk, v, causal=causal)
        w = (lam / len(halves)) / sums[..., -1:].clamp_min(torch.finfo(sums.dtype).tiny)
        out = (
            torch.addcmul(out, sums[..., :-1], w)
            if out.shape != sums[..., :-1].shape
            else out.addcmul_(sums[..., :-1], w)
        )
    return out


def linformer_projection(k_rows: int, S: int, *, seed: int, device=None, dtype=torch.float32) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(k_rows, S, generator=g) / math.sqrt(k_rows)).to(device=device, dtype=dtype)


def linformer_attention(q, k, v, *, causal: bool = False, scale: float | None = None, proj_k: int = 64, seed: int = 0):
    """Linformer: keys and values projected along the sequence to k rows, K' = E K, V' = F V,
    then softmax(Q K'ᵀ / √d) V'. O(L·k·d) time and memory. Wang et al. 2020, "Linformer"."""
    S = k.shape[-2]
    _check_linformer(q.shape[-2], S, causal=causal, cross=False, proj_k=proj_k)
    E = linformer_projection(proj_k, S, seed=seed, device=q.device, dtype=q.dtype)
    Fm = linformer_projection(proj_k, S, seed=seed + 1, device=q.device, dtype=q.dtype)
    return F.scaled_dot_product_attention(q, E @ k, Fm @ v, scale=scale)


# ---------------------------------------------------------------------------- FlexAttention

FLEX_PATTERNS = {  # pattern -> (predicate on positions, its options as this app names them -> the predicate's)
    "sliding_window": (masks.allows_sliding_window, {"window": "window"}),
    "dilated": (masks.allows_dilated, {"window": "window", "dilation": "dilation"}),
    "global_window": (masks.allows_global_window, {"window": "window", "global_tokens": "global_tokens"}),
    "block": (masks.allows_block, {"block": "block_size"}),
}
_FLEX: dict[str, Callable] = {}


def flex_unavailable() -> str | None:
    """Why FlexAttention cannot run here (None when it can): it needs torch.compile, and on the CPU a C++ compiler."""
    import shutil

    try:
        from torch.nn.attention.flex_attention import create_block_mask, flex_attention  # noqa: F401
    except ImportError:
        return f"torch {torch.__version__} has no FlexAttention"
    if not torch.cuda.is_available() and not (shutil.which("g++") or shutil.which("c++") or shutil.which("clang++")):
        return "no C++ compiler for torch.compile on the CPU"
    return None


def _flex_mask_mod(pattern: str, causal: bool, opts: dict):
    allows, names = FLEX_PATTERNS[pattern]
    kwargs = {names[k]: v for k, v in opts.items() if k in names}

    def mask_mod(b, h, i, j):
        allowed = allows(i, j, **kwargs)
        return allowed & (j <= i) if causal else allowed

    return mask_mod


def flex_attention(
    q,
    k,
    v,
    *,
    causal: bool = False,
    scale: float | None = None,
    pattern: str = "sliding_window",
    window: int = 2,
    dilation: int = 2,
    global_tokens: int = 1,
    block: int = 2,
):
    """FlexAttention: PyTorch's ``flex_attention`` with this app's mask patterns (sliding window,
    dilated, global + window, block) written as a ``mask_mod`` and compiled by ``torch.compile``
    into a block-sparse kernel. What a practitioner would use for a sparse pattern today. The
    first call at a shape compiles (seconds); the benchmark reports that apart from the run time."""
    from torch.nn.attention.flex_attention import create_block_mask
    from torch.nn.attention.flex_attention import flex_attention as flex

    opts = {"window": window, "dilation": dilation, "global_tokens": global_tokens, "block": block}
    for name in FLEX_PATTERNS[pattern][1]:
        if name != "global_tokens":
            masks.check_positive(name, opts[name])
    if "fn" not in _FLEX:
        _FLEX["fn"] = torch.compile(flex, dynamic=False)
    L, S = q.shape[-2], k.shape[-2]
    mask = create_block_mask(_flex_mask_mod(pattern, causal, opts), None, None, L, S, device=q.device.type)
    return _FLEX["fn"](q, k, v, block_mask=mask, scale=scale)


# ---------------------------------------------------------------------------- registry


# ---------------------------------------------------------------------------- the registry
#
# A variant is one spec: its function, what it is called and where it comes from, the options it
# takes, what it can and cannot do (``check``), the L x S matrix it amounts to (``weights``) and its
# cost models (``flops``, ``peak_bytes``). The trace, the Variants page, the sweep and the CLI ask
# the spec; nothing outside this file branches on a variant's name. A new variant is one function
# and one ``register(...)`` call (see the README's recipe).


def _softmax_weights(pattern: Callable | None):
    """Softmax of the scaled scores under the variant's pattern (or causal / nothing)."""

    def weights(q, k, *, causal: bool, scale: float, **opts) -> torch.Tensor:
        L, S = q.shape[-2], k.shape[-2]
        if pattern is not None:
            mask = pattern(L, S, causal, **opts)
        else:
            mask = masks.causal(L, S) if causal else masks.full(L, S)
        s = (q @ k.transpose(-2, -1)) * scale
        return torch.softmax(s.masked_fill(~mask.to(q.device), float("-inf")), dim=-1).nan_to_num(0.0)

    return weights


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


def _performer_pair(q, k, *, scale: float | None = None, features: int = 64, seed: int = 0, **_):
    """Both halves' features side by side: (φ(Q), φ(K)) with m columns each."""
    halves = performer_halves(q, k, scale=scale, features=features, seed=seed)
    return torch.cat([h[0] for h in halves], -1), torch.cat([h[1] for h in halves], -1)


def _performer_weights(q, k, *, causal: bool, scale: float, features: int = 64, seed: int = 0, **_) -> torch.Tensor:
    """uniform + λ·(the mean of the two halves' normalised φ(q_i)·φ(k_j) - uniform)."""
    halves = performer_halves(q, k, scale=scale, features=features, seed=seed)
    lam, _ = performer_shrinkage(halves, causal=causal)
    L, S = q.shape[-2], k.shape[-2]
    u, allowed = _uniform_rows(torch.arange(L, device=q.device), S, causal, q.dtype)
    est = 0.0
    for pq, pk in halves:
        a = (pq @ pk.transpose(-2, -1)).masked_fill(~allowed, 0.0)
        est = est + a / a.sum(-1, keepdim=True).clamp_min(torch.finfo(a.dtype).tiny) / len(halves)
    return u + lam * (est - u)


def _linformer_weights(q, k, *, causal: bool, scale: float, proj_k: int = 64, seed: int = 0, **_) -> torch.Tensor:
    """softmax(Q (EK)ᵀ) F: mixes the values with signed weights."""
    S = k.shape[-2]
    E = linformer_projection(proj_k, S, seed=seed, device=q.device, dtype=q.dtype)
    Fm = linformer_projection(proj_k, S, seed=seed + 1, device=q.device, dtype=q.dtype)
    return torch.softmax((q @ (E @ k).transpose(-2, -1)) * scale, dim=-1) @ Fm


# ---------------------------------------------------------------------------- a variant's own steps
#
# ``explain(q, k, v, *, causal, scale, **opts) -> Explained`` (q (H, L, D), one sentence): the
# intermediates a variant computes on its efficient path, named for what they are, with its output
# from the variant's own function. The Step-by-step page draws them; the JSON export records them.


@dataclass(frozen=True)
class Stage:
    key: str  # the catalogue's vs_<key> (its title) and vs_<key>_note (what to look at, quoting ``facts``)
    formula: str  # LaTeX
    code: str  # the PyTorch lines, with this input's shapes
    tensors: dict  # name -> (H or 1, rows, cols); NaN where the variant computes nothing
    labels: dict = field(default_factory=dict)  # name -> how the chart names it (math, language-neutral)
    facts: dict = field(default_factory=dict)  # numbers the note quotes


@dataclass(frozen=True)
class Explained:
    stages: tuple[Stage, ...]
    output: torch.Tensor  # (H, L, Dv): the variant's own function on this input
    weights: torch.Tensor  # (H, L, S): the matrix the output amounts to, for display (out = weights @ v)

    def tensors(self) -> dict:
        return {name: t for st in self.stages for name, t in st.tensors.items()}


# What the rows and columns of each named intermediate are: a query or key token, a feature, a
# dimension of d or d_v, one of Linformer's k rows, or nothing (a single row or column).
AXES = {
    "pattern": ("query", "key"),
    "band_scores": ("query", "key"),
    "band_weights": ("query", "key"),
    "amounts_to": ("query", "key"),
    "omega": ("feature", "d"),
    "phi_q": ("query", "feature"),
    "phi_k": ("key", "feature"),
    "state": ("feature", "dv"),
    "normaliser": ("", "feature"),
    "numerator": ("query", "dv"),
    "denominator": ("query", ""),
    "half_1": ("query", "dv"),
    "half_2": ("query", "dv"),
    "uniform_out": ("query", "dv"),
    "output": ("query", "dv"),
    "E": ("k", "key"),
    "F": ("k", "key"),
    "K_proj": ("k", "d"),
    "V_proj": ("k", "dv"),
    "scores_Lk": ("query", "k"),
    "weights_Lk": ("query", "k"),
}


def _shape(t: torch.Tensor) -> str:
    return str(tuple(t.shape))


def _explain_sparse(pattern: Callable, fn: Callable):
    """The pairs the pattern allows, scored one by one (no L x S product), a softmax over each
    row's pairs and the weighted sum of their values."""

    def explain(q, k, v, *, causal: bool, scale: float, **opts) -> Explained:
        H, L, _ = q.shape
        S, Dv = k.shape[1], v.shape[-1]
        allowed = pattern(L, S, causal, **opts)
        i, j = allowed.nonzero(as_tuple=True)  # the pairs computed
        s = (q[:, i] * k[:, j]).sum(-1) * scale  # (H, pairs)
        rows = i.expand(H, -1)
        top = torch.full((H, L), float("-inf"), dtype=q.dtype).scatter_reduce(1, rows, s, "amax")
        e = torch.exp(s - top[:, i])
        total = torch.zeros(H, L, dtype=q.dtype).index_add_(1, i, e)
        w = e / total[:, i].clamp_min(torch.finfo(q.dtype).tiny)
        mixed = torch.zeros(H, L, Dv, dtype=q.dtype).index_add_(1, i, w.unsqueeze(-1) * v[:, j])

        def dense(values: torch.Tensor, fill: float) -> torch.Tensor:
            out = torch.full((H, L, S), fill, dtype=q.dtype)
            out[:, i, j] = values
            return out

        pairs = int(i.numel())
        weights = dense(w, 0.0)
        out = fn(q[None], k[None], v[None], causal=causal, scale=scale, **opts)[0]
        stages = (
            Stage(
                "pattern",
                r"\mathcal{A} = \{(i, j) : \text{the pattern allows } j \text{ for } i\}",
                f"allowed = pattern({L}, {S})   # bool {_shape(allowed)}\ni, j = allowed.nonzero(as_tuple=True)"
                f"   # {pairs} pairs, not {L * S}",
                {"pattern": allowed.to(q.dtype).unsqueeze(0)},
                {"pattern": "pattern"},
                {"pairs": pairs, "all": L * S, "share": 100.0 * pairs / max(L * S, 1)},
            ),
            Stage(
                "band_scores",
                r"e_{ij} = \frac{q_i \cdot k_j}{\sqrt{d_k}}\quad (i, j) \in \mathcal{A}",
                f"e = (Q[i] * K[j]).sum(-1) * {scale:.4g}   # {pairs} scores, one per allowed pair",
                {"band_scores": dense(s, float("nan"))},
                {"band_scores": "e_ij"},
                {"pairs": pairs},
            ),
            Stage(
                "band_softmax",
                r"\alpha_{ij} = \frac{\exp(e_{ij})}{\sum_{(i, j') \in \mathcal{A}} \exp(e_{ij'})}",
                "alpha = exp(e - row_max[i]) / row_sum[i]   # a softmax over each row's allowed pairs only\n"
                f"out = zeros({L}, {Dv}).index_add_(0, i, alpha[:, None] * V[j])   # {_shape(out[0])}",
                {"band_weights": dense(w, float("nan"))},
                {"band_weights": "α_ij"},
                {"max_diff": float((mixed - out).abs().max()) if out.numel() else 0.0},
            ),
        )
        return Explained(stages, out, weights)

    return explain


def prefix_state(phi_k: torch.Tensor, v: torch.Tensor, i: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Causal linear attention's running state after position ``i``: Σ_{j≤i} φ(k_j) v_jᵀ and Σ_{j≤i} φ(k_j)."""
    return phi_k[:, : i + 1].transpose(-2, -1) @ v[:, : i + 1], phi_k[:, : i + 1].sum(1)


def _explain_features(pair: Callable, fn: Callable, *, random_features: bool = False):
    """φ(Q) and φ(K), the d × d_v state Σ φ(k_j) v_jᵀ and the normaliser Σ φ(k_j), then the output:
    (φ(Q) (φ(K)ᵀ V)) in that order, so no L x S matrix is formed. Random features (Performer): the
    two halves read out apart, then their mean shrunk toward uniform attention by λ."""

    def explain(q, k, v, *, causal: bool, scale: float, **opts) -> Explained:
        phi_q, phi_k = pair(q, k, scale=scale, **opts)
        _H, L, m = phi_q.shape
        Dv = v.shape[-1]
        state = phi_k.transpose(-2, -1) @ v  # (H, m, Dv)
        z = phi_k.sum(1)  # (H, m)
        a = phi_q @ phi_k.transpose(-2, -1)  # display only: what the output amounts to
        if causal:
            a = a.tril()
        weights = a / a.sum(-1, keepdim=True).clamp_min(1e-30)
        if causal:
            num, den = a @ v, a.sum(-1, keepdim=True)
        else:
            num, den = phi_q @ state, phi_q @ z.unsqueeze(-1)
        out = fn(q[None], k[None], v[None], causal=causal, scale=scale, **opts)[0]
        stages = []
        if random_features:
            omega = orthogonal_features(opts["features"], q.shape[-1], seed=opts["seed"], dtype=q.dtype)
            stages.append(
                Stage(
                    "random_features",
                    r"\omega \in \mathbb{R}^{m \times d},\ \text{rows orthogonal in blocks of } d",
                    f"omega = orthogonal_features({m}, {q.shape[-1]}, seed={opts['seed']})   # {_shape(omega)}",
                    {"omega": omega.unsqueeze(0)},
                    {"omega": "ω"},
                    {"m": m, "d": q.shape[-1]},
                )
            )
        feature = (
            r"\phi(x) = \exp\!\left(A\|\omega\|^2 + \sqrt{1-4A}\,\omega x - \tfrac{\|x\|^2}{2}\right) > 0"
            if random_features
            else r"\phi(x) = \mathrm{elu}(x) + 1 > 0"
        )
        make = "performer_features(Q, omega, a=A)" if random_features else "F.elu(Q) + 1"
        stages.append(
            Stage(
                "features",
                feature,
                f"phi_q = {make}   # {_shape(phi_q[0])}\nphi_k = {make.replace('Q', 'K')}   # {_shape(phi_k[0])}",
                {"phi_q": phi_q, "phi_k": phi_k},
                {"phi_q": "φ(Q)", "phi_k": "φ(K)"},
                {"m": m},
            )
        )
        prefix = r"\sum_{j \le i}" if causal else r"\sum_j"
        stages.append(
            Stage(
                "prefix_state" if causal else "state",
                rf"S = {prefix} \phi(k_j) v_j^\top \in \mathbb{{R}}^{{{m} \times {Dv}}},\quad z = {prefix} \phi(k_j)",
                (
                    "S_i = S_{i-1} + outer(phi_k[i], V[i]);  z_i = z_{i-1} + phi_k[i]   # one state, updated per token"
                    if causal
                    else f"S = phi_k.T @ V   # {_shape(state[0])}: d × d_v, whatever L is\nz = phi_k.sum(0)   # ({m},)"
                ),
                {"state": state, "normaliser": z.unsqueeze(1)},
                {"state": "S = Σ φ(k_j) v_jᵀ", "normaliser": "z = Σ φ(k_j)"},
                {"m": m, "dv": Dv, "L": L},
            )
        )
        if random_features:
            weights = _performer_stages(stages, q, k, v, out, causal=causal, scale=scale, **opts)
        else:
            stages.append(
                Stage(
                    "normalise",
                    r"o_i = \frac{\phi(q_i)^\top S}{\phi(q_i)^\top z}",
                    f"num = phi_q @ S   # {_shape(num[0])}\nden = phi_q @ z   # ({L},)\nout = num / den[:, None]"
                    f"   # {_shape(out[0])}: O(L·m·d_v), never L × L",
                    {"numerator": num, "denominator": den},
                    {"numerator": "φ(Q)ᵀ S", "denominator": "φ(Q)ᵀ z"},
                    {"max_diff": float((num / den.clamp_min(1e-30) - out).abs().max())},
                )
            )
        facts = {"L": L}
        if random_features:  # how good the approximation is on this sentence, beside the trivial baseline
            s = (q @ k.transpose(-2, -1)) * scale
            allowed = masks.causal(L, k.shape[1]) if causal else masks.full(L, k.shape[1])
            exact = torch.softmax(s.masked_fill(~allowed, float("-inf")), dim=-1)
            uniform = allowed.to(q.dtype) / allowed.sum(-1, keepdim=True)
            facts["error"] = float((weights - exact).norm() / exact.norm())
            facts["uniform"] = float((uniform - exact).norm() / exact.norm())
        stages.append(
            Stage(
                "amounts_to",
                (
                    r"\alpha = U + \lambda\,(\bar\alpha - U)"
                    if random_features
                    else r"\alpha_{ij} = \frac{\phi(q_i)\cdot\phi(k_j)}{\sum_{j'} \phi(q_i)\cdot\phi(k_{j'})}"
                ),
                "alpha = (phi_q @ phi_k.T) / den[:, None]   # for display only: the efficient path never makes it"
                if not random_features
                else "alpha = U + lam * (alpha_mean - U)   # for display only: the efficient path never makes it",
                {"amounts_to": weights},
                {"amounts_to": "α"},
                facts,
            )
        )
        return Explained(tuple(stages), out, weights)

    return explain


def _performer_stages(stages: list, q, k, v, out, *, causal: bool, scale: float, **opts) -> torch.Tensor:
    """Performer's last two steps (appended to ``stages``): each half's read-out, then their mean
    shrunk toward uniform attention. Returns the weights the output amounts to."""
    halves = performer_halves(q, k, scale=scale, **opts)
    lam, _ = performer_shrinkage(halves, causal=causal)
    H, L = q.shape[:2]
    reads = [_linear(pq[None], pk[None], v[None], causal=causal)[0] for pq, pk in halves]
    est = sum(reads) / len(reads)
    u = _uniform_out(v, causal).expand(H, L, v.shape[-1])
    sizes = [h[0].shape[-1] for h in halves]
    tensors = {f"half_{n + 1}": r for n, r in enumerate(reads)}
    stages.append(
        Stage(
            "read_halves",
            r"\bar o_i = \tfrac{1}{2}\Big(\frac{\phi_1(q_i)^\top S_1}{\phi_1(q_i)^\top z_1}"
            r" + \frac{\phi_2(q_i)^\top S_2}{\phi_2(q_i)^\top z_2}\Big)",
            "o1, o2 = (phi @ S_h / (phi @ z_h) for each half)   # the two halves' features, drawn independently\n"
            f"o_mean = (o1 + o2) / 2   # {_shape(est[0])}",
            tensors,
            {name: name.replace("half_", "half ") for name in tensors},
            {"m1": sizes[0], "m2": sizes[-1] if len(sizes) > 1 else 0},
        )
    )
    lam_h = lam.reshape(-1)
    stages.append(
        Stage(
            "shrink",
            r"o = u + \lambda\,(\bar o - u),\quad \lambda = \max\!\Big(0,\ 1 - \frac{\|W_1 - W_2\|^2 / 4}"
            r"{\|\bar W - U\|^2}\Big)",
            f"lam = max(0, 1 - noise / total)   # per head, measured on {min(SHRINK_ROWS, L)} query rows\n"
            f"out = u + lam * (o_mean - u)   # {_shape(out[0])}",
            {"uniform_out": u, "output": out},
            {"uniform_out": "u", "output": "o"},
            {
                "lam": float(lam_h.mean()),
                "lam_min": float(lam_h.min()),
                "lam_max": float(lam_h.max()),
                "max_diff": float((u + lam * (est - u) - out).abs().max()),
            },
        )
    )
    return _performer_weights(q, k, causal=causal, scale=scale, **opts)


def _explain_linformer(q, k, v, *, causal: bool, scale: float, proj_k: int = 64, seed: int = 0, **_) -> Explained:
    """K and V projected along the sequence to k rows, then a softmax over those k columns."""
    S = k.shape[1]
    E = linformer_projection(proj_k, S, seed=seed, dtype=q.dtype)
    Fm = linformer_projection(proj_k, S, seed=seed + 1, dtype=q.dtype)
    k_proj, v_proj = E @ k, Fm @ v  # (H, k, D), (H, k, Dv)
    scores = (q @ k_proj.transpose(-2, -1)) * scale  # (H, L, k)
    w = torch.softmax(scores, dim=-1)
    out = linformer_attention(q[None], k[None], v[None], scale=scale, proj_k=proj_k, seed=seed)[0]
    L = q.shape[1]
    stages = (
        Stage(
            "projections",
            r"K' = E K,\ V' = F V,\quad E, F \in \mathbb{R}^{k \times S}",
            f"E, F = randn({proj_k}, {S}) / sqrt({proj_k})   # seeded\nK_proj = E @ K   # {_shape(k_proj[0])}\n"
            f"V_proj = F @ V   # {_shape(v_proj[0])}",
            {"E": E.unsqueeze(0), "F": Fm.unsqueeze(0), "K_proj": k_proj, "V_proj": v_proj},
            {"E": "E", "F": "F", "K_proj": "K' = EK", "V_proj": "V' = FV"},
            {"k": proj_k, "S": S},
        ),
        Stage(
            "low_rank_scores",
            r"e = \frac{Q K'^\top}{\sqrt{d_k}} \in \mathbb{R}^{L \times k}",
            f"e = Q @ K_proj.T * {scale:.4g}   # {_shape(scores[0])}: L × k, not L × S",
            {"scores_Lk": scores},
            {"scores_Lk": "Q K'ᵀ / √d_k"},
            {"k": proj_k, "L": L},
        ),
        Stage(
            "low_rank_softmax",
            r"o = \mathrm{softmax}(e)\, V'",
            f"alpha = softmax(e, dim=-1)   # {_shape(w[0])}\nout = alpha @ V_proj   # {_shape(out[0])}",
            {"weights_Lk": w},
            {"weights_Lk": "softmax(e)"},
            {"max_diff": float((w @ v_proj - out).abs().max())},
        ),
        Stage(
            "amounts_to",
            r"\alpha_{\text{eff}} = \mathrm{softmax}(e)\, F \in \mathbb{R}^{L \times S}",
            "alpha_eff = alpha @ F   # for display only: signed, rows sum to Σ of F's columns, not 1",
            {"amounts_to": w @ Fm},
            {"amounts_to": "softmax(e) F"},
            {"L": L},
        ),
    )
    return Explained(stages, out, w @ Fm)


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


def _full_flops(L: int, sh) -> float:  # Q Kᵀ and weights @ V over every pair (j <= i when causal)
    return sh.batch * sh.heads * 4 * (L * (L + 1) // 2 if sh.causal else L * L) * sh.d_head


def _full_bytes(L: int, sh, db: int) -> int:  # scores and probabilities
    return 2 * sh.batch * sh.heads * L * L * db + 2 * sh.batch * sh.heads * L * sh.d_head * db


def _sdpa_bytes(L: int, sh, db: int) -> int:  # worst case: the math backend materialises the scores
    return sh.batch * sh.heads * L * L * db + 2 * sh.batch * sh.heads * L * sh.d_head * db


def _banded_bytes(L: int, sh, db: int) -> int:  # O(L·d) plus one cache-sized chunk of scores
    return 5 * sh.batch * sh.heads * L * sh.d_head * db + (1 << 20) * 2


def _elu_flops(L: int, sh) -> float:  # φ(K)ᵀ V and φ(Q) · state
    return sh.batch * sh.heads * 4 * L * sh.d_head * sh.d_head


def _performer_flops(L: int, sh) -> float:  # the features of Q and K, then φ(K)ᵀ V and φ(Q) · state
    return sh.batch * sh.heads * 8 * L * sh.features * sh.d_head


def _feature_bytes(m: Callable, *, prefix_sums: bool = False):
    def peak(L: int, sh, db: int) -> int:
        bh, d, mm = sh.batch * sh.heads, sh.d_head, m(sh)
        chunks = -(-L // 64)
        state = bh * chunks * mm * d * db * 2 if (sh.causal or prefix_sums) else bh * mm * d * db
        return 4 * bh * L * mm * db + state + 2 * bh * L * d * db

    return peak


def _check_nothing(L: int, S: int, *, causal: bool, cross: bool, **opts) -> None:
    return None


def _check_pattern(name: str):
    def check(L: int, S: int, *, causal: bool, cross: bool, **opts) -> None:
        if cross:
            raise AttentionConfigError("kernel", "pattern_cross", kernel=name)

    return check


def _check_performer(L: int, S: int, *, causal: bool, cross: bool, features: int = 64, **opts) -> None:
    if features < 1:
        raise AttentionConfigError("features", "at_least_one", value=features)


def _check_linformer(L: int, S: int, *, causal: bool, cross: bool, proj_k: int = 64, **opts) -> None:
    if causal:
        raise AttentionConfigError("causal", "linformer_causal")
    if not 1 <= proj_k <= S:
        raise AttentionConfigError("proj_k", "linformer_k", k=proj_k, n=S)


@dataclass(frozen=True)
class Kernel:
    name: str
    fn: Callable  # fn(q, k, v, *, causal, scale, **options) -> out
    label: str
    family: str  # full | sparse | linear | low_rank
    formula: str  # LaTeX
    time: str
    memory: str
    paper: str
    check: Callable  # (L, S, *, causal, cross, **options) -> None, or raises AttentionConfigError
    weights: Callable  # (q, k, *, causal, scale, **options) -> (..., L, S): out = weights @ v
    flops: Callable  # (L, shape) -> multiply-adds x 2 of its main products
    peak_bytes: Callable  # (L, shape, dtype bytes) -> peak extra bytes of one call
    options: tuple[str, ...] = ()  # every keyword it takes (seed included where it draws)
    sweep: str | None = None  # the option an error curve sweeps on the Variants page
    always_causal: bool = False
    dot_product: bool = True  # works on dot-product scores only (no additive score)
    softmax: bool = True  # its weights are a softmax of the scores (under its pattern); else ``weights`` shows them
    teaching: bool = True  # shown on the Variants page (a second implementation of the same math is not)
    compiled: bool = False  # its first call at a shape compiles: the benchmark times that apart
    pattern: Callable | None = None  # (L, S, causal, **opts) -> (L, S) bool, for sparse kernels
    explain: Callable | None = None  # (q, k, v, *, causal, scale, **opts) -> Explained: its own steps; None = full

    @property
    def doc(self) -> str:
        import inspect

        return inspect.getdoc(self.fn) or ""


KERNELS: dict[str, Kernel] = {}


def register(name: str, fn: Callable, **spec) -> Kernel:
    """Add a variant to the registry (``spec``: the ``Kernel`` fields by keyword)."""
    spec.setdefault("check", _check_nothing)
    kernel = Kernel(name=name, fn=fn, **spec)
    KERNELS[name] = kernel
    return kernel


def unregister(name: str) -> None:
    KERNELS.pop(name, None)


def _pattern(mode: str, opt_names: dict[str, str]):
    def build(L: int, S: int, causal: bool, **opts) -> torch.Tensor:
        kwargs = {mask_kw: opts[opt] for opt, mask_kw in opt_names.items()}
        return masks.build_mask(mode, L, S, also_causal=causal, **kwargs)

    return build


def _sparse(name, fn, mode, opt_names, **spec) -> Kernel:
    pattern = _pattern(mode, opt_names)
    return register(
        name,
        fn,
        family="sparse",
        pattern=pattern,
        weights=_softmax_weights(pattern),
        explain=_explain_sparse(pattern, fn),
        check=_check_pattern(name),
        flops=_pattern_flops(mode),
        peak_bytes=_banded_bytes,
        options=tuple(opt_names),
        **spec,
    )


_SOFTMAX = r"\mathrm{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}}\right)V"
register(
    "full",
    full_attention,
    label="Full (materialised)",
    family="full",
    formula=_SOFTMAX,
    time="O(L·S·d)",
    memory="O(L·S)",
    paper="Vaswani et al. 2017, Attention Is All You Need",
    weights=_softmax_weights(None),
    flops=_full_flops,
    peak_bytes=_full_bytes,
    dot_product=False,
)
register(
    "sdpa",
    sdpa_attention,
    label="Full (fused SDPA)",
    family="full",
    formula=_SOFTMAX,
    time="O(L·S·d)",
    memory="O(L) to O(L·S) by backend",
    paper="Dao et al. 2022, FlashAttention; PyTorch scaled_dot_product_attention",
    weights=_softmax_weights(None),
    flops=_full_flops,
    peak_bytes=_sdpa_bytes,
    teaching=False,
)
_sparse(
    "sliding_window",
    sliding_window_attention,
    "sliding_window",
    {"window": "window"},
    label="Sliding window",
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
    {"window": "window", "dilation": "dilation"},
    label="Dilated window",
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
    {"window": "window", "global_tokens": "global_tokens"},
    label="Global + window",
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
    {"block": "block_size"},
    label="Block-local",
    formula=r"\mathrm{softmax}_{\lfloor i/b\rfloor=\lfloor j/b\rfloor}\!\left(\frac{q_i k_j^\top}{\sqrt{d_k}}\right)v_j",
    time="O(L·b·d)",
    memory="O(L·b)",
    paper="Qiu et al. 2020, Blockwise Self-Attention",
    sweep="block",
)


def _check_flex(L: int, S: int, *, causal: bool, cross: bool, **opts) -> None:
    why = flex_unavailable()
    if why:
        raise AttentionConfigError("kernel", "flex_unavailable", reason=why)
    _check_pattern("flex")(L, S, causal=causal, cross=cross)


def _flex_pattern(L: int, S: int, causal: bool, *, pattern: str = "sliding_window", **opts) -> torch.Tensor:
    i, j = torch.arange(L).view(-1, 1), torch.arange(S).view(1, -1)
    return _flex_mask_mod(pattern, causal, opts)(None, None, i, j)


register(
    "flex",
    flex_attention,
    label="FlexAttention (compiled)",
    family="sparse",
    formula=r"\mathrm{softmax}_{\mathrm{mask\_mod}(i,j)}\!\left(\frac{q_i k_j^\top}{\sqrt{d_k}}\right)v_j",
    time="O(L·w·d)",
    memory="O(L·w)",
    paper="PyTorch FlexAttention (He et al. 2024); the patterns as above",
    pattern=_flex_pattern,
    weights=_softmax_weights(_flex_pattern),
    explain=_explain_sparse(_flex_pattern, flex_attention),
    check=_check_flex,
    flops=_pattern_flops(None),
    peak_bytes=_banded_bytes,
    options=("pattern", "window", "dilation", "global_tokens", "block"),
    sweep="window",
    compiled=True,
    teaching=False,
)
register(
    "linear_elu",
    linear_elu_attention,
    label="Linear (elu+1)",
    family="linear",
    formula=r"\frac{\phi(q_i)^\top \sum_j \phi(k_j) v_j^\top}{\phi(q_i)^\top \sum_j \phi(k_j)},\ \phi(x)=\mathrm{elu}(x)+1",
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
    label="Causal linear (elu+1)",
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
register(
    "performer",
    performer_attention,
    label="Performer (FAVOR+)",
    family="linear",
    formula=r"\phi(x)=\tfrac{1}{\sqrt m}\exp\!\left(\omega^\top x-\tfrac{\|x\|^2}{2}\right),\ \omega\ \text{orthogonal random}",
    time="O(L·m·d)",
    memory="O(L·m + m·d)",
    paper="Choromanski et al. 2021, Rethinking Attention with Performers",
    weights=_performer_weights,
    explain=_explain_features(_performer_pair, performer_attention, random_features=True),
    check=_check_performer,
    flops=_performer_flops,
    peak_bytes=_feature_bytes(lambda sh: sh.features),
    options=("features", "seed"),
    sweep="features",
    softmax=False,
)
register(
    "linformer",
    linformer_attention,
    label="Linformer",
    family="low_rank",
    formula=r"\mathrm{softmax}\!\left(\frac{Q (EK)^\top}{\sqrt{d_k}}\right)(FV),\ E,F\in\mathbb{R}^{k\times S}",
    time="O(L·k·d)",
    memory="O(L·k)",
    paper="Wang et al. 2020, Linformer",
    weights=_linformer_weights,
    explain=_explain_linformer,
    check=_check_linformer,
    flops=lambda L, sh: sh.batch * sh.heads * 8 * L * sh.proj_k * sh.d_head,
    peak_bytes=lambda L, sh, db: (
        2 * sh.batch * sh.heads * L * sh.proj_k * db + 4 * sh.batch * sh.heads * L * sh.d_head * db
    ),
    options=("proj_k", "seed"),
    sweep="proj_k",
    softmax=False,
)


def kernel_options(kernel: Kernel, **available) -> dict:
    """The subset of ``available`` options this kernel takes."""
    return {name: available[name] for name in kernel.options if name in available}


def effective_weights(name: str, q, k, *, causal: bool = False, scale: float | None = None, **opts) -> torch.Tensor:
    """The L x S matrix a kernel amounts to, for display at small L: out = weights @ v exactly.

    Sparse kernels: softmax restricted to the pattern. Linear kernels: φ(q_i)·φ(k_j)
    normalised per row. Linformer: softmax(Q (EK)ᵀ) F, which mixes values with signed weights.
    """
    kern = KERNELS[name]
    return kern.weights(q, k, causal=causal or kern.always_causal, scale=_scale(q, scale), **opts)


def run_kernel(name: str, q, k, v, *, causal: bool = False, scale: float | None = None, **opts) -> torch.Tensor:
    kern = KERNELS[name]
    return kern.fn(q, k, v, causal=causal or kern.always_causal, scale=scale, **opts)
