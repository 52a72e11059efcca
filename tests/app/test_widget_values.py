"""Every value a widget returns is data from the browser: a stale label, a string for a number, NaN,
too many items, set under the widget's key, never raises and falls back to a value the widget offers.

The cases are generated from the widgets each page actually draws (every selectbox, radio,
multiselect, number input, slider, checkbox and toggle found under AppTest), so a new widget is
covered by itself. The sidebar's widgets are drawn by one loop for every page; they are tried on
Step by step, and each page's own widgets on that page (the Tutorial and the start page have none).
The n-th hostile value of every widget on a page goes in one app run; a run that raises, or hides a widget,
is tried again one value at a time, so every value meets its widget and a failure names it.
"""

from __future__ import annotations

import math
import os

import pytest
from streamlit.testing.v1 import AppTest

from attn_core import Settings, run_trace

APP = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "app.py")

KINDS = ("selectbox", "radio", "multiselect", "number_input", "slider", "checkbox", "toggle")
STALE = "Head 3 (a label from an earlier run) ✗"

# Where each page draws its widgets: a page with its plain link, and the states that show more of them.
STATES = [
    ("pages/1_steps.py", {"heads": "2", "step": "st_qkv"}),
    ("pages/1_steps.py", {"heads": "2", "predict": "true"}),
    ("pages/2_multihead.py", {"heads": "4"}),
    ("pages/2_multihead.py", {"heads": "4", "predict": "true"}),
    ("pages/3_cross.py", {"heads": "2"}),
    ("pages/3_cross.py", {"heads": "2", "predict": "true"}),
    ("pages/5_variants.py", {}),
    ("pages/6_complexity.py", {}),
    ("pages/7_model.py", {"rm_step": "rm_st_qkv"}),
    ("pages/7_model.py", {"predict": "true"}),
    ("pages/7_model.py", {"qk_colour": "norm"}),  # the link opens the query-key map: its widgets drawn
    ("pages/8_lab.py", {}),
    ("pages/9_inside.py", {}),
    ("pages/10_explain.py", {}),
]
# At least these must be found (the generator itself is checked: a lost state would test nothing).
EXPECTED = {
    "mh_heads",
    "focus",
    "predict_pick",
    "step",
    "head_steps",
    "qkv_which",
    "cross_head",
    "cross_floor",
    "var_kernels",
    "var_curve",
    "var_window",
    "cx_device",
    "cx_kernels",
    "cx_lengths",
    "cx_dtype",
    "cx_batch",
    "model",
    "rm_layer",
    "rm_head",
    "rm_which",
    "rm_floor",
    "rm_step",
    "lab_task",
    "lab_b",
    "in_mode",
    "in_heads",
    "in_prune_go",
    "in_roles_go",
    "ex_removal",
    "ex_layer",
    "score",
    "layout",
    "lang",
    "lesson_hide",
    "qk_colour",
    "rm_qk_probes",
    "heads",
    "temperature",
}


def drawn(at, sidebar: bool | None = None) -> dict[str, object]:
    """The keyed widgets on the page (``sidebar``: only the sidebar's, only the main area's, or all)."""
    found = {}
    for kind in KINDS:
        for w in at.get(kind):
            if not w.key or w.key.startswith("$$"):
                continue
            in_sidebar = any(w.key == s.key for s in getattr(at.sidebar, kind))
            if sidebar is None or in_sidebar == sidebar:
                found[w.key] = w
    return found


def cases(w) -> list[tuple[str, object]]:
    """Hostile values for one widget, from what it is."""
    kind = w.type
    if kind in ("selectbox", "radio"):
        label = w.options[-1] if w.options else "x"
        return [("stale label", STALE), ("an option's label", f"{label}\u200b"), ("a number", 10**9), ("a list", [1])]
    if kind == "multiselect":
        current = list(w.value) or []
        too_many = (current or [STALE]) * (w.proto.max_selections + 1 if w.proto.max_selections else 3)
        return [
            ("stale labels", [STALE, "Head 7"]),
            ("a stale label among good ones", [*current, STALE]),
            ("too many", too_many),
            ("not a list", STALE),
            ("numbers", [10**9, -1]),
        ]
    if kind in ("number_input", "slider"):
        low = w.min if w.min is not None else 0
        high = w.max if w.max is not None else 1
        return [
            ("above the range", high + 1000),
            ("below the range", low - 1000),
            ("NaN", math.nan),
            ("infinity", math.inf),
            ("a string", "12"),
            ("a label", STALE),
        ]
    return [("a string", "yes"), ("a number", 2)]  # checkbox, toggle


def sane(w) -> str | None:
    """None when the widget shows a value it offers; else what is wrong."""
    value = w.value
    if w.type in ("selectbox", "radio"):
        if value is None:
            return None if w.key == "predict_pick" else "nothing chosen"
        try:
            shown = w.format_func(value)
        except Exception as err:  # noqa: BLE001 - a value the widget cannot even label
            return f"cannot label {value!r}: {err}"
        return None if str(shown) in w.options else f"{value!r} is not an option"
    if w.type == "multiselect":
        if not isinstance(value, list):
            return f"{value!r} is not a list"
        labels = [str(w.format_func(v)) for v in value]
        if any(label not in w.options for label in labels):
            return f"{value!r} holds a value that is not an option"
        if w.proto.max_selections and len(value) > w.proto.max_selections:
            return f"{len(value)} items, more than {w.proto.max_selections}"
        return None
    if w.type in ("number_input", "slider"):
        v = value[0] if isinstance(value, (list, tuple)) else value
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            return f"{v!r} is not a number"
        if (w.min is not None and v < w.min) or (w.max is not None and v > w.max):
            return f"{v} outside [{w.min}, {w.max}]"
        return None
    return None if isinstance(value, bool) else f"{value!r} is not a switch"


