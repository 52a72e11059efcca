"""A real ``streamlit run app.py`` on 127.0.0.1 and a free port, driven by Debian's Chromium."""

import os
import shutil
import time

import pytest
import serve

ARTIFACTS = os.path.join(serve.ROOT, "artifacts")
# Debian's headless shell (Chromium's own headless build, no browser UI behind the page) where it is installed, as
# scripts/test.sh does: the browser tests' pages cost it about a fifth less CPU than the full browser in headless mode
# (benchmarks/results/suite_time.txt). CHROMIUM names another build.
CHROMIUM = os.environ.get(
    "CHROMIUM", shutil.which("chromium-headless-shell") or shutil.which("chromium") or "/usr/bin/chromium"
)
ARGS = serve.CHROMIUM_ARGS


def start_server(warm: bool = True):
    with open(os.path.join(ARTIFACTS, f"server-{time.time_ns()}.log"), "w") as log:  # the server keeps its copy
        return serve.start_server(log=log, warm=warm)


@pytest.fixture
def fresh_server():
    """A fresh server for this test alone: for the tests of a server's first run (a deep link opened first, the
    first change after a start), which a server that has run before cannot show. Their pages need no model: the
    start's warm-up of every model is left out."""
    os.makedirs(ARTIFACTS, exist_ok=True)
    proc, url = start_server(warm=False)
    yield url
    serve.stop_server(proc)


@pytest.fixture(scope="session")
def shared_server():
    os.makedirs(ARTIFACTS, exist_ok=True)
    proc, url = start_server()
    yield proc, url
    serve.stop_server(proc)


@pytest.fixture
def server(shared_server):
    """One server for the browser tests that do not test a first run (starting one costs seconds of imports and
    the model's load); a test that finds it dead fails and says where its log is."""
    proc, url = shared_server
    if proc.poll() is not None:
        pytest.fail("the shared server has exited: see its log under artifacts/")
    return url


@pytest.fixture(scope="session")
def browser():
    if not os.path.exists(CHROMIUM):
        pytest.fail(f"Chromium not found at {CHROMIUM}: install chromium-headless-shell (scripts/test.sh does)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        yield b
        b.close()


@pytest.fixture(scope="session")
def contexts(browser):
    """One browser context per screen size, shared by the tests' pages: its HTTP cache keeps Streamlit's
    scripts, compiled once, where a fresh context fetched and compiled them again on each page's first
    load (a page load cost Chromium about 1 s more of CPU: benchmarks/results/suite_time.txt)."""
    made: dict[tuple[int, int], object] = {}

    def context(width: int, height: int):
        if (width, height) not in made:
            made[width, height] = browser.new_context(viewport={"width": width, "height": height})
        return made[width, height]

    yield context
    for ctx in made.values():
        ctx.close()


def _page(contexts, width: int, height: int):
    """A new page (a new Streamlit session) in the shared context; what a test leaves behind in the
    browser (cookies, local and session storage: the theme a test chose) is cleared after it."""
    ctx = contexts(width, height)
    page = ctx.new_page()
    yield page
    for open_page in list(ctx.pages):  # about:blank has no storage: reading it throws, in the page
        open_page.evaluate("() => { try { localStorage.clear(); sessionStorage.clear(); } catch (e) {} }")
        open_page.close()
    ctx.clear_cookies()


@pytest.fixture
def page(contexts):
    yield from _page(contexts, 1400, 1000)


@pytest.fixture
def projector(contexts):
    """A projector's screen: 1280×720."""
    yield from _page(contexts, 1280, 720)
