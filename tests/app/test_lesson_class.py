"""A class in a lesson: every switch in a link takes the same spellings, a joined lesson follows the
student to every page, the teacher's link shows the lesson's tally wherever it is opened, the
builder composes the student's and the teacher's links, and the class histogram speaks in whole
answers."""

import json
from urllib.parse import parse_qs, urlsplit

import pytest
from test_lesson import open_builder

from attn_core import Settings, run_trace
from attn_core.classroom.store import POLLS

STEPS, HOME = "pages/1_steps.py", None
TRUTH = int(run_trace(Settings()).attn[0, 1].argmax())  # 'is' -> 'dessert' in the tutorial


def charts(at):
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def class_bars(at):
    titles = ("The class's predictions", "全班的预测", "Lesson", "课")
    return [c for c in charts(at) if c["layout"]["title"]["text"].startswith(titles)]


def answer(at, token: int):
    at.radio(key="predict_pick").set_value(token).run()
    at.button(key="predict_reveal").click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def notice(at) -> str:
    return " ".join(w.value for w in at.sidebar.warning)


# ---- every switch in a link: 1/true/yes/on and 0/false/no/off, one parser ----


def _teacher_on(at) -> bool:
    return any(s.value.startswith("Lesson sw-1") for s in at.subheader)


SWITCHES = {  # name: (page, extra query, how the page shows it is on)
    "predict": (STEPS, {"focus": "1"}, lambda at: bool([r for r in at.radio if r.key == "predict_pick"])),
    "present": (STEPS, {}, lambda at: bool([b for b in at.button if b.key == "present_next"])),
    "teacher": (STEPS, {"lesson": "sw-1", "predict": "true"}, _teacher_on),
    "causal": (STEPS, {}, lambda at: at.session_state["settings"]["causal"] is True),
    "dropout_on": (STEPS, {}, lambda at: at.session_state["settings"]["dropout"] > 0),
    "residual_norm": (STEPS, {}, lambda at: at.session_state["settings"]["residual_norm"] is True),
    "lab_mlp": ("pages/8_lab.py", {}, lambda at: at.checkbox(key="lab_mlp").value is True),
}


@pytest.mark.parametrize("value,on", [("1", True), ("true", True), ("0", False), ("false", False)])
@pytest.mark.parametrize("name", list(SWITCHES))
def test_every_url_switch_takes_1_true_0_false(app, name, value, on):
    page, extra, shows_on = SWITCHES[name]
    at = app(page, query={name: value, **extra})
    assert not at.exception, [e.value for e in at.exception]
    assert shows_on(at) is on, (name, value)
    assert name not in notice(at)  # accepted, not dropped with a notice


def test_the_predict_switch_written_1_hides_the_weights_until_the_answer(app):
    at = app(query={"predict": "1", "focus": "1"})
    assert not charts(at) and any("'is' attend to most" in i.value for i in at.info)
    answer(at, TRUTH)
    assert any("Right" in s.value for s in at.success) and charts(at)


@pytest.mark.parametrize(
    "raw,expected",
    [("1", True), ("TRUE", True), ("Yes", True), ("on", True)]
    + [("0", False), ("False", False), ("no", False), ("OFF", False)]
    + [("2", None), ("", None), ("maybe", None), ("truee", None), ("1,0", None), (" 1", None), ("TRUE ", None)],
)
def test_one_parser_reads_every_spelling_of_a_switch(raw, expected):
    from explorer.base.urlcheck import switch
    from explorer.controls import BY_NAME, PAGE

    assert switch(raw) is expected
    for c in (BY_NAME["causal"], BY_NAME["residual_norm"], PAGE["predict"], PAGE["lab_mlp"]):
        assert c.parse(raw) is expected, c.name


@pytest.mark.parametrize("lang,hint", [("en", "1, true, yes or on"), ("zh", "1、true、yes 或 on")], ids=["en", "zh"])
@pytest.mark.parametrize("name", ["predict", "present", "teacher", "causal"])
def test_a_bad_switch_value_is_named_with_the_spellings_it_takes(app, name, lang, hint):
    at = app(query={name: "maybe", "lang": lang, "lesson": "sw-2"})
    assert not at.exception and name not in at.query_params
    assert name in notice(at) and hint in notice(at) and "maybe" not in notice(at)


# ---- a joined lesson stays with the student on every page ----


def switch_in_browser(at, page: str):
    """What a click in the sidebar or on a start-page card does in a browser: the new page's URL
    carries none of the old page's parameters (Streamlit drops them); the session stays."""
    at.query_params.clear()
    at.switch_page(page).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_a_lesson_joined_on_the_start_page_follows_the_student_and_the_answer_counts(app):
    POLLS.end("walk-1")
    at = app(HOME, query={"lesson": "walk-1", "predict": "1", "focus": "1"})
    switch_in_browser(at, STEPS)
    assert at.query_params["lesson"] == "walk-1" and at.query_params["predict"] in ("1", "true")
    assert not charts(at)  # predict is still on: the weights wait for the answer
    answer(at, TRUTH)
    assert [b["data"][0]["y"][TRUTH] for b in class_bars(at)] == [1]
    question = next(iter(POLLS.lessons["walk-1"].questions))
    assert sum(POLLS.tally("walk-1", question, 6)) == 1

    switch_in_browser(at, "pages/2_multihead.py")  # on again, from Step by step to Multi-head
    assert at.query_params["lesson"] == "walk-1" and not charts(at)
    answer(at, 0)
    assert len(POLLS.lessons["walk-1"].questions) == 2  # the second page's question is counted too
    switch_in_browser(at, "pages/4_tutorial.py")  # a page without a question keeps it too
    assert at.query_params["lesson"] == "walk-1"
    POLLS.end("walk-1")


