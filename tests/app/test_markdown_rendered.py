"""The catalogue's own Markdown is rendered (bold shows as bold, in English and Chinese), while text that
came from outside is still shown as typed. Rendered with a CommonMark parser (markdown-it-py, which
Streamlit's dependency rich brings), the rules Streamlit's Markdown follows too."""

import html
import re

import pytest
from background import until_done
from markdown_it import MarkdownIt

from explorer.base.i18n import STRINGS, t
from explorer.base.safe import md

COMMONMARK = MarkdownIt("commonmark")
SENTENCE = "The animal didn't cross the street because it was too tired"


def rendered(text: str) -> str:
    return COMMONMARK.render(text)


def shown(text: str) -> str:
    """The text a reader sees: the rendered HTML without its tags."""
    return html.unescape(re.sub(r"<[^>]+>", "", rendered(text)))


@pytest.mark.parametrize("lang", [0, 1], ids=["en", "zh"])
def test_no_catalogue_string_shows_its_markup_as_text(lang):
    """A closing ** after a full-width colon and before a CJK character is not right-flanking in
    CommonMark: '**在这里设置：**任务' showed its asterisks. Every string of the catalogue, checked."""
    bad = [k for k, pair in STRINGS.items() if "**" in pair[lang] and "**" in shown(pair[lang])]
    assert not bad, bad


def test_md_t_renders_the_catalogues_markup_and_escapes_the_values():
    from explorer.base.safe import md_t

    hostile = "**x** <b>y</b> [z](javascript:alert(1)) :red[w] $m$"
    for lang in ("en", "zh"):
        text = md_t("in_voita", language=lang, pos=hostile, syn="—")
        out = rendered(text)
        assert out.count("<strong>") == 2 and "**" not in shown(t("in_voita", language=lang, pos="a", syn="b"))
        assert "**x** <b>y</b> [z](javascript:alert(1))" in shown(text)  # the value, as typed
        assert "<a " not in out and "<b>" not in out
    assert md(hostile).count("\\*") == 4  # md() still escapes every marker of the user's text


def _markdown(at) -> list[str]:
    return [m.value for m in at.markdown] + [c.value for c in at.caption]


def test_insides_head_roles_show_bold_not_asterisks(app):
    at = app("pages/9_inside.py", query={"sentence": SENTENCE})
    at.toggle(key="in_roles_go").set_value(True).run()
    assert not at.exception
    until_done(at)  # the roles are a background job: on a busy machine the first run draws "computing"
    voita = [m for m in _markdown(at) if "Voita" in m]
    assert voita and all("**" not in shown(m) and "<strong>" in rendered(m) for m in voita), voita


def test_the_labs_settings_note_shows_bold_not_asterisks_in_chinese(app):
    at = app("pages/8_lab.py", query={"lang": "zh"})
    note = [m for m in _markdown(at) if "在这里设置" in m]
    assert note and all("**" not in shown(m) and rendered(m).count("<strong>") == 2 for m in note), note
