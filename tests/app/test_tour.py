"""The guided tour: every lesson opens its page with its settings and its question, and leads to the next."""

from urllib.parse import parse_qs

import pytest

from explorer.base.i18n import t
from explorer.classroom.tour import FILES, TOUR, params


def tour_links(at) -> list[tuple[str, dict]]:
    """Each tour link the run drew: (its page, its parameters, one value each), in order."""
    links = [e.proto for e in at.get("page_link")]
    return [
        (x.page, {k: v[-1] for k, v in parse_qs(x.query_string).items()}) for x in links if "tour=" in x.query_string
    ]


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("lesson", TOUR, ids=lambda lesson: lesson.key)
def test_every_lesson_opens_its_page_with_its_question(app, lesson, lang):
    at = app(FILES[lesson.page], query=params(lesson) | {"lang": lang})
    assert not at.exception, [e.value for e in at.exception]
    shown = " ".join(m.value for m in at.markdown)
    assert t(f"tour.{lesson.key}.title", language=lang) in shown
    assert t(f"tour.{lesson.key}.q", language=lang).split("*")[0][:30] in shown
    settings = at.session_state["settings"]
    for name, value in lesson.params.items():
        if name in settings:
            assert str(settings[name]) == value, name
    fixed = at.session_state.get("_url_notices", [])
    assert not fixed, fixed  # every parameter of the lesson's link was usable


def test_the_lessons_lead_one_to_the_next():
    keys = [lesson.key for lesson in TOUR]
    assert 10 <= len(keys) <= 16 and len(set(keys)) == len(keys)  # a short tour: one lesson a concept
    assert {lesson.page for lesson in TOUR} >= {"steps", "multihead", "cross", "complexity", "model", "lab", "vision"}


def test_the_start_page_lists_the_tour_and_an_unknown_lesson_is_dropped_with_a_notice(app):
    at = app(None)
    links = tour_links(at)
    assert len(links) == len(TOUR) and all(query["tour"] == lesson.key for lesson, (_, query) in zip(TOUR, links))
    at = app(query={"tour": "<script>nope</script>"})
    assert not at.exception and "tour" not in at.query_params
    assert any("tour" in w.value for w in at.sidebar.warning)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_lessons_links_open_the_lesson_before_and_after_inside_the_app_with_their_settings(app, lang):
    """Back and Next are the app's own page links (no new page load): each names its lesson's page and carries
    exactly its link's parameters (the lesson's settings, the lesson, the UI's language), read from the table."""
    n = 5
    at = app(FILES[TOUR[n].page], query=params(TOUR[n]) | {"lang": lang})
    (back_page, back), (next_page, ahead) = tour_links(at)
    language = {"lang": lang} if lang != "en" else {}
    for (page, query), lesson in (((back_page, back), TOUR[n - 1]), ((next_page, ahead), TOUR[n + 1])):
        assert page.rstrip("/").endswith(lesson.page), (page, lesson.page)
        assert query == {**lesson.params, "tour": lesson.key, **language}
    labels = [e.proto.label for e in at.get("page_link") if "tour=" in e.proto.query_string]
    titles = [t(f"tour.{TOUR[i].key}.title", language=lang) for i in (n - 1, n + 1)]
    assert [x.replace("\\", "") for x in labels] == [
        t("tour_back", title=titles[0], language=lang),
        t("tour_next", title=titles[1], language=lang),
    ]


def test_the_next_lesson_on_the_same_page_starts_from_its_own_settings(app):
    """Lessons 2 and 3 are both on Step by step: followed inside the app (the session kept), lesson 3's link sets
    d_q and d_k to 512 and locks them; lesson 4's link, on the same page again, sets them back to the defaults."""
    at = app(FILES[TOUR[1].page], query=params(TOUR[1]))
    assert at.session_state["settings"].d_k != 512
    for n, d_k in ((2, 512), (3, at.session_state["settings"].d_k)):
        at.query_params.clear()
        for k, v in params(TOUR[n]).items():
            at.query_params[k] = v
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        assert at.session_state["settings"].d_k == d_k and at.session_state["settings"].d_q == d_k
        assert at.session_state["_tour_at"] == TOUR[n].key
        assert at.sidebar.number_input(key="d_k").disabled is (n == 2)
