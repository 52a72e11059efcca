"""What a learner and a teacher see after a click: Multi-head shows the new heads when the count
grows, presenter mode opens at step 1, an error of a setting a lesson link hides has a place."""

import json

from attn_core import Settings, run_trace
from explorer.controls import STEPS


def head_charts(at) -> list[str]:
    """The titles of Multi-head's per-head heatmaps, each checked against the engine's weights."""
    heads = at.session_state["settings"]["heads"]
    tr = run_trace(Settings(heads=heads))
    titles = []
    for c in at.get("plotly_chart"):
        spec = json.loads(c.proto.spec)
        title = (spec["layout"].get("title") or {}).get("text", "")
        if title.startswith("Head "):
            h = int(title.split()[1])
            z = spec["data"][0]["z"]
            assert abs(z[1][2] - float(tr.attn[h, 1, 2])) < 1e-6, title  # the chart is that head's weights
            titles.append(title)
    return titles


def test_show_four_heads_draws_four_head_charts(app):
    at = app("pages/2_multihead.py")
    assert head_charts(at) == ["Head 0"]
    at.button(key="mh_show_four").click().run()
    assert not at.exception
    assert at.session_state["settings"]["heads"] == 4
    assert head_charts(at) == ["Head 0", "Head 1", "Head 2", "Head 3"]


def test_raising_the_sidebar_head_count_shows_the_new_heads_up_to_four(app):
    at = app("pages/2_multihead.py")
    at.number_input(key="heads").set_value(2).run()
    assert head_charts(at) == ["Head 0", "Head 1"]
    at.number_input(key="heads").set_value(6).run()
    assert head_charts(at) == ["Head 0", "Head 1", "Head 2", "Head 3"]  # the page's limit
    at.number_input(key="heads").set_value(3).run()
    assert head_charts(at) == ["Head 0", "Head 1", "Head 2"]


def test_heads_the_learner_chose_are_kept_when_the_count_grows(app):
    at = app("pages/2_multihead.py", query={"heads": "4"})
    at.multiselect(key="mh_heads").set_value([2]).run()
    assert head_charts(at) == ["Head 2"]
    at.number_input(key="heads").set_value(6).run()
    assert not at.exception and head_charts(at) == ["Head 2"]  # the learner's choice, not the default


def test_presenter_mode_from_a_link_opens_at_step_one(app):
    at = app(query={"present": "1"})
    assert at.session_state["step"] == STEPS[0]
    assert any("Step 1 of 6" in h.value for h in at.subheader)
    assert at.button(key="present_back").disabled and not at.button(key="present_next").disabled
    at.button(key="present_next").click().run()
    assert at.session_state["step"] == STEPS[1] and at.query_params["step"] == STEPS[1]


def test_presenter_mode_from_a_link_that_names_a_step_opens_there(app):
    at = app(query={"present": "1", "step": "st_mask"})
    assert at.session_state["step"] == "st_mask" and any("Step 4 of 6" in h.value for h in at.subheader)


def test_the_present_button_opens_at_step_one_unless_the_link_names_a_step(app):
    at = app()
    assert at.session_state["step"] == "st_output"  # the page's own default, without presenting
    at.button(key="present_start").click().run()
    assert not at.exception and at.session_state["step"] == STEPS[0]
    assert any("Step 1 of 6" in h.value for h in at.subheader)
    named = app(query={"step": "st_softmax"})
    named.button(key="present_start").click().run()
    assert named.session_state["step"] == "st_softmax" and any("Step 5 of 6" in h.value for h in named.subheader)


def test_an_error_of_a_hidden_setting_shows_at_the_top_of_the_sidebar_and_says_it_is_hidden(app):
    """/?hide=sentence&sentence= : the sentence box is hidden and the sentence is empty."""
    at = app(None, query={"hide": "sentence", "sentence": ""})
    assert not at.exception, [e.value for e in at.exception]
    assert not [w for w in at.text_area if w.key == "sentence"]  # hidden indeed
    errors = [e.value for e in at.sidebar.error]
    assert any("empty" in e.lower() and "hidden by the lesson link" in e for e in errors), errors
    at = app(None, query={"hide": "sentence", "sentence": "", "lang": "zh"})
    assert not at.exception and any("课程链接隐藏" in e.value for e in at.sidebar.error)
    steps = app("pages/1_steps.py", query={"hide": "sentence,heads", "sentence": "", "heads": "3"})
    assert not steps.exception and steps.sidebar.error
