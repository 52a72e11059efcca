"""The code on the teaching pages is folded and sent only once opened (a lazy expander: the browser loads Streamlit's
syntax highlighter only for those who read code, and a new tab's first chart comes sooner): Step by step,
Multi-head and Real model send no code in a first run, name the fold in the UI's language, and once it is opened
show the engine's code for the step shown (``attn_core.stages``, computed here), kept open through a change of step;
presenter mode keeps its code in its own fold; a forged value for the fold is only a closed fold."""

from __future__ import annotations

import pytest

from attn_core.config import Settings
from attn_core.stages import step_stages
from attn_core.trace import run_trace
from explorer.base.i18n import t

SENTENCE = "Life is short, eat dessert first"
PAGES = ["pages/1_steps.py", "pages/2_multihead.py", "pages/7_model.py"]


def folds(at) -> list:
    return [e for e in at.expander if e.label in (t("show_code", language="en"), t("show_code", language="zh"))]


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("page", PAGES)
def test_a_first_run_sends_no_code_and_names_the_fold(app, page, lang):
    at = app(page, query={"lang": lang, "sentence": SENTENCE})
    assert not at.code, [c.value[:40] for c in at.code]
    (fold,) = folds(at)
    assert fold.label == t("show_code", language=lang)


@pytest.mark.parametrize("page", PAGES)
def test_opened_it_shows_the_code(app, page):
    at = app(page, query={"sentence": SENTENCE})
    at.session_state["show_code"] = True
    at.run()
    assert not at.exception
    assert len(at.code) == 1 and at.code[0].value.strip()


def test_the_steps_code_is_the_engines_and_stays_open_through_a_change_of_step(app):
    at = app("pages/1_steps.py", query={"sentence": SENTENCE, "focus": "1"})
    at.session_state["show_code"] = True
    at.run()
    stages = step_stages(run_trace(Settings(sentence=SENTENCE)), 0, 1)
    for key in ("st_qkv", "st_scores", "st_output"):
        at.radio(key="step").set_value(key).run()
        assert not at.exception
        assert [c.value for c in at.code] == [stages[key].code], key


def test_presenter_mode_keeps_the_code_in_its_own_fold(app):
    at = app("pages/1_steps.py", query={"sentence": SENTENCE, "present": "1", "step": "st_scores"})
    assert not folds(at)
    stages = step_stages(run_trace(Settings(sentence=SENTENCE)), 0, 1)
    assert stages["st_scores"].code in [c.value for c in at.code]


@pytest.mark.parametrize("forged", ["yes", 3, None, ["x"]])
def test_a_forged_fold_value_is_a_closed_fold(app, forged):
    at = app("pages/1_steps.py", query={"sentence": SENTENCE})
    at.session_state["show_code"] = forged
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert folds(at)
