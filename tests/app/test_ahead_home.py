"""The start page says what a class server prepared for the lessons at its start (explorer.classroom.ahead.status)."""

import pytest

from explorer.classroom import ahead
from explorer.classroom.tour import TOUR


def captions(at) -> str:
    return " ".join(c.value for c in at.caption)


@pytest.fixture
def state(monkeypatch):
    s = {"lessons": {}, "runs": [], "ready": False, "started": False, "total": len(TOUR), "seconds": 0.0}
    monkeypatch.setattr(ahead, "STATE", s)
    return s


@pytest.mark.parametrize(
    ("lang", "preparing", "ready", "gap"),
    [
        ("en", "for the class: 2 of 16 lessons ready", "(16 lessons in 91 s)", "except: The cost of L²."),
        ("zh", "已就绪 2 / 16 课", "（16 课，用时 91 秒）", "除了：L² 的代价。"),
    ],
)
def test_the_start_page_says_how_far_the_lessons_are_prepared(app, state, lang, preparing, ready, gap):
    at = app(None, query={"lang": lang})
    # a server that computes nothing ahead (a test's, a single user's) says nothing
    assert not any(w in captions(at) for w in ("prepar", "准备"))
    state.update(started=True)
    ok = {"error": None}  # a lesson whose question asks for a button is ready once that is pressed and done too
    state["lessons"] |= {"qkv": ok, "scores": ok, "scale": {"error": "timeout"}, "positions": ok}
    assert preparing in captions(at.run())
    state.update(ready=True, seconds=91.2)
    state["lessons"]["scale"]["error"] = None
    assert ready in captions(at.run())
    state["lessons"]["cost+cx_run"] = {"error": "exception: ValueError"}
    assert gap in captions(at.run())


@pytest.mark.parametrize(("lang", "words"), [("en", "16 short lessons, in order"), ("zh", "16 个简短的小课")])
def test_the_tour_on_the_start_page_says_how_many_lessons_it_has(app, lang, words):
    at = app(None, query={"lang": lang})
    assert len(TOUR) == 16 and words in captions(at)
