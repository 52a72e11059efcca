"""The Explain page under AppTest, in both languages: every section drawn from the engine's
numbers, Shapley only on request, bad input answered with a message in the UI's language."""

import math
import re

import pytest

PAGE = "pages/10_explain.py"


def texts(at) -> str:
    parts = [m.value for m in at.markdown] + [c.value for c in at.caption] + [i.value for i in at.info]
    parts += [w.value for w in at.warning] + [f"{m.label} {m.value}" for m in at.metric]
    return "\n".join(str(p) for p in parts)


def no_nan(at) -> None:
    assert not re.search(r"\bnan\b", texts(at), re.IGNORECASE)
    for df in at.dataframe:
        for col in df.value.columns:
            for v in df.value[col]:
                assert not (isinstance(v, float) and math.isnan(v)), col


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_page_explains_the_sentence_in_each_language(app, lang):
    at = app(PAGE, {"lang": lang})
    assert at.title[0].value == ("Is attention an explanation?" if lang == "en" else "注意力是解释吗？")
    assert len(at.tabs) == 3
    shown = texts(at)
    assert ("completeness error" if lang == "en" else "完备性误差") in shown
    assert ("direct share" if lang == "en" else "直接份额") in shown
    assert any("ρ" in str(v) for df in at.dataframe for v in df.value.iloc[:, 1])  # the agreement table
    no_nan(at)
    assert "Σ φ" not in shown  # Shapley waits for its button
    at.button(key="ex_shapley_go").click().run()
    assert not at.exception
    assert "Σ φ" in texts(at)
    no_nan(at)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_bad_sentences_get_a_message_in_the_ui_language(app, lang):
    at = app(PAGE, {"lang": lang})
    at.text_input(key="ex_text").set_value("!!! ... ?").run()
    assert not at.exception
    warned = " ".join(w.value for w in at.warning)
    assert ("only punctuation" if lang == "en" else "只有标点") in warned
    at.text_input(key="ex_text").set_value("word " * 300).run()  # 302 pieces, over the 128 explained
    warned = " ".join(w.value for w in at.warning)
    assert ("302 pieces" if lang == "en" else "302 个词元") in warned
    at.text_input(key="ex_text").set_value("Hello").run()
    assert not at.exception
    cells = " ".join(str(v) for df in at.dataframe for col in df.value.columns for v in df.value[col])
    assert ("no correlation: fewer than 3 pieces" if lang == "en" else "无相关：词元少于 3 个") in cells
    no_nan(at)
    at.text_input(key="ex_b_negation").set_value("   ").run()
    warned = " ".join(w.value for w in at.warning)
    assert ("second sentence is empty" if lang == "en" else "第二个句子是空的") in warned


def test_the_pair_and_the_table(app):
    at = app(PAGE, {"lang": "en"})
    shown = texts(at)
    assert "cos(e(a), e(b))" in shown and "What attention alone would have said" in shown
    at.text_input(key="ex_b_negation").set_value("I like this film").run()
    assert "The two sentences are the same" in texts(at)
    assert "Over 117 sentences at layer 6" in texts(at)  # the reading, written from the table's numbers
    assert "Abnar & Zuidema (2020), Table 3" in " ".join(str(v) for df in at.dataframe for v in df.value.iloc[:, 0])
    no_nan(at)
