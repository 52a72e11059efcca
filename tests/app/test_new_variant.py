"""A variant is one spec: a throwaway variant registered here, in the test alone, appears, checked,
in the trace, the Variants page, the sweep, the CLI and the take-home notebook, with no other file edited."""

import contextlib
import io
import os
import subprocess
import sys

import pytest
import torch
from streamlit.testing.v1 import AppTest
from tolerance import assert_close

from attn_core import Settings, bench, kernels, run_trace
from attn_core import notebook as nbk
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
        notebook=kernels.runnable_weights(local_mean_weights),  # its notebook step: its own weights, copied
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


def test_its_notebook_runs_alone_and_recomputes_the_app(toy, tmp_path):
    """Its notebook, written from its spec alone, runs in an interpreter that cannot import this project, and
    every tensor it recomputes equals the app's (its own comparison cell); in this process its matrix is the
    one the weights function above gives."""
    s = Settings(sentence="the cat sat on the warm mat", kernel=toy, window=2, heads=2, causal=True)
    tr = run_trace(s)
    book = nbk.trace_notebook(s, trace=tr, focus=3, head=1)
    path = tmp_path / "local_mean.py"
    path.write_text(book.script("en"), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    run = [sys.executable, "-I", str(path)]
    proc = subprocess.run(run, check=False, capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = [line.split() for line in proc.stdout.splitlines() if line.endswith((" ok", " DIFFERS"))]
    names = {row[0] for row in rows}
    assert {"weights", "context", "output", "softmax_weights"} <= names and all(row[-1] == "ok" for row in rows)
    ns = {"__name__": "__main__"}
    with contextlib.redirect_stdout(io.StringIO()):
        for code in book.code():
            exec(compile(code, "<local_mean>", "exec"), ns)  # noqa: S102 - the notebook written above
    expect = local_mean_weights(tr.Q, tr.K, causal=True, scale=1.0, window=2)
    assert_close(ns["recomputed"]["weights"], expect, msg="weights")
    assert_close(ns["recomputed"]["context"], expect @ tr.V, msg="context")
