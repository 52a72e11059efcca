"""The Vision page's costs: what a rerun computes in the page (masks, receptive field, the held-out digit) and the
tiny models' 600-step training: in this process (one thread, as the worker) and as the page runs it, Play to done
through the Lab's worker at the lowest priority (``explorer.vision.runs``: its snapshots, their weights as JSON, the
first run of a fresh worker paying for its start); interleaved, repeated.

    python benchmarks/vision_bench.py [--repeats 3] [--out benchmarks/results/vision_cpu.txt]

Goals (issue "Attention over images"): a preset's training run under 20 s on this 2-core CPU; the page's rerun
within Step by step's budget.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import torch
from record import emit

from attn_core import vision as V
from attn_core.vision.model import VisionConfig, digits, train
from explorer.vision.runs import VISION_RUNS


def page_parts() -> None:
    """What pages/12_vision.py computes itself at patch 1, window 4 (the largest grid it offers: 64 tokens)."""
    grid = (8, 8)
    digits(0)
    for s in (0, 2):
        V.window_ids(grid, 4, s)
    V.window_mask(grid, 4, 2)
    masks = [V.window_mask(grid, 4, 2 if i % 2 else 0) for i in range(3)]
    for k in (1, 2, 3):
        V.receptive_field(masks[:k])
    V.flops((56, 56), 7, 96)


def through_worker(cfg: VisionConfig) -> float:
    """Seconds from Play to the run's end, through the page's runs."""
    t0 = time.perf_counter()
    run = VISION_RUNS.start(cfg, "bench")
    while run.active:
        VISION_RUNS.get(cfg, "bench")
        time.sleep(0.02)
    if run.state != "done":
        raise SystemExit(f"the run ended {run.state}: {run.message}")
    return time.perf_counter() - t0


def timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--out", default="")
    args = p.parse_args()
    torch.set_num_threads(1)
    page_parts()  # warm
    runs = {"vit": [], "swin": []}
    accs = {"vit": [], "swin": []}
    worker = {"vit": [], "swin": []}  # Play to done (each round a seed not trained before: never a kept run)
    first, page = None, []
    for i in range(args.repeats):
        for model, times in runs.items():  # interleaved
            t0 = time.perf_counter()
            r = train(VisionConfig(model=model, steps=600, seed=0))
            times.append(time.perf_counter() - t0)
            accs[model].append(r["final"]["val_acc"])
            took = through_worker(VisionConfig(model=model, steps=600, seed=100 + i))
            if first is None:  # a fresh worker: torch's import and the model code's
                first = took
            else:
                worker[model].append(took)
        page += [timed(page_parts) * 1000 for _ in range(20)]
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False)
    head = (
        f"# vision_bench {time.strftime('%Y-%m-%d %H:%M')} torch {torch.__version__}, 1 thread, "
        f"{args.repeats} interleaved rounds, load average {os.getloadavg()[0]:.2f} (1 min), "
        f"{os.cpu_count()} CPUs ({platform.machine()}, shared), commit {commit.stdout.strip() or '?'}"
    )
    lines = [head]
    for model, ts in runs.items():
        lines.append(
            f"{model} training, 600 steps, batch 64: median {statistics.median(ts):.1f} s, "
            f"min {min(ts):.1f} s, max {max(ts):.1f} s; held-out accuracy {accs[model][0]:.3f} (seed 0)"
        )
    for model, ts in worker.items():
        if ts:
            lines.append(
                f"{model} Play to done through a warm worker (nice 19, snapshots every 50 steps): "
                f"median {statistics.median(ts):.1f} s, max {max(ts):.1f} s, n={len(ts)}"
            )
    lines.append(f"the first run, a fresh worker's start included: {first:.1f} s")
    q = statistics.quantiles(page, n=20)
    lines.append(
        f"page's own computations (patch 1, window 4): median {statistics.median(page):.1f} ms, p95 {q[18]:.1f} ms"
    )
    emit(lines, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
