"""The lesson's concept check on the page: the pre check before the page, the post check (by the link or the teacher's
button), each student's own before and after only once both are in, a late joiner's pre check first, bad link values
named, an unreachable store said; the teacher's table and CSV."""

import csv
import io

import pytest

from attn_core.check import bank
from attn_core.classroom import check
from attn_core.classroom.redis_store import Unusable
from attn_core.classroom.store import Polls
from explorer.classroom import check_view

IDS = ("qkv-shape", "mask-causal", "live-top-key")
LESSON = {"lesson": "chk-1", "items": ",".join(IDS)}


@pytest.fixture
def store(monkeypatch):
    s = Polls(max_questions=check.MAX_QUESTIONS)
    monkeypatch.setattr(check, "CHECKS", s)
    return s


def radios(at) -> list[str]:
    return [r.key for r in at.radio if r.key and r.key.startswith("check_")]


def hand_in(at, picks: dict):
    for item_id, option in picks.items():
        at.radio(key=f"check_{item_id}").set_value(option)
    at.button(key="check_submit").click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def texts(at) -> str:
    cells = [str(c) for table in at.table for c in [*table.value.columns, *table.value.to_numpy().ravel()]]
    return " ".join([*(str(e.value) for e in (*at.markdown, *at.caption, *at.header)), *cells])


def test_the_pre_check_comes_first_and_the_post_check_shows_each_their_own(app, store):
    at = app(query=LESSON | {"check": "pre"}, page=None)
    assert radios(at) == [f"check_{i}" for i in IDS] and at.button(key="check_submit")
    assert "Before the lesson" in texts(at) and not at.get("plotly_chart")  # the page waits
    truth = bank.render(bank.by_id()["live-top-key"], "en")["answer"]
    hand_in(at, {"qkv-shape": 0, "mask-causal": 1, "live-top-key": truth})
    assert radios(at) == [] and "handed in" in texts(at)
    assert "The right answer" not in texts(at) and not at.table  # no answers before the post check
    row = {r["id"]: r for r in check.report(store, "chk-1")["items"]}
    assert row["qkv-shape"]["pre"]["options"] == [1, 0, 0] and row["mask-causal"]["pre"]["correct"] == 1

    at.query_params["check"] = "post"
    at.run()
    assert radios(at) == [f"check_{i}" for i in IDS]
    assert all(at.radio(key=k).value is None for k in radios(at))  # nothing carried over from the pre check
    hand_in(at, {"qkv-shape": 1, "mask-causal": 1})
    row = {r["id"]: r for r in check.report(store, "chk-1")["items"]}
    assert row["qkv-shape"]["post"]["correct"] == 1 and row["live-top-key"]["post"]["n"] == 0
    assert "Right before the lesson: 2 of 3; after it: 2 of 3." in texts(at)
    assert at.table and "d_model × d_k" in texts(at)  # the student's own first answer, now shown


def test_a_late_joiner_takes_the_pre_check_first_and_the_teachers_button_opens_the_post(app, store):
    late = app(query=LESSON | {"check": "post", "lang": "zh"}, page=None)
    assert "课前小测" in texts(late)
    student = app(query=LESSON | {"check": "pre"}, page=None)
    hand_in(student, {"qkv-shape": 1})
    teacher = app(query=LESSON | {"teacher": "1", "check": "pre"}, page=None)
    assert radios(teacher) == []  # the teacher takes no check
    teacher.button(key="check_open_post").click().run()
    assert check.post_open(store, "chk-1")
    student.run()
    assert radios(student) == [f"check_{i}" for i in IDS] and "After the lesson" in texts(student)


@pytest.mark.parametrize(
    "query, named, form",
    [
        ({"check": "mid"}, "check", True),
        ({"items": "qkv-shape,nope"}, "items", False),
        ({"items": ""}, "items", False),
    ],
)
def test_a_bad_check_value_in_the_link_is_named_and_never_a_traceback(app, store, query, named, form):
    at = app(query=LESSON | {"check": "pre"} | query, page=None)
    assert any(named in w.value for w in at.sidebar.warning)
    assert bool(radios(at)) is form


def test_an_unreachable_store_is_said_and_the_check_goes_on(app, monkeypatch):
    monkeypatch.setattr(check, "CHECKS", Unusable("down"))
    at = hand_in(app(query=LESSON | {"check": "pre"}, page=None), {"qkv-shape": 1})
    at.query_params["check"] = "post"
    at.run()
    hand_in(at, {"qkv-shape": 1})
    assert any("not counted" in w.value for w in at.warning)


def test_the_teachers_table_and_csv(app, store):
    items = [bank.render(bank.by_id()[i], "en") for i in IDS]
    truth = items[2]["answer"]
    for k, (pre, post) in enumerate([(0, 1), (1, 1), (2, 0), (1, 1)]):
        check.hand_in(store, "chk-1", f"s{k}", "pre", items, {"qkv-shape": pre, "live-top-key": truth})
        check.hand_in(store, "chk-1", f"s{k}", "post", items, {"qkv-shape": post})
    teacher = app(query=LESSON | {"teacher": "1", "check": "pre"}, page=None)
    shown = texts(teacher)
    # qkv-shape: before 2 of 4 right (50 %), after 3 of 4 (75 %): g = (75 − 50) / 50 = 0.50
    assert "qkv-shape" in shown and "50 %" in shown and "75 %" in shown and "0.50" in shown
    assert "mean normalized gain" in shown
    rows = list(csv.reader(io.StringIO(check_view.report_csv(check.report(store, "chk-1")))))
    assert rows[1][:10] == ["qkv-shape", "qkv", "1", "4", "2", "50.0000", "4", "3", "75.0000", "0.5000"]
    assert rows[1][10:] == ["1 2 1", "1 3 0"] and rows[-1][0] == "class"
    assert not any(f"s{k}" in cell for row in rows for cell in row for k in range(4))


def test_the_lesson_link_box_puts_a_tour_lessons_ready_set_in_the_links(app, store):
    from urllib.parse import parse_qs, urlsplit

    at = app()
    at.session_state["lesson_open"] = True  # the sidebar's Lesson link box, opened
    at.run()
    at.text_input(key="lesson_code").input("chk-2").run()
    at.selectbox(key="check_set").set_value("mask").run()
    links = [{k: v[0] for k, v in parse_qs(urlsplit(c.value).query).items()} for c in at.sidebar.code]
    masks = [i.id for i in bank.load() if i.concept == "masks"]
    student, teacher, post = links
    assert student["check"] == "pre" and student["items"].split(",") == masks and student["lesson"] == "chk-2"
    assert post == student | {"check": "post"} and teacher == student | {"teacher": "1"}
    opened = app(query=student, page=None)
    assert radios(opened) == [f"check_{i}" for i in masks]
