"""A first load: each page opened in a new tab of a warmed Chromium context, on a warm server, timed in the page's own
clock from the navigation's start to the page's title (its ``h1``), to the first chart's element attached
(``[data-testid=stPlotlyChart]``) and to that chart drawn (Plotly's ``svg.main-svg`` inside it); and a tour
lesson's "Next" pressed on a lesson already open, timed from the click to the next lesson's question shown and to
its page finished (the script run over, nothing stale, a chart drawn, no section still to come under its first
screen), with whether the click kept the same document (a value set on ``window`` before the click survives) or
loaded a new one.

One or two checkouts (``--root``, repeated: each gets a server of its own, started with ``ATTN_EXPLORER_WARM``
=``--warm``, and is measured once its server is idle), alternated round by round and page by page, so that a busy
moment of the machine falls on each alike. Prints each page's median, p90 and range.

    python benchmarks/first_load.py --root before=../old --root after=. --runs 5 \\
        --out benchmarks/results/first_load_cpu.txt
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from urllib.parse import urlencode

import psutil

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "tests", "browser"))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))

from class_load import settle
from serve import CHROMIUM_ARGS, start_server, stop_server

from benchmarks.record import emit
from explorer.classroom.tour import TOUR, params
from explorer.controls import later
from explorer.pages import PAGES

ARGS = [*CHROMIUM_ARGS, "--disable-gpu", "--disable-dev-shm-usage", "--process-per-site"]
LIMIT_MS = 120_000
NO_CHART = {"complexity"}  # no chart until its sweep is run
LATER = f"[class*='st-key-{later.KEY}']"  # a placeholder of sections still to come (explorer/controls/later.py)

# Installed in every document of the context before the app's own scripts: marks (Date.now(), ms since the epoch)
# of the first title, chart element and drawn chart, the text asked for in ``window.__want`` (the next lesson's
# question) and, after that text, the page finished. Checked once a frame while the document changes.
MARKS = """(() => {
  window.__marks = {};
  let queued = false;
  const check = () => {
    queued = false;
    const m = window.__marks, now = Date.now();
    if (!m.title && document.querySelector('h1')) m.title = now;
    const chart = document.querySelector("[data-testid='stPlotlyChart']");
    if (!m.attached && chart) m.attached = now;
    if (!m.drawn && chart && chart.querySelector('svg.main-svg')) m.drawn = now;
    const want = window.__want;
    if (want && !m.want && document.body && document.body.textContent.includes(want)) m.want = now;
    if (m.want && !m.done) {
      const app = document.querySelector("[data-testid='stApp']");
      const idle = app && app.dataset.testScriptState === 'notRunning'
        && !document.querySelector("[data-testid='stStatusWidget']")
        && !document.querySelector("[data-stale='true'], LATER");
      if (idle && document.querySelector("[data-testid='stPlotlyChart'] svg.main-svg")) m.done = now;
    }
  };
  const soon = () => { if (!queued) { queued = true; requestAnimationFrame(check); } };
  new MutationObserver(soon).observe(document, {subtree: true, childList: true, attributes: true,
    attributeFilter: ['data-test-script-state', 'data-stale']});
})();""".replace("LATER", LATER)


# A page finished: its script run over, nothing stale, no job still computing for it (a progress bar or the "still
# computing" caption of explorer/jobs/waiting.py), no section still to come under its first screen
# (explorer/controls/later.py), for a second in a row.
FINISHED = """() => {
  const app = document.querySelector("[data-testid='stApp']");
  const idle = app && app.dataset.testScriptState === 'notRunning'
    && !document.querySelector("[data-testid='stStatusWidget'], [data-stale='true'], [data-testid='stProgress']")
    && !document.querySelector("LATER");
  const now = Date.now();
  if (!idle) { window.__idleSince = 0; return false; }
  window.__idleSince = window.__idleSince || now;
  return now - window.__idleSince > 1000;
}""".replace("LATER", LATER)


def open_tab(ctx, url: str, path: str, finish: bool = False) -> dict[str, float]:
    """A new tab on ``path``: ms from the navigation's start to each mark; the tab is closed after (``finish``: once
    the page has finished, its background jobs done and kept by the server, as a warm-up)."""
    page = ctx.new_page()
    try:
        page.goto(f"{url}/{path}", wait_until="commit")
        page.wait_for_function("() => window.__marks && window.__marks.drawn", polling=100, timeout=LIMIT_MS)
        if finish:
            page.wait_for_function(FINISHED, polling=100, timeout=LIMIT_MS)
        marks, origin = page.evaluate("[window.__marks, performance.timeOrigin]")
        return {k: marks[k] - origin for k in ("title", "attached", "drawn") if k in marks}
    finally:
        page.close()


def next_lesson(ctx, url: str, n: int) -> dict[str, float]:
    """Lesson ``n`` opened and finished, then its "Next" link pressed: ms from the click to the next lesson's
    question and to its page finished; ``same`` 1 when the click kept the document (no full load)."""
    from explorer.base.i18n import t

    here, there = TOUR[n], TOUR[n + 1]
    page = ctx.new_page()
    try:
        page.goto(f"{url}/{here.page}?{urlencode(params(here), safe=',')}", wait_until="commit")
        page.evaluate("(w) => { window.__want = w; }", t("tour_lesson", n=n + 1, total=len(TOUR), language="en"))
        page.wait_for_function("() => window.__marks && window.__marks.done", polling=100, timeout=LIMIT_MS)
        page.wait_for_timeout(500)
        link = page.get_by_role("link", name=t("tour_next", title=t(f"tour.{there.key}.title", language="en")))
        want = t("tour_lesson", n=n + 2, total=len(TOUR), language="en")
        t0 = page.evaluate(
            "(w) => { window.__marks = {}; window.__want = w; window.__kept = 1; return Date.now(); }", want
        )
        page.add_init_script(f"window.__want = {want!r};")  # the new document, if the click loads one
        link.click()
        page.wait_for_function("() => window.__marks && window.__marks.done", polling=100, timeout=LIMIT_MS)
        marks, kept = page.evaluate("[window.__marks, window.__kept === 1]")
        return {"question": marks["want"] - t0, "finished": marks["done"] - t0, "same": float(kept)}
    finally:
        page.close()


def describe(values: list[float]) -> str:
    """Median, p90, range and every value, in seconds."""
    ordered = sorted(values)
    p90 = ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))]
    spread = " ".join(f"{v / 1000:.2f}" for v in values)
    lo, hi = ordered[0] / 1000, ordered[-1] / 1000
    return f"median {statistics.median(values) / 1000:.2f} s, p90 {p90 / 1000:.2f}, range {lo:.2f}-{hi:.2f} ({spread})"


def measure(ctx, servers: dict, paths: list[str], lessons: list[int], runs: int) -> dict[tuple[str, str, str], list]:
    """Every page in a new tab and every lesson's Next, on each server (name -> (process, url)): once to warm each
    server's caches (each page left open until it has finished: a tab closed at its first chart left its page's
    background jobs unfinished, cancelled with nobody watching, so each measured tab computed them again), then
    ``runs`` rounds, the servers' order alternated, page by page."""
    for _, url in servers.values():
        for path in paths:
            open_tab(ctx, url, path, finish=True)
        for n in lessons:
            next_lesson(ctx, url, n)
    for proc, _ in servers.values():
        settle(psutil.Process(proc.pid))
    seen: dict[tuple[str, str, str], list[float]] = {}
    for r in range(runs):
        order = list(servers.items()) if r % 2 == 0 else list(servers.items())[::-1]
        for path in paths:
            for name, (_, url) in order:
                for k, v in open_tab(ctx, url, path).items():
                    seen.setdefault((path, name, k), []).append(v)
        for n in lessons:
            for name, (_, url) in order:
                for k, v in next_lesson(ctx, url, n).items():
                    seen.setdefault((f"tour {TOUR[n].key}->{TOUR[n + 1].key}", name, k), []).append(v)
    return seen


