"""The guided tour: every lesson opens its page with its settings and its question, and leads to the next."""

import pytest

from explorer.base.i18n import t
from explorer.classroom.tour import FILES, TOUR, params


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
    links = [m.value for m in at.markdown if 'class="tour-link"' in m.value]
    assert len(links) == len(TOUR) and all(f"tour={lesson.key}" in x for lesson, x in zip(TOUR, links))
    at = app(query={"tour": "<script>nope</script>"})
    assert not at.exception and "tour" not in at.query_params
    assert any("tour" in w.value for w in at.sidebar.warning)
