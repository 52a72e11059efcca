"""Hostile links in a real browser against a real server: no exception box, no element made from
the input, no JS dialog, the server alive and its memory bounded."""

import os
import random
import urllib.request
from urllib.parse import quote

import psutil
import pytest
from conftest import ARTIFACTS
from playwright.sync_api import expect
from serve import start_server, stop_server

WAIT = 60_000
EVIL = "evil.example"


def hostile_links(seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    numbers = ["1e400", "-inf", "nan", "9" * 400, "0x1f", "%zz", "-1"]
    params = ["heads", "d_model", "d_k", "seed", "temperature", "window", "head_steps", "rm_layer", "rm_pad"]
    # every number control's hostile value in one link, as a forwarded link carries them (each is named in the
    # page's notice; each value's own path through the parser is tested under AppTest, tests/app/test_hostile.py)
    links = ["steps?mask=sliding_window&" + "&".join(f"{p}={quote(rng.choice(numbers), safe='%')}" for p in params)]
    links += [
        f"model?{p}={quote(v, safe='%')}"
        for p, v in (
            ("rm_layer", "1e400"),
            ("rm_head", "-inf"),
            ("rm_model", "/etc"),
            ("rm_model", f"![x](https://{EVIL}/a.png)"),
        )
    ]
    text = (
        f"![x](https://{EVIL}/a.png) [go](https://{EVIL}) <img src='https://{EVIL}/b.png' onerror='alert(1)'> "
        f"<a href='https://{EVIL}'>a</a> \u202e bidi 👨‍👩‍👧 :material/home: $x$"
    )
    links += [
        f"{page}?sentence={quote(text)}&source={quote(text)}" for page in ("steps", "multihead", "cross", "model")
    ]
    links += [
        "steps?sentence=" + quote("word " * 4000),
        "steps?mask=evil&score=%3Cscript%3E&lang=xx&step=nope&heads=2&heads=1e400",
        "multihead?heads=32&d_model=1024&d_q=1024&d_k=1024&d_v=1024&sentence="
        + quote(" ".join(f"w{i}" for i in range(150))),
        "steps?" + "&".join(f"unknown{i}=x" for i in range(50)),
        "steps?sentence=%E0%A4%A",
        "a" * 2000,
    ]
    return links


def from_input(page) -> int:
    """Elements the page made from the hostile text: images or links pointing at the evil host."""
    return page.locator(f"img[src*='{EVIL}'], a[href*='{EVIL}'], [onerror]").count()


@pytest.fixture(scope="module")
def live():
    """One server of this module's own (its memory is measured), shared by its two tests."""
    os.makedirs(ARTIFACTS, exist_ok=True)
    with open(os.path.join(ARTIFACTS, "server-hostile.log"), "w") as log:
        proc, url = start_server(log=log)
    yield proc, url
    stop_server(proc)


def test_hostile_links_in_a_real_browser(live, page):
    proc, url = live
    dialogs = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    rss = []
    for link in hostile_links():
        page.goto(f"{url}/{link}")
        page.wait_for_selector("h1", timeout=WAIT)
        page.wait_for_timeout(300)
        expect(page.locator("[data-testid='stStatusWidget']")).to_have_count(0, timeout=WAIT)
        assert page.locator("[data-testid='stException']").count() == 0, link
        assert from_input(page) == 0, link
        assert urllib.request.urlopen(f"{url}/_stcore/health", timeout=10).read().strip() == b"ok"
        rss.append(psutil.Process(proc.pid).memory_info().rss)
    assert not dialogs
    page.screenshot(path=os.path.join(ARTIFACTS, "hostile_last.png"), full_page=True)
    assert max(rss) < 2.5 * 2**30, [r // 2**20 for r in rss]  # above the README's ~1.6 GiB worst case, as a bound


def test_the_browser_checks_can_fail(live, page):
    """The detectors flag a planted image and a dialog, so a passing test means something."""
    _, url = live
    dialogs = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.goto(f"{url}/steps")
    page.wait_for_selector("h1", timeout=WAIT)
    page.evaluate(f"document.body.insertAdjacentHTML('beforeend', '<img src=\"https://{EVIL}/planted.png\">')")
    assert from_input(page) == 1
    page.evaluate("alert('planted')")
    assert dialogs == ["planted"]
