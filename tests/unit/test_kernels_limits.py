"""Kernels at their limits: every sparse kernel's FLOP model counts the pairs its own pattern allows
(with its own options), and Performer's error falls toward 0 as its features grow while staying
below uniform attention's where random features can help."""

import os
from itertools import pairwise

import pytest
import torch

from attn_core import bench, masks
from attn_core.bench import sweeping
from attn_core.kernels import KERNELS, full_attention, pattern_pairs, run_kernel
from attn_core.kernels.linear import CHUNK

DEVICE = os.environ.get("ATTN_TEST_DEVICE", "cpu")

# (kernel, its options, the same pattern as a mask): the oracle is the mask's sum
PATTERNS = [
    ("sliding_window", dict(window=3), lambda L, c: masks.build_mask("sliding_window", L, L, window=3, also_causal=c)),
    (
        "sliding_window",
        dict(window=50),
        lambda L, c: masks.build_mask("sliding_window", L, L, window=50, also_causal=c),
    ),
    (
        "dilated",
        dict(window=2, dilation=3),
        lambda L, c: masks.build_mask("dilated", L, L, window=2, dilation=3, also_causal=c),
    ),
    (
        "global_window",
        dict(window=2, global_tokens=3),
        lambda L, c: masks.build_mask("global_window", L, L, window=2, global_tokens=3, also_causal=c),
    ),
    (
        "global_window",
        dict(window=4, global_tokens=0),
        lambda L, c: masks.build_mask("global_window", L, L, window=4, global_tokens=0, also_causal=c),
    ),
    ("block", dict(block=7), lambda L, c: masks.build_mask("block", L, L, block_size=7, also_causal=c)),
    ("block", dict(block=64), lambda L, c: masks.build_mask("block", L, L, block_size=64, also_causal=c)),
]


@pytest.mark.parametrize("name,opts,mask_fn", PATTERNS, ids=lambda x: x if isinstance(x, str) else "")
@pytest.mark.parametrize("L", [1, 5, 37, 200])
@pytest.mark.parametrize("causal", [False, True])
def test_sparse_flop_model_counts_the_pairs_of_its_own_pattern(name, opts, mask_fn, L, causal):
    pairs = int(mask_fn(L, causal).sum())
    # every other option set unlike this kernel's: a model reading the wrong option misses the count
    shape = {"window": 11, "dilation": 5, "block": 9, "global_tokens": 2, **opts}
    sh = bench.Shape(batch=2, heads=3, d_head=16, causal=causal, **shape)
    assert bench.estimate_flops(name, L, sh) == 2 * 3 * 4 * pairs * 16
    assert pattern_pairs(name, L, causal=causal, **opts) == pairs
    if name == "sliding_window":  # FlexAttention's default pattern, counted the same way
        assert bench.estimate_flops("flex", L, sh) == 2 * 3 * 4 * pairs * 16


def test_block_attention_flops_follow_the_block_not_the_window():
    """The Complexity sweep's GFLOP/s for block-local attention: its block size, whatever the window."""
    L = 4096
    small = bench.Shape(window=128, block=16)
    large = bench.Shape(window=128, block=256)
    assert bench.estimate_flops("block", L, small) == 1 * 4 * 4 * L * 16 * 64
    assert bench.estimate_flops("block", L, large) == 16 * bench.estimate_flops("block", L, small)
    # and the sweep passes that block to the kernel it times
    cfg = bench.SweepConfig(kernels=("block",), lengths=(64,), shape=bench.Shape(block=16))
    assert sweeping._options("block", cfg) == {"block": 16}


def test_full_attention_flops_count_every_pair_and_the_causal_triangle():
    sh = bench.Shape(batch=1, heads=1, d_head=8)
    assert bench.estimate_flops("full", 10, sh) == 4 * 100 * 8
    assert bench.estimate_flops("full", 10, bench.replace_causal(sh, True)) == 4 * 55 * 8