def main() -> None:
    from playwright.sync_api import sync_playwright

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", action="append", help="NAME=PATH of a checkout (repeat for two; default: this one)")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--pages", default="", help="url paths, comma-separated (default: every page with a chart)")
    ap.add_argument("--lessons", default="0,4,5", help="lesson indices whose Next is pressed")
    ap.add_argument("--warm", default="models", help="ATTN_EXPLORER_WARM for the servers")
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    named = [r.split("=", 1) if "=" in r else (os.path.basename(os.path.abspath(r)), r) for r in args.root or [ROOT]]
    paths = args.pages.split(",") if args.pages else [p.url_path for p in PAGES if p.url_path not in NO_CHART]
    lessons = [int(i) for i in args.lessons.split(",") if i]
    exe = os.environ.get("CHROMIUM") or shutil.which("chromium-headless-shell") or shutil.which("chromium")
    servers: dict[str, tuple[subprocess.Popen, str]] = {}
    try:
        with tempfile.TemporaryDirectory() as logs:
            for name, root in named:
                with open(os.path.join(logs, f"{name}.log"), "w") as log:
                    servers[name] = start_server(log=log, timeout=120, warm=args.warm, root=os.path.abspath(root))
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=exe, headless=True, args=ARGS)
                ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
                ctx.add_init_script(MARKS)
                keeper = ctx.new_page()  # keeps 127.0.0.1's renderer process alive between tabs, as the tests do
                keeper.goto(f"{next(iter(servers.values()))[1]}/_stcore/health")
                seen = measure(ctx, servers, paths, lessons, args.runs)
                browser.close()
    finally:
        for proc, _ in servers.values():
            stop_server(proc)
    head = (
        f"# first_load.py --runs {args.runs} --warm {args.warm}: {time.strftime('%Y-%m-%d %H:%M')} UTC, "
        f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}, {os.path.basename(exe)}; "
        f"checkouts: {', '.join(servers)}"
    )
    lines = [head, "# a new tab: s from navigation start; a tour step: s from the click (same: no full load)"]
    for (what, name, k), values in seen.items():
        if k == "same":
            lines.append(f"{what:24} {name:8} {k:9} {sum(values):.0f} of {len(values)} clicks kept the document")
        else:
            lines.append(f"{what:24} {name:8} {k:9} {describe(values)}")
    emit(lines, args.out)


if __name__ == "__main__":
    main()
