"""FlexAttention as a registered kernel: the same mask patterns compiled to a block mask, equal to
full attention under the same mask; its compile time reported apart; a clear reason where it
cannot compile."""

import os

import pytest
import torch
from tolerance import assert_close

from attn_core import bench, masks
from attn_core.errors import AttentionConfigError
from attn_core.kernels import KERNELS, flex_unavailable, full_attention, run_kernel

# scripts/test.sh (CI) installs a C++ compiler and sets ATTN_REQUIRE_FLEX=1: there these tests never skip, and a
# machine where FlexAttention cannot run fails them. Elsewhere they skip with the reason.
REQUIRED = os.environ.get("ATTN_REQUIRE_FLEX") == "1"
pytestmark = pytest.mark.skipif(
    flex_unavailable() is not None and not REQUIRED, reason=f"FlexAttention: {flex_unavailable()}"
)


def test_flexattention_can_run_here_when_ci_requires_it():
    if not REQUIRED:
        pytest.skip("ATTN_REQUIRE_FLEX is not set (scripts/test.sh sets it)")
    assert flex_unavailable() is None, f"FlexAttention cannot run in CI: {flex_unavailable()} (install g++)"


# The sizes of the queries, keys and values (d_v unlike d_k, as the app allows). A graph is compiled per shape, pattern
# and causality, about 3 s of CPU each on a machine whose torch.compile cache is empty, so every call here has these.
SIZES = (6, 6, 5)
# The tests of the compiled kernel ask for it: within one block (128 queries and keys) FlexAttention runs unfused
COMPILED = {"compiled": True}

CASES = [
    ("sliding_window", {"window": 3}, "sliding_window", {"window": 3}),
    ("dilated", {"window": 2, "dilation": 3}, "dilated", {"window": 2, "dilation": 3}),
    ("global_window", {"window": 1, "global_tokens": 2}, "global_window", {"window": 1, "global_tokens": 2}),
    ("block", {"block": 8}, "block", {"block_size": 8}),
]


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("pattern,opts,mode,mask_opts", CASES)
def test_flex_equals_full_attention_under_the_same_mask(pattern, opts, mode, mask_opts, causal):
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(1, 2, 40, d, generator=g) for d in SIZES)
    out = run_kernel("flex", q, k, v, causal=causal, pattern=pattern, **opts, **COMPILED)
    mask = masks.build_mask(mode, 40, 40, also_causal=causal, **mask_opts)
    ref = full_attention(q, k, v, mask=mask)
    assert_close(out, ref)


def test_a_new_window_or_length_reuses_the_compiled_kernel():
    """The options and the true length reach the kernel as tensors: a sweep over the window (a learner's new
    window, a new length padded to the same block) compiles no new graph, and each result is still the mask's."""
    from torch._dynamo.utils import counters

    g = torch.Generator().manual_seed(1)
    compiled = []
    for length, window in ((40, 3), (40, 1), (40, 5), (100, 2)):
        q, k, v = (torch.randn(1, 2, length, d, generator=g) for d in SIZES)
        out = run_kernel("flex", q, k, v, pattern="sliding_window", window=window, **COMPILED)
        ref = full_attention(q, k, v, mask=masks.sliding_window(length, length, window=window))
        assert_close(out, ref)
        compiled.append(counters["stats"]["unique_graphs"])
    assert compiled[1:] == [compiled[0]] * 3, compiled  # the first call may compile (a new process); no other


def test_a_new_scale_reuses_the_compiled_kernel():
    """The scale multiplies the queries before the kernel: a learner's new temperature (or a d_k whose scale differs at
    the same shape) compiles no new graph, and each result is full attention's at that scale."""
    from torch._dynamo.utils import counters

    g = torch.Generator().manual_seed(3)
    q, k, v = (torch.randn(1, 2, 40, d, generator=g) for d in SIZES)
    mask = masks.sliding_window(40, 40, window=2)
    compiled = []
    for scale in (None, 0.5, 2.0, 0.1):
        out = run_kernel("flex", q, k, v, pattern="sliding_window", window=2, scale=scale, **COMPILED)
        assert_close(out, full_attention(q, k, v, mask=mask, scale=scale))
        compiled.append(counters["stats"]["unique_graphs"])
    assert compiled[1:] == [compiled[0]] * 3, compiled  # the first call may compile (a new process); no other


