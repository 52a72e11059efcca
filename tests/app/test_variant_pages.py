"""The variant chosen in the sidebar goes through Step by step (its own steps), Multi-head and Cross-attention."""

import json

import pytest
import torch

from attn_core import Settings, run_trace
from explorer.base.i18n import STRINGS
from explorer.controls import live_variants

VARIANTS = [v for v in live_variants() if v != "full"]
TITLE = {"features": "φ(Q)", "pattern": "pattern", "projections": "K' = EK", "random_features": "ω"}


def charts(at):
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def titles(at) -> list[str]:
    return [c["layout"].get("title", {}).get("text", "") for c in charts(at)]


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("variant", VARIANTS)
def test_every_step_of_every_variant_draws_the_engines_numbers(app, variant, lang):
    at = app(query={"kernel": variant, "lang": lang, "heads": "2", "head_steps": "1"})
    assert not at.exception and not at.sidebar.error, [e.value for e in at.sidebar.error]
    radio = at.radio(key="step")
    steps = list(radio.options)
    own = [s for s in radio.proto.options]  # the labels, numbered in order
    assert len(steps) >= 5 and own[0].startswith("1 ")
    tr = run_trace(Settings(kernel=variant, heads=2))
    tensors = tr.variant.tensors()
    for stage in tr.variant.stages:
        at.radio(key="step").set_value(f"vs_{stage.key}").run()
        assert not at.exception, (variant, stage.key)
        drawn = {c["layout"]["title"]["text"].split(" (")[0]: c for c in charts(at)}
        for name in stage.tensors:
            key = f"vs_tensor.{name}"  # a word in the UI's language, else the engine's symbol
            label = STRINGS[key][lang == "zh"] if key in STRINGS else stage.labels.get(name, name)
            assert label in drawn, (variant, stage.key, label, list(drawn))
            z = torch.tensor([[float("nan") if x is None else x for x in row] for row in drawn[label]["data"][0]["z"]])
            t = tensors[name]
            assert torch.allclose(z, t[1 if t.shape[0] > 1 else 0], atol=1e-5, equal_nan=True), (variant, name)
    at.radio(key="step").set_value("st_output").run()
    context = next(c for c in charts(at) if c["layout"]["title"]["text"].startswith(("Context vectors", "上下文向量")))
    assert torch.allclose(torch.tensor(context["data"][0]["z"]), tr.context[1], atol=1e-5)


@pytest.mark.parametrize("page", ["pages/2_multihead.py", "pages/3_cross.py"])
def test_other_pages_show_the_variants_weights(app, page):
    at = app(page, query={"kernel": "linear_elu", "heads": "2"})
    assert not at.exception and any("Linear" in i.value for i in at.info)


def test_an_impossible_combination_says_how_to_fix_it_in_the_uis_language(app):
    at = app(query={"kernel": "linformer", "causal": "true", "lang": "zh"})
    assert not at.exception
    shown = " ".join(e.value for e in at.sidebar.error)
    assert shown and "Linformer" in shown and "causal" not in shown.lower().replace("因果", "")
    at = app(query={"kernel": "linear_elu", "score": "additive"})
    assert "dot" in " ".join(e.value for e in at.sidebar.error).lower()


def test_a_variant_shows_only_its_own_options_and_the_step_survives_a_language_switch(app):
    at = app(query={"kernel": "performer", "step": "vs_random_features"})
    keys = {w.key for w in at.sidebar.number_input}
    assert "features" in keys and "proj_k" not in keys and "window" not in keys
    assert at.radio(key="step").value == "vs_random_features"
    at.sidebar.radio(key="lang").set_value("zh").run()
    assert at.radio(key="step").value == "vs_random_features" and not at.exception
    at.sidebar.selectbox(key="kernel").set_value("sliding_window").run()
    keys = {w.key for w in at.sidebar.number_input}
    assert "window" in keys and "features" not in keys and "mask" not in {w.key for w in at.sidebar.selectbox}
    assert at.radio(key="step").value == "st_output"  # the performer's step does not exist here: the default


