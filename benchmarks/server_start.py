"""What a server's start costs: the CPU seconds of ``streamlit run app.py`` (and anything it starts) from its
launch until it is idle after its first visitor's page, with the start's warm-up of every model
(``ATTN_EXPLORER_WARM=models``; the default, ``1``, then computes the lessons ahead too: ``lesson_ready.py``) and
without it (``0``), alternated.

    python benchmarks/server_start.py --runs 3
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time

import psutil

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "browser"))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))

from class_load import Session, tree_cpu_s
from serve import start_server, stop_server

cpu_s = tree_cpu_s  # the server's and its children's CPU seconds


async def first_visit(url: str, page: str) -> float:
    s = Session(url, "first")
    await s.connect()
    seconds, _ = await s.run(page=page, timeout=300)
    await s.close()
    return seconds


def one(warm: bool, page: str) -> tuple[float, float, float]:
    """(CPU seconds when the first page was drawn, CPU seconds once idle, seconds to the first page)."""
    proc, url = start_server(warm="models" if warm else "0")
    try:
        p = psutil.Process(proc.pid)
        wall = asyncio.run(first_visit(url, page))
        drawn = cpu_s(p)
        last, still = drawn, 0
        while still < 3:  # idle: three seconds in a row under 0.05 s of CPU each
            time.sleep(1.0)
            now = cpu_s(p)
            still = still + 1 if now - last < 0.05 else 0
            last = now
        return drawn, last, wall
    finally:
        stop_server(proc)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--page", default="steps")
    args = ap.parse_args()
    seen: dict[bool, list[tuple[float, float, float]]] = {True: [], False: []}
    for _ in range(args.runs):
        for warm in (True, False):
            seen[warm].append(one(warm, args.page))
    for warm, runs in seen.items():
        name = "ATTN_EXPLORER_WARM=models" if warm else "ATTN_EXPLORER_WARM=0"
        listed = "; ".join(f"{a:.1f} / {b:.1f} s" for a, b, _ in runs)
        print(
            f"{name}: CPU at the first page / once idle, median {statistics.median(r[0] for r in runs):.1f} / "
            f"{statistics.median(r[1] for r in runs):.1f} s (runs: {listed}); the first page drawn in "
            f"{statistics.median(r[2] for r in runs):.1f} s"
        )


if __name__ == "__main__":
    main()
