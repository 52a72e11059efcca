"""A real ``streamlit run app.py`` on 127.0.0.1 and a free port, driven by Debian's Chromium."""

import http.server
import os
import shutil
import threading
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
# Every page of 127.0.0.1 (any port: a port is not part of a site) in one renderer process per browser context, kept
# alive by a page that stays open (``contexts``): a test's new page then starts in a renderer whose Blink, V8 and
# compiled Streamlit scripts are already up, instead of a new process. A new page of Step by step cost the machine
# 2.72 s of CPU this way against 3.87 s (benchmarks/results/page_open_cpu.txt).
ARGS = [*serve.CHROMIUM_ARGS, "--process-per-site"]


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


class Still:
    """Chromium, each of whose contexts runs ``serve.NO_ANIMATION`` in every document: animations and transitions
    off, the page drawn in its final state at once (a load costs 9-15 % less CPU). Anything else is the browser's."""

    def __init__(self, browser) -> None:
        self._browser = browser

    def new_context(self, **options):
        ctx = self._browser.new_context(**options)
        ctx.add_init_script(serve.NO_ANIMATION)
        return ctx

    def __getattr__(self, name):
        return getattr(self._browser, name)


@pytest.fixture(scope="session")
def browser():
    if not os.path.exists(CHROMIUM):
        pytest.fail(f"Chromium not found at {CHROMIUM}: install chromium-headless-shell (scripts/test.sh does)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        yield Still(b)
        b.close()


class _Keeper(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = b"<!doctype html><title>keeper</title>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture(scope="session")
def keeper_url():
    """A page of 127.0.0.1 (on a port of its own, chosen by the system) for the pages that keep each shared
    context's renderer process alive between tests."""
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Keeper)
    threading.Thread(target=httpd.serve_forever, name="keeper", daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(scope="session")
def contexts(browser, keeper_url):
    """One browser context per screen size, shared by the tests' pages: its HTTP cache keeps Streamlit's
    scripts, compiled once, where a fresh context fetched and compiled them again on each page's first
    load (a page load cost Chromium about 1 s more of CPU: benchmarks/results/suite_time.txt). Each holds one
    page open on ``keeper_url``: the renderer process of 127.0.0.1 lives on between tests (``ARGS``)."""
    made: dict[tuple[int, int], tuple[object, object]] = {}

    def context(width: int, height: int):
        if (width, height) not in made:
            ctx = browser.new_context(viewport={"width": width, "height": height})
            keeper = ctx.new_page()
            keeper.goto(keeper_url)
            made[width, height] = ctx, keeper
        return made[width, height]

    yield context
    for ctx, _ in made.values():
        ctx.close()


def _page(contexts, width: int, height: int):
    """A new page (a new Streamlit session) in the shared context; what a test leaves behind in the
    browser (cookies, local and session storage: the theme a test chose) is cleared after it, and every page it
    opened is closed but the context's keeper."""
    ctx, keeper = contexts(width, height)
    page = ctx.new_page()
    yield page
    for open_page in list(ctx.pages):  # about:blank has no storage: reading it throws, in the page
        if open_page is keeper:
            continue
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
