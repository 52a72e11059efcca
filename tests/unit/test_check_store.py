"""The concept check's answers in the class poll's stores, and the class's report: a scripted class counted by hand
(students answering again, a forged sheet), across two server processes sharing a real ``redis-server`` read back by
``python -m attn_core lesson``; the poll's bounds and the lesson's end; the gain's arithmetic."""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys

import pytest

from attn_core.check import bank
from attn_core.check.bank import CheckError
from attn_core.check.report import gain, mean_spread
from attn_core.classroom import check
from attn_core.classroom.base import PollUnavailable
from attn_core.classroom.redis_store import RedisStore, Unusable
from attn_core.classroom.store import Polls

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import replicas

CODE = "room-7"
IDS = ("qkv-shape", "softmax-temperature", "mask-causal")  # answers 1, 3, 1 (checked below)
# the scripted class: (process, student, phase, {item: option}); s6 answers its pre check twice (on both processes)
CLASS = [
    (1, "s1", "pre", {"qkv-shape": 0, "softmax-temperature": 2, "mask-causal": 0}),
    (1, "s2", "pre", {"qkv-shape": 1, "softmax-temperature": 3, "mask-causal": 0}),
    (1, "s3", "pre", {"qkv-shape": 0, "softmax-temperature": 0, "mask-causal": 1}),
    (1, "s6", "pre", {"qkv-shape": 1, "softmax-temperature": 2, "mask-causal": 0}),
    (2, "s4", "pre", {"qkv-shape": 2, "softmax-temperature": 2, "mask-causal": 0}),
    (2, "s5", "pre", {"qkv-shape": 0, "softmax-temperature": 3}),  # leaves one item out
    (2, "s6", "pre", {"qkv-shape": 0, "softmax-temperature": 2, "mask-causal": 1}),  # replaces its first sheet
    (1, "s1", "post", {"qkv-shape": 1, "softmax-temperature": 3, "mask-causal": 1}),
    (1, "s2", "post", {"qkv-shape": 1, "softmax-temperature": 3, "mask-causal": 1}),
    (1, "s3", "post", {"qkv-shape": 1, "softmax-temperature": 2, "mask-causal": 1}),
    (2, "s4", "post", {"qkv-shape": 0, "softmax-temperature": 3, "mask-causal": 1}),
    (2, "s5", "post", {"qkv-shape": 1, "softmax-temperature": 3, "mask-causal": 0}),
    (2, "s6", "post", {"qkv-shape": 1, "softmax-temperature": 3, "mask-causal": 1}),
]
# counted by hand from CLASS: per item and phase (n, correct, counts per option), then the gain
HAND = {
    "qkv-shape": ((6, 1, [4, 1, 1]), (6, 5, [1, 5, 0]), 4 / 5),  # pre 1/6, post 5/6: (500/6)/(500/6) · 0.8
    "softmax-temperature": ((6, 2, [1, 0, 3, 2]), (6, 5, [0, 0, 1, 5]), 3 / 4),  # (250/3 − 100/3)/(200/3)
    "mask-causal": ((5, 2, [3, 2, 0]), (6, 5, [1, 5, 0]), 13 / 18),  # (250/3 − 40)/60
}
FORGED = [
    ("pre", {"qkv-shape": 3}, "option"),  # qkv-shape has 3 options: 0, 1, 2
    ("pre", {"qkv-shape": -1}, "option"),
    ("pre", {"qkv-shape": True}, "option"),
    ("pre", {"qkv-shape": 1, "no-such-item": 0}, "item"),
    ("pre", {"cost-linear": 0}, "item"),  # in the bank, not in this check
    ("mid", {"qkv-shape": 1}, "phase"),
]


def items() -> list[dict]:
    return [bank.render(bank.by_id()[i], "en") for i in IDS]


