"""What starting a background worker costs, forked from the fork server (``explorer.jobs.forked``) against started
afresh (``python -m ...``), alternated in one run: the worker's own CPU seconds and the wall time from the start to
its first answer, and its memory once it has answered (resident, and proportional: a page shared with N processes
counts 1/N). The fork server's start, and each kind's imports in it, are measured once: the first forked start of
each kind (a Lab worker, then a heavy one) waits for them.

    python benchmarks/worker_start.py --runs 5 [--out benchmarks/results/worker_start_cpu.txt]

The heavy worker (``attn_core.heavy``) is asked for an unknown kind, which it refuses at once after loading the
model; the Lab worker (``attn_core train --serve``) is asked for a run of an unknown task, which it refuses at
once too: each answer comes right after the worker is ready. A sweep's child (``attn_core bench --jsonl``, no input)
times one small point for 0.01 s: its answer is that point's row."""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time

import psutil

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from attn_core import bench
from benchmarks.record import emit
from explorer.jobs import children, forked, heavy, sweeps
from explorer.lab import runs

SMALL = bench.Shape(batch=1, heads=2, d_head=16)
TINY = bench.SweepConfig(kernels=("full",), lengths=(32,), min_run_time=0.01, shape=SMALL)
WORKERS = {  # name: (command, its request or None for no input, what its answer's line holds)
    "heavy": (heavy.WORKER, {"kind": "unknown", "args": {}, "id": 1}, '"end"'),
    "lab": (runs.WORKER, {"task": "none"}, '"end"'),
    "sweep": (sweeps.command(TINY), None, '"row"'),
}


def one(name: str, fork: bool) -> dict:
    cmd, request, answer = WORKERS[name]
    start = time.perf_counter()
    proc = children.spawn(cmd, stdin=request is not None, own_group=True, fork=fork)
    assert isinstance(proc, forked.Forked) is fork, "the fork server did not serve a forked start"
    if request is not None:
        proc.stdin.write(json.dumps(request) + "\n")
        proc.stdin.flush()
    for line in proc.stdout:
        if line.startswith("{") and answer in line:
            break
    wall = time.perf_counter() - start
    p = psutil.Process(proc.pid)
    cpu = p.cpu_times()
    mem = p.memory_full_info()
    proc.kill()
    proc.wait(30)
    return {"wall": wall, "cpu": cpu.user + cpu.system, "rss": mem.rss / 2**20, "pss": mem.pss / 2**20}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    firsts = []
    for name in ("lab", "heavy"):  # the fork server starts with the first; each kind's imports come with its first
        wall = one(name, True)["wall"]
        server = psutil.Process(children._FORKS.server.process.pid)
        firsts.append(f"{name} {wall:.2f} s, the fork server's CPU then {sum(server.cpu_times()[:2]):.2f} s")
    seen: dict[tuple[str, str], list[dict]] = {}
    for _ in range(args.runs):
        for name in WORKERS:
            for fork in (False, True):
                seen.setdefault((name, "forked" if fork else "afresh"), []).append(one(name, fork))
    lines = [
        f"# worker_start.py --runs {args.runs}: {time.strftime('%Y-%m-%d %H:%M')} UTC, "
        + f"{os.cpu_count()} cores, Python {platform.python_version()}",
        "first forked start of each kind, wall (the fork server's start and that kind's imports): "
        + "; ".join(firsts),
        f"the fork server's resident memory then: {server.memory_info().rss / 2**20:.0f} MiB",
    ]
    for (name, how), rows in seen.items():
        parts = []
        for key, unit in (("cpu", "s"), ("wall", "s"), ("rss", "MiB"), ("pss", "MiB")):
            values = [r[key] for r in rows]
            spread = f"{min(values):.2f}-{max(values):.2f}" if unit == "s" else f"{min(values):.0f}-{max(values):.0f}"
            med = f"{statistics.median(values):.2f}" if unit == "s" else f"{statistics.median(values):.0f}"
            parts.append(f"{key} median {med} {unit} ({spread})")
        lines.append(f"{name:5} {how:6}  " + ";  ".join(parts))
    emit(lines, args.out)


if __name__ == "__main__":
    main()
