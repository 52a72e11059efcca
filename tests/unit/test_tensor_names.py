"""One vocabulary for the tensors a forward pass exposes: the trace's fields, the stages' keys, the URL's step keys,
the notebook's names and the intervention hooks' capture names, each checked against attn_core.tensors' table
(each read from a real trace, page table, notebook or model run, not from the table itself)."""

from __future__ import annotations

import dataclasses
import re
from dataclasses import replace

import pytest
import torch
from tolerance import assert_close

from attn_core import Settings, kernels, run_trace
from attn_core import notebook as nbk
from attn_core import tensors as T
from attn_core.stages import STEPS, base_stages, step_stages
from attn_core.steps import AttendedView
from attn_core.trace import Trace

# a view with every optional tensor: cross-attention, biases and the output projection, the additive score
FULL = Settings(sentence="the cat sat on the mat", source="le chat", heads=2, layout="standard", init="standard")
FULL = replace(FULL, score="additive")
NOT_TENSORS = {"settings", "tokens", "source_tokens", "n_real", "attended", "variant", "scale"}
EXPLAINED = [n for n, k in kernels.KERNELS.items() if k.explain is not None and n != "flex"]


def leaf_paths(obj, prefix: str = "") -> dict[str, torch.Tensor]:
    """Every tensor a trace holds, by its attribute path, read from its fields (and the view's names)."""
    names = [f.name for f in dataclasses.fields(obj)]
    if isinstance(obj, Trace):
        names += [n for n, v in vars(AttendedView).items() if isinstance(v, property)]
    out = {}
    for name in names:
        if not prefix and name in NOT_TENSORS:
            continue
        value = getattr(obj, name)
        if isinstance(value, torch.Tensor):
            out[prefix + name] = value
        elif dataclasses.is_dataclass(value):
            out.update(leaf_paths(value, f"{prefix}{name}."))
    return out


@pytest.fixture(scope="module")
def trace():
    return run_trace(FULL)


def test_each_name_once_and_each_step_known():
    rows = T._TABLE
    assert len({r.name for r in rows}) == len(rows) == len(T.TENSORS)
    assert {r.step for r in rows} == {*T.BASE_STEPS, "multihead", "variant"}
    assert sorted(r.capture for r in rows if r.capture is not None) == [0, 1]


def test_the_traces_fields_are_the_tables_paths(trace):
    held = leaf_paths(trace)
    table = {r.trace: r.name for r in T._TABLE if r.trace is not None}
    assert set(held) == set(table), set(held) ^ set(table)
    for path, value in held.items():
        assert T.read(trace, path) is value, path


def test_the_base_stages_carry_the_tables_keys(trace):
    stages = base_stages(trace, 1, 2)
    assert tuple(st.key for st in stages) == T.BASE_STEPS
    for st in stages:
        rows = [r for r in T._TABLE if r.step == st.key and r.stage is not None]
        assert list(st.tensors) == [r.stage for r in rows], st.key
        assert all(st.tensors[r.stage] is T.read(trace, r.trace) for r in rows), st.key


@pytest.mark.parametrize("name", EXPLAINED)
def test_a_variants_stage_keys_are_rows(name):
    t = run_trace(Settings(sentence="the cat sat on the mat", kernel=name, heads=2))
    for st in t.variant.stages:
        for key in st.tensors:
            row = T.TENSORS[T.notebook_name(key)]
            assert row.step == "variant" and row.stage == key and kernels.AXES[key] == row.axes
    keys = list(step_stages(t, 0, 1))
    own = [T.url_step(st.key, variant=True) for st in t.variant.stages]
    assert keys == [*T.URL_STEPS[:2], *own, T.URL_STEPS[-1]]


def test_the_urls_step_keys_are_the_tables():
    from explorer import controls
    from explorer.steps import step_views

    assert tuple(controls.STEPS) == T.URL_STEPS == tuple(STEPS) == tuple(step_views.VIEWS)
    assert controls.PAGE["step"].options == T.URL_STEPS


# the notebook's names: what its code cells record, read from the cells' text (an f-string key as its prefix*)
RECORDED = re.compile(r"recomputed\.update\((.*?)\)\n", re.DOTALL)


def recorded_names(code: str) -> set[str]:
    names = set()
    for args in RECORDED.findall(code):
        names |= set(re.findall(r"(?:^|[\s,(])(\w+)=", args)) | set(re.findall(r"'(\w+)':", args))
        names |= {prefix + "*" for prefix in re.findall(r"f'(\w+)\{", args)}
    return names


def covered(name: str, written: set[str]) -> bool:
    return name in written or any(w.endswith("*") and name.startswith(w[:-1]) for w in written)


LISTS = {"tokens", "token_ids", "source_tokens"}  # plain lists, not tensors


@pytest.mark.parametrize("name", ["full", "cross_additive", *EXPLAINED])
def test_the_notebooks_names_are_the_tables(name, trace):
    t = trace if name == "cross_additive" else run_trace(Settings(sentence="a b c d e", kernel=name, heads=2))
    app = nbk.app_tensors(t)
    assert set(app) <= set(T.TENSORS), set(app) - set(T.TENSORS)
    base = {n for n, r in T.TENSORS.items() if r.step != "variant"}
    assert {n for n in app if n in base} == set(T.trace_tensors(t))
    written = set()
    for code in nbk.trace_notebook(t.settings, trace=t).code()[:-1]:  # the last cell compares; it records none
        written |= recorded_names(code)
    written -= LISTS
    assert all(covered(n, set(T.TENSORS)) or n.endswith("*") for n in written), written - set(T.TENSORS)
    assert all(w[:-1] in {n[: len(w) - 1] for n in T.TENSORS} for w in written if w.endswith("*")), written
    assert [n for n in app if not covered(n, written)] == []


def test_the_name_reader_can_fail():
    """The notebook check above reads what a cell records: a name outside the table is seen."""
    assert recorded_names("recomputed.update(E=E_proj, weights_Lk=w)\n") == {"E", "weights_Lk"}
    got = recorded_names("recomputed.update({f'half_{n}': r})\nrecomputed.update(alpha=a)\n")
    assert got == {"half_*", "alpha"} and not covered("alpha", set(T.TENSORS)) and covered("half_2", got)


def test_the_hooks_capture_the_tables_names():
    from attn_core.interpret import hooks

    assert hooks.Captured._fields == T.CAPTURED
    assert [T.TENSORS[n].capture for n in T.CAPTURED] == [0, 1]
    pre = hooks.pt.load("")
    batch, (enc,) = hooks.batch_of(pre, ["The cat sat on the mat"])
    none = torch.zeros(1, pre.layers, pre.heads, dtype=torch.int8)
    plan = hooks.Plan(none, batch.keep, record=True)
    out = hooks.run(pre, batch, plan, attentions=True)
    for layer, got in plan.capture.items():
        assert_close(got.weights, out.attentions[layer], msg=f"weights {layer}")  # the model's own weights
        assert got.concat.shape == (1, enc.n_real, pre.heads * pre.d_head)
        ctx, w = got  # still a pair
        assert ctx is got.concat and w is got.weights
