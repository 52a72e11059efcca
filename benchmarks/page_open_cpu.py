"""What opening a page of the app costs the machine in Chromium's headless shell, as the browser tests open theirs
(a new page in a shared browser context, the page closed after): the machine's busy CPU seconds (/proc/stat) from
the new page to its first chart drawn, plus one second. Four settings alternated in one run, each in a browser of its
own: Chromium's default (a renderer process per page), ``--process-per-site`` (one renderer for every page of a
site), a page kept open on another port of 127.0.0.1 (a port is not part of a site), and both. ``--set tried``: both
against what was tried on top of them to make a load cheaper: a persistent profile (a disk cache, where Chrome keeps a
code cache of the scripts), more switches, and animations off (``serve.NO_ANIMATION``, which the tests then took).
``--set js``: the tests' setting against V8's optimising compilers switched off. ``--set gc``: against a larger
young generation for V8 (fewer scavenges). ``--set proc``: against Chromium's processes and threads folded together
(everything in one process; the compositor on the page's main thread; one raster thread). ``--set raster``: against
cheaper drawing (Chromium's low-end device mode; text without subpixel antialiasing; no partial raster).

    python benchmarks/page_open_cpu.py --runs 6 [--set tried|js|gc|proc|raster] [--out FILE]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "browser"))
sys.path.insert(0, ROOT)

import serve

from benchmarks.record import emit
from benchmarks.suite_cpu import machine_reading

SETTINGS = {  # name: (extra switches, a page kept open on another server)
    "default": ([], False),
    "kept page": ([], True),
    "process-per-site": (["--process-per-site"], False),
    "process-per-site, kept page": (["--process-per-site"], True),
}
TESTS = ["--process-per-site"]  # with a page kept open and animations off: the browser tests' (conftest.py)
MORE = ["--in-process-gpu", "--disable-features=PaintHolding,BackForwardCache,site-per-process"]
TRIED = {  # name: (extra switches, kept page, a persistent profile, a script run in every document)
    "one renderer, kept page": (TESTS, True, False, None),
    "persistent profile": (TESTS, True, True, None),
    "more switches": ([*TESTS, *MORE], True, False, None),
    "and animations off (tests)": (TESTS, True, False, serve.NO_ANIMATION),
}


def against_tests(rows: dict[str, list[str]]) -> dict:
    """The tests' setting (one renderer, a kept page, animations off) first, then each row: its switches on top."""
    tests = (TESTS, True, False, serve.NO_ANIMATION)
    return {"tests": tests, **{name: ([*TESTS, *switches], *tests[1:]) for name, switches in rows.items()}}


# V8's optimising compilers off (TurboFan, and Maglev below it, compile on threads of their own beside the page: for a
# page that lives a few seconds their code may cost more than it saves)
JS = against_tests(
    {
        "js: no TurboFan": ["--js-flags=--no-opt"],
        "js: no TurboFan, no Maglev": ["--js-flags=--no-opt --no-maglev"],
        "js: one thread for V8": ["--js-flags=--single-threaded"],
    }
)
# A larger young generation (V8's semi-space, 16 MiB at most by default on 64-bit): a CPU profile of a new tab had
# 10-12 % of the page's main thread in the garbage collector
GC = against_tests(
    {
        "js: semi-space 32 MiB": ["--js-flags=--max-semi-space-size=32"],
        "js: semi-space 64 MiB": ["--js-flags=--max-semi-space-size=64"],
    }
)
# Fewer processes and threads (a load's CPU includes handing each frame between the renderer's main thread, its
# compositor thread, raster threads and the GPU process)
PROC = against_tests(
    {
        "one process": ["--single-process"],
        "compositor on the main thread": ["--disable-threaded-compositing"],
        "one raster thread": ["--num-raster-threads=1"],
    }
)
# Cheaper drawing of each frame
RASTER = against_tests(
    {
        "low-end device mode": ["--enable-low-end-device-mode"],
        "no LCD text": ["--disable-lcd-text"],
        "no partial raster": ["--disable-partial-raster"],
    }
)


def busy_s() -> float:
    """The machine's busy CPU seconds so far (``suite_cpu.machine_reading``; a stolen tick, ~0 here, is busy)."""
    reading = machine_reading()
    return reading["busy"] / reading["hz"]


def main() -> None:
    from playwright.sync_api import sync_playwright

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=6)
    ap.add_argument("--page", default="steps")
    ap.add_argument("--set", choices=("renderer", "tried", "js", "gc", "proc", "raster"), default="renderer")
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    renderer = {name: (extra, kept, False, None) for name, (extra, kept) in SETTINGS.items()}
    chosen = {"tried": TRIED, "js": JS, "gc": GC, "proc": PROC, "raster": RASTER}.get(args.set, renderer)
    exe = os.environ.get("CHROMIUM") or shutil.which("chromium-headless-shell") or shutil.which("chromium")
    proc, url = serve.start_server(warm=False)
    other, other_url = serve.start_server(warm=False)
    seen: dict[str, list[float]] = {name: [] for name in chosen}
    profiles = []
    try:
        with sync_playwright() as pw:
            contexts = {}
            for name, (extra, kept, persistent, script) in chosen.items():
                switches = [*serve.CHROMIUM_ARGS, *extra]
                size = {"width": 1400, "height": 1000}
                if persistent:
                    profiles.append(tempfile.mkdtemp(prefix="page-open-profile-"))
                    contexts[name] = pw.chromium.launch_persistent_context(
                        profiles[-1], executable_path=exe, args=switches, viewport=size
                    )
                else:
                    browser = pw.chromium.launch(executable_path=exe, args=switches)
                    contexts[name] = browser.new_context(viewport=size)
                if script:
                    contexts[name].add_init_script(script)
                if kept:
                    contexts[name].new_page().goto(f"{other_url}/_stcore/health")

            def open_one(ctx) -> None:
                page = ctx.new_page()
                page.goto(f"{url}/{args.page}")
                page.wait_for_selector("[data-testid='stPlotlyChart'], .stPlotlyChart", timeout=120_000)
                time.sleep(1.0)
                page.close()
                time.sleep(0.3)

            for ctx in contexts.values():  # the HTTP cache filled, the server's first runs behind
                open_one(ctx)
                open_one(ctx)
            for _ in range(args.runs):
                for name, ctx in contexts.items():
                    before = busy_s()
                    open_one(ctx)
                    seen[name].append(busy_s() - before)
    finally:
        serve.stop_server(proc)
        serve.stop_server(other)
        for folder in profiles:
            shutil.rmtree(folder, ignore_errors=True)
    when = time.strftime("%Y-%m-%d %H:%M")
    head = f"# page_open_cpu.py --runs {args.runs} --page {args.page} --set {args.set}: {when} UTC, "
    lines = [head + f"{os.cpu_count()} cores, {os.path.basename(exe)}"]
    for name, values in seen.items():
        spread = ", ".join(f"{v:.2f}" for v in values)
        lines.append(f"{name:28} median {statistics.median(values):.2f} s of the machine's CPU a page ({spread})")
    emit(lines, args.out)


if __name__ == "__main__":
    main()
