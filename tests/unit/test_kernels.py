"""Every efficient kernel against full softmax attention with the matching mask (the oracle).

Runs on the CPU; set ATTN_TEST_DEVICE=cuda to run the same checks on a GPU.
"""

import math
import os

import pytest
import torch
from tolerance import assert_close

from attn_core import masks
from attn_core.bench import peak_bytes_cpu
from attn_core.errors import AttentionConfigError
from attn_core.kernels import KERNELS, effective_weights, full_attention, run_kernel

DEVICE = os.environ.get("ATTN_TEST_DEVICE", "cpu")
SPARSE = [
    (
        "sliding_window",
        dict(window=3),
        lambda L, c, o: masks.build_mask("sliding_window", L, L, window=o["window"], also_causal=c),
    ),
    (
        "sliding_window",
        dict(window=40),
        lambda L, c, o: masks.build_mask("sliding_window", L, L, window=o["window"], also_causal=c),
    ),
    (
        "dilated",
        dict(window=2, dilation=3),
        lambda L, c, o: masks.build_mask("dilated", L, L, window=2, dilation=3, also_causal=c),
    ),
    (
        "global_window",
        dict(window=2, global_tokens=3),
        lambda L, c, o: masks.build_mask("global_window", L, L, window=2, global_tokens=3, also_causal=c),
    ),
    ("block", dict(block=7), lambda L, c, o: masks.build_mask("block", L, L, block_size=7, also_causal=c)),
]


def qkv(B, H, L, D, Dv, seed=0, S=None):
    g = torch.Generator().manual_seed(seed)
    S = L if S is None else S
    return (
        torch.randn(B, H, L, D, generator=g).to(DEVICE),
        torch.randn(B, H, S, D, generator=g).to(DEVICE),
        torch.randn(B, H, S, Dv, generator=g).to(DEVICE),
    )


@pytest.mark.parametrize("name,opts,mask_fn", SPARSE, ids=lambda x: x if isinstance(x, str) else "")
@pytest.mark.parametrize("L", [1, 6, 37, 129, 300])
@pytest.mark.parametrize("causal", [False, True])
def test_sparse_kernel_equals_masked_full_attention(name, opts, mask_fn, L, causal):
    q, k, v = qkv(2, 3, L, 16, 12, seed=L)
    out = run_kernel(name, q, k, v, causal=causal, **opts)
    ref = full_attention(q, k, v, mask=mask_fn(L, causal, opts).to(DEVICE))
    assert out.shape == ref.shape
    assert torch.allclose(out, ref, atol=1e-5), (out - ref).abs().max()


@pytest.mark.parametrize("causal", [False, True])
def test_full_paths_agree(causal):
    q, k, v = qkv(2, 4, 50, 32, 16)
    assert torch.allclose(
        run_kernel("full", q, k, v, causal=causal), run_kernel("sdpa", q, k, v, causal=causal), atol=1e-5
    )


def _quadratic_linear(q, k, v, causal):
    phi_q, phi_k = torch.nn.functional.elu(q) + 1, torch.nn.functional.elu(k) + 1
    a = phi_q @ phi_k.transpose(-1, -2)
    if causal:
        a = a * masks.causal(q.shape[-2], k.shape[-2], device=q.device)
    return (a / a.sum(-1, keepdim=True)) @ v


@pytest.mark.parametrize("L", [1, 5, 64, 100, 257])
@pytest.mark.parametrize("causal", [False, True])
def test_linear_attention_equals_its_quadratic_form(L, causal):
    q, k, v = qkv(2, 2, L, 16, 8, seed=L)
    assert torch.allclose(
        run_kernel("linear_elu", q, k, v, causal=causal), _quadratic_linear(q, k, v, causal), atol=1e-5
    )


def test_causal_linear_kernel_is_always_causal():
    q, k, v = qkv(1, 2, 70, 8, 8)
    assert torch.allclose(run_kernel("causal_linear", q, k, v), _quadratic_linear(q, k, v, True), atol=1e-5)


@pytest.mark.parametrize(
    "name,opts", [("performer", dict(features=32, seed=1)), ("linformer", dict(proj_k=8, seed=1)), ("linear_elu", {})]
)
def test_effective_weights_reproduce_the_output(name, opts):
    q, k, v = qkv(1, 2, 30, 16, 8)
    w = effective_weights(name, q, k, **opts)
    assert torch.allclose(run_kernel(name, q, k, v, **opts), w @ v, atol=1e-5)