def _performer_error(q, k, v, m, seeds):
    exact = full_attention(q.double(), k.double(), v.double())
    errors = []
    for seed in seeds:
        out = run_kernel("performer", q, k, v, features=m, seed=seed).double()
        errors.append(float((out - exact).norm() / exact.norm()))
    return sum(errors) / len(errors)


def _inputs(L, D, scale, seed=0):
    g = torch.Generator().manual_seed(seed)
    q, k, v = (torch.randn(1, 2, L, D, generator=g) for _ in range(3))
    return (q * scale).to(DEVICE), (k * scale).to(DEVICE), v.to(DEVICE)


def test_performer_error_falls_toward_zero_as_the_features_grow():
    """A curve on one fixed input: the mean relative error over 4 feature seeds at m = 16 .. 16384.
    Seeded here it reads 0.200, 0.126, 0.074, 0.039, 0.020, 0.010 (uniform attention: 0.224); the
    bounds leave room for another device's rounding, not for a curve that stops falling."""
    q, k, v = _inputs(64, 16, 0.5)
    ms = (16, 64, 256, 1024, 4096, 16384)
    curve = [_performer_error(q, k, v, m, seeds=range(4)) for m in ms]
    for a, b in pairwise(curve):
        assert b < a, curve  # every step toward more features helps
    for a, b in pairwise(curve[3:]):
        assert b < 0.65 * a, curve  # with many features, about 1/sqrt(m): 4x the features, half the error
    assert curve[-1] < 0.02, curve


def test_performer_beats_uniform_attention_where_random_features_can():
    """Small logits, enough features: the estimate is closer to softmax than averaging the values is;
    large logits (features mostly noise): the shrinkage keeps it about as close as averaging."""
    for scale, m, at_most in ((0.3, 256, 0.6), (0.5, 256, 0.9), (1.0, 256, 1.01)):
        q, k, v = _inputs(512, 64, scale)
        exact = full_attention(q.double(), k.double(), v.double())
        uniform = float((v.double().mean(-2, keepdim=True) - exact).norm() / exact.norm())
        err = _performer_error(q, k, v, m, seeds=range(3))
        assert err < at_most * uniform, (scale, err, uniform)


@pytest.mark.parametrize("causal", [False, True])
def test_performer_weights_make_its_output(causal):
    q, k, v = _inputs(40, 16, 0.7)
    out = run_kernel("performer", q, k, v, causal=causal, features=32, seed=2)
    w = KERNELS["performer"].weights(q, k, causal=causal, scale=0.25, features=32, seed=2)
    assert torch.allclose(out, w @ v, atol=1e-5)
    assert torch.allclose(w.sum(-1), torch.ones_like(w.sum(-1)), atol=1e-5)  # rows still sum to 1
    if causal:
        assert float(w.triu(1).abs().max()) == 0.0


@pytest.mark.parametrize("L", [1, 31, 32, 33, 63, 64, 65, 300])
def test_causal_linear_chunks_equal_the_masked_reference(L):
    g = torch.Generator().manual_seed(L)
    q, k, v = (torch.randn(2, 3, L, 16, generator=g).to(DEVICE) for _ in range(3))
    phi_q, phi_k = torch.nn.functional.elu(q.double()) + 1, torch.nn.functional.elu(k.double()) + 1
    a = (phi_q @ phi_k.transpose(-1, -2)) * masks.causal(L, L, device=q.device)
    ref = (a / a.sum(-1, keepdim=True)) @ v.double()
    assert torch.allclose(run_kernel("causal_linear", q, k, v).double(), ref, atol=1e-5)


