"""The control table: every setting reaches the engine from its widget and from a link, under its own name."""

import pytest

from attn_core import Settings
from attn_core.knobs import KNOBS
from explorer.controls import DEFAULTS, PAGE, SIDEBAR, Control

# What a control needs in the link to be shown at all.
NEEDS = {
    "window": {"mask": "sliding_window"},
    "dilation": {"mask": "dilated"},
    "global_tokens": {"mask": "global_window"},
}
NEEDS |= {"block": {"mask": "block"}, "dropout": {"dropout_on": "true"}}
NEEDS |= {"features": {"kernel": "performer"}, "proj_k": {"kernel": "linformer"}}


def other_value(c: Control):
    """A value of ``c`` that is not its default and that the engine accepts with the other defaults."""
    if c.name == "kernel":
        return "linear_elu"  # a variant that leaves the mask shown
    if c.kind in ("choice", "radio"):
        return next(o for o in c.options if o != c.default)
    if c.kind == "switch":
        return not c.default
    if c.kind in ("text", "area"):
        return "ein zwei drei"
    special = {"heads": 2, "d_model": 8, "d_q": 12, "d_k": 12, "d_v": 7, "seed": 7, "temperature": 2.5}
    special |= {"window": 3, "dilation": 3, "global_tokens": 2, "block": 3, "dropout": 0.3, "features": 8, "proj_k": 3}
    return special[c.name]


def widget(at, name: str):
    """The widget keyed by a control's name, whatever its kind."""
    for kind in ("text_area", "text_input", "number_input", "selectbox", "radio", "checkbox", "slider"):
        found = [w for w in getattr(at, kind) if w.key == name]
        if found:
            return found[0]
    raise AssertionError(f"no widget keyed {name}")


@pytest.mark.parametrize("control", SIDEBAR, ids=lambda c: c.name)
def test_every_setting_opens_from_a_link_and_reaches_the_engine(app, control):
    value = other_value(control)
    query = dict(NEEDS.get(control.name, {}), **{control.name: control.to_url(value)})
    at = app(query=query)
    assert widget(at, control.name).value == value
    expect = {"source": None, "dropout_on": None}.get(control.name, value)
    settings = at.session_state["settings"]
    if control.name == "source":
        assert at.session_state["source_text"] == value
    elif control.name == "dropout_on":
        assert settings["dropout"] == 0.1  # the rate's default, now switched on
    elif control.name == "causal":
        assert settings["causal"] is True
    else:
        assert settings[control.name] == expect, control.name
    assert at.query_params[control.name] == control.to_url(value)  # the link keeps it


@pytest.mark.parametrize("control", SIDEBAR, ids=lambda c: c.name)
def test_every_setting_changed_in_its_widget_goes_to_the_url_and_back_to_the_default(app, control):
    at = app(query=NEEDS.get(control.name, {}))
    value = other_value(control)
    widget(at, control.name).set_value(value).run()
    assert not at.exception
    assert at.query_params[control.name] == control.to_url(value)
    widget(at, control.name).set_value(control.default).run()
    assert control.name not in at.query_params  # a default leaves the URL


def test_a_language_switch_keeps_every_choice_and_relabels_it(app):
    choices = {c.name: other_value(c) for c in SIDEBAR if c.kind in ("choice", "radio")}
    at = app(query={name: str(v) for name, v in choices.items()} | {"step": "vs_features", "focus": "4"})
    labels_en = {w.key: w.options for w in at.selectbox}
    for language in ("zh", "en", "zh"):
        widget(at, "lang").set_value(language).run()
        assert not at.exception
        for name, value in choices.items():
            assert widget(at, name).value == value, (language, name)
        assert widget(at, "step").value == "vs_features" and widget(at, "focus").value == 4
    assert {w.key: w.options for w in at.selectbox}["score"] != labels_en["score"]  # the labels did change


def test_the_focus_is_clamped_to_a_shorter_sentence_not_reset(app):
    at = app(query={"focus": "5"})
    assert widget(at, "focus").value == 5
    widget(at, "sentence").set_value("three short words").run()
    assert not at.exception and widget(at, "focus").value == 2  # the last token of the new sentence
    widget(at, "sentence").set_value("now a longer sentence with many words").run()
    assert widget(at, "focus").value == 2  # kept where it fits


def test_a_link_value_outside_this_runs_range_is_dropped_with_a_notice(app):
    at = app(query={"heads": "2", "head_steps": "5", "focus": "99"})
    assert widget(at, "head_steps").value == 0 and widget(at, "focus").value == 1
    assert "head_steps" not in at.query_params and "focus" not in at.query_params
    notice = " ".join(w.value for w in at.sidebar.warning).replace("\\", "")
    assert "head_steps" in notice and "focus" in notice


def test_reset_clears_every_control_and_the_url(app):
    query = {c.name: c.to_url(other_value(c)) for c in SIDEBAR if c.name not in ("d_q", "d_k")}
    at = app(query=query | {"mask": "dilated", "dropout_on": "true"})
    at.sidebar.button(key="reset").click().run()
    assert not at.exception
    defaults = Settings().to_dict()
    assert at.session_state["settings"].to_dict() == defaults | {"max_bytes": defaults["max_bytes"]}
    assert not [name for name in at.query_params if name in {c.name for c in SIDEBAR}]


def test_the_table_knows_every_field_a_user_can_set():
    """A new Settings field a user should reach needs a row; the engine-only ones are named here."""
    engine_only = {"pad_to", "max_tokens", "max_bytes", "extra"}  # extra: options beyond the fields, each a row
    names = {c.name for c in SIDEBAR}
    assert set(Settings.__dataclass_fields__) - engine_only <= names
    assert {k.name for k in KNOBS.values() if k.section} <= names  # every knob the sidebar draws
    for c in SIDEBAR:
        assert c.parse(c.to_url(c.default)) == c.default, c.name  # the URL text round-trips
    assert set(PAGE) >= {"focus", "step", "head_steps", "cross_head", "rm_layer", "rm_head", "rm_step"}
    assert DEFAULTS == Settings()