@pytest.mark.parametrize("name", ["performer", "linear_elu", "full"])
@pytest.mark.parametrize(("L", "S"), [(8, 3), (3, 8)])
def test_causal_cross_attention_is_its_weights_times_the_values(name, L, S):
    """Queries and keys of different lengths (the Cross-attention page) with causal on: j <= i on the same
    positions. Performer's uniform part once averaged over S rows for L queries and failed on the shapes."""
    q = torch.randn(1, 2, L, 8, generator=torch.Generator().manual_seed(L))
    k = torch.randn(1, 2, S, 8, generator=torch.Generator().manual_seed(S + 10))
    v = torch.randn(1, 2, S, 5, generator=torch.Generator().manual_seed(S + 20))
    opts = {"features": 16, "seed": 2} if name == "performer" else {}
    w = effective_weights(name, q, k, causal=True, **opts)
    assert w.shape == (1, 2, L, S)
    assert torch.allclose(w.sum(-1), torch.ones(1, 2, L), rtol=1e-5, atol=1e-5)
    assert not w[..., torch.arange(S) > torch.arange(L)[:, None]].any()  # no key after its query
    out = run_kernel(name, q, k, v, causal=True, **opts)
    assert torch.allclose(out, w @ v, rtol=1e-4, atol=1e-5)


def test_performer_error_shrinks_as_features_grow():
    errors = {}
    for m in (4, 32, 256):
        total = 0.0
        for seed in range(8):
            q, k, v = qkv(1, 2, 64, 16, 16, seed=100 + seed)
            q, k = q * 0.5, k * 0.5
            total += (
                (run_kernel("performer", q, k, v, features=m, seed=seed) - full_attention(q, k, v)).abs().mean().item()
            )
        errors[m] = total / 8
    assert errors[4] > errors[32] > errors[256], errors


def test_sparse_kernels_reject_cross_attention():
    q, k, v = qkv(1, 1, 8, 4, 4, S=5)
    with pytest.raises(AttentionConfigError, match="self-attention"):
        run_kernel("sliding_window", q, k, v, window=2)


def test_linformer_rejects_causal_and_large_k():
    q, k, v = qkv(1, 1, 8, 4, 4)
    with pytest.raises(AttentionConfigError, match="cannot be causal"):
        run_kernel("linformer", q, k, v, causal=True, proj_k=4)
    with pytest.raises(AttentionConfigError, match="between 1 and 8"):
        run_kernel("linformer", q, k, v, proj_k=9)


@pytest.mark.skipif(DEVICE != "cpu", reason="CPU allocation profiler")
def test_sliding_window_at_65536_never_builds_an_l_by_l_tensor():
    L = 65536
    q, k, v = qkv(1, 1, L, 16, 16)
    peak = peak_bytes_cpu(lambda: run_kernel("sliding_window", q, k, v, window=64))
    dense = L * L * 4  # one L x L float tensor: 16 GiB
    assert 0 < peak < 256 * 2**20, peak
    assert dense / peak > 50


def test_registry_entries_document_themselves():
    for k in KERNELS.values():
        assert k.paper and k.formula and k.time.startswith("O(") and k.memory.startswith("O(")
        assert len(k.doc) > 40


@pytest.mark.parametrize("L", [1000, 1024])
@pytest.mark.parametrize("causal", [False, True])
def test_sliding_window_long_inputs_as_views_of_other_layouts(L, causal):
    """Long enough for blocks whose windows lie inside (read as views of the unpadded keys) and
    blocks at both ends (padded): inputs laid out (B, L, H, D) and transposed, as a projection gives
    them, L a multiple of the block and not; the masked full attention is the oracle."""
    g = torch.Generator().manual_seed(L)
    q, k, v = (torch.randn(2, L, 3, 16, generator=g).to(DEVICE).transpose(1, 2) for _ in range(3))
    out = run_kernel("sliding_window", q, k, v, causal=causal, window=100)
    mask = masks.build_mask("sliding_window", L, L, window=100, also_causal=causal).to(DEVICE)
    ref = full_attention(q, k, v, mask=mask)
    assert torch.allclose(out, ref, atol=1e-5), (out - ref).abs().max()


def test_sigmoid_attention_is_each_scores_own_sigmoid_with_the_minus_log_s_bias():
    """Against float64 written out here: w_ij = 1 / (1 + exp(-(q_i·k_j / sqrt(d) - log S))), 0 above the diagonal
    when causal; the rows do not sum to 1 (no softmax), and the kernel's output is its weights times V."""
    g = torch.Generator().manual_seed(3)
    q, k, v = (torch.randn(1, 2, n, 8, generator=g) for n in (5, 7, 7))
    for causal in (False, True):
        s = (q.double() @ k.double().transpose(-2, -1)) / 8**0.5 - math.log(7)
        want = 1 / (1 + torch.exp(-s))
        if causal:
            want = want * (torch.arange(7).view(1, -1) <= torch.arange(5).view(-1, 1))
        got = effective_weights("sigmoid", q, k, causal=causal)
        assert_close(got, want.float(), rtol=1e-5, atol=1e-6)
        assert_close(KERNELS["sigmoid"].fn(q, k, v, causal=causal), want.float() @ v, rtol=1e-5, atol=1e-5)
    assert not torch.allclose(got.sum(-1), torch.ones(1, 2, 5))  # not normalised
    assert not KERNELS["sigmoid"].softmax
