"""What one rerun of each page costs the server: its CPU time, the thing a class of 30 shares.

One simulated student (Streamlit's own websocket protocol, as in ``class_load.py``) opens every page of the
page table and changes its widgets one at a time, as the class's students do; for each rerun the server
process's CPU time (all its threads: the script thread and the event loop; not the job workers, which run
at the lowest priority in their own processes) is read before the ``BackMsg`` is sent and after
``script_finished`` arrives. CPU time, unlike wall time, barely moves with what else the machine runs, so
this measures a page's own weight on a noisy machine. A page whose reruns cost C ms of CPU leaves a
single-interpreter server room for about 1000 / C reruns a second; a class of 30 makes 6-8.

    python benchmarks/rerun_cost.py                      # every page, 40 reruns each
    python benchmarks/rerun_cost.py --pages steps,vision --reruns 80 --json out.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import sys
import time

import psutil

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "browser"))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))

from class_load import Session, default_pages, percentile, settle


def cpu_s(proc: psutil.Process) -> float:
    """Seconds on a CPU of ``proc``, every thread it ever ran included (a script run has a thread of its own,
    gone when the run ends). Linux counts these in ticks of 10 ms, as long as a cheap rerun: one rerun's
    reading is 0, 10 or 20 ms, and their mean over many reruns is the cost."""
    t = proc.cpu_times()
    return t.user + t.system


async def measure(url: str, pid: int, pages: list[str], reruns: int, seed: int) -> dict:
    proc = psutil.Process(pid)
    rng = random.Random(seed)
    s = Session(url, "cost")
    await s.connect()
    for page in pages:  # warm: every page once, as a first visitor does
        await s.run(page=page, timeout=300)
    settle(proc)
    out: dict = {}
    for page in pages:
        await s.run(page=page, timeout=300)
        cpu, wall = [], []
        tries = 0
        while len(cpu) < reruns and tries < reruns * 4:
            tries += 1
            changed = s.change(rng)
            if changed is None:
                continue
            await asyncio.sleep(0.05)  # the server's own leftovers of the last run (the event loop's sends) settle
            c0, t0 = cpu_s(proc), time.perf_counter()
            _, error = await s.run(fragment_id=changed[1], timeout=300)
            if error or s.page != page:
                continue
            cpu.append(cpu_s(proc) - c0)
            wall.append(time.perf_counter() - t0)
        out[page] = {
            "n": len(cpu),
            "cpu_ms_mean": round(1000 * sum(cpu) / len(cpu), 1) if cpu else None,
            "cpu_ms_p90": round(1000 * percentile(cpu, 90), 1) if cpu else None,
            "wall_ms_p50": round(1000 * percentile(wall, 50), 1) if wall else None,
        }
        print(
            f"  {page:22s} n={len(cpu):3d}  cpu mean {out[page]['cpu_ms_mean']:7} ms"
            f"  p90 {out[page]['cpu_ms_p90']:7} ms  wall p50 {out[page]['wall_ms_p50']:7} ms",
            flush=True,
        )
    await s.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pages", default=None, help="comma-separated (default: every page of the page table)")
    ap.add_argument("--reruns", type=int, default=40)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    from serve import start_server, stop_server

    pages = [p for p in (args.pages or default_pages()).split(",") if p]
    proc, url = start_server(timeout=120)
    try:
        result = asyncio.run(measure(url, proc.pid, pages, args.reruns, args.seed))
    finally:
        stop_server(proc)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"pages": result, "reruns": args.reruns, "seed": args.seed}, f, indent=1)


if __name__ == "__main__":
    main()
