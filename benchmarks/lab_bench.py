"""The Lab's speed: each preset's runs through the page's machinery against a plain training loop.

For every preset, in rounds (interleaved, so a noisy moment of this shared machine falls on
both): the plain loop (``attn_core.lab.run`` in this process, one thread, as the worker runs it)
for A and B one after the other, and the page's path (``explorer.lab.runs.RUNS``: a warm worker
process per slot, snapshots streamed as JSON and parsed) for A and B started together, as a
learner's click starts them. Printed per preset: the medians over rounds, the page's overhead
per run over the plain loop, and the wall time of the preset on the page (both runs, side by
side: the time a learner waits for the result). Goals: overhead < 20 %, a preset < 20 s.

    python benchmarks/lab_bench.py [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import torch

from attn_core import lab
from explorer.lab.runs import RUNS


def plain(cfg) -> float:
    t0 = time.perf_counter()
    lab.run(cfg)
    return time.perf_counter() - t0


def page(cfgs) -> tuple[float, list[float]]:
    """Wall time until every run is done, and each run's own time (first snapshot request to done)."""
    t0 = time.perf_counter()
    runs = [RUNS.start(c, "bench") for c in cfgs]
    ends = [None] * len(runs)
    while any(e is None for e in ends):
        for i, r in enumerate(runs):
            if ends[i] is None and not r.active:
                if r.state != "done":
                    raise SystemExit(f"run {r.cfg} ended {r.state}: {r.message}")
                ends[i] = time.perf_counter() - t0
        time.sleep(0.01)
    for r in runs:  # the next round must compute again, not find these finished runs
        RUNS.runs.pop(r.cfg, None)
    return max(ends), ends


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    torch.set_num_threads(1)
    print(f"# torch {torch.__version__}, {os.cpu_count()} CPUs; {args.rounds} rounds, interleaved")
    page([lab.LabConfig(task="shift", steps=10)])  # start the workers once, as a server does at its first run
    page([lab.LabConfig(task="shift", steps=10, seed=1), lab.LabConfig(task="shift", steps=10, seed=2)])
    for name in lab.PRESETS:
        cfgs = [lab.validate(c) for c in lab.preset(name)]
        plain_t, page_t, wall_t = [], [], []
        for _ in range(args.rounds):
            plain_t.append(sum(plain(c) for c in cfgs) / len(cfgs))
            wall, each = page(cfgs)
            page_t.append(sum(each) / len(each))
            wall_t.append(wall)
        p, q, w = statistics.median(plain_t), statistics.median(page_t), statistics.median(wall_t)
        print(
            f"{name:<10} steps {cfgs[0].steps:5d}  plain loop {p:6.2f} s/run  page {q:6.2f} s/run "
            f"(overhead {100 * (q - p) / p:+5.1f} %)  preset on the page (A and B side by side) {w:6.2f} s "
            f"[{min(wall_t):.2f}–{max(wall_t):.2f}]",
            flush=True,
        )
    for r in list(RUNS.runs.values()):
        RUNS.stop(r)
    return 0


if __name__ == "__main__":
    sys.exit(main())
