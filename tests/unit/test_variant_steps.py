"""A variant's own steps (``Kernel.explain``): what they show multiplies back to what the kernel returns."""

import json
import math

import pytest
import torch

from attn_core import Settings, masks, run_trace
from attn_core.errors import AttentionConfigError
from attn_core.export import to_json
from attn_core.kernels import (
    KERNELS,
    elu_features,
    linformer_projection,
    oprf_parameter,
    orthogonal_features,
    performer_features,
    performer_split,
    prefix_state,
    run_kernel,
)

OPTS = {"window": 2, "dilation": 2, "global_tokens": 1, "block": 3, "features": 16, "proj_k": 4, "seed": 3}
EXPLAINED = [name for name, k in KERNELS.items() if k.explain is not None]
TOL = 1e-5


def cases():
    for name in EXPLAINED:
        kern = KERNELS[name]
        for causal in (False, True):
            mine = {o: OPTS[o] for o in kern.options if o in OPTS}
            try:
                kern.check(9, 9, causal=causal, cross=False, **mine)
            except AttentionConfigError:  # this variant cannot do that (e.g. Linformer causal)
                continue
            yield pytest.param(name, causal, mine, id=f"{name}-{'causal' if causal else 'full'}")


def inputs(seed=0, H=2, L=9, D=6, Dv=5):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(H, L, D, generator=g), torch.randn(H, L, D, generator=g), torch.randn(H, L, Dv, generator=g)


def test_every_variant_but_full_attention_has_its_own_steps():
    assert set(EXPLAINED) >= {"sliding_window", "dilated", "global_window", "block", "linear_elu", "causal_linear"}
    assert set(EXPLAINED) >= {"performer", "linformer"} and KERNELS["full"].explain is None


SPARSE_MASKS = {  # the masked full matrix each sparse variant must amount to (masks.build_mask, the oracle)
    "sliding_window": lambda L, c, o: masks.build_mask("sliding_window", L, L, window=o["window"], also_causal=c),
    "dilated": lambda L, c, o: masks.build_mask(
        "dilated", L, L, window=o["window"], dilation=o["dilation"], also_causal=c
    ),
    "global_window": lambda L, c, o: masks.build_mask(
        "global_window", L, L, window=o["window"], global_tokens=o["global_tokens"], also_causal=c
    ),
    "block": lambda L, c, o: masks.build_mask("block", L, L, block_size=o["block"], also_causal=c),
}


def _quadratic(phi_q, phi_k, v, causal):
    """Feature attention written as the full L x L matrix: (φ(Q) φ(K)ᵀ, causal: j <= i) / its row sums, @ V."""
    a = phi_q @ phi_k.transpose(-2, -1)
    if causal:
        a = a * torch.ones(a.shape[-2:]).tril()
    return (a / a.sum(-1, keepdim=True)) @ v


def _performer_dense(q, k, v, *, causal, scale, features, seed):
    """Performer written densely: each half's features as an L x L quadratic form, their mean shrunk
    toward uniform weights by λ = max(0, 1 - |W1 - W2|²/4 / |W̄ - U|²) over all rows (L <= 16)."""
    qs, ks = q * math.sqrt(scale), k * math.sqrt(scale)
    omega = orthogonal_features(features, q.shape[-1], seed=seed)
    a = oprf_parameter(qs, ks)
    split = performer_split(features)
    mats = []
    for w in (omega[:split], omega[split:]):
        phi_q, phi_k = performer_features(qs, w, is_query=True, a=a), performer_features(ks, w, is_query=False, a=a)
        m = phi_q @ phi_k.transpose(-2, -1)
        if causal:
            m = m * torch.ones(m.shape[-2:]).tril()
        mats.append(m / m.sum(-1, keepdim=True))
    allowed = torch.ones(mats[0].shape[-2:])
    allowed = allowed.tril() if causal else allowed
    u = allowed / allowed.sum(-1, keepdim=True)
    mean = (mats[0] + mats[1]) / 2
    noise = ((mats[0] - mats[1]) ** 2).sum((-2, -1)) / 4
    lam = (1 - noise / ((mean - u) ** 2).sum((-2, -1))).clamp(0, 1)[..., None, None]
    return (u + lam * (mean - u)) @ v