LESSON_OPEN = "lesson_open"


def open_with(page: str, query: dict, values: dict | None = None) -> AppTest:
    """``page`` opened from its link with ``values`` already in the session under the widgets'
    keys, as a browser's widget state puts them there (the app reads them before drawing)."""
    at = AppTest.from_file(APP, default_timeout=120)
    for k, v in query.items():
        at.query_params[k] = v
    for k, v in ({LESSON_OPEN: True} | (values or {})).items():  # the lesson builder open, so its widgets are drawn
        at.session_state[k] = v
    at.switch_page(page).run()
    return at


def attempt(page: str, query: dict, key: str, bad) -> list[str]:
    """What goes wrong (empty: nothing) with ``bad`` as the browser's value for ``key``."""
    at = open_with(page, query, {key: bad})
    if at.exception:
        return [f"{key} = {bad!r}: {e.value.strip().splitlines()[-1][:200]}" for e in at.exception]
    w = drawn(at).get(key)
    why = sane(w) if w is not None else None
    return [f"{key} = {bad!r}: {why}"] if why else []


def found(page: str, query: dict, sidebar: bool | None = None) -> dict[str, object]:
    at = open_with(page, query)
    assert not at.exception, [e.value for e in at.exception]
    return drawn(at, sidebar)


def attempt_together(page: str, query: dict, values: dict) -> list[str]:
    """What goes wrong with every widget's hostile value in ``values`` sent at once (one app run for them all, each
    widget's own check reading its own value). A widget that raises, or one that is not drawn in that run (another
    value hid it), is tried again alone, so each value is still tried with its widget drawn and a failure names
    the widget and the value."""
    at = open_with(page, query, values)
    if at.exception:
        return [p for key in sorted(values) for p in attempt(page, query, key, values[key])]
    shown = drawn(at)
    problems = [
        f"{key} = {values[key]!r}: {why}" for key in sorted(values) if key in shown and (why := sane(shown[key]))
    ]
    return problems + [p for key in sorted(values) if key not in shown for p in attempt(page, query, key, values[key])]


def _try_every(page: str, query: dict, sidebar: bool) -> tuple[set[str], list[str]]:
    """Every widget's hostile cases, the n-th case of every widget sent in one run (as many runs as the
    widget with the most cases has)."""
    widgets = found(page, query, sidebar)
    plans = {key: cases(w) for key, w in sorted(widgets.items())}
    problems: list[str] = []
    for n in range(max((len(c) for c in plans.values()), default=0)):
        problems += attempt_together(page, query, {key: c[n][1] for key, c in plans.items() if n < len(c)})
    return set(widgets), problems


@pytest.mark.parametrize(("page", "query"), STATES, ids=lambda v: v if isinstance(v, str) else ",".join(v) or "-")
def test_every_page_widget_survives_a_stale_or_hostile_value(page, query):
    keys, problems = _try_every(page, query, sidebar=False)
    assert keys, f"no widget found on {page}"
    assert not problems, "\n".join(problems)


def test_every_sidebar_widget_survives_a_stale_or_hostile_value():
    keys, problems = _try_every("pages/1_steps.py", {"mask": "sliding_window", "dropout_on": "true"}, True)
    assert {"lang", "palette", "score", "layout", "kernel", "mask", "heads", "dropout", "lesson_hide"} <= keys
    assert not problems, "\n".join(problems)


def test_the_generator_finds_the_widgets_it_should():
    """The states above reach every widget named in EXPECTED (so none is silently left untested)."""
    keys: set[str] = set()
    for page, query in STATES:
        keys |= set(found(page, query))
    assert EXPECTED <= keys, EXPECTED - keys


def test_a_stale_head_label_from_the_browser_is_dropped_with_a_notice_and_the_heads_drawn(app):
    """The class benchmark's crash: Multi-head's multiselect got "Head 3" (a label) after the head
    count dropped. Sent as the browser sends it (the widget's state, which also marks it as the
    learner's choice), it is dropped, the page names the setting, and the default heads are drawn."""
    at = app("pages/2_multihead.py", query={"heads": "2"})
    at.multiselect(key="mh_heads").set_value(["Head 3"]).run()  # serialised as its label, as a browser sends it
    assert not at.exception, [e.value for e in at.exception]
    assert at.multiselect(key="mh_heads").value == [0, 1]
    assert any("Heads to show" in toast.value for toast in at.toast)
    heads = [c for c in at.get("plotly_chart") if '"Head ' in c.proto.spec and "mh_head_" in c.proto.id]
    assert len(heads) == 2


def test_a_stale_pick_is_no_pick_and_a_real_pick_is_still_revealed():
    at = open_with("pages/1_steps.py", {"predict": "true", "focus": "1"}, {"predict_pick": "7 tired"})  # a label
    assert not at.exception and at.radio(key="predict_pick").value is None
    assert at.button(key="predict_reveal").disabled
    truth = int(run_trace(Settings()).attn[0, 1].argmax())
    at.radio(key="predict_pick").set_value(truth).run()
    at.button(key="predict_reveal").click().run()
    assert not at.exception and any("Right" in s.value for s in at.success)
