"""The class poll's two stores pass the same contract: the in-memory one and Redis, the latter
against a real ``redis-server`` this test starts on a free port (missing: an error, not a skip)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading

import pytest

from attn_core.classroom import store as poll
from attn_core.classroom.base import PollUnavailable, question_id
from attn_core.classroom.store import Polls

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import replicas

Q1 = ("steps", (("heads", 1), ("sentence", "Life is short, eat dessert first")), 0, 1)
Q2 = ("multihead", (("heads", 4), ("sentence", "the cat sat")), 2, 0)
Q3 = ("model", "minilm", "the animal", 0, 4, 9, 1)


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(scope="module")
def redis_server(tmp_path_factory):
    if not shutil.which("redis-server"):
        pytest.fail("redis-server not found: install Debian's redis-server (see scripts/test.sh)")
    server = replicas.RedisServer(log_path=str(tmp_path_factory.mktemp("redis") / "redis.log")).start()
    yield server
    server.stop()


@pytest.fixture(params=["memory", "redis"])
def make(request):
    """A factory of stores of one kind on a shared clock; two stores made by one test are two
    replicas (Redis: two clients of one server; memory: the same store, one process)."""
    clock = Clock()
    made = []

    def factory(**limits):
        if request.param == "memory":
            if not made:
                made.append(Polls(clock=clock, **limits))
            return made[0]
        server = request.getfixturevalue("redis_server")
        from attn_core.classroom.redis_store import RedisStore

        store = RedisStore(server.url, clock=clock, prefix=f"t{id(clock)}:", **limits)
        made.append(store)
        return store

    factory.clock = clock
    factory.kind = request.param
    yield factory
    if request.param == "redis" and made:
        made[0].r.flushdb()


def test_answers_are_tallied_per_question_and_a_token_out_of_range_is_not_counted(make):
    s = make()
    for session, token in (("a", 4), ("b", 4), ("c", 1), ("d", 9)):
        assert s.answer("room-1", Q1, session, token) is True
    s.answer("room-1", Q2, "a", 0)
    assert s.tally("room-1", Q1, 6) == [0, 1, 0, 0, 2, 0]  # 'd' chose 9: not a key of a 6-token question
    assert s.tally("room-1", Q2, 3) == [1, 0, 0]
    assert s.tally("room-1", Q3, 2) == [0, 0]  # never asked
    assert s.tally("other", Q1, 6) == [0] * 6  # another lesson counts apart


def test_a_sessions_new_answer_replaces_its_earlier_one(make):
    s = make()
    s.answer("room-1", Q1, "a", 1)
    s.answer("room-1", Q1, "b", 1)
    s.answer("room-1", Q1, "a", 3)
    assert s.tally("room-1", Q1, 4) == [0, 1, 0, 1]


def test_two_replicas_answering_at_once_lose_nothing(make):
    replica1, replica2 = make(), make()
    barrier = threading.Barrier(8)

    def students(store, k: int) -> None:
        barrier.wait()
        for i in range(40):
            store.answer("hall", Q1, f"s{k}-{i}", i % 5)
            store.answer("hall", Q1, f"s{k}-{i}", (i + 1) % 5)  # and changes its mind: one answer remains

    threads = [threading.Thread(target=students, args=(replica1 if k % 2 else replica2, k)) for k in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    expected = [0] * 5
    for i in range(40):
        expected[(i + 1) % 5] += 8
    assert replica1.tally("hall", Q1, 5) == expected == replica2.tally("hall", Q1, 5)


def test_at_most_max_lessons_the_least_recently_used_dropped_first(make):
    s = make(max_lessons=3)
    for n in range(4):
        s.answer(f"l{n}", Q1, "x", 1)
        make.clock.now += 1
    s.tally("l1", Q1, 2)  # used again: l2 is now the oldest
    s.answer("l4", Q1, "x", 1)
    kept = [c for c in ("l0", "l1", "l2", "l3", "l4") if s.tally(c, Q1, 2) == [0, 1]]
    assert kept == ["l1", "l3", "l4"]


def test_at_most_max_questions_per_lesson_the_oldest_dropped_first(make):
    s = make(max_questions=2)
    for q in (Q1, Q2, Q3):
        s.answer("room", q, "x", 0)
    assert [s.tally("room", q, 1) for q in (Q1, Q2, Q3)] == [[0], [1], [1]]


def test_at_most_max_answers_per_question_and_those_in_may_still_change(make):
    s = make(max_answers=2)
    assert s.answer("room", Q1, "a", 0) and s.answer("room", Q1, "b", 0)
    assert s.answer("room", Q1, "c", 1) is False  # full: not counted
    assert s.answer("room", Q1, "a", 1) is True  # one already in changes its answer
    assert s.tally("room", Q1, 2) == [1, 1]


def test_a_lesson_idle_for_the_timeout_is_gone_and_one_in_use_stays(make):
    s = make(timeout_s=100.0)
    s.answer("idle", Q1, "a", 0)
    s.answer("busy", Q1, "a", 0)
    for _ in range(3):
        make.clock.now += 60
        s.tally("busy", Q1, 1)  # the teacher's live view keeps its lesson
    assert s.tally("busy", Q1, 1) == [1]
    assert s.tally("idle", Q1, 1) == [0]  # 180 s without use > 100 s


def test_end_clears_the_lesson_for_every_replica_and_no_other(make):
    replica1, replica2 = make(), make()
    replica1.answer("room", Q1, "a", 2)
    replica1.answer("room", Q2, "b", 0)
    replica1.answer("next-door", Q1, "a", 1)
    replica2.end("room")
    assert replica1.tally("room", Q1, 3) == [0, 0, 0] and replica1.tally("room", Q2, 1) == [0]
    assert replica1.export("room") == []
    assert replica1.tally("next-door", Q1, 3) == [0, 1, 0]


def test_export_is_per_question_and_token_with_zero_counts_and_no_session_ids(make):
    s = make()
    meta1 = {"label": "steps · Life is short · 'is'", "tokens": ["0 Life", "1 is", "2 short"]}
    s.answer("room", Q1, "session-aaa", 2, meta1)
    s.answer("room", Q1, "session-bbb", 2, meta1)
    s.answer("room", Q2, "session-aaa", 0, {"label": "multihead · the cat · 'the'", "tokens": ["0 the", "1 cat"]})
    rows = s.export("room")
    assert rows == [
        ("steps · Life is short · 'is'", "0 Life", 0),
        ("steps · Life is short · 'is'", "1 is", 0),
        ("steps · Life is short · 'is'", "2 short", 2),
        ("multihead · the cat · 'the'", "0 the", 1),
        ("multihead · the cat · 'the'", "1 cat", 0),
    ]
    assert "session" not in repr(rows)


def test_question_ids_are_the_same_in_another_process():
    code = f"from attn_core.classroom.base import question_id; print(question_id({Q1!r}))"
    env = dict(os.environ, PYTHONHASHSEED="12345")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == question_id(Q1) and question_id(Q1) != question_id(Q2)


def test_every_redis_key_expires_within_the_idle_timeout(redis_server):
    from attn_core.classroom.redis_store import RedisStore

    s = RedisStore(redis_server.url, prefix="ttl:", timeout_s=50.0)
    s.answer("room", Q1, "a", 0, {"label": "x", "tokens": ["0"]})
    s.answer("room", Q2, "a", 0)
    s.tally("room", Q1, 1)
    keys = list(s.r.scan_iter("ttl:*"))
    assert len(keys) >= 6  # lessons, used, seq, qs, two answer hashes, a description
    ttls = [s.r.pttl(k) for k in keys]
    assert all(0 < ms <= 50_000 for ms in ttls), dict(zip(keys, ttls, strict=True))  # nothing kept for ever
    s.end("room")
    assert not list(s.r.scan_iter("ttl:room*"))  # the lesson's own keys are gone at once


def test_an_unreachable_redis_says_unavailable_and_counting_resumes_when_it_is_back(tmp_path, monkeypatch):
    from attn_core.classroom import redis_store as poll_redis
    from attn_core.classroom.redis_store import RedisStore

    port = replicas.free_port()
    s = RedisStore(f"redis://127.0.0.1:{port}/0")
    with pytest.raises(PollUnavailable):
        s.answer("room", Q1, "a", 0)  # nothing listens there
    with pytest.raises(PollUnavailable):
        s.tally("room", Q1, 2)  # and for a while it is not even tried
    server = replicas.RedisServer(port=port, log_path=str(tmp_path / "redis.log")).start()
    try:
        monkeypatch.setattr(poll_redis, "RETRY_S", 0.0)  # from here on a failure is retried at the next call
        s._down_until = 0.0  # as if RETRY_S had passed since the last failure
        assert s.answer("room", Q1, "a", 1) is True
        assert s.tally("room", Q1, 2) == [0, 1]
        server.stop()  # a Redis restart: no persistence, the lesson's count starts again from empty
        with pytest.raises(PollUnavailable):
            s.tally("room", Q1, 2)
        server.start()
        assert s.tally("room", Q1, 2) == [0, 0]
        assert s.answer("room", Q1, "b", 0) and s.tally("room", Q1, 2) == [1, 0]  # its scripts loaded again
    finally:
        server.stop()


def test_a_url_that_is_not_redis_gives_a_store_that_is_unavailable(capsys):
    store = poll.make_store("http://example.org")
    with pytest.raises(PollUnavailable):
        store.tally("room", Q1, 2)
    assert "cannot be used" in capsys.readouterr().err
    assert isinstance(poll.make_store(""), Polls)
