"""Linear attention's sums Σ_j φ(q_i)·φ(k_j) [v_j | 1] without the L x S matrix, for features already
made (elu + 1, Performer's): over the whole sequence at once (any device, differentiable), or on the CPU a
span of positions at a time in reused buffers; non-causal, and causal in chunks (prefix sums)."""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F

_SPAN = 1024  # positions per step of the CPU loop: a step's features, chunk states and scores stay in cache
CHUNK = 32  # positions per chunk of the causal form (its masked product inside, the running state across):
# 32 ran 4-6 % faster than 64 on one CPU thread at L = 16,384 (two runs of 7 interleaved rounds)


def _running(states: torch.Tensor) -> None:
    """The prefix sum over chunks (dim 1), in place: on the CPU one add per chunk (cumsum over a
    middle dimension is slow there), elsewhere cumsum (one launch, not one per chunk)."""
    if states.device.type == "cpu":
        for t in range(1, states.shape[1]):
            states[:, t].add_(states[:, t - 1])
    else:
        states.cumsum_(dim=1)


def _in_steps(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, *, causal: bool) -> bool:
    """Whether the CPU loop over spans (``_span_sums``) computes these: on the CPU, for sequences
    longer than one span (shorter ones are faster in one go: the loop's buffers cost more than they
    save), where autograd does not record (the loop writes into reused buffers), and, causal, for
    self-attention (L = S). On a GPU one launch over the whole sequence (``_whole_sums``) beats a loop."""
    L, S = q.shape[-2], k.shape[-2]
    if any(t.device.type != "cpu" for t in (q, k, v)) or max(L, S) <= _SPAN or (causal and L != S):
        return False
    return not (torch.is_grad_enabled() and any(t.requires_grad for t in (q, k, v)))


def _linear_sums(phi_q, phi_k, v, *, causal: bool, chunk: int = CHUNK) -> torch.Tensor:
    """Σ_j a_ij v_j and, in one more column, Σ_j a_ij, for a_ij = φ(q_i)·φ(k_j) (j ≤ i when causal):
    (B, H, L, Dv + 1), numerator and denominator together, without the L x S matrix."""
    if _in_steps(phi_q, phi_k, v, causal=causal):
        return _span_sums(phi_q, phi_k, v, causal=causal, chunk=chunk, ratio=False)
    return _whole_sums(phi_q, phi_k, v, causal=causal, chunk=chunk)


