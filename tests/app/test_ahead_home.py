"""The start page says what a class server prepared for the lessons at its start (explorer.ahead.status)."""

import pytest

from explorer import ahead


def captions(at) -> str:
    return " ".join(c.value for c in at.caption)


@pytest.fixture
def state(monkeypatch):
    s = {"lessons": {}, "runs": [], "ready": False, "started": False, "total": 18, "seconds": 0.0}
    monkeypatch.setattr(ahead, "STATE", s)
    return s


@pytest.mark.parametrize(
    ("lang", "preparing", "ready", "gap"),
    [
        ("en", "preparing the lessons for the class: 2 of 18 ready", "(18 in 91 s)", "except: The cost of L²."),
        ("zh", "已就绪 2 / 18", "（18 项，用时 91 秒）", "除了：L² 的代价。"),
    ],
)
def test_the_start_page_says_how_far_the_lessons_are_prepared(app, state, lang, preparing, ready, gap):
    at = app(None, query={"lang": lang})
    # a server that computes nothing ahead (a test's, a single user's) says nothing
    assert not any(w in captions(at) for w in ("prepar", "准备"))
    state.update(started=True)
    state["lessons"] |= {"qkv": {"error": None}, "scores": {"error": None}, "scale": {"error": "timeout"}}
    assert preparing in captions(at.run())
    state.update(ready=True, seconds=91.2)
    state["lessons"]["scale"]["error"] = None
    assert ready in captions(at.run())
    state["lessons"]["cost+cx_run"] = {"error": "exception: ValueError"}
    assert gap in captions(at.run())
