"""A variant's notebook steps come from its spec: every registered variant that gives them exports (its steps in
the order of its stages, its pattern as the mask), none is named in attn_core/notebook/, and a spec that cannot
give runnable steps is refused (at registration for a weights function that cannot stand alone, at export for a
variant without steps), never written wrong."""

from __future__ import annotations

import ast
from dataclasses import replace
from pathlib import Path

import pytest
import torch

from attn_core import AttentionConfigError, Settings, kernels, run_trace
from attn_core import notebook as nbk

NOTEBOOK = Path(__file__).resolve().parents[2] / "attn_core" / "notebook"
B = Settings(sentence="the cat sat on the mat", heads=2)


def _scale_of(q):  # a module-level helper: a weights function calling it cannot stand alone in a notebook
    return 1.0


def helper_weights(q, k, *, causal, scale, **_):
    return torch.softmax(q @ k.transpose(-2, -1) * _scale_of(q), dim=-1)


def plain_weights(q, k, *, causal, scale, **_):
    w = torch.ones(*q.shape[:-1], k.shape[-2])
    return w / w.sum(-1, keepdim=True)


def variant_names(path: Path) -> list[str]:
    """String constants in a module that are registered variants' names (what a second description would hold)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = set(kernels.KERNELS) - {"full"}
    return [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and n.value in names]


def test_no_variant_is_named_in_the_notebook_package():
    assert {p.name: variant_names(p) for p in NOTEBOOK.glob("*.py")} == {p.name: [] for p in NOTEBOOK.glob("*.py")}


def test_the_name_check_can_fail(tmp_path):
    bad = tmp_path / "variants.py"
    bad.write_text('SPARSE = ("sliding_window", "dilated")\nif name == "linformer":\n    pass\n')
    assert sorted(variant_names(bad)) == ["dilated", "linformer", "sliding_window"]


@pytest.mark.parametrize("name", [n for n, k in kernels.KERNELS.items() if k.explain is not None and n != "flex"])
def test_each_explained_variant_gives_its_stages_in_order(name):
    t = run_trace(replace(B, kernel=name))
    assert [key for key, _ in nbk.variant_code(t)] == [st.key for st in t.variant.stages]
    kern = kernels.KERNELS[name]
    assert (nbk.pattern_code(t) is not None) == (kern.pattern is not None)
    nbk.check_exportable(t)


def test_a_weights_function_that_cannot_stand_alone_is_refused_at_registration():
    with pytest.raises(ValueError, match="_scale_of"):
        kernels.runnable_weights(helper_weights)
    with pytest.raises(ValueError, match="lambda"):
        kernels.runnable_weights(lambda q, k, **_: q @ k.transpose(-2, -1))
    steps = kernels.runnable_weights(plain_weights)
    ((key, code),) = steps.cells(True, window=3)
    assert key == "amounts_to" and "def plain_weights(" in code and "causal=causal" in code and "'window': 3" in code


def _register(name: str, **spec):
    fn = spec.pop("fn", lambda q, k, v, *, causal=False, scale=None: plain_weights(q, k, causal=causal, scale=1) @ v)
    base = dict(family="linear", formula="", time="", memory="", paper="", weights=plain_weights)
    base.update(flops=lambda L, sh: 0.0, peak_bytes=lambda L, sh, db: 0, softmax=False)
    kernels.register(name, fn, **{**base, **spec})


def test_the_export_asks_the_spec():
    """Without notebook steps a variant that is not a softmax is refused; with runnable weights it exports, and
    its notebook recomputes the app's weights (in this process: the isolated run is test_new_variant's)."""
    import contextlib
    import io

    try:
        _register("plain_test")
        with pytest.raises(AttentionConfigError) as err:
            nbk.trace_notebook(replace(B, kernel="plain_test"))
        assert err.value.code == "notebook_variant"
        _register("plain_test", notebook=kernels.runnable_weights(plain_weights))
        s = replace(B, kernel="plain_test")
        t = run_trace(s)
        ns: dict = {"__name__": "__main__"}
        with contextlib.redirect_stdout(io.StringIO()):
            for code in nbk.trace_notebook(s, trace=t).code():
                exec(compile(code, "<plain>", "exec"), ns)  # noqa: S102 - the notebook written above
        assert ns["largest"] <= 1e-5
        assert torch.allclose(ns["recomputed"]["weights"], torch.full_like(t.attn, 1 / t.attn.shape[-1]))
    finally:
        kernels.unregister("plain_test")


def test_a_pattern_without_its_notebook_mask_is_refused():
    sw = kernels.KERNELS["sliding_window"]
    try:
        kernels.KERNELS["sliding_window"] = replace(sw, notebook=replace(sw.notebook, mask=None))
        t = run_trace(replace(B, kernel="sliding_window"))
        with pytest.raises(AttentionConfigError, match="does not know the steps"):
            nbk.check_exportable(t)
    finally:
        kernels.KERNELS["sliding_window"] = sw
