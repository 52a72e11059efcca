"""The feature-map variants' own steps in the take-home notebook (``register(..., notebook=...)`` in ``linear``
and ``performer``): φ(Q) and φ(K), the state and the normaliser, then the normalised read-out (linear, causal
linear) or Performer's random features, its two halves and their shrinkage towards uniform attention. What the
code may use and must leave: ``notebook_cells``."""

from __future__ import annotations

from .notebook_cells import Cells

_PERFORMER_OMEGA = (
    "d = Q.shape[-1]\n"
    "g_feat = torch.Generator().manual_seed(SEED)\n"
    "split = FEATURES if FEATURES == 1 else FEATURES // 2  # two halves, drawn independently\n"
    "parts = []\n"
    "for size in (split, FEATURES - split):\n"
    "    if size == 0:\n"
    "        continue\n"
    "    n = -(-size // 2)  # directions, each beside its negation (antithetic pairs)\n"
    "    blocks = [torch.linalg.qr(torch.randn(d, d, generator=g_feat))[0].T for _ in range(-(-n // d))]\n"
    "    base = torch.cat(blocks)[:n] * torch.randn(n, d, generator=g_feat).norm(dim=1, keepdim=True)  # chi(d)\n"
    "    parts.append(torch.cat([base, -base])[:size])\n"
    "omega_m = torch.cat(parts)  # (m, d)\n"
    "omega = omega_m.unsqueeze(0)\n"
    "recomputed.update(omega=omega)\n"
    "print('omega', tuple(omega_m.shape), 'first row:', omega_m[0])\n"
)
_PERFORMER_FEATURES = (
    "r = math.sqrt(abs(scale))  # q'·k' = scale · q·k\n"
    "qs, ks = Q * r, K * (r if scale >= 0 else -r)\n"
    "# FAVOR++'s A for this input (per head): the A that makes the features vary least\n"
    "rho = (qs.pow(2).sum(-1).mean(-1) + ks.pow(2).sum(-1).mean(-1) + 2 * (qs.mean(-2) * ks.mean(-2)).sum(-1)) / d\n"
    "A = ((1 - 2 * rho - ((2 * rho + 1) ** 2 + 8 * rho).sqrt()) / 16)[..., None, None]\n\n\n"
    "def performer_features(t, w, is_query):\n"
    "    ex = (t @ w.T) * (1 - 4 * A).sqrt() + A * (w * w).sum(-1) - (t * t).sum(-1, keepdim=True) / 2\n"
    "    if is_query:  # a query's features divided by their sum: a row's constant cancels in the ratio\n"
    "        return torch.softmax(ex, dim=-1)\n"
    "    return (ex - ex.amax(dim=(-2, -1), keepdim=True)).exp()  # the largest exponent taken out\n\n\n"
    "halves = [(performer_features(qs, w, True), performer_features(ks, w, False))\n"
    "          for w in ([omega_m[:split], omega_m[split:]] if split < FEATURES else [omega_m])]\n"
    "phi_q, phi_k = torch.cat([h[0] for h in halves], -1), torch.cat([h[1] for h in halves], -1)\n"
)


def linear_cells(causal: bool, **_) -> Cells:
    """elu + 1 features (linear, causal linear): φ, the state, the normalised read-out, what it amounts to."""
    return (_features_stage(False), _state_stage(causal), *_linear_tail(causal))


def performer_cells(causal: bool, **_) -> Cells:
    """Performer: the random features ω, φ, the state, the two halves read out and their shrinkage."""
    return (
        ("random_features", _PERFORMER_OMEGA),
        _features_stage(True),
        _state_stage(causal),
        *_performer_tail(causal),
    )


def _features_stage(performer: bool) -> tuple[str, str]:
    feats = (
        _PERFORMER_FEATURES
        if performer
        else "phi_q, phi_k = F.elu(Q) + 1.0, F.elu(K) + 1.0  # φ(x) = elu(x) + 1 > 0\n"
    )
    return (
        "features",
        feats + "recomputed.update(phi_q=phi_q, phi_k=phi_k)\nprint(f'φ(q) of {words[FOCUS]}:', phi_q[HEAD, FOCUS])\n",
    )


def _state_stage(causal: bool) -> tuple[str, str]:
    state = (
        "state = phi_k.transpose(-2, -1) @ V  # (heads, m, d_v), whatever L is\n"
        "z = phi_k.sum(1)  # (heads, m)\n"
        "normaliser = z.unsqueeze(1)\n"
        "recomputed.update(state=state, normaliser=normaliser)\n"
        "print('state S', tuple(state.shape[1:]), '; z:', z[HEAD])\n"
    )
    if causal:
        state += (
            "state_at = phi_k[:, : FOCUS + 1].transpose(-2, -1) @ V[:, : FOCUS + 1]  # the running state\n"
            "print(f'state after {words[FOCUS]}:', state_at[HEAD])\n"
        )
    return ("prefix_state" if causal else "state", state)


def _tril(causal: bool) -> tuple[str, str]:
    """The causal lower triangle of a = φ(Q)φ(K)ᵀ, and its comment."""
    return (".tril()", "  # causal: j ≤ i only") if causal else ("", "")


