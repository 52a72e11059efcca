"""A variant is one spec: a throwaway variant registered here, in the test alone, appears, checked,
in the trace, the Variants page, the sweep and the CLI, with no other file edited."""

import os

import pytest
import torch
from streamlit.testing.v1 import AppTest

from attn_core import Settings, bench, kernels, run_trace
from attn_core.cli import main
from attn_core.compare import compare, error_curve
from attn_core.errors import AttentionConfigError

APP = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "app.py")


def local_mean_weights(q, k, *, causal: bool, scale: float, window: int = 1, **_) -> torch.Tensor:
    L, S = q.shape[-2], k.shape[-2]
    i, j = torch.arange(L).view(-1, 1), torch.arange(S).view(1, -1)
    allowed = ((i - j).abs() <= window) & ((j <= i) if causal else True)
    w = allowed.to(q.dtype)
    return (w / w.sum(-1, keepdim=True)).expand(*q.shape[:-2], L, S)


def local_mean_attention(q, k, v, *, causal: bool = False, scale=None, window: int = 1):
    """Local mean: each query averages the values within w positions (no scores at all)."""
    return local_mean_weights(q, k, causal=causal, scale=1.0, window=window) @ v


def check_local_mean(L, S, *, causal, cross, window: int = 1, **_):
    if cross:
        raise AttentionConfigError("kernel", "pattern_cross", kernel="local_mean")  # a code every UI translates


@pytest.fixture
def toy():
    kernels.register(
        "local_mean",
        local_mean_attention,
        label="Local mean (test)",
        family="linear",
        formula=r"\frac{1}{|N_i|}\sum_{j \in N_i} v_j",
        time="O(L·w·d)",
        memory="O(L·w)",
        paper="a test's own",
        weights=local_mean_weights,
        check=check_local_mean,
        flops=lambda L, sh: sh.batch * sh.heads * 2 * L * (2 * sh.window + 1) * sh.d_head,
        peak_bytes=lambda L, sh, db: sh.batch * sh.heads * L * L * db,
        options=("window",),
        sweep="window",
        softmax=False,
    )
    yield "local_mean"
    kernels.unregister("local_mean")


def test_the_trace_runs_the_new_variant_and_its_checks(toy):
    tr = run_trace(Settings(sentence="a b c d e", kernel=toy, window=1, heads=2))
    expect = local_mean_weights(tr.Q, tr.K, causal=False, scale=1.0, window=1)
    assert torch.allclose(tr.attn, expect) and torch.allclose(tr.context, expect @ tr.V, atol=1e-6)
    assert torch.allclose(tr.attn[0, 0], torch.tensor([0.5, 0.5, 0, 0, 0]))
    with pytest.raises(AttentionConfigError, match="local_mean kernel is a pattern over one sequence"):
        run_trace(Settings(sentence="a b c", source="d e f", kernel=toy))


def test_the_comparison_and_error_curve_use_its_spec(toy):
    res = compare(Settings(sentence="a b c d e f"), ["full", toy])["kernels"][toy]
    assert res["max_abs"] > 0 and -1 <= res["cos"] <= 1 and res["weights"].shape == (6, 6)
    rows = error_curve(Settings(sentence="a b c d e f"), toy, [1, 2, 5])
    assert [r["window"] for r in rows] == [1, 2, 5] and len({r["max_abs"] for r in rows}) == 3


def test_the_variants_page_offers_and_draws_it(toy):
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.switch_page("pages/5_variants.py").run()
    assert (
        toy in at.multiselect(key="var_kernels").options
        or "Local mean (test)" in at.multiselect(key="var_kernels").options
    )
    at.multiselect(key="var_kernels").set_value(["full", toy]).run()
    assert not at.exception
    assert any("Local mean (test)" in m.value.replace("\\", "") for m in at.markdown)  # shown Markdown-escaped


def test_the_sweep_and_the_cli_measure_it(toy, capsys):
    cfg = bench.SweepConfig(kernels=(toy,), lengths=(32, 64), min_run_time=0.01, shape=bench.Shape(window=2))
    rows = list(bench.sweep(cfg))
    assert [r.seq_len for r in rows] == [32, 64] and all(r.status.startswith("ok") and r.median_ms > 0 for r in rows)
    assert rows[0].gflops == pytest.approx(1 * 4 * 2 * 32 * 5 * 64 / (rows[0].median_ms / 1e3) / 1e9)
    assert main(["bench", "--kernels", toy, "--lengths", "32", "--min-run-time", "0.01"]) == 0
    assert "local_mean" in capsys.readouterr().out
    assert main(["trace", "a b c", "--kernel", toy, "--json"]) == 0