@pytest.fixture(scope="module")
def redis_server(tmp_path_factory):
    if not shutil.which("redis-server"):
        pytest.fail("redis-server not found: install Debian's redis-server (see scripts/test.sh)")
    server = replicas.RedisServer(log_path=str(tmp_path_factory.mktemp("redis") / "redis.log")).start()
    yield server
    server.stop()


@pytest.fixture(params=["memory", "redis"])
def make(request):
    """Stores of one kind: two made by one test are two replicas (Redis: two clients; memory: the same store)."""
    made = []

    def factory(**limits):
        if request.param == "memory":
            if not made:
                made.append(Polls(max_questions=check.MAX_QUESTIONS, **limits))
            return made[0]
        url = request.getfixturevalue("redis_server").url
        made.append(RedisStore(url, prefix=f"t{id(made)}:", max_questions=check.MAX_QUESTIONS, **limits))
        return made[-1]

    yield factory
    if request.param == "redis" and made:
        made[0].r.flushdb()


def expect_hand_count(report: dict) -> None:
    assert [row["id"] for row in report["items"]] == list(IDS)
    for row in report["items"]:
        pre, post, g = HAND[row["id"]]
        for phase, (n, correct, options) in (("pre", pre), ("post", post)):
            got = row[phase]
            assert (got["n"], got["correct"], got["options"]) == (n, correct, options), (row["id"], phase)
            assert got["share"] == pytest.approx(100 * correct / n, rel=1e-12, abs=1e-12)
        assert row["gain"] == pytest.approx(g, rel=1e-12, abs=1e-12)
    gains = [g for _, _, g in HAND.values()]
    c = report["class"]
    assert c["items_with_gain"] == 3
    assert c["mean_gain"] == pytest.approx(statistics.mean(gains), rel=1e-12, abs=1e-12)
    assert c["spread"] == pytest.approx(statistics.stdev(gains), rel=1e-12, abs=1e-12)


def test_the_scripted_items_answers_are_the_ones_the_hand_count_assumes():
    assert [(d["answer"], len(d["options"])) for d in items()] == [(1, 3), (3, 4), (1, 3)]


def test_a_scripted_class_gives_the_hand_count(make):
    replicas_ = {1: make(), 2: make()}
    for process, student, phase, sheet in CLASS:
        assert check.hand_in(replicas_[process], CODE, student, phase, items(), sheet) == len(sheet)
    for phase, sheet, code in FORGED:
        with pytest.raises(CheckError) as refused:
            check.hand_in(replicas_[1], CODE, "s7", phase, items(), sheet)
        assert refused.value.code == code and refused.value.text("zh") != refused.value.text("en")
    expect_hand_count(check.report(replicas_[2], CODE))  # the forged sheets counted nothing


def test_a_forged_sheet_counts_nothing_even_where_its_other_answers_are_good(make):
    s = make()
    with pytest.raises(CheckError, match="no option 7"):
        check.hand_in(s, CODE, "s1", "pre", items(), {"qkv-shape": 1, "mask-causal": 7})
    assert check.report(s, CODE)["items"] == []


HANDER = """
import json, sys
from attn_core.check import bank
from attn_core.classroom import check
items = [bank.render(bank.by_id()[i], "en") for i in json.loads(sys.argv[2])]
store = check.make_check_store(sys.argv[1])
for student, phase, sheet in json.loads(sys.argv[3]):
    check.hand_in(store, sys.argv[4], student, phase, items, sheet)
"""


