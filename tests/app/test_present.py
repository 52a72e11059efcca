"""Presenter mode, predict on every page that has weights, the colour-blind-safe palette and the
charts' text alternatives (checked against the engine's numbers)."""

import json

import pytest

from attn_core import Settings, run_trace
from attn_core.config import TUTORIAL_SENTENCE
from explorer.controls import STEPS
from explorer.controls.present import CSS

TRUTH = run_trace(Settings())  # the tutorial's settings


def charts(at):
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def captions(at) -> list[str]:
    """The captions as shown (the markdown escapes that keep a token a token removed)."""
    return [c.value.replace("\\", "") for c in at.caption]


def narration(at) -> str:
    return " ".join(m.value for m in at.markdown)


def test_presenter_walks_the_six_steps_with_back_and_next_and_narrates_each(app):
    at = app(query={"present": "1", "step": "st_tokens"})
    assert any(CSS.strip() in h.proto.body for h in at.get("html"))  # the large type
    seen = []
    for n, step in enumerate(STEPS):
        assert at.session_state["step"] == step
        assert any(f"Step {n + 1} of 6" in h.value for h in at.subheader)
        seen.append(narration(at))
        assert at.button(key="present_back").disabled == (n == 0)
        assert at.button(key="present_next").disabled == (n == len(STEPS) - 1)
        if n < len(STEPS) - 1:
            at.button(key="present_next").click().run()
            assert not at.exception
    assert len(set(seen)) == 6  # a narration of its own for each step
    assert "6 tokens" in seen[0] and "**is**" in seen[0]  # the tutorial sentence, the focus token 'is'
    best = TRUTH.tokens.words[int(TRUTH.attn[0, 1].argmax())]
    assert f"**{best}**" in seen[-1] and f"{float(TRUTH.attn[0, 1].max()):.2f}" in seen[-1]
    at.button(key="present_back").click().run()
    assert at.session_state["step"] == STEPS[-2] and at.query_params["step"] == STEPS[-2]


def test_presenter_narrates_in_chinese_and_counts_the_mask(app):
    at = app(query={"present": "true", "lang": "zh", "mask": "causal", "step": "st_mask"})
    text = narration(at)
    allowed = 6 * 7 // 2  # a causal mask over 6 tokens
    assert "掩码" in text and f"36 对中的 {allowed} 对" in text
    assert any("第 4 步" in h.value for h in at.subheader)


def test_a_bad_present_value_is_dropped_with_a_notice_and_the_page_is_the_usual_one(app):
    at = app(query={"present": "yes please"})
    assert "present" not in at.query_params
    assert any("present" in w.value for w in at.sidebar.warning)
    assert not [b for b in at.button if b.key == "present_next"]
    assert not [h for h in at.get("html") if CSS in h.proto.body]  # no large type (the history script is not it)


def test_the_present_button_enters_and_leaves_presenter_mode(app):
    at = app()
    at.button(key="present_start").click().run()
    assert at.query_params["present"] == "1" and at.button(key="present_next")
    at.button(key="present_exit").click().run()
    assert "present" not in at.query_params and not [b for b in at.button if b.key == "present_next"]


def test_presenter_charts_use_large_type_and_outline_the_focus_token(app):
    at = app(query={"present": "1", "step": "st_output", "focus": "3"})
    weights = next(c for c in charts(at) if c["layout"]["title"]["text"] == "Attention weights")
    assert weights["layout"]["font"]["size"] >= 16
    (box,) = weights["layout"]["shapes"]
    assert box["y0"] == 2.5 and box["y1"] == 3.5  # the row of token 3
    best = TRUTH.tokens.words[int(TRUTH.attn[0, 3].argmax())]
    assert any(f"'eat' attends most to '{best}' ({float(TRUTH.attn[0, 3].max()):.2f})" in c for c in captions(at))


