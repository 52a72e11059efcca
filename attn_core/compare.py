"""Efficient kernels beside full attention on one sentence: weights, errors, error curves.

Uses head 0 of the trace's Q, K, V (scaled dot product, single head), so every kernel sees
exactly the input the Step-by-step page shows.
"""

from __future__ import annotations

from dataclasses import replace

import torch

from .config import Settings
from .errors import AttentionConfigError
from .kernels import KERNELS, effective_weights, kernel_options, run_kernel
from .trace import kernel_settings, run_trace


def _options(s: Settings, name: str) -> dict:
    return kernel_options(KERNELS[name], **kernel_settings(s))


def check_options(s: Settings, name: str, L: int) -> None:
    KERNELS[name].check(L, L, causal=s.causal, cross=False, **_options(s, name))


def head0(settings: Settings):
    """Q, K, V (1, 1, L, d) of head 0 (single head, scaled dot, no mask or variant) and the trace:
    the input every kernel is compared on, the one Step by step shows."""
    base = run_trace(
        replace(
            settings,
            source=None,
            heads=1,
            layout="tutorial",
            score="scaled_dot",
            mask="none",
            pad_to=0,
            kernel="full",
            dropout=0.0,
            residual_norm=False,
            d_k=settings.d_q,
        )
    )
    return base.Q[:1].unsqueeze(0), base.K[:1].unsqueeze(0), base.V[:1].unsqueeze(0), base


def compared(settings: Settings) -> Settings:
    """The settings the kernels are compared under. A kernel takes one mask, causal or not (a sparse
    one adds its own pattern), so the sidebar's Mask = causal is the kernels' causal flag; the
    other masks are not applied here (``compare`` names them under ``mask_not_applied``)."""
    if settings.mask == "causal":
        return replace(settings, mask="none", causal=True)
    return settings


def _reference(settings: Settings):
    """Head 0's Q, K, V, full attention's output and weights on them, uniform attention's errors."""
    settings = compared(settings)
    q, k, v, base = head0(settings)
    L, causal, scale = q.shape[-2], settings.causal, base.scale
    ref_out = run_kernel("full", q, k, v, causal=causal, scale=scale)[0, 0]
    ref_w = effective_weights("full", q, k, causal=causal, scale=scale)[0, 0]
    # The trivial baseline: every query averages the values it may see (uniform weights). An
    # approximation is worth its cost only where it is closer to full attention than this.
    allowed = torch.ones(L, L).tril() if causal else torch.ones(L, L)
    uniform_w = allowed / allowed.sum(-1, keepdim=True)
    uniform_out = uniform_w @ v[0, 0]
    return (q, k, v, base, ref_out, ref_w), errors(ref_out, ref_w, uniform_out, uniform_w)


def _kernel(ref: tuple, s: Settings, name: str) -> dict:
    """One kernel on the reference's input: its weights, pattern and distance from full attention."""
    q, k, v, base, ref_out, ref_w = ref
    L, causal, scale = q.shape[-2], s.causal, base.scale
    check_options(s, name, L)
    opts = _options(s, name)
    o = run_kernel(name, q, k, v, causal=causal, scale=scale, **opts)[0, 0]
    w = effective_weights(name, q, k, causal=causal, scale=scale, **opts)[0, 0]
    kern = KERNELS[name]
    pattern = kern.pattern(L, L, causal, **opts) if kern.pattern else None
    return {"weights": w, "pattern": pattern, **errors(ref_out, ref_w, o, w)}


def compare(settings: Settings, names: list[str]) -> dict:
    """Per kernel: its effective weights (L x S), pattern (sparse), and distance from full attention.
    A kernel that cannot run under these settings (Linformer when causal) is under ``refused``
    with its ``AttentionConfigError``, the others are compared all the same."""
    ref, uniform = _reference(settings)
    s = ref[3].settings
    kernels, refused = {}, {}
    for name in names:
        try:
            kernels[name] = _kernel(ref, s, name)
        except AttentionConfigError as err:
            refused[name] = err
    mask = settings.mask if settings.mask not in ("none", "causal") else None
    return {
        "tokens": list(ref[3].tokens.words),
        "kernels": kernels,
        "refused": refused,
        "uniform": uniform,
        "causal": s.causal,
        "mask_not_applied": mask,
    }


def errors(ref_out: torch.Tensor, ref_w: torch.Tensor, o: torch.Tensor, w: torch.Tensor) -> dict:
    eps = 1e-12
    p, qd = ref_w.clamp_min(0), w.clamp_min(0)
    p, qd = p / p.sum(-1, keepdim=True).clamp_min(eps), qd / qd.sum(-1, keepdim=True).clamp_min(eps)
    kl = (p * (torch.log(p + eps) - torch.log(qd + eps))).sum(-1).mean()
    cos = torch.nn.functional.cosine_similarity(ref_out.flatten(), o.flatten(), dim=0)
    return {"max_abs": float((ref_out - o).abs().max()), "kl": float(kl), "cos": float(cos)}


def error_curve(settings: Settings, name: str, values: list[int]) -> list[dict]:
    """Distance from full attention as the kernel's main parameter varies (window, m, k, b). The
    sweep's parameter does not change head 0's input, so the reference is computed once."""
    param = KERNELS[name].sweep
    ref, uniform = _reference(settings)
    rows = []
    for value in values:
        try:
            res = _kernel(ref, ref[3].settings.with_options(**{param: value}), name)
        except AttentionConfigError:
            continue
        row = {param: value, "max_abs": res["max_abs"], "kl": res["kl"], "cos": res["cos"]}
        rows.append(row | {"uniform_max_abs": uniform["max_abs"]})
    return rows
