"""Performer (FAVOR+ with FAVOR++'s A, antithetic orthogonal features and James-Stein shrinkage toward
uniform attention)."""

from __future__ import annotations

import math

import torch

from ..errors import AttentionConfigError
from .base import _scale
from .explain import Stage, _explain_features, _shape
from .linear import _feature_bytes
from .linear_sums import _linear, _linear_sums
from .notebook_cells import NotebookSteps
from .notebook_features import performer_cells
from .registry import register


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


def _uniform_out(v: torch.Tensor, causal: bool, L: int | None = None) -> torch.Tensor:
    """Uniform attention's output: every query averages the values it may see (keys j <= i when causal,
    for L queries over the S keys of ``v``: cross-attention has L != S)."""
    if not causal:
        return v.mean(-2, keepdim=True)
    last = torch.arange(v.shape[-2] if L is None else L, device=v.device).clamp(max=v.shape[-2] - 1)
    return v.cumsum(-2).index_select(-2, last) / (last + 1).to(v.dtype).unsqueeze(-1)


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
    out = _uniform_out(v, causal, q.shape[-2]) * (1 - lam)
    for pq, pk in halves:
        sums = _linear_sums(pq, pk, v, causal=causal)
        w = (lam / len(halves)) / sums[..., -1:].clamp_min(torch.finfo(sums.dtype).tiny)
        out = (
            torch.addcmul(out, sums[..., :-1], w)
            if out.shape != sums[..., :-1].shape
            else out.addcmul_(sums[..., :-1], w)
        )
    return out


def _check_performer(L: int, S: int, *, causal: bool, cross: bool, features: int = 64, **opts) -> None:
    if features < 1:
        raise AttentionConfigError("features", "at_least_one", value=features)


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


def _performer_stages(stages: list, q, k, v, out, *, causal: bool, scale: float, **opts) -> torch.Tensor:
    """Performer's last two steps (appended to ``stages``): each half's read-out, then their mean
    shrunk toward uniform attention. Returns the weights the output amounts to."""
    halves = performer_halves(q, k, scale=scale, **opts)
    lam, _ = performer_shrinkage(halves, causal=causal)
    H, L = q.shape[:2]
    reads = [_linear(pq[None], pk[None], v[None], causal=causal)[0] for pq, pk in halves]
    est = sum(reads) / len(reads)
    u = _uniform_out(v, causal, L).expand(H, L, v.shape[-1])
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


def _performer_flops(L: int, sh) -> float:  # the features of Q and K, then φ(K)ᵀ V and φ(Q) · state
    return sh.batch * sh.heads * 8 * L * sh.features * sh.d_head


def _omega(opts: dict, d: int, dtype) -> torch.Tensor:
    return orthogonal_features(opts["features"], d, seed=opts["seed"], dtype=dtype)


register(
    "performer",
    performer_attention,
    family="linear",
    formula=r"\phi(x)=\tfrac{1}{\sqrt m}\exp\!\left(\omega^\top x-\tfrac{\|x\|^2}{2}\right),"
    r"\ \omega\ \text{orthogonal random}",
    time="O(L·m·d)",
    memory="O(L·m + m·d)",
    paper="Choromanski et al. 2021, Rethinking Attention with Performers",
    weights=_performer_weights,
    explain=_explain_features(_performer_pair, performer_attention, omega=_omega, finish=_performer_stages),
    notebook=NotebookSteps(performer_cells),
    check=_check_performer,
    flops=_performer_flops,
    peak_bytes=_feature_bytes(lambda sh: sh.features),
    options=("features", "seed"),
    sweep="features",
    softmax=False,
)