def reference(name, q, k, v, *, causal, scale, **opts):
    """Each variant's output computed another way than its kernel: dense, from the mask or the features."""
    L = q.shape[-2]
    if name == "flex":  # FlexAttention runs one of the sparse patterns
        name = opts.get("pattern", "sliding_window")
    if name in SPARSE_MASKS:
        s = (q @ k.transpose(-2, -1)) * scale
        mask = SPARSE_MASKS[name](L, causal, opts)
        return torch.softmax(s.masked_fill(~mask, float("-inf")), dim=-1).nan_to_num(0.0) @ v
    if name in ("linear_elu", "causal_linear"):
        return _quadratic(torch.nn.functional.elu(q) + 1, torch.nn.functional.elu(k) + 1, v, causal)
    if name == "performer":
        return _performer_dense(q, k, v, causal=causal, scale=scale, **opts)
    if name == "linformer":
        E = linformer_projection(opts["proj_k"], L, seed=opts["seed"])
        Fm = linformer_projection(opts["proj_k"], L, seed=opts["seed"] + 1)
        return torch.softmax((q @ (E @ k).transpose(-2, -1)) * scale, dim=-1) @ (Fm @ v)
    if name == "sigmoid":  # each weight its own logistic function, 1 / (1 + e^-x), of the biased score
        x = (q @ k.transpose(-2, -1)) * scale - math.log(k.shape[-2])
        w = 1 / (1 + torch.exp(-x))
        return (w.tril() if causal else w) @ v
    raise KeyError(f"no independent reference for the variant {name!r}: add one here")


def test_every_explained_variant_has_an_independent_reference():
    q, k, v = inputs()
    for name in EXPLAINED:
        opts = {o: OPTS[o] for o in KERNELS[name].options if o in OPTS}
        assert reference(name, q, k, v, causal=KERNELS[name].always_causal, scale=0.5, **opts).shape == (2, 9, 5)


@pytest.mark.parametrize("name,causal,opts", list(cases()))
def test_the_steps_output_is_the_variants_and_the_matrix_shown_makes_it(name, causal, opts):
    q, k, v = inputs()
    kern = KERNELS[name]
    causal = causal or kern.always_causal
    ex = kern.explain(q, k, v, causal=causal, scale=6**-0.5, **opts)
    expect = reference(name, q, k, v, causal=causal, scale=6**-0.5, **opts)
    assert torch.allclose(ex.output, expect, atol=TOL), (ex.output - expect).abs().max()
    assert torch.allclose(ex.weights @ v, expect, atol=TOL)  # the L x L matrix shown amounts to the output
    kernel = run_kernel(name, q[None], k[None], v[None], causal=causal, scale=6**-0.5, **opts)[0]
    assert torch.allclose(kernel, expect, atol=TOL)  # and the efficient path computes the same
    assert ex.stages and all(torch.isfinite(t.nan_to_num(0.0)).all() for t in ex.tensors().values())


@pytest.mark.parametrize("name,causal,opts", [c for c in cases() if KERNELS[c.values[0]].pattern is not None])
def test_sparse_steps_score_only_the_pattern_and_their_softmax_makes_the_output(name, causal, opts):
    q, k, v = inputs(1)
    kern = KERNELS[name]
    ex = kern.explain(q, k, v, causal=causal, scale=0.5, **opts)
    t = ex.tensors()
    allowed = kern.pattern(9, 9, causal, **opts)
    assert torch.equal(t["pattern"][0].bool(), allowed)
    assert torch.equal(t["band_scores"].isnan(), ~allowed.expand(2, -1, -1))  # blank exactly where not computed
    expected_scores = (q @ k.transpose(-2, -1)) * 0.5
    assert torch.allclose(t["band_scores"][:, allowed], expected_scores[:, allowed], atol=TOL)
    w = t["band_weights"].nan_to_num(0.0)
    assert torch.allclose(w.sum(-1), torch.ones(2, 9), atol=TOL)
    assert torch.allclose(w @ v, ex.output, atol=TOL)
    facts = ex.stages[0].facts
    assert facts["pairs"] == int(allowed.sum()) < facts["all"] == 81


