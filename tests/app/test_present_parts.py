"""Presenter mode on the teaching pages beyond Step by step (Next token, Vision, Real model): each page's sections
are walked one at a time with Step by step's row (Step i of n, Back / Next), in the page's order, in both
languages; each part draws its own section and no other, the settings folded away; without presenter mode the page
draws every section as before."""

import pytest
from tiny_decoders import NAME

from explorer.base.i18n import STRINGS
from explorer.controls.page import NT_PARTS, RM_PARTS, VI_PARTS

TITLES = {  # each part's section, by the catalogue key of its heading
    "pages/11_next_token.py": dict(
        zip(NT_PARTS, ("nt_dist", "nt_positions", "nt_generate", "nt_lens", "nt_heads", "nt_copy"))
    ),
    "pages/12_vision.py": dict(
        zip(VI_PARTS, ("vision.patches_title", "vision.windows_title", "vision.trained_title", "vision.upload_title"))
    ),
    "pages/7_model.py": dict(zip(RM_PARTS, ("rm_overview", None, "rm_apart"))),  # the comparison has no heading
}
WALK = {page: {p: k or "rm_compare" for p, k in titles.items()} for page, titles in TITLES.items()}  # the row's names
QUERY = {"pages/11_next_token.py": {"model": NAME, "prompt": "the cat sat on the mat"}}


def headings(at, page: str, zh: bool) -> set[str]:
    """The parts whose section heading is drawn."""
    drawn = {h.value for h in at.subheader}
    return {part for part, key in TITLES[page].items() if key and STRINGS[key][zh] in drawn}


PART = {"pages/11_next_token.py": "nt_part", "pages/12_vision.py": "vi_part", "pages/7_model.py": "rm_part"}


def check_part(at, page: str, i: int, zh: bool) -> None:
    """Part ``i`` is on view: the row names it, its section alone is drawn, no page title."""
    parts = list(TITLES[page])
    part = parts[i]
    heading = STRINGS["present_at"][zh].format(i=i + 1, n=len(parts), step=STRINGS[WALK[page][part]][zh])
    assert heading in [h.value for h in at.subheader], (heading, [h.value for h in at.subheader])
    key = TITLES[page][part]
    assert headings(at, page, zh) == ({part} if key else set()), (part, headings(at, page, zh))
    assert at.button(key="present_back").disabled == (i == 0)
    assert at.button(key="present_next").disabled == (i == len(parts) - 1)
    assert not at.main.title  # the walk's row stands for the page's title


@pytest.mark.parametrize("page", list(TITLES))
def test_presenter_mode_walks_the_pages_sections_one_at_a_time(app, tiny_gpt2, page):
    at = app(page, query={"present": "1"} | QUERY.get(page, {}))
    parts = list(TITLES[page])
    for i in range(len(parts)):
        check_part(at, page, i, zh=False)
        if i < len(parts) - 1:
            at.button(key="present_next").click().run()
            assert not at.exception, [e.value for e in at.exception]
    at.button(key="present_back").click().run()
    assert at.query_params[PART[page]] == parts[-2]


@pytest.mark.parametrize("page", list(TITLES))
def test_a_link_names_the_part_and_the_walk_speaks_chinese(app, tiny_gpt2, page):
    """Each part opened from a link (?nt_part=, ?vi_part=, ?rm_part=), in Chinese."""
    for i, part in enumerate(TITLES[page]):
        at = app(page, query={"present": "1", "lang": "zh", PART[page]: part} | QUERY.get(page, {}))
        check_part(at, page, i, zh=True)


@pytest.mark.parametrize("page", list(TITLES))
def test_without_presenter_mode_every_section_is_drawn_and_a_button_presents(app, tiny_gpt2, page):
    at = app(page, query=QUERY.get(page, {}))
    drawn = headings(at, page, False)
    assert drawn >= {p for p, k in TITLES[page].items() if k} - {"windows"}  # ViT draws windows' heading too
    at.button(key="present_start").click().run()
    assert at.query_params["present"] == "1"