@pytest.mark.parametrize(("L", "S"), [(7, 3), (3, 7), (70, 130), (130, 70)])
def test_causal_linear_across_two_sentences_equals_the_masked_reference(L, S):
    """Cross-attention: L queries over S keys, query i sees keys j <= i (the chunks pad both to max(L, S))."""
    g = torch.Generator().manual_seed(L * S)
    q = torch.randn(1, 2, L, 8, generator=g).to(DEVICE)
    k, v = (torch.randn(1, 2, S, 8, generator=g).to(DEVICE) for _ in range(2))
    phi_q, phi_k = torch.nn.functional.elu(q.double()) + 1, torch.nn.functional.elu(k.double()) + 1
    a = (phi_q @ phi_k.transpose(-1, -2)) * masks.causal(L, S, device=q.device)
    ref = (a / a.sum(-1, keepdim=True)) @ v.double()
    assert torch.allclose(run_kernel("causal_linear", q, k, v).double(), ref, atol=1e-5)


def _elu_reference(q, k, v, causal):
    """elu + 1 linear attention in float64 from its quadratic form (the L x S matrix, masked)."""
    phi_q, phi_k = torch.nn.functional.elu(q.double()) + 1, torch.nn.functional.elu(k.double()) + 1
    a = phi_q @ phi_k.transpose(-1, -2)
    if causal:
        a = a * masks.causal(q.shape[-2], k.shape[-2], device=q.device)
    return (a / a.sum(-1, keepdim=True)) @ v.double()


@pytest.mark.parametrize("L", [1023, 1024, 2500])
@pytest.mark.parametrize("causal", [False, True])
def test_linear_kernels_over_several_spans_equal_the_quadratic_form_and_the_differentiable_path(L, causal):
    """Long enough for the CPU loop's several spans (the last one short, or not): the same function
    as the quadratic form, and as the whole-sequence path autograd takes (inputs that need a grad)."""
    g = torch.Generator().manual_seed(L)
    q, k, v = (torch.randn(1, 2, L, 16, generator=g).to(DEVICE) for _ in range(3))
    ref = _elu_reference(q, k, v, causal)
    out = run_kernel("linear_elu", q, k, v, causal=causal)
    assert torch.allclose(out.double(), ref, atol=1e-5), (out.double() - ref).abs().max()
    qg = q.clone().requires_grad_(True)
    graph = run_kernel("linear_elu", qg, k, v, causal=causal)
    assert torch.allclose(graph.detach().double(), ref, atol=1e-5)
    graph.sum().backward()
    assert qg.grad is not None and bool(torch.isfinite(qg.grad).all())


@pytest.mark.parametrize("causal", [False, True])
def test_performer_over_several_spans_equals_its_whole_sequence_path(causal):
    """Performer reads the same sums (features given): the loop over spans and the differentiable
    whole-sequence path give the same output."""
    g = torch.Generator().manual_seed(5)
    q, k, v = (torch.randn(1, 2, 2500, 16, generator=g).to(DEVICE) for _ in range(3))
    out = run_kernel("performer", q, k, v, causal=causal, features=32, seed=3)
    graph = run_kernel("performer", q.clone().requires_grad_(True), k, v, causal=causal, features=32, seed=3)
    assert torch.allclose(out, graph.detach(), atol=1e-5), (out - graph.detach()).abs().max()


@pytest.mark.parametrize("L", [1, 31, 32, 33, 64, 65, 300])
def test_linear_flop_model_counts_the_state_and_the_pairs_inside_each_chunk(L):
    """4·L·d² for the state (built and read once per position); causal, the chunked form's products
    over the pairs j <= i inside each chunk of CHUNK positions, counted here from the chunks' mask."""
    d = 16
    sh = bench.Shape(batch=2, heads=3, d_head=d)
    assert bench.estimate_flops("linear_elu", L, sh) == 2 * 3 * 4 * L * d * d
    chunk = torch.arange(L) // CHUNK
    pairs = int((masks.causal(L, L) & (chunk.view(-1, 1) == chunk.view(1, -1))).sum())
    causal = 2 * 3 * (4 * L * d * d + 2 * pairs * 2 * d)
    assert bench.estimate_flops("causal_linear", L, bench.replace_causal(sh, True)) == causal
    assert bench.estimate_flops("linear_elu", L, bench.replace_causal(sh, True)) == causal