@pytest.mark.parametrize("name,causal,opts", [c for c in cases() if KERNELS[c.values[0]].family == "linear"])
def test_linear_steps_state_and_normaliser_make_the_output(name, causal, opts):
    q, k, v = inputs(2)
    kern = KERNELS[name]
    causal = causal or kern.always_causal
    ex = kern.explain(q, k, v, causal=causal, scale=6**-0.5, **opts)
    t = ex.tensors()
    phi_q, phi_k = t["phi_q"], t["phi_k"]
    assert bool((phi_q > 0).all() and (phi_k > 0).all())  # positive features
    if name != "performer":
        assert torch.allclose(phi_q, elu_features(q)) and torch.allclose(phi_k, elu_features(k))
    state = torch.einsum("hsm,hse->hme", phi_k, v)  # Σ_j φ(k_j) v_jᵀ, written another way
    assert torch.allclose(t["state"], state, atol=1e-4)
    assert torch.allclose(t["normaliser"][:, 0], phi_k.sum(1), atol=1e-4)
    if name == "performer":  # each half read out on its own features; the output lies between uniform and their mean
        split = performer_split(opts["features"])
        for half, cols in (("half_1", slice(None, split)), ("half_2", slice(split, None))):
            a = phi_q[..., cols] @ phi_k[..., cols].transpose(-2, -1)
            a = a * torch.ones(a.shape[-2:]).tril() if causal else a
            assert torch.allclose(t[half], (a / a.sum(-1, keepdim=True)) @ v, atol=TOL)
        toward, away = (t["half_1"] + t["half_2"]) / 2 - t["uniform_out"], ex.output - t["uniform_out"]
        lam = (toward * away).sum((-2, -1)) / (toward * toward).sum((-2, -1))
        assert bool(((lam >= -1e-6) & (lam <= 1 + 1e-6)).all()), lam
        assert torch.allclose(away, lam[:, None, None] * toward, atol=TOL)
        return
    assert torch.allclose(t["numerator"] / t["denominator"], ex.output, atol=TOL)
    if causal:  # the running state at position i reads out row i
        for i in (0, 4, 8):
            s_i, z_i = prefix_state(phi_k, v, i)
            row = (phi_q[:, i : i + 1] @ s_i) / (phi_q[:, i : i + 1] @ z_i.unsqueeze(-1))
            assert torch.allclose(row[:, 0], ex.output[:, i], atol=TOL)
        assert torch.allclose(prefix_state(phi_k, v, 8)[0], t["state"], atol=1e-4)
    else:
        assert torch.allclose(phi_q @ t["state"] / (phi_q @ t["normaliser"].transpose(-2, -1)), ex.output, atol=TOL)


def test_performer_reports_its_error_beside_uniform_attention():
    q, k, v = inputs(3, L=12, D=8)
    ex = KERNELS["performer"].explain(q, k, v, causal=False, scale=8**-0.5, features=64, seed=0)
    facts = ex.stages[-1].facts
    exact = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(8), dim=-1)
    assert facts["error"] == pytest.approx(float((ex.weights - exact).norm() / exact.norm()), rel=1e-4)
    assert facts["uniform"] == pytest.approx(float((1 / 12 - exact).norm() / exact.norm()), rel=1e-4)
    more = KERNELS["performer"].explain(q, k, v, causal=False, scale=8**-0.5, features=2048, seed=0)
    assert more.stages[-1].facts["error"] < facts["error"]  # more features, a closer approximation


def test_linformer_steps_project_then_attend_over_k_columns():
    q, k, v = inputs(4)
    ex = KERNELS["linformer"].explain(q, k, v, causal=False, scale=0.4, proj_k=4, seed=5)
    t = ex.tensors()
    assert t["E"].shape == (1, 4, 9) and t["K_proj"].shape == (2, 4, 6)
    assert torch.allclose(t["K_proj"], t["E"][0] @ k, atol=TOL) and torch.allclose(
        t["V_proj"], t["F"][0] @ v, atol=TOL
    )
    assert torch.allclose(t["scores_Lk"], q @ t["K_proj"].transpose(-2, -1) * 0.4, atol=TOL)
    assert torch.allclose(t["weights_Lk"] @ t["V_proj"], ex.output, atol=TOL)


@pytest.mark.parametrize("name", ["sliding_window", "block", "linear_elu", "causal_linear", "performer", "linformer"])
def test_the_trace_uses_the_kernels_own_output_and_exports_its_steps(name):
    tr = run_trace(Settings(kernel=name, heads=2))
    opts = {o: getattr(tr.settings, o) for o in KERNELS[name].options}
    expect = run_kernel(name, tr.Q[None], tr.K[None], tr.V[None], causal=tr.settings.causal, scale=tr.scale, **opts)
    assert torch.allclose(tr.context, expect[0], atol=TOL)
    assert torch.allclose(tr.attn @ tr.V, tr.context, atol=TOL)
    data = json.loads(to_json(tr))
    assert data["variant"]["kernel"] == name and data["variant"]["steps"]
    for h in range(2):
        exported = data["heads"][h]["variant"]
        for key, tensor in tr.variant.tensors().items():
            t = tensor[h if tensor.shape[0] > 1 else 0]
            got = torch.tensor([[math.nan if x is None else x for x in row] for row in exported[key]])
            assert torch.allclose(got, t, atol=1e-6, equal_nan=True), key
