"""Is what a lesson asks for ready before it asks? A learner walks the whole tour on a fresh server, then presses
every Lab preset, on a server that computed the lessons ahead at its start (``ATTN_EXPLORER_WARM=1``, the default)
and on one that warmed its models only (``models``), alternated, a fresh server each run.

Each step is timed from the learner's request until the page is complete: drawn, every background job it waits
for ended, the button the lesson asks for pressed and its work done (the Lab's and Vision's runs, the sweep), as
a browser tab left alone sees it (``explorer.classroom.ahead.visit``). The learner starts once the server has
settled: the
ahead server's log says it is ready and both servers' processes are idle. Also printed: how long the start's work
took and the CPU seconds of the server and its children until then.

    python benchmarks/lesson_ready.py --runs 2 --json benchmarks/results/lesson_ready/run1.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from urllib.parse import urlencode

import psutil

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "tests", "browser"))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))

from class_load import settle, tree_cpu_s
from serve import start_server, stop_server

from attn_core.lab import PRESETS
from explorer.classroom.ahead import READY
from explorer.classroom.ahead.visit import PRESS_LIMIT_S, visit
from explorer.classroom.tour import TOUR, params

MODES = ("1", "models")


def wait_ready(log_path: str, proc: psutil.Process, ahead: bool, limit_s: float) -> float:
    """Seconds from now until the start's work is done (the log's ready line, then an idle server)."""
    t0 = time.perf_counter()
    while ahead and not ready(log_path):
        if time.perf_counter() - t0 > limit_s:
            raise SystemExit(f"no ready line in {limit_s:.0f} s: see {log_path}")
        time.sleep(1.0)
    settle(proc)
    return time.perf_counter() - t0


def ready(log_path: str) -> bool:
    with open(log_path) as f:
        return READY in f.read()


def walk(url: str) -> dict[str, dict]:
    """The learner: every lesson (pressing what it asks for), then every Lab preset's button."""
    steps = [(x.key, x.page, urlencode(params(x), safe=","), x.press) for x in TOUR]
    steps += [(f"preset {name}", "lab", "", f"lab_preset_{name}") for name in PRESETS]
    out = {}
    for name, page, query, press in steps:
        v = visit(url, page, query, press=press, limit_s=PRESS_LIMIT_S)
        out[name] = {"seconds": round(v.seconds, 3), "first_s": round(v.first_s, 3), "error": v.error}
    return out


def one(mode: str) -> dict:
    with tempfile.NamedTemporaryFile("w", suffix=".log", delete=False) as log:
        proc, url = start_server(log=log, warm=mode)
    try:
        p = psutil.Process(proc.pid)
        t0 = time.perf_counter()
        kick = visit(url, "")  # the first visitor: the server's start begins with its first script run
        ready_s = wait_ready(log.name, p, mode != "models", limit_s=900) + kick.seconds
        start_cpu = tree_cpu_s(p)
        steps = walk(url)
        return {"mode": mode, "ready_s": round(ready_s, 1), "start_cpu_s": round(start_cpu, 1), "steps": steps,
                "wall_s": round(time.perf_counter() - t0, 1)}  # fmt: skip
    finally:
        stop_server(proc)
        os.unlink(log.name)


def report(runs: list[dict]) -> None:
    for mode in MODES:
        mine = [r for r in runs if r["mode"] == mode]
        if not mine:
            continue
        print(f"ATTN_EXPLORER_WARM={mode}: ready {', '.join(str(r['ready_s']) for r in mine)} s after the first "
              f"visit; CPU until then {', '.join(str(r['start_cpu_s']) for r in mine)} s")  # fmt: skip
        totals = [sum(s["seconds"] for s in r["steps"].values()) for r in mine]
        print(f"  the whole walk: {', '.join(f'{t:.1f}' for t in totals)} s")
        errors = sorted({f"{k}: {s['error']}" for r in mine for k, s in r["steps"].items() if s["error"]})
        print(f"  errors: {errors or 'none'}")
    names = list(runs[0]["steps"])
    print(f"{'step':<22}" + "".join(f"{'WARM=' + m + ' (s)':>22}" for m in MODES))
    for name in names:
        cells = []
        for mode in MODES:
            values = [r["steps"][name]["seconds"] for r in runs if r["mode"] == mode]
            cells.append(f"{statistics.median(values):.2f} [{min(values):.2f}-{max(values):.2f}]" if values else "-")
        print(f"{name:<22}" + "".join(f"{c:>22}" for c in cells))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=2, help="runs of each mode, alternated")
    ap.add_argument("--json", help="write every run's steps here")
    args = ap.parse_args()
    if args.runs < 1:
        ap.error("--runs must be at least 1")
    runs = []
    for _ in range(args.runs):
        for mode in MODES:
            runs.append(one(mode))
            print(f"# run done: WARM={mode}, walk {runs[-1]['wall_s']} s", flush=True)
    report(runs)
    if args.json:
        os.makedirs(os.path.dirname(args.json) or ".", exist_ok=True)
        with open(args.json, "w") as f:
            json.dump(runs, f, indent=1)


if __name__ == "__main__":
    main()
