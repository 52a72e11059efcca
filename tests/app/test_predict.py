"""Predict, then reveal: the weights stay hidden until the answer is in; a lesson's answers are tallied live."""

import json

import pytest

from attn_core import Settings, run_trace
from attn_core.classroom import store as poll
from attn_core.classroom.base import valid_code
from attn_core.classroom.store import POLLS

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
    assert valid_code(code) is ok


# ---- Predict, then reveal hides everything that gives the answer away, on every page with predict ----


def _elements(at):
    """Every node of the page: the main area, the sidebar and their blocks, depth first."""
    stack = [at._tree]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(getattr(node, "children", {}).values())


def _numbers(value) -> list[float]:
    """Every number in a chart's JSON, nested lists flattened in order (typed arrays decoded)."""
    if isinstance(value, bool) or value is None:
        return []
    if isinstance(value, (int, float)):
        return [float(value)]
    if isinstance(value, dict):
        if "bdata" in value:
            import base64

            import numpy as np

            return np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"]).astype(float).tolist()
        return [x for v in value.values() for x in _numbers(v)]
    if isinstance(value, (list, tuple)):
        return [x for v in value for x in _numbers(v)]
    return []


def _holds(numbers: list[float], row: list[float]) -> bool:
    n = len(row)
    return any(all(abs(a - b) < 1e-4 for a, b in zip(numbers[i : i + n], row)) for i in range(len(numbers) - n + 1))


def gives_away(at, row) -> list[str]:
    """Where the page shows the asked-about weights ``row``: any chart whose numbers hold the row
    (a heatmap's row, bars, a panel of the 72-head overview, hover data), any table holding it,
    or any text anywhere (markdown, captions, narration, notices, metrics, tables, chart titles and
    hover texts) quoting its largest weight."""
    from google.protobuf import text_format

    row = [float(w) for w in row]
    best = max(row)
    quoted = {f"{best:.2f}", f"{best:.3f}", f"{best:.4f}"}
    found = []
    for node in _elements(at):
        proto, kind = getattr(node, "proto", None), getattr(node, "type", "")
        if proto is None or kind in ("button", "radio", "checkbox", "toggle", "selectbox", "multiselect"):
            continue  # a widget's own options and labels are not the answer (the sidebar's numbers)
        if kind == "plotly_chart":
            spec = json.loads(proto.spec)
            if _holds(_numbers(spec["data"]), row):
                found.append(f"chart {json.dumps(spec['layout'].get('title'))[:60]}")
            texts = [json.dumps(spec)]
        elif kind == "arrow_data_frame":
            frame = node.value
            cells = [float(v) for col in frame.columns for v in frame[col] if isinstance(v, (int, float))]
            by_row = [float(v) for r in frame.itertuples(index=False) for v in r if isinstance(v, (int, float))]
            if _holds(cells, row) or _holds(by_row, row):
                found.append("table")
            texts = [frame.to_string()]
        elif kind == "number_input":
            continue
        else:
            texts = [text_format.MessageToString(proto, as_utf8=True)]
        found += [f"{kind} {text[:80]!r}" for text in texts if any(q in text for q in quoted)]
    return found


def _model_row(layer: int, head: int, focus: int):
    from attn_core.config import TUTORIAL_SENTENCE
    from explorer.model import real

    spec = next(iter(real.offered()))
    ht = real.head(spec, TUTORIAL_SENTENCE, 0, layer, head)
    return ht.model_attn[focus, : int(ht.mask[focus].sum())]  # the real pieces (no padding here)


def _cross_row(focus: int):
    from explorer.controls.state import cross_settings

    return run_trace(cross_settings(Settings())).attn[0, focus]


PREDICT_PAGES = [
    ("pages/1_steps.py", {"focus": "1"}, lambda: run_trace(Settings()).attn[0, 1]),
    (
        "pages/1_steps.py",
        {"focus": "3", "present": "1", "step": "st_output"},
        lambda: run_trace(Settings()).attn[0, 3],
    ),
    (
        "pages/1_steps.py",
        {"focus": "2", "present": "1", "step": "st_scores"},
        lambda: run_trace(Settings()).attn[0, 2],
    ),
    ("pages/2_multihead.py", {"heads": "2", "focus": "2"}, lambda: run_trace(Settings(heads=2)).attn[0, 2]),
    ("pages/3_cross.py", {"focus": "2"}, lambda: _cross_row(2)),
    ("pages/7_model.py", {"focus": "2", "rm_layer": "1", "rm_head": "3"}, lambda: _model_row(1, 3, 2)),
    ("pages/7_model.py", {"focus": "1", "present": "1"}, lambda: _model_row(0, 0, 1)),
]


@pytest.mark.parametrize(("page", "query", "weights"), PREDICT_PAGES, ids=lambda v: v if isinstance(v, str) else "")
def test_nothing_on_the_page_gives_the_answer_away_before_the_prediction(app, page, query, weights):
    row = weights()
    plain = app(page, query=query)
    assert gives_away(plain, row), "the detector must find the weights on the page without predict"
    at = app(page, query=query | {"predict": "true"})
    assert not at.exception
    assert any("attend to most" in i.value for i in at.info)  # the question is asked
    assert not gives_away(at, row), gives_away(at, row)
    truth = int(row.argmax())
    answer(at, (truth + 1) % len(row))  # a wrong answer reveals as much as a right one
    assert any("You chose" in w.value for w in at.warning)
    assert gives_away(at, row)


def test_the_teachers_screen_hides_the_weights_until_the_answer_is_shown(app):
    """The teacher's projector shows the class's answers; the weights wait for "show the answer"."""
    POLLS.end("demo-1")
    row = run_trace(Settings()).attn[0, 1]
    teacher = app(query=LESSON | {"teacher": "1"})
    assert not teacher.exception and any(
        "class's predictions" in c["layout"]["title"]["text"] for c in charts(teacher)
    )
    assert not gives_away(teacher, row), gives_away(teacher, row)
    teacher.toggle(key="predict_show_truth").set_value(True).run()
    assert not teacher.exception and gives_away(teacher, row)


@pytest.mark.parametrize("step", ["st_scores", "st_softmax", "st_output"])
def test_presenter_narration_waits_for_the_prediction_then_names_the_answer(app, step):
    """The narrations of these steps name the key the focus token attends to most (the scores'
    highest is the weights' highest): by name, which the weight detector above cannot see."""
    truth = run_trace(Settings())
    best = truth.tokens.words[int(truth.attn[0, 3].argmax())]
    at = app(query={"predict": "true", "present": "1", "step": step, "focus": "3"})
    said = " ".join(m.value for m in at.markdown)
    assert f"**{best}**" not in said and any("waits for your prediction" in c.value for c in at.caption)
    assert not at.button(key="present_back").disabled  # the walk still walks
    answer(at, 0)
    assert f"**{best}**" in " ".join(m.value for m in at.markdown)