def _numbers(value) -> list[float]:
    """Every number in a chart's data (z, x, y, text, customdata ...), nested lists flattened."""
    if isinstance(value, bool):
        return []
    if isinstance(value, (int, float)):
        return [float(value)]
    if isinstance(value, dict):
        if "bdata" in value:  # a typed array as plotly serialises it
            import base64

            import numpy as np

            return np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"]).astype(float).tolist()
        return [x for v in value.values() for x in _numbers(v)]
    if isinstance(value, (list, tuple)):
        return [x for v in value for x in _numbers(v)]
    if isinstance(value, str):
        try:
            return [float(value)]
        except ValueError:
            return []
    return []


def _texts(at) -> list[str]:
    """Every text on the page: captions, markdown, notices, tables, chart titles, labels and hover texts."""
    out = [e.value for kind in ("markdown", "caption", "info", "warning", "success", "error") for e in at.get(kind)]
    out += [str(e.value) for e in at.get("dataframe")] + [str(e.value) for e in at.get("table")]
    for spec in charts(at):
        out.append(json.dumps(spec["layout"].get("title")) + json.dumps(spec["layout"].get("annotations")))
        for trace in spec["data"]:
            out.append(json.dumps([trace.get(f) for f in ("text", "hovertext", "texttemplate", "hovertemplate")]))
    return out


def shows_weights(at, row) -> list[str]:
    """Where the page gives away ``row`` (the asked-about weights): a chart whose numbers hold the
    row (a heatmap's row, a bar chart's bars, hover values), or a text quoting its largest weight."""
    row = [float(w) for w in row]
    found = []
    for spec in charts(at):
        values = [_numbers(trace.get(f)) for trace in spec["data"] for f in ("z", "x", "y", "customdata", "text")]
        flat = [x for v in values for x in v]
        for i in range(len(flat) - len(row) + 1):
            if all(abs(a - b) < 1e-4 for a, b in zip(flat[i : i + len(row)], row)):
                found.append(f"chart {spec['layout'].get('title', {}).get('text')!r}")
                break
    best = max(row)
    quoted = {f"{best:.2f}", f"{best:.3f}", f"{best:.4f}", f"{best:.3g}"}
    found += [f"text {s[:80]!r}" for s in _texts(at) if any(q in s for q in quoted)]
    return found


@pytest.mark.parametrize(
    ("page", "query", "weights"),
    [
        ("pages/2_multihead.py", {"heads": "2", "focus": "2"}, lambda tr: tr.attn[0, 2]),
        ("pages/3_cross.py", {"focus": "2"}, None),
    ],
)
def test_predict_hides_the_weights_on_multihead_and_cross_then_marks_the_answer(app, page, query, weights):
    if weights is None:  # cross-attention: queries from the second sentence, keys from the first
        from explorer.controls.state import cross_settings

        tr = run_trace(cross_settings(Settings()))
        row = tr.attn[0, 2]
    else:
        tr = run_trace(Settings(heads=2))
        row = weights(tr)
    plain = app(page, query=query)  # without predict the page shows them: the detector finds them
    assert shows_weights(plain, row)
    at = app(page, query={"predict": "true", **query})
    assert not at.exception
    assert not shows_weights(at, row)  # anywhere on the page, before the answer
    truth = int(row.argmax())
    at.radio(key="predict_pick").set_value(truth).run()
    at.button(key="predict_reveal").click().run()
    assert not at.exception and any("Right" in s.value for s in at.success)
    assert any(f"({float(row[truth]):.2f})" in c for c in captions(at))  # the chart's fact agrees
    assert shows_weights(at, row)


def test_predict_on_the_real_model_uses_the_trained_heads_weights(app):
    from explorer.model import real

    at = app("pages/7_model.py", query={"predict": "true", "focus": "2", "rm_layer": "1", "rm_head": "3"})
    assert not at.exception
    spec = next(iter(real.offered()))
    ht = real.head(spec, TUTORIAL_SENTENCE, 0, 1, 3)
    row = ht.model_attn[2]
    wrong = (int(row.argmax()) + 1) % len(row)
    at.radio(key="predict_pick").set_value(wrong).run()
    at.button(key="predict_reveal").click().run()
    assert not at.exception
    assert any("You chose" in w.value for w in at.warning)