def _whole_sums(phi_q, phi_k, v, *, causal: bool, chunk: int = CHUNK) -> torch.Tensor:
    """``_linear_sums`` over the whole sequence at once (any device, differentiable).

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
    scores = torch.bmm(qc, kc.transpose(-2, -1)).tril_()  # inside the chunk: j <= i
    if torch.is_grad_enabled() and any(t.requires_grad for t in (qc, kc, vc)):
        running = states.view(B * H, nc, D, Dv + 1).cumsum(dim=1)  # the state at the end of each chunk
        before = torch.cat([torch.zeros_like(running[:, :1]), running[:, :-1]], dim=1)  # ... and before it
        sums = torch.bmm(qc, before.reshape(n, D, Dv + 1)).baddbmm(scores, vc)
        return sums.view(B, H, nc * c, Dv + 1)[:, :, :L]
    _running(states.view(B * H, nc, D, Dv + 1))  # the running state at the end of each chunk, in place
    sums = torch.empty(n, c, Dv + 1, dtype=va.dtype, device=va.device)
    if n > 1:  # chunk t reads the state at the end of chunk t - 1 ...
        torch.bmm(qc[1:], states[:-1], out=sums[1:])
    sums.view(B * H, nc, c, Dv + 1)[:, 0].zero_()  # ... and the first chunk of a sequence has none before it
    sums.baddbmm_(scores, vc)
    return sums.view(B, H, nc * c, Dv + 1)[:, :, :L]


class _Buffers:
    """One span's working tensors, made once and reused by every span of that size (on a CPU they
    stay in cache, and no span allocates): the features of its queries and keys, its values with a
    ones column (the denominator's) and the sums, each shaped ``lead`` x (its width): (B·H, rows)
    for the non-causal loop, (chunks, B·H, c) for the causal one, which also keeps each chunk's state
    and scores there."""

    def __init__(self, lead: tuple, d: int, dv: int, like: torch.Tensor, features: bool):
        new = {"dtype": like.dtype, "device": like.device}
        self.q, self.k = torch.empty(*lead, d, **new), torch.empty(*lead, d, **new)
        self.tmp = torch.empty(*lead, d, **new) if features else None
        self.va = torch.empty(*lead, dv + 1, **new)
        self.va[..., dv] = 1.0
        self.sums = torch.empty(*lead, dv + 1, **new)
        if len(lead) == 3:  # chunk-major: chunk t of every sequence, then chunk t + 1
            g, bh, c = lead
            self.states = torch.empty(g, bh, d, dv + 1, **new)
            self.scores = torch.empty(g * bh, c, c, **new)


class _Spans:
    """The CPU loops of ``_span_sums`` over one call's q, k and v, (B·H, length, ·) each."""

    def __init__(self, q, k, v, *, chunk: int, ratio: bool, feature: Callable | None):
        B, H, L, D = q.shape
        self.shape, self.bh, self.D, self.Dv = (B, H, L), B * H, D, v.shape[-1]
        self.q, self.k, self.v = q.reshape(B * H, L, D), k.reshape(B * H, -1, D), v.reshape(B * H, -1, self.Dv)
        self.c = max(1, min(chunk, max(L, k.shape[-2])))
        self.rows = max(self.c, _SPAN // self.c * self.c)
        self.ratio, self.feature = ratio, feature
        self.made: dict[tuple, _Buffers] = {}
        self.out = torch.empty(B * H, L, self.Dv if ratio else self.Dv + 1, dtype=q.dtype, device=q.device)
        self.state = torch.zeros(B * H, D, self.Dv + 1, dtype=q.dtype, device=q.device)

    def buffers(self, lead: tuple) -> _Buffers:
        if lead not in self.made:
            self.made[lead] = _Buffers(lead, self.D, self.Dv, self.q, self.feature is not None)
        return self.made[lead]

    def load(self, src, buf, tmp) -> None:
        """The features of ``src`` (raw q or k, or features already) into ``buf``."""
        if self.feature is None:
            buf.copy_(src)
        else:
            self.feature(src, buf, tmp)

    def divide(self, sums, dst) -> None:
        if self.ratio:
            torch.div(sums[..., : self.Dv], sums[..., self.Dv :].clamp_min_(torch.finfo(sums.dtype).tiny), out=dst)
        else:
            dst.copy_(sums)

    def result(self) -> torch.Tensor:
        B, H, L = self.shape
        return self.out.view(B, H, L, -1)

    def non_causal(self) -> torch.Tensor:
        """The state Σ φ(k_j) [v_j | 1]ᵀ span by span, then each span of queries reads it."""
        S, L, bh = self.k.shape[1], self.shape[2], self.bh
        for p0 in range(0, S, self.rows):
            n = min(self.rows, S - p0)
            b = self.buffers((bh, n))
            self.load(self.k[:, p0 : p0 + n], b.k, b.tmp)
            b.va[..., : self.Dv].copy_(self.v[:, p0 : p0 + n])
            self.state.baddbmm_(b.k.transpose(1, 2), b.va)
        for p0 in range(0, L, self.rows):
            n = min(self.rows, L - p0)
            b = self.buffers((bh, n))
            self.load(self.q[:, p0 : p0 + n], b.q, b.tmp)
            self.divide(torch.bmm(b.q, self.state, out=b.sums), self.out[:, p0 : p0 + n])
        return self.result()

    def chunks(self, src, p0: int, n: int, g: int):
        """Positions p0 .. p0 + n of ``src`` as (g, B·H, c, ·), chunk-major (zeros past the end)."""
        part = src[:, p0 : p0 + n]
        if n < g * self.c:
            part = F.pad(part, (0, 0, 0, g * self.c - n))
        return part.view(self.bh, g, self.c, -1).transpose(0, 1)

    def causal(self) -> torch.Tensor:
        """Chunks of c positions, chunk-major inside a span (chunk t of every sequence, then t + 1):
        each chunk's own state φ(K_t)ᵀ [V_t | 1] on a matmul, their running sum (the carried state
        added to the first) in place, one contiguous add a chunk; each chunk reads the sum before it
        and, inside the chunk, its masked product."""
        L, bh, c, D, Dv = self.shape[2], self.bh, self.c, self.D, self.Dv
        for p0 in range(0, L, self.rows):
            n = min(self.rows, L - p0)
            g = -(-n // c)
            b = self.buffers((g, bh, c))
            self.load(self.chunks(self.q, p0, n, g), b.q, b.tmp)
            self.load(self.chunks(self.k, p0, n, g), b.k, b.tmp)
            b.va[..., :Dv].copy_(self.chunks(self.v, p0, n, g))
            if n < g * c:  # past the end of the sequence: no key, no value, no 1 in the denominator
                t, r = divmod(n, c)
                b.k[t, :, r:], b.va[t, :, r:] = 0.0, 0.0
            qf, kf, vf = b.q.view(g * bh, c, D), b.k.view(g * bh, c, D), b.va.view(g * bh, c, Dv + 1)
            states = torch.bmm(kf.transpose(1, 2), vf, out=b.states.view(g * bh, D, Dv + 1)).view(g, bh, D, Dv + 1)
            states[0].add_(self.state)
            for t in range(1, g):
                states[t].add_(states[t - 1])  # the state at the end of chunk t
            sums = b.sums.view(g * bh, c, Dv + 1)
            torch.bmm(qf[:bh], self.state, out=sums[:bh])  # the first chunk reads the carried state
            if g > 1:
                torch.bmm(qf[bh:], states.view(g * bh, D, Dv + 1)[:-bh], out=sums[bh:])  # the others the one before
            self.state.copy_(states[g - 1])
            sums.baddbmm_(torch.bmm(qf, kf.transpose(1, 2), out=b.scores).tril_(), vf)  # inside the chunk: j <= i
            by_row = b.sums.transpose(0, 1)  # (B·H, g, c, Dv + 1)
            if n == g * c:
                self.divide(by_row, self.out[:, p0 : p0 + n].view(bh, g, c, -1))
            else:
                whole = torch.empty(bh, g, c, self.out.shape[-1], dtype=self.out.dtype, device=self.out.device)
                self.divide(by_row, whole)
                self.out[:, p0 : p0 + n] = whole.view(bh, g * c, -1)[:, :n]
        return self.result()


def _span_sums(q, k, v, *, causal: bool, chunk: int, ratio: bool, feature: Callable | None = None) -> torch.Tensor:
    """``_linear_sums`` (``ratio``: already divided, (B, H, L, Dv)) on the CPU, a span of positions
    at a time: ``feature(x, out, tmp)`` writes the features of a span of raw q or k into ``out``
    (None: q and k are features already). Only the output is as long as the sequence; every span's
    features, chunk states and scores live in reused buffers (``_Buffers``), so nothing L long is
    made and passed over again (``_Spans``: non-causal, and causal for L = S)."""
    spans = _Spans(q, k, v, chunk=chunk, ratio=ratio, feature=feature)
    return spans.causal() if causal else spans.non_causal()


def _ratio(sums: torch.Tensor) -> torch.Tensor:
    return sums[..., :-1] / sums[..., -1:].clamp_min(torch.finfo(sums.dtype).tiny)


def _linear(phi_q, phi_k, v, *, causal: bool, chunk: int = CHUNK):
    """Σ_j φ(q_i)·φ(k_j) v_j / Σ_j φ(q_i)·φ(k_j) (j ≤ i when causal) without the L x S matrix."""
    if _in_steps(phi_q, phi_k, v, causal=causal):
        return _span_sums(phi_q, phi_k, v, causal=causal, chunk=chunk, ratio=True)
    return _ratio(_whole_sums(phi_q, phi_k, v, causal=causal, chunk=chunk))
