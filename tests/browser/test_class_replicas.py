"""One class poll across replicas: two replicas behind HAProxy sharing one redis-server
(scripts/replicas.py), a student pinned to replica 1 and the teacher to replica 2 by their
cookies, in Chromium. The count follows live, survives replica 1's restart, says so when Redis is
down (no exception) and resumes when it is back."""

import os
import signal
import sys

import pytest
from conftest import ARTIFACTS
from playwright.sync_api import expect
from serve import ROOT, free_port
from test_browser import LATER

sys.path.insert(0, os.path.join(ROOT, "scripts"))
import replicas

WAIT = 60_000
LESSON = "steps?predict=true&lesson=hall-1&focus=1"
SECTIONS = ".st-key-dl_json"  # Step by step's JSON download, under its first screen (pages/1_steps.py)
NOTICE = "The class poll is unavailable: answers are not being counted"


@pytest.fixture
def cluster(monkeypatch):
    for exe in ("haproxy", "redis-server"):
        if not __import__("shutil").which(exe):
            pytest.fail(f"{exe} not found: install Debian's {exe} (see scripts/test.sh)")
    monkeypatch.setenv("ATTN_EXPLORER_WARM", "0")  # its replicas serve pages without a model: no warm-up
    c = replicas.Cluster(port=free_port(), replicas=2, log_dir=os.path.join(ARTIFACTS, "class_cluster"))
    os.makedirs(c.log_dir, exist_ok=True)
    c.start()
    yield c
    c.stop()


def pinned(browser, cluster, replica: str):
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    ctx.add_cookies([{"name": replicas.COOKIE, "value": replica, "url": cluster.url}])
    return ctx


def open_lesson(page, cluster, query: str = "") -> None:
    page.goto(f"{cluster.url}/{LESSON}{query}")
    expect(page.locator("h1", has_text="Step by step")).to_be_visible(timeout=WAIT)
    expect(page.locator("[data-testid='stStatusWidget']")).to_have_count(0, timeout=WAIT)


def on_replica(ctx) -> str:
    return next(c["value"] for c in ctx.cookies() if c["name"] == replicas.COOKIE)


def predict(page, label: str = "4 dessert") -> None:
    expect(page.get_by_text("attend to most?").first).to_be_visible(timeout=WAIT)
    page.get_by_test_id("stRadio").filter(has_text=label).get_by_text(label).click()
    page.wait_for_timeout(300)
    expect(page.locator("[data-testid='stStatusWidget']")).to_have_count(0, timeout=WAIT)
    page.get_by_role("button", name="Reveal").click()
    expect(page.get_by_text("Right: 'is' attends most to 4 dessert").first).to_be_visible(timeout=WAIT)
    # the sections under the first screen come in the page's next run (explorer/controls/later.py), which sends an
    # answer the store could not take again: that run over before the test goes on. Waited for by what only that run
    # draws (the JSON download, after the class's count in the page): the placeholder's absence alone was seen at once,
    # before the reveal's own run had drawn it, and the sections' run then sent the pending answer to a Redis started
    # again meanwhile (the teacher's "0 answers so far" never came)
    expect(page.locator(SECTIONS)).to_be_visible(timeout=WAIT)
    expect(page.locator(LATER)).to_have_count(0, timeout=WAIT)
    expect(page.locator("[data-testid='stStatusWidget']")).to_have_count(0, timeout=WAIT)


def no_exception(*pages) -> None:
    for p in pages:
        assert p.get_by_test_id("stException").count() == 0


def test_one_poll_for_the_class_across_replicas_a_restart_and_a_redis_outage(cluster, browser):
    student_ctx, teacher_ctx = pinned(browser, cluster, "r1"), pinned(browser, cluster, "r2")
    contexts = [student_ctx, teacher_ctx]
    try:
        student, teacher = student_ctx.new_page(), teacher_ctx.new_page()
        open_lesson(teacher, cluster, "&teacher=1")
        expect(teacher.get_by_text("0 answers so far").first).to_be_visible(timeout=WAIT)
        open_lesson(student, cluster)
        assert (on_replica(student_ctx), on_replica(teacher_ctx)) == ("r1", "r2")  # two processes
        predict(student)
        expect(teacher.get_by_text("1 answer so far").first).to_be_visible(timeout=WAIT)  # live, no reload

        # replica 1 (the student's) is killed and started again: the count lives in Redis
        os.killpg(cluster.procs[0].pid, signal.SIGKILL)
        cluster.procs[0].wait(10)
        cluster.restart(0)
        teacher1_ctx = pinned(browser, cluster, "r1")
        contexts.append(teacher1_ctx)
        teacher1 = teacher1_ctx.new_page()
        open_lesson(teacher1, cluster, "&teacher=1")
        assert on_replica(teacher1_ctx) == "r1"  # the restarted process, which never saw the answer
        expect(teacher1.get_by_text("1 answer so far").first).to_be_visible(timeout=WAIT)
        expect(teacher.get_by_text("1 answer so far").first).to_be_visible(timeout=WAIT)

        # Redis stops: both pages say so, nothing raises, the student's own reveal still works
        # its browser was sent to replica 2 while replica 1 was down; pinned to replica 1 again
        student_ctx.add_cookies([{"name": replicas.COOKIE, "value": "r1", "url": cluster.url}])
        open_lesson(student, cluster)  # a new session on the restarted replica 1
        assert on_replica(student_ctx) == "r1"
        cluster.redis.stop()
        expect(teacher.get_by_text(NOTICE).first).to_be_visible(timeout=WAIT)  # the live view, no reload
        predict(student)
        expect(student.get_by_text(NOTICE).first).to_be_visible(timeout=WAIT)
        no_exception(student, teacher, teacher1)
        teacher.screenshot(path=os.path.join(ARTIFACTS, "class_poll_unavailable.png"), full_page=True)

        # Redis is back (empty: it keeps nothing on disk): counting resumes without a reload
        cluster.redis.start()
        expect(teacher.get_by_text("0 answers so far").first).to_be_visible(timeout=WAIT)
        late_ctx = pinned(browser, cluster, "r1")
        contexts.append(late_ctx)
        late = late_ctx.new_page()
        open_lesson(late, cluster)
        predict(late)
        expect(late.get_by_text(NOTICE)).to_have_count(0)
        expect(teacher.get_by_text("1 answer so far").first).to_be_visible(timeout=WAIT)
        expect(teacher.get_by_text(NOTICE)).to_have_count(0)
        no_exception(student, teacher, teacher1, late)
        teacher.screenshot(path=os.path.join(ARTIFACTS, "class_poll_replicas.png"), full_page=True)
    finally:
        for ctx in contexts:
            ctx.close()
