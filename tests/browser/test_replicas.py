"""Two replicas behind Debian's HAProxy on 127.0.0.1 (scripts/replicas.py), driven by Chromium:
sticky sessions, a download served from /media through the balancer, and a replica killed."""

import json
import os
import signal
import sys
from pathlib import Path

import pytest
from conftest import ARTIFACTS
from playwright.sync_api import expect
from serve import ROOT, free_port

sys.path.insert(0, os.path.join(ROOT, "scripts"))
import replicas

WAIT = 60_000


@pytest.fixture
def cluster(monkeypatch):
    if not os.path.exists("/usr/sbin/haproxy") and not __import__("shutil").which("haproxy"):
        pytest.fail("haproxy not found: install Debian's haproxy (see scripts/test.sh)")
    monkeypatch.setenv("ATTN_EXPLORER_WARM", "0")  # its replicas serve pages without a model: no warm-up
    c = replicas.Cluster(port=free_port(), replicas=2, log_dir=os.path.join(ARTIFACTS, "cluster"))
    os.makedirs(c.log_dir, exist_ok=True)
    c.start()
    yield c
    c.stop()


def replica_of(ctx) -> str:
    return next(c["value"] for c in ctx.cookies() if c["name"] == replicas.COOKIE)


def open_steps(page, url: str, query: str = "") -> None:
    page.goto(f"{url}/steps{query}")
    expect(page.locator("h1", has_text="Step by step")).to_be_visible(timeout=WAIT)
    expect(page.locator("[data-testid='stStatusWidget']")).to_have_count(0, timeout=WAIT)


def change_sentence(page, sentence: str, last_label: str) -> None:
    box = page.locator("textarea[aria-label='Sentence']")
    box.fill(sentence)
    box.press("Control+Enter")
    page.wait_for_timeout(300)
    expect(page.locator("[data-testid='stStatusWidget']")).to_have_count(0, timeout=WAIT)
    expect(page.locator("svg text", has_text=last_label).first).to_be_visible(timeout=WAIT)


def test_two_replicas_behind_haproxy_sticky_downloads_and_failover(cluster, browser):
    a_ctx = browser.new_context(viewport={"width": 1400, "height": 1000}, accept_downloads=True)
    b_ctx = browser.new_context(viewport={"width": 1400, "height": 1000}, accept_downloads=True)
    a, b = a_ctx.new_page(), b_ctx.new_page()
    try:
        open_steps(a, cluster.url, "?sentence=one+two+three")
        a_replica = replica_of(a_ctx)
        other = "r2" if a_replica == "r1" else "r1"
        # the second student lands on the other replica (as leastconn would send a second browser)
        b_ctx.add_cookies([{"name": replicas.COOKIE, "value": other, "url": cluster.url}])
        open_steps(b, cluster.url, "?sentence=red+green+blue+yellow")
        assert replica_of(b_ctx) == other  # sticky: the balancer kept the browser on its replica

        # both sessions work: a change redraws the charts on each replica
        change_sentence(a, "alpha beta gamma", "2 gamma")
        change_sentence(b, "w x y z v", "4 v")

        # a download is served from /media of the replica that made it, through the balancer
        with b.expect_download(timeout=WAIT) as dl:
            b.get_by_role("button", name="Download the trace (JSON)").click()
        data = json.loads(Path(dl.value.path()).read_text())
        assert data["tokens"] == ["w", "x", "y", "z", "v"]
        assert "/media/" in dl.value.url

        # kill the first student's replica: the second's session keeps working
        dead = cluster.procs[int(a_replica[1]) - 1]
        os.killpg(dead.pid, signal.SIGKILL)
        dead.wait(10)
        change_sentence(b, "one more change here", "3 here")
        # and the first student is sent to the live replica, with the settings from the URL
        a.reload()
        open_steps(a, cluster.url, "?sentence=alpha+beta+gamma")
        expect(a.locator("svg text", has_text="2 gamma").first).to_be_visible(timeout=WAIT)
        assert replica_of(a_ctx) == other
        b.screenshot(path=os.path.join(ARTIFACTS, "replica_survivor.png"), full_page=True)
    finally:
        a_ctx.close()
        b_ctx.close()
