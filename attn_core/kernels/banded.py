"""The shared banded engine of the sparse kernels: queries in blocks, each block's key window a
strided view, scores made a cache-sized chunk at a time (no L x L tensor), partial softmaxes merged
by their log-sum-exp."""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F


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
    nb = -(-L // block)
    pad = nb * block - L
    limit = torch.as_tensor(L if n_valid is None else n_valid, device=q.device).reshape(-1, 1, 1, 1)
    lo_edge = min_key + before * block  # blocks before this start may see keys < min_key
    hi_edge = int(limit.min()) - (1 + after) * block  # blocks after this may see keys >= n_valid

    if not need_lse and q.device.type == "cpu":
        out = _local_fused(q, k, v, block, before, after, scale, band, (lo_edge, hi_edge), min_key, limit)
        return out[:, :L], None
    kw, vw, c, bias = _windows(q, k, v, nb, block, before, after, pad, band)
    qb = (F.pad(q, (0, 0, 0, pad)) * scale).reshape(N, nb, block, D)
    out, lse = _local_chunked(qb, kw, vw, bias, c, (lo_edge, hi_edge), min_key, limit, need_lse)
    out, lse = out.view(N, nb * block, -1)[:, :L], None if lse is None else lse.view(N, nb * block)[:, :L]
    return out, lse


def _windows(q, k, v, nb: int, block: int, before: int, after: int, pad: int, band: Callable):
    """Each query block's key and value window as strided views of the padded keys and values
    (N, nb, width, D) (no copies), the key offsets from the block start and the band's bias."""
    N, _, D = k.shape
    Dv = v.shape[-1]
    width = (before + 1 + after) * block
    kp = F.pad(k, (0, 0, before * block, after * block + pad)).contiguous()
    vp = F.pad(v, (0, 0, before * block, after * block + pad)).contiguous()
    kw = kp.as_strided((N, nb, width, D), (kp.stride(0), block * D, D, 1))  # (N, nb, width, D) view
    vw = vp.as_strided((N, nb, width, Dv), (vp.stride(0), block * Dv, Dv, 1))

    c = torch.arange(width, device=q.device) - before * block  # key offset from the block start
    return kw, vw, c, _band_bias(block, width, before, band, q)


def _all_blocks(qb, kw, vw, bias, masked, out, lse, bufs) -> None:
    """``_softmax_blocks`` over every block of every sequence at once (N·nb of them), into ``out`` and
    ``lse`` (``masked``: the blocks' (nb, 1, width) keys outside the range, or None)."""
    N, nb, block, D = qb.shape
    width, Dv = kw.shape[2], vw.shape[-1]
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


def _local_chunked(qb, kw, vw, bias, c, edges_at: tuple[int, int], min_key: int, limit, need_lse: bool):
    """The blocks a few at a time (a cache-sized chunk of scores each), with the row log-sum-exp
    when ``need_lse``: out (N, nb, block, Dv) and lse (N, nb, block) or None. ``qb`` is scaled."""
    N, nb, block, _ = qb.shape
    width, Dv = kw.shape[2], vw.shape[-1]
    lo_edge, hi_edge = edges_at
    out = torch.empty(N, nb, block, Dv, dtype=qb.dtype, device=qb.device)
    lse = torch.empty(N, nb, block, dtype=qb.dtype, device=qb.device) if need_lse else None
    per_block = block * width * qb.element_size()
    chunk = _CHUNK_BYTES.get(qb.device.type, _CHUNK_BYTES["default"])
    step = max(1, chunk // per_block)

    # two score buffers reused by every chunk: a fresh megabyte per chunk costs page faults (glibc
    # maps and unmaps allocations of this size), which made short sequences 30 % slower
    rows = min(N * nb, step)
    bufs = [torch.empty(rows, block, width, dtype=qb.dtype, device=qb.device) for _ in range(2)]

    def edges(n0: int, n1: int, lim) -> torch.Tensor | None:
        if n0 * block >= lo_edge and n1 * block <= hi_edge:
            return None
        return _outside(n0, n1, block, c, min_key, lim)

    if N * nb <= step:  # short sequences: every block of every sequence in one product
        _all_blocks(qb, kw, vw, bias, edges(0, nb, limit), out, lse, bufs)
        return out, lse
    # the few blocks at either end that may see keys outside [min_key, n_valid) apart, the rest in chunks
    a, b = _inside(nb, block, edges_at)
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
    return out, lse


def _local_fused(q, k, v, block: int, before: int, after: int, scale: float, band: Callable, edges, min_key, limit):
    """The blocks on the CPU's fused attention (``scaled_dot_product_attention``, a flash-style
    kernel: scores, softmax and the weighted sum in one pass over cache-sized tiles). Each query
    block is one "head" of the call, its key window that head's keys and the band's bias (block,
    width) the same for every block. The blocks whose windows lie inside [min_key, n_valid) read
    their windows as strided views of the unpadded keys and values (no copy of either); only the
    few blocks at either end get padded windows of their own, with the keys outside masked too.
    Returns (N, nb * block, Dv); rows left with no key give 0."""
    N, L, _ = q.shape
    nb = -(-L // block)
    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
    a, b = _inside(nb, block, edges)
    out = torch.empty(N, nb * block, v.shape[-1], dtype=q.dtype, device=q.device)
    width = (before + 1 + after) * block
    bias = _band_bias(block, width, before, band, q)
    if b > a:
        part = F.scaled_dot_product_attention(
            *_inside_windows(q, k, v, a, b, block, before, width), attn_mask=bias, scale=scale
        )
        out[:, a * block : b * block] = part.view(N, -1, v.shape[-1])
    for n0, n1 in ((0, a), (b, nb)):
        if n1 > n0:
            out[:, n0 * block : n1 * block] = _edge_blocks(
                q, k, v, n0, n1, block, before, after, scale, bias, min_key, limit
            )
    return out


def _inside(nb: int, block: int, edges: tuple[int, int]) -> tuple[int, int]:
    """Blocks a .. b-1: those whose windows see no key below ``min_key`` nor at/after ``n_valid``
    (``edges``: the first row such a block may start at, the last row it may end at)."""
    lo_edge, hi_edge = edges
    a = min(nb, max(0, -(-lo_edge // block)))
    return a, max(a, min(nb, hi_edge // block))


def _inside_windows(q, k, v, a: int, b: int, block: int, before: int, width: int):
    """Query blocks a .. b-1 of contiguous (N, L, ·) q, k, v as (N, b - a, block, D), and their key and
    value windows, rows (n - before)·block .. + width, as strided views of k and v themselves (every
    one of those rows inside the sequence: no padding, no copy)."""
    N, _, D = q.shape
    Dv = v.shape[-1]
    start = (a - before) * block
    kw = k.as_strided((N, b - a, width, D), (k.stride(0), block * D, D, 1), k.storage_offset() + start * D)
    vw = v.as_strided((N, b - a, width, Dv), (v.stride(0), block * Dv, Dv, 1), v.storage_offset() + start * Dv)
    return q[:, a * block : b * block].view(N, b - a, block, D), kw, vw


def _outside(n0: int, n1: int, block: int, offsets: torch.Tensor, min_key: int, limit) -> torch.Tensor:
    """Which keys of blocks n0 .. n1-1's windows lie below ``min_key`` or at/after ``limit`` (``offsets``:
    each window place's key offset from its block start): (n, 1, width), or (N, n, 1, width) for a
    per-sequence limit."""
    j = torch.arange(n0, n1, device=offsets.device).view(-1, 1, 1) * block + offsets.view(1, 1, -1)
    return (j < min_key) | (j >= limit)


def _band_bias(block: int, width: int, before: int, band: Callable, q) -> torch.Tensor:
    """The band as an additive bias (block, width): 0 where a query of the block may see the key at
    that place of its window, -inf where not."""
    c = torch.arange(width, device=q.device) - before * block  # key offset from the block start
    r = torch.arange(block, device=q.device)
    bias = torch.zeros(block, width, dtype=q.dtype, device=q.device)
    return bias.masked_fill_(~band(r.view(-1, 1) - c.view(1, -1)), float("-inf"))


def _edge_blocks(q, k, v, n0: int, n1: int, block: int, before: int, after: int, scale, bias, min_key, limit):
    """Query blocks n0 .. n1-1 whose windows reach past either end (or below ``min_key``): their rows
    of q and keys and values padded with zeros, the keys outside [min_key, n_valid) masked as well.
    (N, (n1 - n0)·block, Dv); a row with no key gives 0."""
    N, L, D = q.shape
    n, width = n1 - n0, bias.shape[-1]
    lo, hi = (n0 - before) * block, (n1 + after) * block  # the key rows these windows span
    kp = F.pad(k[:, max(lo, 0) : min(hi, L)], (0, 0, max(-lo, 0), max(hi - L, 0)))
    vp = F.pad(v[:, max(lo, 0) : min(hi, L)], (0, 0, max(-lo, 0), max(hi - L, 0)))
    kw = kp.as_strided((N, n, width, D), (kp.stride(0), block * D, D, 1))
    vw = vp.as_strided((N, n, width, v.shape[-1]), (vp.stride(0), block * v.shape[-1], v.shape[-1], 1))
    qs = q[:, n0 * block : min(n1 * block, L)]
    qb = F.pad(qs, (0, 0, 0, n * block - qs.shape[1])).view(N, n, block, D)
    outside = _outside(n0, n1, block, torch.arange(width, device=q.device) - before * block, min_key, limit)
    part = F.scaled_dot_product_attention(qb, kw, vw, attn_mask=bias.masked_fill(outside, float("-inf")), scale=scale)
    return part.nan_to_num(0.0).view(N, n * block, -1)  # not in place: autograd keeps SDPA's output


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