def test_two_server_processes_share_one_redis_and_the_lesson_command_reads_it(redis_server):
    """Each process hands in its students' sheets in the scripted order (process 1's, then 2's: s6's second pre
    sheet comes from process 2); ``python -m attn_core lesson`` reads the hand count back from the same Redis."""
    env = {**os.environ, "ATTN_EXPLORER_REDIS": redis_server.url}
    try:
        for phase in ("pre", "post"):
            for process in (1, 2):
                mine = [(s, p, sheet) for n, s, p, sheet in CLASS if n == process and p == phase]
                argv = [redis_server.url, json.dumps(IDS), json.dumps(mine), CODE]
                subprocess.run([sys.executable, "-c", HANDER, *argv], cwd=ROOT, env=env, check=True, timeout=120)
        done = subprocess.run(
            [sys.executable, "-m", "attn_core", "lesson", CODE, "--json"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        report = json.loads(done.stdout)
        assert report["lesson"] == CODE
        expect_hand_count(report)
        for row in report["items"]:
            assert {"id", "pre", "post", "gain"} <= set(row) and {"n", "correct", "options"} <= set(row["pre"])
    finally:
        RedisStore(redis_server.url).r.flushdb()


def test_the_lesson_command_refuses_without_a_store_or_with_a_bad_code(redis_server):
    env = {k: v for k, v in os.environ.items() if k != "ATTN_EXPLORER_REDIS"}
    for extra, argv in (
        ({}, ["lesson", "A"]),
        ({"ATTN_EXPLORER_REDIS": redis_server.url}, ["lesson", "a b", "--json"]),
    ):
        done = subprocess.run(
            [sys.executable, "-m", "attn_core", *argv],
            cwd=ROOT,
            env={**env, **extra},
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 2 and not done.stdout and len(done.stderr.strip().splitlines()) == 1


def test_the_post_check_opens_for_every_replica_and_the_lessons_end_clears_everything(make):
    a, b = make(), make()
    check.hand_in(a, CODE, "s1", "pre", items(), {"qkv-shape": 1})
    assert not check.post_open(b, CODE)
    check.open_post(a, CODE)
    assert check.post_open(b, CODE)
    assert [row["id"] for row in check.report(b, CODE)["items"]] == ["qkv-shape"]  # the switch is no item
    check.end(b, CODE)
    assert not check.post_open(a, CODE) and check.report(a, CODE)["items"] == []


def test_the_polls_bound_on_answers_applies(make):
    s = make(max_answers=2)
    counted = [check.hand_in(s, CODE, f"s{i}", "pre", items(), {"qkv-shape": 1, "mask-causal": 0}) for i in range(3)]
    assert counted == [2, 2, 0]
    assert check.hand_in(s, CODE, "s0", "pre", items(), {"qkv-shape": 0, "mask-causal": 0}) == 2  # a replacement
    row = check.report(s, CODE)["items"][0]
    assert row["pre"]["options"] == [1, 1, 0]


def test_a_whole_check_fits_the_lessons_questions(make):
    """Every item of the longest check, before and after, and the switch: nothing dropped by the bound."""
    s = make()
    ids = tuple(bank.by_id())[: bank.MAX_CHECK]
    shown = [bank.render(bank.by_id()[i], "en") for i in ids]
    check.open_post(s, CODE)
    for phase in ("pre", "post"):
        check.hand_in(s, CODE, "s1", phase, shown, {d["id"]: d["answer"] for d in shown})
    report = check.report(s, CODE)
    assert len(report["items"]) == len(ids) and check.post_open(s, CODE)
    assert all(row["pre"]["n"] == row["post"]["n"] == 1 for row in report["items"])


def test_an_unreachable_store_says_so():
    with pytest.raises(PollUnavailable):
        check.hand_in(Unusable("down"), CODE, "s1", "pre", items(), {"qkv-shape": 1})
    with pytest.raises(PollUnavailable):
        check.report(Unusable("down"), CODE)


def test_the_gain_and_its_edges():
    assert gain(40.0, 70.0) == pytest.approx(0.5, rel=1e-12)
    assert gain(50.0, 25.0) == pytest.approx(-0.5, rel=1e-12)  # a class that got worse
    assert gain(100.0, 100.0) is None and gain(None, 50.0) is None and gain(20.0, None) is None
    assert mean_spread([]) == (None, None) and mean_spread([0.5]) == (0.5, None)
    mean, spread = mean_spread([0.2, 0.4, 0.9])
    assert mean == pytest.approx(0.5, rel=1e-12) and spread == pytest.approx(statistics.stdev([0.2, 0.4, 0.9]))
