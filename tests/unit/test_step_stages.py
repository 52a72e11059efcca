"""Every step of Step by step is a ``Stage`` from one table: the engine's base stages carry the trace's
own tensors (checked against Q Kᵀ, the softmax and the weighted sum recomputed here), and the page's
step table draws every step key its step selector offers, base and each variant's."""

import pytest
import torch

from attn_core import Settings, run_trace
from attn_core.kernels import KERNELS
from attn_core.stages import STEPS, base_stages, step_stages

TOL = 1e-5
HEAD, FOCUS = 1, 2
EXPLAINED = [name for name, k in KERNELS.items() if k.explain is not None]


@pytest.fixture(scope="module")
def trace():
    return run_trace(Settings(heads=2, causal=True))


def by_key(trace) -> dict:
    return {stage.key: stage for stage in base_stages(trace, HEAD, FOCUS)}


def test_the_base_stages_are_the_six_steps_in_the_pages_order(trace):
    from explorer.controls import PAGE

    assert tuple(STEPS) == PAGE["step"].options
    assert [f"st_{stage.key}" for stage in base_stages(trace, HEAD, FOCUS)] == list(STEPS)
    assert all(stage.formula and stage.code and stage.tensors for stage in base_stages(trace, HEAD, FOCUS))


def test_the_base_stages_carry_the_traces_own_tensors(trace):
    st = by_key(trace)
    assert torch.equal(st["tokens"].tensors["x"], trace.x) and st["tokens"].facts["ids"] == list(trace.tokens.ids)
    qkv = st["qkv"].tensors
    assert torch.allclose(qkv["Q"], trace.x @ trace.weights.W_q.transpose(-2, -1), atol=TOL)
    assert torch.equal(qkv["K"], trace.K) and torch.equal(qkv["V"], trace.V)
    scores = st["scores"].tensors
    assert torch.allclose(scores["scores"], trace.Q @ trace.K.transpose(-2, -1), atol=TOL)  # Q Kᵀ, computed here
    assert torch.allclose(scores["scaled_scores"], scores["scores"] * trace.scale, atol=TOL)
    mask = st["mask"].tensors["mask"]
    assert torch.equal(mask, torch.ones_like(mask).tril()) and st["mask"].facts["n"] == int(mask.sum())
    sm = st["softmax"].tensors
    assert torch.allclose(sm["weights"], trace.attn, atol=TOL)  # no dropout: the weights are the trace's
    assert torch.allclose(sm["exp"] / sm["row_sum"].unsqueeze(-1), trace.attn, atol=TOL)
    out = st["output"].tensors
    assert torch.equal(out["attn"], trace.attn) and torch.allclose(out["context"], trace.attn @ trace.V, atol=TOL)


def test_the_code_lines_quote_this_inputs_shapes_and_head(trace):
    st = by_key(trace)
    assert f"head {HEAD}: {tuple(trace.weights.W_q[HEAD].shape)}" in st["qkv"].code
    assert str(tuple(trace.scores[HEAD].shape)) in st["scores"].code and f"{trace.scale:.6g}" in st["scores"].code
    assert str(tuple(trace.x.shape)) in st["tokens"].code
    assert str(tuple(trace.context[HEAD].shape)) in st["output"].code
    assert st["scores"].facts["unscaled"] == trace.peak_weight(HEAD, FOCUS, scaled=False)


@pytest.mark.parametrize("name", EXPLAINED)
def test_a_variants_steps_are_its_own_stages_between_the_base_ones(name):
    tr = run_trace(Settings(kernel=name, heads=2))
    steps = step_stages(tr, HEAD, FOCUS)
    own = [f"vs_{stage.key}" for stage in tr.variant.stages]
    assert list(steps) == ["st_tokens", "st_qkv", *own, "st_output"]
    assert [steps[k] for k in own] == list(tr.variant.stages)
    assert steps["st_output"].formula == KERNELS[name].formula


# ---- the page's step table (explorer/steps/step_views.py) against the step selector's options


def offered() -> dict[str, tuple[str, ...]]:
    """Every set of step keys the step selector offers: full attention's, and each variant's (as the page passes
    them to its radio)."""
    from explorer.controls import PAGE

    out = {"full": PAGE["step"].options}
    for name in EXPLAINED:
        out[name] = tuple(step_stages(run_trace(Settings(kernel=name, heads=2)), HEAD, FOCUS))
    return out


def uncovered(keys, stages: dict, views: dict) -> list[str]:
    """The offered keys the page cannot draw: no stage for it, a base step (``st_``) without its own drawer, or a
    key that is neither a base step nor a variant's own (``vs_``, drawn by the generic drawer)."""
    return [
        k
        for k in keys
        if k not in stages or (k.startswith("st_") and k not in views) or not k.startswith(("st_", "vs_"))
    ]


def test_the_step_table_draws_every_step_the_selector_offers(trace):
    from explorer.steps.step_views import VIEWS

    assert set(VIEWS) == set(STEPS)  # a drawer of its own for each base step, no stale row
    base = step_stages(trace, HEAD, FOCUS)
    for name, keys in offered().items():
        stages = base if name == "full" else step_stages(run_trace(Settings(kernel=name, heads=2)), HEAD, FOCUS)
        assert not uncovered(keys, stages, VIEWS), (name, uncovered(keys, stages, VIEWS))


def test_the_coverage_check_fails_on_a_broken_table(trace):
    from explorer.steps.step_views import VIEWS

    stages = step_stages(trace, HEAD, FOCUS)
    broken = {k: v for k, v in VIEWS.items() if k != "st_mask"}
    assert uncovered(STEPS, stages, broken) == ["st_mask"]  # a base step whose drawer is missing
    assert uncovered((*STEPS, "st_bogus", "xx_pattern"), {**stages, "xx_pattern": None}, VIEWS) == [
        "st_bogus",
        "xx_pattern",
    ]