def _linear_tail(causal: bool) -> list[tuple[str, str]]:
    tril, j_le_i = _tril(causal)
    norm = f"a = (phi_q @ phi_k.transpose(-2, -1)){tril}{j_le_i}\n"
    if causal:
        norm += "numerator, denominator = a @ V, a.sum(-1, keepdim=True)\n"
    else:
        norm += "numerator, denominator = phi_q @ state, phi_q @ z.unsqueeze(-1)\n"
    norm += (
        "variant_out = numerator / denominator.clamp_min(1e-30)\n"
        "recomputed.update(numerator=numerator, denominator=denominator)\n"
        "print(f'output of {words[FOCUS]}:', variant_out[HEAD, FOCUS])\n"
    )
    amounts = (
        "amounts_to = a / a.sum(-1, keepdim=True).clamp_min(1e-30)  # for display: the output is amounts_to @ V\n"
        "recomputed.update(amounts_to=amounts_to)\n"
        "print(f'what {words[FOCUS]} amounts to:', amounts_to[HEAD, FOCUS])\n"
    )
    return [("normalise", norm), ("amounts_to", amounts)]


def _performer_tail(causal: bool) -> list[tuple[str, str]]:
    tril, j_le_i = _tril(causal)
    read_halves = (
        "def read_out(pq, pk):  # Σ_j a_ij v_j / Σ_j a_ij with a_ij = φ(q_i)·φ(k_j)\n"
        f"    a = (pq @ pk.transpose(-2, -1)){tril}{j_le_i}\n"
        "    return (a @ V) / a.sum(-1, keepdim=True).clamp_min(1e-30)\n\n\n"
        "reads = [read_out(pq, pk) for pq, pk in halves]\n"
        "estimate = sum(reads) / len(reads)\n"
        "recomputed.update({f'half_{n + 1}': r for n, r in enumerate(reads)})\n"
        "print(f'each half\\'s output for {words[FOCUS]}:', [r[HEAD, FOCUS, :4] for r in reads], '...')\n"
    )
    amounts = (
        "u_all, allowed_all = uniform_rows(torch.arange(L))\n"
        "mean_weights = sum(normalised(pq, pk, allowed_all) for pq, pk in halves) / len(halves)\n"
        "amounts_to = u_all + lam * (mean_weights - u_all)  # for display: the output is amounts_to @ V\n"
        "recomputed.update(amounts_to=amounts_to)\n"
        "exact = torch.softmax(scaled.masked_fill(~allowed_all, float('-inf')), dim=-1)\n"
        "error = float((amounts_to - exact).norm() / exact.norm())\n"
        "print(f'what {words[FOCUS]} amounts to:', amounts_to[HEAD, FOCUS])\n"
        "print(f'relative error {error:.2f}; uniform weights: "
        "{float((u_all - exact).norm() / exact.norm()):.2f}')\n"
    )
    return [("read_halves", read_halves), ("shrink", _shrink_code(causal)), ("amounts_to", amounts)]


def _shrink_code(causal: bool) -> str:
    """The two halves' mean shrunk towards uniform attention by a positive-part James-Stein factor per head."""
    allowed = "(j <= i)" if causal else "torch.ones(len(i), S, dtype=torch.bool)"
    return (
        "tiny = torch.finfo(torch.float32).tiny\n\n\n"
        "def uniform_rows(rows):  # uniform attention on these "
        "query rows: 1/S, or 1/(i+1) over j ≤ i when causal\n"
        f"    i, j = rows.unsqueeze(1), torch.arange(S).unsqueeze(0)\n    allowed = {allowed}\n"
        "    return allowed.float() / allowed.sum(-1, keepdim=True).clamp_min(1).float(), allowed\n\n\n"
        "def normalised(pq, pk, allowed):\n"
        "    a = (pq @ pk.transpose(-2, -1)).masked_fill(~allowed, 0.0)\n"
        "    return a / a.sum(-1, keepdim=True).clamp_min(tiny)\n\n\n"
        "if len(halves) == 1:\n"
        "    lam = torch.ones(HEADS, 1, 1)\n"
        "else:  # the halves differ by noise only: noise N = |W1 − W2|² / 4 against T = |W − U|², on 16 rows\n"
        "    rows = torch.linspace(0, L - 1, min(16, L)).round().long()\n"
        "    u_rows, allowed_rows = uniform_rows(rows)\n"
        "    w1, w2 = (normalised(pq[:, rows], pk, allowed_rows) for pq, pk in halves)\n"
        "    noise = (w1 - w2).pow(2).sum((-2, -1)) / 4\n"
        "    total = ((w1 + w2) / 2 - u_rows).pow(2).sum((-2, -1))\n"
        "    lam = (1 - noise / total.clamp_min(tiny)).clamp(0.0, "
        "1.0)[:, None, None]  # positive-part James-Stein\n"
        + (
            "uniform_out = V.cumsum(-2) / torch.arange(1, S + 1, dtype=torch.float32).unsqueeze(-1)\n"
            if causal
            else "uniform_out = V.mean(-2, keepdim=True).expand(HEADS, L, V.shape[-1])\n"
        )
        + "variant_out = uniform_out + lam * (estimate - uniform_out)\n"
        "recomputed.update(uniform_out=uniform_out, variant_output=variant_out)\n"
        "print(f'λ per head: {lam.flatten().tolist()}')\n"
        "print(f'output of {words[FOCUS]}:', variant_out[HEAD, FOCUS])\n"
    )