def test_the_variants_page_sets_each_error_beside_uniform_attention_and_says_when_it_is_no_better(app):
    from attn_core.compare import compare

    at = app("pages/5_variants.py")
    at.multiselect(key="var_kernels").set_value(["full", "sliding_window", "linformer"]).run()
    assert not at.exception
    res = compare(Settings(window=1, proj_k=3), ["full", "sliding_window", "linformer"])  # the page's own defaults
    tr = run_trace(Settings())
    uniform = tr.V[0].mean(0)  # every query averages all the values
    expect = float((tr.context[0] - uniform).abs().max())
    assert res["uniform"]["max_abs"] == pytest.approx(expect, rel=1e-5)
    captions = " ".join(c.value for c in at.caption)
    assert f"{expect:.4g}" in captions
    warned = [w.value for w in at.warning if "no better than uniform" in w.value]
    worse = [k for k in ("sliding_window", "linformer") if res["kernels"][k]["max_abs"] >= expect]
    assert len(warned) == len(worse) >= 1  # on this sentence Linformer (k = 3) is farther off than a plain average


@pytest.mark.parametrize("query", [{"mask": "causal"}, {"causal": "true"}])
def test_the_variants_page_uses_the_sidebars_causal_mask(app, query):
    """Mask = causal (or the causal switch) makes full attention causal on Variants: nothing above the
    diagonal, and the weights are the trace's own under that mask (head 0, the input every kernel sees)."""
    at = app("pages/5_variants.py", query=query)
    at.multiselect(key="var_kernels").set_value(["full", "linear_elu", "linformer"]).run()
    assert not at.exception
    spec = next(c for c in charts(at) if c["layout"]["title"]["text"].startswith("Attention weights"))
    z = torch.tensor(spec["data"][0]["z"], dtype=torch.float64)
    L = z.shape[0]
    assert L >= 3 and torch.count_nonzero(z.triu(1)) == 0, z
    expect = run_trace(Settings(mask="causal")).attn[0].double()  # the engine's causal softmax, independently
    assert torch.allclose(z, expect, rtol=1e-5, atol=1e-6)
    assert torch.allclose(z.sum(-1), torch.ones(L, dtype=torch.float64), rtol=1e-5)
    # Linformer cannot be causal: the page says so beside it, in the UI's language, and shows the others
    said = [e.value for e in at.error]
    assert len(said) == 1 and "Linformer" in said[0] and "cannot be causal" in said[0], said
    assert len([c for c in charts(at) if c["layout"]["title"]["text"].startswith("Attention weights")]) == 2


def test_the_variants_page_says_which_sidebar_mask_it_does_not_apply_in_the_uis_language(app):
    at = app("pages/5_variants.py", query={"mask": "block", "lang": "zh"})
    assert not at.exception and not at.error
    said = " ".join(i.value for i in at.info)
    assert "掩码" in said and "不适用" in said
    at = app("pages/5_variants.py", query={"mask": "causal"})
    at.multiselect(key="var_kernels").set_value(["full", "linformer"]).run()
    at.sidebar.radio(key="lang").set_value("zh").run()
    assert not at.exception
    assert [e.value for e in at.error if "Linformer" in e.value and "因果" in e.value]
    assert not any("mask" in i.value.lower() for i in at.info)


def test_under_a_causal_mask_every_variant_shown_is_causal(app):
    """Each variant that has a causal form is drawn in it: no weight above the diagonal, rows summing to 1."""
    at = app("pages/5_variants.py", query={"mask": "causal"})
    picked = ["sliding_window", "linear_elu", "performer", "block"]
    at.multiselect(key="var_kernels").set_value(picked).run()
    assert not at.exception and not at.error, [e.value for e in at.error]  # none refused
    drawn = [c for c in charts(at) if c["layout"]["title"]["text"].startswith("Attention weights")]
    assert len(drawn) == len(picked)
    for spec in drawn:
        z = torch.tensor(spec["data"][0]["z"], dtype=torch.float64)
        assert torch.count_nonzero(z.triu(1)) == 0, z
        assert torch.allclose(z.sum(-1), torch.ones(z.shape[0], dtype=torch.float64), rtol=1e-4, atol=1e-5)
