"""A variant that brings a NEW option: ``stride`` is registered here, in the test alone, with
``knobs.register`` next to its variant, and with no other edit it reaches the engine, the
sidebar and the link (drawn when that variant is chosen, read from and written to ``?stride=``),
the CLI (a flag, range-checked) and the Complexity sweep (the bench Shape and the child's argv)."""

import argparse
import json
import os

import pytest
import torch
from streamlit.testing.v1 import AppTest

from attn_core import Settings, bench, kernels, run_trace
from attn_core.cli import main
from attn_core.errors import AttentionConfigError
from attn_core.knobs import KNOBS, Knob, Span, add_flags, register, unregister
from explorer.base import i18n
from explorer.controls import BY_NAME, SIDEBAR
from explorer.jobs import sweeps

APP = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "app.py")
STRIDE = Knob(
    "stride",
    "int",
    2,
    1,
    16,
    help="strided mean: every s-th key back from the query",
    kernel_option=True,
    section="sec_variant",
    curve=(1, 2, 3),
    sweep=Span(),
)


def strided_weights(q, k, *, causal: bool, scale: float, stride: int = 2, **_) -> torch.Tensor:
    """Each query averages the keys j with (i - j) divisible by the stride (j <= i when causal)."""
    L, S = q.shape[-2], k.shape[-2]
    i, j = torch.arange(L).view(-1, 1), torch.arange(S).view(1, -1)
    allowed = ((i - j) % stride == 0) & ((j <= i) if causal else True)
    w = allowed.to(q.dtype)
    return (w / w.sum(-1, keepdim=True)).expand(*q.shape[:-2], L, S)


def strided_attention(q, k, v, *, causal: bool = False, scale=None, stride: int = 2):
    """Strided mean: each query averages the values every s positions from it (no scores at all)."""
    return strided_weights(q, k, causal=causal, scale=1.0, stride=stride) @ v


def check_strided(L, S, *, causal, cross, stride: int = 2, **_):
    if cross:
        raise AttentionConfigError("kernel", "pattern_cross", kernel="strided_mean")


def expected(L: int, stride: int) -> torch.Tensor:  # written out by hand, independent of the kernel
    w = torch.tensor([[1.0 if (i - j) % stride == 0 else 0.0 for j in range(L)] for i in range(L)])
    return w / w.sum(-1, keepdim=True)


SPEC = dict(
    label="Strided mean (test)",
    family="linear",
    formula=r"\frac{1}{|N_i|}\sum_{s \mid i-j} v_j",
    time="O(L·L/s·d)",
    memory="O(L·L/s)",
    paper="a test's own",
    weights=strided_weights,
    check=check_strided,
    flops=lambda L, sh: sh.batch * sh.heads * 2 * L * -(-L // sh.stride) * sh.d_head,
    peak_bytes=lambda L, sh, db: sh.batch * sh.heads * L * L * db,
    options=("stride",),
    sweep="stride",
    softmax=False,
)


@pytest.fixture
def strided(monkeypatch):
    register(STRIDE)
    kernels.register("strided_mean", strided_attention, **SPEC)
    monkeypatch.setitem(i18n.STRINGS, "stride", ("Stride", "步长"))  # its label in the catalogue
    yield "strided_mean"
    kernels.unregister("strided_mean")
    unregister("stride")


def test_a_variant_cannot_name_an_option_nobody_registered():
    with pytest.raises(ValueError, match="unknown options"):
        kernels.register("nameless", strided_attention, **{**SPEC, "options": ("stride_typo",)})
    assert "nameless" not in kernels.KERNELS


def test_the_engine_passes_the_new_option_to_its_kernel(strided):
    s = Settings(sentence="a b c d e f g", kernel=strided).with_options(stride=3)
    assert dict(s.extra) == {"stride": 3} and Settings.from_dict(json.loads(json.dumps(s.to_dict()))) == s
    tr = run_trace(s)
    assert torch.allclose(tr.attn[0], expected(7, 3), atol=1e-6)
    assert torch.allclose(run_trace(Settings(sentence="a b c d", kernel=strided)).attn[0], expected(4, 2))  # default
    with pytest.raises(AttentionConfigError, match="stride = 99 is outside the range 1..16"):
        run_trace(s.with_options(stride=99))


def test_the_sidebar_draws_it_for_that_variant_and_keeps_it_in_the_link(strided):
    assert "stride" in BY_NAME and [c.name for c in SIDEBAR].index("stride") > [c.name for c in SIDEBAR].index(
        "proj_k"
    )
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["kernel"] = strided
    at.query_params["stride"] = "3"
    at.run()
    assert not at.exception
    box = at.number_input(key="stride")
    assert box.value == 3 and box.min == 1 and box.max == 16 and box.label == "Stride"
    assert dict(at.session_state["settings"]["extra"])["stride"] == 3  # what the trace is computed from
    box.set_value(5).run()
    assert at.query_params["stride"] in ("5", ["5"])
    assert dict(at.session_state["settings"]["extra"])["stride"] == 5
    at.selectbox(key="kernel").set_value("full").run()  # a variant that does not take it: not drawn, not linked
    assert "stride" not in [w.key for w in at.number_input] and "stride" not in at.query_params


def test_a_bad_stride_in_the_link_is_dropped_with_a_notice(strided):
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["kernel"] = strided
    at.query_params["stride"] = "99"
    at.run()
    assert not at.exception
    assert at.number_input(key="stride").value == STRIDE.default and "stride" not in at.query_params


def test_the_cli_takes_it_and_refuses_a_bad_value_in_one_line(strided, capsys):
    assert main(["trace", "a b c d e f g", "--kernel", strided, "--stride", "3", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert dict(out["config"]["extra"])["stride"] == 3
    assert torch.allclose(torch.tensor(out["heads"][0]["weights"]), expected(7, 3), atol=1e-5)
    assert main(["trace", "a b c", "--kernel", strided, "--stride", "99"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["error: stride = 99 is outside the range 1..16. Choose a value between 1 and 16 for stride."]
    p = argparse.ArgumentParser(prog="x", exit_on_error=False)  # add_flags alone: range-checked by argparse
    add_flags(p, names=["stride"], strict=True)
    assert p.parse_args(["--stride", "4"]).stride == 4
    with pytest.raises(argparse.ArgumentError, match="stride = 0 is outside the range 1..16"):
        p.parse_args(["--stride", "0"])


def test_the_sweep_carries_it_to_the_child_and_counts_its_flops(strided, capsys):
    shape = bench.Shape(batch=1, heads=2, d_head=16, extra=(("stride", 4),))
    assert bench.shape_options(shape)["stride"] == 4 and shape.stride == 4
    cfg = bench.SweepConfig(kernels=(strided,), lengths=(64,), min_run_time=0.01, shape=shape)
    argv = sweeps.command(cfg)
    assert argv[argv.index("--stride") + 1] == "4" and argv[argv.index("--block") + 1] == str(shape.block)
    assert main(argv[3:]) == 0  # what the child runs: python -m attn_core bench ... --jsonl
    rows = [json.loads(line)["row"] for line in capsys.readouterr().out.splitlines() if '"row"' in line]
    assert len(rows) == 1 and rows[0]["status"].startswith("ok"), rows
    flops = 1 * 2 * 2 * 64 * 16 * 16  # L/s = 16 keys per query with stride 4
    assert rows[0]["gflops"] == pytest.approx(flops / (rows[0]["median_ms"] / 1e3) / 1e9, rel=1e-3)
    assert KNOBS["stride"] is STRIDE