def test_within_one_block_it_runs_unfused_and_beyond_it_compiled(monkeypatch):
    """Within one block of queries and keys (128) the compiled kernel would be one tile that skips nothing, and
    compiling costs seconds for each new shape: FlexAttention runs PyTorch's unfused flex_attention on the same block
    mask. From 129 queries or keys, or when asked, the compiled kernel. Both are the mask's attention."""
    from attn_core.kernels import flex

    asked = []

    def compiled():
        asked.append(True)
        return flex._unfused  # which path is taken, without compiling a graph for this test's lengths

    monkeypatch.setattr(flex, "_compiled", compiled)
    g = torch.Generator().manual_seed(4)
    for length, opts, compiles in ((128, {}, False), (40, {"compiled": True}, True), (129, {}, True), (200, {}, True)):
        asked.clear()
        q, k, v = (torch.randn(1, 2, length, d, generator=g) for d in SIZES)
        out = run_kernel("flex", q, k, v, causal=True, pattern="sliding_window", window=3, **opts)
        mask = masks.build_mask("sliding_window", length, length, also_causal=True, window=3)
        assert_close(out, full_attention(q, k, v, mask=mask))
        assert bool(asked) == compiles, (length, opts)
    monkeypatch.undo()  # the compiled kernel itself, against the unfused path
    q, k, v = (torch.randn(1, 2, 40, d, generator=g) for d in SIZES)
    unfused = run_kernel("flex", q, k, v, pattern="dilated", window=2, dilation=3, compiled=False)
    assert_close(unfused, run_kernel("flex", q, k, v, pattern="dilated", window=2, dilation=3, **COMPILED))


def test_the_unfused_path_leaves_pytorchs_warning_for_a_compiled_call_that_falls_back(monkeypatch):
    """A compiled call past dynamo's recompile limit falls back to the unfused path with PyTorch's warning, which the
    tests make a failure (pytest.ini). The deliberate unfused call within one block gives no warning, and leaves it
    to come for the next call that is not deliberate."""
    import warnings

    from torch.nn.attention import flex_attention as fa

    monkeypatch.setattr(fa, "_WARNINGS_SHOWN", set())  # a process that has not warned yet
    q, k, v = (torch.randn(1, 2, 40, d) for d in SIZES)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        run_kernel("flex", q, k, v, pattern="sliding_window", window=2)  # unfused, on purpose: no warning
    mask = fa.create_block_mask(lambda b, h, i, j: (i - j).abs() <= 2, None, None, 40, 40, device="cpu")
    with pytest.warns(UserWarning, match="without torch.compile"):
        fa.flex_attention(q, k, v, block_mask=mask)  # an unfused call nobody chose still warns


def test_the_block_mask_is_built_once_per_pattern_options_and_length(monkeypatch):
    """create_block_mask evaluates the mask at every (query, key): built again on every call it was most of a
    call's time at L = 4096. Kept, a second call on other inputs reads it and is still right."""
    import torch.nn.attention.flex_attention as fa

    from attn_core.kernels import flex

    real, built = fa.create_block_mask, []

    def counted(mask_mod, B, H, L, S, **kw):
        built.append((L, S))
        return real(mask_mod, B, H, L, S, **kw)

    monkeypatch.setattr(fa, "create_block_mask", counted)
    flex._block_mask.cache_clear()
    g = torch.Generator().manual_seed(2)
    for window in (2, 2, 3):
        q, k, v = (torch.randn(1, 2, 40, d, generator=g) for d in SIZES)
        out = run_kernel("flex", q, k, v, pattern="dilated", window=window, dilation=3)
        assert_close(out, full_attention(q, k, v, mask=masks.build_mask("dilated", 40, 40, window=window, dilation=3)))
    assert built == [(128, 128), (128, 128)], built  # the second call read the first's mask; a new window built one


def test_its_pattern_is_the_mask_it_computes_and_cross_attention_is_refused():
    spec = KERNELS["flex"]
    assert torch.equal(spec.pattern(10, 10, False, window=2), masks.sliding_window(10, 10, window=2))
    with pytest.raises(AttentionConfigError, match="pattern over one sequence"):
        spec.check(5, 7, causal=False, cross=True)


def test_the_sweep_reports_compile_time_apart_from_run_time(monkeypatch):
    # a shape no other test compiles (a graph is per pattern, its options, causality and shape): its first call
    # compiles whichever test ran before in this process
    from attn_core.kernels import flex

    real, asked = flex._compiled, []
    monkeypatch.setattr(flex, "_compiled", lambda: asked.append(True) or real())
    shape = bench.Shape(heads=3, d_head=40, window=4)
    cfg = bench.SweepConfig(kernels=("flex",), lengths=(64,), min_run_time=0.05, shape=shape)
    (row,) = list(bench.sweep(cfg))
    assert asked  # the compiled kernel is what is timed, at 64 tokens too (unfused by default within one block)
    assert row.status.startswith("ok") and row.compile_s is not None and row.median_ms is not None
    assert row.compile_s * 1e3 > row.median_ms  # the first call compiled; the timed ones did not


def test_without_a_compiler_it_is_skipped_with_the_reason(monkeypatch):
    import shutil

    if torch.cuda.is_available():
        pytest.skip("on CUDA no host compiler is needed")
    monkeypatch.setattr(shutil, "which", lambda name: None)
    assert "C++ compiler" in flex_unavailable()
    cfg = bench.SweepConfig(kernels=("flex",), lengths=(64,), min_run_time=0.05)
    (row,) = list(bench.sweep(cfg))
    assert row.status.startswith("skipped: FlexAttention cannot run here") and row.median_ms is None
