"""Hostile links on the Lab, generated from its rows of the control table (``explorer.controls.PAGE``,
the ``lab_`` controls): a control added there is covered here by itself. Each link sets every Lab
control at once to a value it cannot use; the page must run without an exception, drop each value
from the URL and name each control in its notice. Then the links the review found, with their
expected answers written out here (the oracle)."""

import math
import os

import pytest
from streamlit.testing.v1 import AppTest

from explorer.controls import PAGE

APP = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "app.py")
LAB = [c for name, c in PAGE.items() if name.startswith("lab_")]


def hostile(c, round_: int) -> str:
    """The ``round_``-th value ``c`` cannot use: past its range, non-finite, malformed, not a choice."""
    if c.kind in ("int", "float"):
        high, low = c.high, c.low
        values = [repr(high * 10 + 1), "1e400", "nan", repr(low - 1), "0x10", "9" * 400]
        if c.kind == "int":
            values[4] = repr(low + 0.5)  # not a whole number
        return values[round_ % len(values)]
    if c.kind == "switch":
        return ["maybe", "", "2", "TRUE!", "none", "%00"][round_ % 6]
    return ["<b>x</b>", "", "none" if "none" not in c.options else "nope", "x" * 300, "%00", "A"][round_ % 6]


def run(query: dict, lang: str = "en") -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    for k, v in {**query, "lang": lang}.items():
        at.query_params[k] = v
    at.run()
    at.switch_page("pages/8_lab.py").run()
    return at


def named(at) -> set[str]:
    text = " ".join(w.value for w in at.sidebar.warning).replace("\\", "")
    return {c.name for c in LAB if c.name in text}


def test_the_table_has_the_labs_controls():
    assert {"lab_task", "lab_length", "lab_layers", "lab_pos", "lab_lr", "lab_batch", "lab_steps"} <= {
        c.name for c in LAB
    }


@pytest.mark.parametrize("round_", range(6))
def test_every_lab_control_drops_a_value_it_cannot_use_and_names_it(round_):
    query = {c.name: hostile(c, round_) for c in LAB}
    at = run(query, lang="zh" if round_ % 2 else "en")
    assert not at.exception, [e.value for e in at.exception]
    assert named(at) == {c.name for c in LAB}, (query, [w.value for w in at.sidebar.warning])
    assert not {c.name for c in LAB} & set(at.query_params)  # the URL was corrected
    for c in LAB:  # each control fell back to its default (the task's own length and budget)
        value = at.session_state[c.name]
        assert value is not None and (not isinstance(value, float) or math.isfinite(value))


@pytest.mark.parametrize("length", ["19", "32"])
def test_recall_at_a_length_it_cannot_build_is_named_and_falls_back(length):
    at = run({"lab_task": "recall", "lab_length": length})
    assert not at.exception, [e.value for e in at.exception]
    assert named(at) == {"lab_length"} and at.session_state["lab_length"] == 9  # recall's own length
    assert not at.error


def test_the_sidebars_largest_dropout_trains_in_the_lab():
    at = run({"dropout_on": "true", "dropout": "0.9"})
    assert not at.exception and not at.error, [e.value for e in at.error]


@pytest.mark.parametrize(
    "lang,words", [("en", ["would need about", "smaller batch"]), ("zh", ["大约需要", "减小批大小"])]
)
def test_the_reviews_memory_link_is_refused_with_the_estimate_and_the_fix(lang, words):
    link = {"heads": "8", "d_model": "256", "d_q": "512", "d_k": "512", "d_v": "256", "lab_batch": "512"}
    link |= {"lab_length": "32", "lab_layers": "2", "score": "additive"}
    at = run(link, lang)
    assert not at.exception
    shown = " ".join(e.value for e in at.error).replace("\\", "")
    assert all(w in shown for w in words) and "MiB" in shown, shown
