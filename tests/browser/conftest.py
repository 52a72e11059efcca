"""A real ``streamlit run app.py`` on 127.0.0.1 and a free port, driven by Debian's Chromium."""

import os
import shutil
import time

import pytest
import serve

ARTIFACTS = os.path.join(serve.ROOT, "artifacts")
CHROMIUM = os.environ.get("CHROMIUM", shutil.which("chromium") or "/usr/bin/chromium")
ARGS = serve.CHROMIUM_ARGS


def start_server():
    with open(os.path.join(ARTIFACTS, f"server-{time.time_ns()}.log"), "w") as log:  # the server keeps its copy
        return serve.start_server(log=log)


@pytest.fixture
def server():
    """A fresh server per test: the first-run behaviour is part of what is tested."""
    os.makedirs(ARTIFACTS, exist_ok=True)
    proc, url = start_server()
    yield url
    serve.stop_server(proc)


@pytest.fixture(scope="session")
def browser():
    if not os.path.exists(CHROMIUM):
        pytest.fail(f"Chromium not found at {CHROMIUM}: install Debian's chromium (see .ci/run)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        yield b
        b.close()


def _page(browser, width: int, height: int):
    ctx = browser.new_context(viewport={"width": width, "height": height})
    yield ctx.new_page()
    ctx.close()


@pytest.fixture
def page(browser):
    yield from _page(browser, 1400, 1000)


@pytest.fixture
def projector(browser):
    """A projector's screen: 1280×720."""
    yield from _page(browser, 1280, 720)