def colours(chart) -> tuple[str, ...]:
    """A heatmap's colour scale as its colours (plotly serialises a named scale as [[position, colour], ...])."""
    return tuple(str(c).replace(" ", "").lower() for _, c in chart["data"][0]["colorscale"])


def named(*names) -> set[tuple[str, ...]]:
    from plotly.colors import get_colorscale

    return {tuple(c.replace(" ", "").lower() for _, c in get_colorscale(n)) for n in names}


STANDARD_SCALES = named("RdBu", "Viridis", "Blues")
SAFE_SCALES = named("PuOr", "Cividis", "Greys")


def test_the_safe_palette_changes_every_colour_and_keeps_the_numbers(app):
    plain = app(query={"step": "st_scores"})
    safe = app(query={"step": "st_scores", "palette": "safe"})
    a, b = charts(plain), charts(safe)
    assert [c["data"][0].get("z") for c in a] == [c["data"][0].get("z") for c in b]
    plain_scales = [colours(c) for c in a if c["data"][0]["type"] == "heatmap"]
    safe_scales = [colours(c) for c in b if c["data"][0]["type"] == "heatmap"]
    assert safe_scales and len(safe_scales) == len(plain_scales)
    assert all(s in SAFE_SCALES for s in safe_scales), safe_scales  # plotly sends a named scale as its colours
    assert not any(s in STANDARD_SCALES for s in safe_scales)
    assert all(p in STANDARD_SCALES for p in plain_scales)  # and the standard page used the standard scales
    bars = [c for c in b if c["data"][0]["type"] == "bar"]
    assert bars and all(c["layout"]["colorway"][0] == "#0072B2" for c in bars)
    assert safe.query_params["palette"] == "safe"
    safe.button(key="reset").click().run()
    assert safe.query_params["palette"] == "safe"  # a reader's own choice outlives a reset


def test_a_palette_the_app_does_not_have_is_dropped_with_a_notice(app):
    at = app(query={"palette": "<b>neon</b>"})
    assert not at.exception and "palette" not in at.query_params
    assert at.session_state["palette"] == "standard"
    assert any("palette" in w.value for w in at.sidebar.warning)


def test_multihead_keeps_the_chosen_heads_that_still_exist_when_heads_drop(app):
    at = app("pages/2_multihead.py", query={"heads": "6"})
    at.multiselect(key="mh_heads").set_value([1, 5]).run()
    at.number_input(key="heads").set_value(3).run()
    assert not at.exception and at.multiselect(key="mh_heads").value == [1]
    at.number_input(key="heads").set_value(1).run()
    assert at.multiselect(key="mh_heads").value == [0]  # none left: the default


@pytest.mark.parametrize("variant", ["performer", "linformer", "sliding_window"])
def test_presenting_a_variant_folds_its_notice_formula_and_code_away_on_every_step(app, variant):
    """The variant's notice, each step's formula and code are in the fold-aways, not above the chart."""
    from attn_core.stages import step_stages

    steps = list(step_stages(run_trace(Settings(kernel=variant)), 0, 1))
    at = app(query={"present": "1", "kernel": variant})
    for step in steps:
        at.radio(key="step").set_value(step).run()
        assert not at.exception, (variant, step)
        folded_latex = sum(len(e.latex) for e in at.main.expander)
        folded_code = sum(len(e.code) for e in at.main.expander)
        assert len(at.main.latex) == folded_latex >= 1, (variant, step)
        assert len(at.main.code) == folded_code >= 1, (variant, step)
        notice = [i for i in at.main.info if "Variant" in i.value]
        folded = [i for e in at.main.expander for i in e.info if "Variant" in i.value]
        assert len(notice) == len(folded) == 1, (variant, step)
        assert charts(at), (variant, step)
