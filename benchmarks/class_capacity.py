"""The capacity curve of a class in a predict lesson: ``class_load.py --lesson`` for each number of
students and replicas (through HAProxy, the replicas sharing one redis-server for the poll), one
configuration after another in an interleaved order, each run's JSON kept and a table written.

    python benchmarks/class_capacity.py --students 30,60,100 --replicas 1,2 --duration 75 \
        --out benchmarks/results/class_load/capacity

The machine's load average is noted before and after each run: on a shared machine it says how
much of the CPU the class could have had.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(students: int, replicas: int, args) -> dict:
    out = os.path.join(args.out, f"students{students}_replicas{replicas}.json")
    cmd = [sys.executable, os.path.join(ROOT, "benchmarks", "class_load.py"), "--replicas", str(replicas)]
    cmd += ["--students", str(students), "--duration", str(args.duration), "--lesson", "hall"]
    cmd += ["--sweep-after", "-1", "--linger", str(args.linger), "--json", out, "--seed", str(args.seed)]
    cmd += ["--pages", args.pages, "--warm", args.warm]
    load_before = os.getloadavg()
    t0 = time.time()
    subprocess.run(cmd, check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
    with open(out) as f:
        rep = json.load(f)
    rep["machine"] = {"loadavg_before": load_before, "loadavg_after": os.getloadavg(), "cpus": os.cpu_count()}
    rep["wall_s"] = round(time.time() - t0)
    with open(out, "w") as f:
        json.dump(rep, f, indent=1)
    return rep


def row(rep: dict) -> str:
    lat, chromium = rep["latency_ms"], rep["browser_key_to_chart_ms"]["all"]
    poll = rep.get("poll_answer_ms", {})
    errors = sum(rep["errors"].values())
    load = rep["machine"]
    return (
        f"{rep['students']:>8} {rep['replicas']:>8} {rep['reruns']:>7} {rep['reruns_per_s']:>6} "
        f"{lat['p50']:>7} {lat['p95']:>7} {lat['p99']:>7} {chromium['p50']!s:>8} {chromium['p95']!s:>8} "
        f"{errors:>6} {poll.get('n', 0):>7} {poll.get('p50')!s:>7} {poll.get('p99')!s:>7} "
        f"{load['loadavg_before'][0]:>6.1f} {load['loadavg_after'][0]:>6.1f}"
    )


HEADER = (
    "students replicas  reruns   /s   p50 ms  p95 ms  p99 ms  chr p50  chr p95 errors answers poll50  poll99 "
    " load0  load1"
)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--students", default="30,60,100")
    ap.add_argument("--replicas", default="1,2")
    ap.add_argument("--duration", type=float, default=75.0)
    ap.add_argument("--linger", type=float, default=10.0)
    ap.add_argument("--seed", type=int, default=0)
    # default: class_load.py's own, every page of the page table (the real-model pages again on the decoder); the
    # records before 2026-12-04 used a lecture's seven: steps,multihead,cross,tutorial,variants,complexity,model
    ap.add_argument("--pages", default="")
    ap.add_argument("--warm", default="1", choices=("1", "models", "0"), help="the replicas' ATTN_EXPLORER_WARM")
    ap.add_argument("--out", default=os.path.join(ROOT, "benchmarks", "results", "class_load", "capacity"))
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    configs = [(int(s), int(r)) for s in args.students.split(",") for r in args.replicas.split(",")]
    print(HEADER, flush=True)
    for students, replicas in configs:  # 1 and 2 replicas side by side at each class size
        print(row(run(students, replicas, args)), flush=True)


if __name__ == "__main__":
    main()