def test_a_student_who_turns_predict_off_keeps_it_off_on_the_next_page(app):
    at = app(query={"lesson": "walk-2", "predict": "true", "focus": "1"})
    at.checkbox(key="predict").uncheck().run()
    assert charts(at) and "predict" not in at.query_params
    switch_in_browser(at, "pages/2_multihead.py")
    assert at.query_params["lesson"] == "walk-2" and "predict" not in at.query_params and charts(at)


def test_a_link_with_another_lesson_code_joins_that_lesson(app):
    at = app(HOME, query={"lesson": "walk-3"})
    at.query_params["lesson"] = "walk-4"
    at.run()
    switch_in_browser(at, STEPS)
    assert at.query_params["lesson"] == "walk-4"


# ---- the teacher's link ----


def test_the_teachers_link_on_the_start_page_shows_the_lessons_tally(app):
    POLLS.end("room-9")
    question = ("steps", "q")
    POLLS.answer("room-9", question, "s1", 2, {"label": "steps · the sentence · 'is'", "tokens": ["a", "b", "c"]})
    POLLS.answer("room-9", question, "s2", 2)
    POLLS.answer("room-9", question, "s3", 0)
    at = app(HOME, query={"teacher": "1", "lesson": "room-9"})
    assert any("room-9" in s.value for s in at.subheader)
    assert [c["data"][0]["y"] for c in charts(at)] == [[1, 0, 2]]
    assert any("3 answers" in c.value for c in at.caption)
    at.button(key="predict_end").click().run()
    assert not POLLS.lessons.get("room-9") or not POLLS.lessons["room-9"].questions


@pytest.mark.parametrize(
    "lang,page,asked,said",
    [
        ("en", "Step by step", "Which key does 'is' attend to most?", "3 answers to 1 question so far."),
        ("zh", "逐步", "'is' 最关注哪个键？", "目前共有 3 个回答，涉及 1 个问题。"),
    ],
    ids=["en", "zh"],
)
def test_the_lessons_tally_names_each_question_in_words_with_whole_counts(app, lang, page, asked, said):
    """A question's chart is titled with the page's name in the UI's language, the question asked and the sentence
    (as the learner typed it: no entities, no internal key), the count is said in the singular or plural, and the
    count axis marks whole answers only (3 answers once read "0, 1, 1, 2, 2": rounded half-steps)."""
    from explorer.poll.view import describe

    POLLS.end("room-6")
    sentence = "Life is short, eat dessert first"
    question = ("steps", (("sentence", sentence),), 0, 1)
    meta = {"label": describe(question, "is"), "tokens": ["0 a", "1 b", "2 c"]}
    for session_id, token in (("s1", 2), ("s2", 2), ("s3", 0)):
        POLLS.answer("room-6", question, session_id, token, meta)
    at = app(HOME, query={"teacher": "1", "lesson": "room-6", "lang": lang})
    (spec,) = charts(at)
    title = spec["layout"]["title"]["text"]
    assert page in title and asked in title and sentence in title, title
    assert "&#" not in title and "&amp;" not in title and "steps ·" not in title, title
    assert said in [c.value for c in at.caption]
    axis = spec["layout"]["yaxis"]
    assert axis.get("tick0", 0) == 0 and isinstance(axis.get("dtick"), int) and axis["dtick"] >= 1, axis
    assert spec["data"][0]["y"] == [1, 0, 2]
    POLLS.end("room-6")


def test_a_sentence_in_a_questions_title_is_escaped_once(app):
    """What the learner typed reaches the title as text: escaped once for Plotly (which shows "&amp;" as "&"), not
    twice (the title once showed "&#x27;is&#x27;": escaped by the tally, then again by the chart)."""
    from explorer.poll.view import describe

    POLLS.end("room-5")
    question = ("steps", (("sentence", "Tom & Jerry <b>x</b>"),), 0, 1)
    POLLS.answer("room-5", question, "s1", 0, {"label": describe(question, "<b>"), "tokens": ["0 a", "1 b"]})
    at = app(HOME, query={"teacher": "1", "lesson": "room-5"})
    (spec,) = charts(at)
    title = spec["layout"]["title"]["text"]
    assert "“Tom &amp; Jerry &lt;b&gt;x&lt;/b&gt;”" in title and "'&lt;b&gt;'" in title, title
    assert "&amp;amp;" not in title and "&amp;lt;" not in title and "<b>" not in title, title
    assert title.count("<br>") == 1, title
    POLLS.end("room-5")


