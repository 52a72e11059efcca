"""A text longer than the box takes is cut to what fits, and the page says so (it was silently ignored:
the browser refused a paste over the box's limit). What is kept also fits the URL."""

from urllib.parse import quote

import pytest

from explorer.controls import MAX_TEXT

WORDS = "The quick brown fox, jumps over the lazy dog; 春眠不觉晓 and then it sleeps again. "
LONG = (WORDS * 60)[:3268]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_sentence_over_the_limit_is_cut_to_what_fits_and_said(app, lang):
    at = app(query={"lang": lang})
    at.sidebar.text_area(key="sentence").input(LONG).run()
    assert not at.exception
    kept = LONG[:MAX_TEXT]
    assert at.sidebar.text_area(key="sentence").value == kept
    assert at.query_params["sentence"] == [kept] or at.query_params["sentence"] == kept
    said = " ".join(w.value for w in at.sidebar.warning)
    assert f"{MAX_TEXT:,}" in said and f"{len(LONG):,}" in said, said
    assert ("characters" in said) == (lang == "en") and ("字符" in said) == (lang == "zh")
    assert len(quote(kept).encode()) < 16_000  # a link the browser and the server both take
    at.sidebar.text_area(key="sentence").input("one two three").run()  # a text that fits: nothing said
    assert not at.sidebar.warning and at.sidebar.text_area(key="sentence").value == "one two three"


def test_a_text_box_of_a_page_cuts_and_says_so_too(app):
    at = app("pages/9_inside.py")
    at.text_input(key="in_second").input("a" * 1500).run()
    assert not at.exception
    assert at.text_input(key="in_second").value == "a" * 1000
    assert any("1,500" in w.value for w in at.warning)
