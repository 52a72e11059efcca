"""The class poll on the page with the shared store: unreachable, it is said in the UI's language
and predict-then-reveal goes on; back, counting resumes (an answer made meanwhile is sent); the
teacher's CSV of the lesson."""

import csv
import io
import json
import os
import shutil
import sys

import pytest

from attn_core import Settings, run_trace
from attn_core.classroom import store as poll
from attn_core.classroom.redis_store import RedisStore
from explorer.poll import view as poll_view

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import replicas

LESSON = {"predict": "true", "lesson": "poll-7", "focus": "1"}
NOTICE = {"en": "The class poll is unavailable: answers are not being counted", "zh": "课堂投票暂时不可用"}


@pytest.fixture
def redis_server(tmp_path):
    if not shutil.which("redis-server"):
        pytest.fail("redis-server not found: install Debian's redis-server (see scripts/test.sh)")
    server = replicas.RedisServer(log_path=str(tmp_path / "redis.log")).start()
    yield server
    server.stop()


def class_bars(at):
    specs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    titles = ("The class's predictions", "全班的预测")
    return [s["data"][0]["y"] for s in specs if s["layout"]["title"]["text"].startswith(titles)]


def answer(at, token: int):
    at.radio(key="predict_pick").set_value(token).run()
    at.button(key="predict_reveal").click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_an_unreachable_store_is_said_and_predict_then_reveal_goes_on_then_counting_resumes(
    app, redis_server, monkeypatch, lang
):
    down = RedisStore(f"redis://127.0.0.1:{replicas.free_port()}/0")  # nothing listens there
    monkeypatch.setattr(poll, "POLLS", down)
    truth = int(run_trace(Settings()).attn[0, 1].argmax())
    student = answer(app(query=LESSON | {"lang": lang}), truth)
    assert len(student.success) == 1  # the learner's own reveal: right, and the weights are drawn
    assert any(NOTICE[lang] in w.value for w in student.warning) and not class_bars(student)
    teacher = app(query=LESSON | {"lang": lang, "teacher": "1"})
    assert not teacher.exception and any(NOTICE[lang] in w.value for w in teacher.warning)

    up = RedisStore(redis_server.url)
    monkeypatch.setattr(poll, "POLLS", up)  # the store is back
    student.run()  # the student's next run sends the answer made while it was down
    assert not student.exception and class_bars(student) == [[1 if i == truth else 0 for i in range(6)]]
    assert not any(NOTICE[lang] in w.value for w in student.warning)
    teacher.run()
    assert not teacher.exception and class_bars(teacher) == class_bars(student)
    assert not any(NOTICE[lang] in w.value for w in teacher.warning)
    up.end("poll-7")


def test_the_teachers_csv_has_each_question_and_key_token_and_no_session_id(app, redis_server, monkeypatch):
    store = RedisStore(redis_server.url)
    monkeypatch.setattr(poll, "POLLS", store)
    store.end("poll-7")
    answer(app(query=LESSON), 4)
    question = ("steps", Settings().key(), 0, 1)
    store.answer("poll-7", question, "another-browser", 2)
    rows = list(csv.reader(io.StringIO(poll_view.lesson_csv("poll-7"))))
    assert rows[0] == ["question", "key_token", "count"]
    sentence, words = Settings().sentence, run_trace(Settings()).key_tokens.words
    assert [r[1:] for r in rows[1:]] == [[f"{i} {w}", str(int(i in (2, 4)))] for i, w in enumerate(words)]
    assert all(r[0] == f"steps · {sentence} · 'is'" for r in rows[1:])
    assert "another-browser" not in poll_view.lesson_csv("poll-7")
    teacher = app(query=LESSON | {"teacher": "1"})
    assert teacher.get("download_button") and not teacher.exception
    teacher.button(key="predict_end").click().run()  # end the lesson: gone from the store
    assert not teacher.exception and store.export("poll-7") == [] and class_bars(teacher) == [[0] * 6]
