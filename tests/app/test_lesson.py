"""Lesson links: hide and lock sidebar settings by their URL names; the builder composes the link."""

from urllib.parse import parse_qs, urlsplit

from explorer.classroom.lesson import OPEN_KEY
from explorer.controls import SIDEBAR


def open_builder(at):
    """The teacher opens the sidebar's Lesson link box (its content is drawn only while it is open)."""
    at.session_state[OPEN_KEY] = True
    return at.run()


def test_the_builder_draws_nothing_until_opened_and_keeps_the_choice_while_closed(app):
    at = app(query={"hide": "score"})
    assert not [w for w in at.sidebar.multiselect if w.key in ("lesson_hide", "lesson_lock")]
    open_builder(at)
    assert at.multiselect(key="lesson_hide").value == ["score"]  # the link's hidden settings to begin with
    at.multiselect(key="lesson_hide").set_value(["kernel", "score"]).run()
    at.session_state[OPEN_KEY] = False
    at.run()
    assert not [w for w in at.sidebar.multiselect if w.key == "lesson_hide"] and not at.sidebar.code
    open_builder(at)
    assert at.multiselect(key="lesson_hide").value == ["kernel", "score"]
    assert "hide=kernel,score" in at.sidebar.code[0].value


def sidebar_keys(at) -> set[str]:
    kinds = ("text_area", "text_input", "number_input", "selectbox", "radio", "checkbox", "slider")
    return {w.key for kind in kinds for w in getattr(at.sidebar, kind)}


def test_hidden_settings_are_absent_but_keep_the_links_values_and_locked_ones_are_disabled(app):
    at = app(query={"hide": "score,mask", "lock": "heads", "mask": "causal", "heads": "2", "lang": "zh"})
    assert not at.exception
    keys = sidebar_keys(at)
    assert "score" not in keys and "mask" not in keys and "heads" in keys
    assert at.sidebar.number_input(key="heads").disabled and not at.sidebar.number_input(key="d_model").disabled
    settings = at.session_state["settings"]
    assert settings["mask"] == "causal" and settings["heads"] == 2 and settings["score"] == "scaled_dot"
    at.sidebar.number_input(key="d_model").set_value(32).run()  # the rest still works, the lesson stays
    assert at.session_state["settings"]["mask"] == "causal" and "mask" not in sidebar_keys(at)
    at.sidebar.button(key="reset").click().run()  # a reset keeps what the lesson fixed
    assert at.session_state["settings"]["mask"] == "causal" and at.session_state["settings"]["heads"] == 2
    assert at.session_state["settings"]["d_model"] == 16


def test_unknown_names_are_dropped_with_a_notice_never_an_error(app):
    at = app(query={"hide": "score,nope,<b>x</b>", "lock": ",,,"})
    assert not at.exception
    assert "score" not in sidebar_keys(at) and at.query_params["hide"] == "score" and "lock" not in at.query_params
    notice = " ".join(w.value for w in at.sidebar.warning)
    assert "hide" in notice and "lock" in notice and "<b>" not in notice


def test_the_builder_composes_a_link_that_opens_the_same_lesson(app):
    at = open_builder(app(query={"mask": "causal"}))
    at.multiselect(key="lesson_hide").set_value(["kernel", "score"]).run()
    at.multiselect(key="lesson_lock").set_value(["heads"]).run()
    link = at.sidebar.code[0].value
    query = {k: v[0] for k, v in parse_qs(urlsplit(link).query).items()}
    assert query["hide"] == "kernel,score" and query["lock"] == "heads" and query["mask"] == "causal"
    again = app(query=query)
    assert {"kernel", "score"}.isdisjoint(sidebar_keys(again)) and again.sidebar.number_input(key="heads").disabled
    assert again.session_state["settings"]["mask"] == "causal"


def test_every_setting_can_be_hidden_and_every_page_still_runs(app):
    from explorer.pages import FILES

    names = ",".join(c.name for c in SIDEBAR)
    for page in FILES:
        at = app(page, query={"hide": names})
        assert not at.exception, page
        assert sidebar_keys(at) <= {"lang", "palette", "lesson_code", "lesson_predict"}  # a reader's own, the builder


def test_multihead_offers_four_heads_in_one_click(app):
    at = app("pages/2_multihead.py")
    at.button(key="mh_show_four").click().run()
    assert not at.exception and at.session_state["settings"]["heads"] == 4
    assert at.query_params["heads"] == "4" and not [b for b in at.button if b.key == "mh_show_four"]