@pytest.mark.parametrize("most,most_ticks", [(0, 2), (1, 2), (3, 4), (7, 8), (30, 8), (1000, 8)])
def test_the_count_axis_steps_by_whole_answers_and_stays_readable(most, most_ticks):
    """However many answered, the axis steps by a whole number of answers (1, 2, 5, 10, ...) and draws a few marks."""
    from explorer.poll.view import class_figure

    f = class_figure([most, 0], ["0 a", "1 b"], truth=None)
    step = f.layout.yaxis.dtick
    assert isinstance(step, int) and step >= 1 and f.layout.yaxis.tick0 == 0
    assert most // step + 1 <= most_ticks, (most, step)  # the marks from 0 to the tallest bar


def test_the_teachers_link_on_a_page_shows_the_histogram_without_predict(app):
    POLLS.end("room-8")
    at = app(query={"teacher": "1", "lesson": "room-8", "focus": "1"})
    assert any(s.value.startswith("Lesson room-8") for s in at.subheader)
    assert any("0 answers so far" in c.value for c in at.caption)
    assert not [r for r in at.radio if r.key == "predict_pick"]  # the teacher is not asked


def test_the_teacher_stays_the_teacher_on_the_next_page(app):
    at = app(HOME, query={"teacher": "true", "lesson": "room-7"})
    switch_in_browser(at, STEPS)
    assert at.query_params["teacher"] in ("1", "true") and at.query_params["lesson"] == "room-7"
    assert any(s.value.startswith("Lesson room-7") for s in at.subheader)


# ---- the builder composes a lesson ----


def _query(link: str) -> dict:
    return {k: v[0] for k, v in parse_qs(urlsplit(link).query).items()}


def test_the_builder_composes_the_students_and_the_teachers_link(app):
    at = open_builder(app(query={"mask": "causal"}))
    at.text_input(key="lesson_code").input("maths-3").run()
    at.checkbox(key="lesson_predict").check().run()
    at.multiselect(key="lesson_lock").set_value(["heads"]).run()
    links = [c.value for c in at.sidebar.code]
    assert len(links) == 2
    student, teacher = (_query(link) for link in links)
    assert student["lesson"] == "maths-3" and student["predict"] == "1" and student["lock"] == "heads"
    assert "teacher" not in student and student["mask"] == "causal"
    assert teacher == student | {"teacher": "1"}
    opened = app(query=teacher)  # the teacher's link opens the teacher's view
    assert any(s.value.startswith("Lesson maths-3") for s in opened.subheader)


@pytest.mark.parametrize("lang,said", [("en", "letters, digits"), ("zh", "字母")], ids=["en", "zh"])
def test_the_builder_says_why_a_lesson_code_cannot_be_used(app, lang, said):
    at = open_builder(app(query={"lang": lang}))
    at.text_input(key="lesson_code").input("a b<").run()
    assert not at.exception
    assert any(said in e.value for e in at.sidebar.warning)
    assert all("lesson=" not in c.value for c in at.sidebar.code)


# ---- the class histogram ----


def test_the_class_histogram_counts_whole_answers_and_names_a_tie(app):
    POLLS.end("hist-1")
    at = answer(app(query={"lesson": "hist-1", "predict": "true", "focus": "1"}), TRUTH)
    (bars,) = class_bars(at)
    assert bars["layout"]["title"]["text"].endswith("(1 answer)")
    assert bars["data"][0]["text"][TRUTH] == "1" and bars["data"][0]["text"][0] == "0"
    assert "1 answer" in bars["layout"]["meta"]["alt"] and "1.0" not in bars["layout"]["meta"]["alt"]
    question = next(iter(POLLS.lessons["hist-1"].questions))
    other = (TRUTH + 1) % 6
    POLLS.answer("hist-1", question, "another", other)
    at.run()
    (bars,) = class_bars(at)
    assert bars["layout"]["title"]["text"].endswith("(2 answers)")
    alt = bars["layout"]["meta"]["alt"]
    assert "tie" in alt.lower(), alt
    words = [run_trace(Settings()).key_tokens.words[i] for i in (TRUTH, other)]
    assert all(w in alt for w in words), alt
    POLLS.end("hist-1")


@pytest.mark.parametrize(
    "n,en,zh", [(0, "(0 answers)", "0 个回答"), (1, "(1 answer)", "1 个回答"), (2, "(2 answers)", "2 个回答")]
)
def test_the_count_of_answers_is_said_in_the_singular_and_the_plural(n, en, zh):
    from explorer.base import session
    from explorer.poll.view import class_figure

    for lang, said in (("en", en), ("zh", zh)):
        session.begin_run().lang = lang
        counts = [n, 0]
        fig = class_figure(counts, ["0 a", "1 b"], truth=None)
        assert said in fig.layout.title.text, (lang, fig.layout.title.text)
        assert list(fig.data[0].text) == [str(n), "0"]
    session.begin_run()
