"""Predict, then reveal: the weights stay hidden until the answer is in; a lesson's answers are tallied live."""

import json

import pytest

from attn_core import Settings, run_trace
from explorer import poll
from explorer.poll import POLLS

LESSON = {"predict": "true", "lesson": "demo-1", "focus": "1"}


def charts(at):
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def answer(at, token: int):
    at.radio(key="predict_pick").set_value(token).run()
    at.button(key="predict_reveal").click().run()
    assert not at.exception
    return at


def test_the_weights_are_hidden_until_the_prediction_then_the_answer_is_marked(app):
    POLLS.end("demo-1")
    at = app(query=LESSON)
    assert not at.exception and not charts(at)  # nothing drawn that would give it away
    assert any("'is' attend to most" in i.value for i in at.info)
    truth = int(run_trace(Settings()).attn[0, 1].argmax())  # 'is' -> 'dessert' in the tutorial
    answer(at, truth)
    assert any("Right" in s.value for s in at.success) and charts(at)
    class_bars = next(c for c in charts(at) if "class's predictions" in c["layout"]["title"]["text"])
    assert class_bars["data"][0]["y"][truth] == 1


def test_a_wrong_prediction_says_what_the_truth_is(app):
    at = app(query={"predict": "true", "focus": "1"})  # no lesson: nothing is tallied
    answer(at, 0)
    assert any("You chose" in w.value and "4 dessert" in w.value for w in at.warning)


def test_the_teacher_sees_every_sessions_answer(app):
    """One student through the page; two more answer the same question as other browser sessions
    would (AppTest gives every instance the same session id, so they are added by id here)."""
    POLLS.end("demo-1")
    student = answer(app(query=LESSON), 2)
    question = next(iter(POLLS.lessons["demo-1"].questions))
    for other in ("browser-2", "browser-3"):
        POLLS.answer("demo-1", question, other, 4)
    teacher = app(query=LESSON | {"teacher": "1"})
    assert not teacher.exception and student.session_state["_predict"]["answer"] == 2
    bars = next(c for c in charts(teacher) if "class's predictions" in c["layout"]["title"]["text"])
    assert bars["data"][0]["y"] == [0, 0, 1, 0, 2, 0]
    teacher.button(key="predict_end").click().run()
    assert "demo-1" not in POLLS.lessons or not POLLS.lessons["demo-1"].questions  # the lesson's answers are gone


def test_a_malformed_lesson_code_is_ignored_with_a_notice(app):
    at = app(query={"predict": "true", "lesson": "<script>x</script>"})
    assert not at.exception and "lesson" not in at.query_params
    assert any("lesson" in w.value for w in at.sidebar.warning)


def test_the_store_is_bounded_and_keeps_answers_of_sessions_that_left(monkeypatch):
    store = poll.Polls()
    monkeypatch.setattr(poll, "MAX_LESSONS", 3)
    for n in range(5):
        store.answer(f"l{n}", ("q",), "s", 0)
    assert list(store.lessons) == ["l2", "l3", "l4"]  # the oldest dropped first
    store.answer("l4", ("q",), "gone", 1)  # that session has left: its answer stays
    assert store.tally("l4", ("q",), 2) == [1, 1]
    monkeypatch.setattr(poll, "TIMEOUT_S", -1.0)
    store.answer("l2", ("q",), "s", 0)  # (a tally only reads: it makes no lesson)
    assert list(store.lessons) == ["l2"]  # the others timed out


@pytest.mark.parametrize("code,ok", [("abc", True), ("A-1", True), ("", False), ("x" * 17, False), ("a b", False)])
def test_lesson_codes(code, ok):
    assert poll.valid_code(code) is ok
