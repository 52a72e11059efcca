"""The Vision page's costs: what a rerun computes in the page (masks, receptive field, the held-out digit) and the
tiny models' 600-step training that runs as a background job; interleaved, repeated, one thread (as the worker).

    python benchmarks/vision_bench.py [--repeats 3] [--out benchmarks/results/vision_cpu.txt]

Goals (issue "Attention over images"): a preset's training run under 20 s on this 2-core CPU; the page's rerun
within Step by step's budget.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import torch

from attn_core import vision as V
from attn_core.vision.model import VisionConfig, digits, train


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
    page = []
    for _ in range(args.repeats):
        for model, times in runs.items():  # interleaved
            t0 = time.perf_counter()
            r = train(VisionConfig(model=model, steps=600, seed=0))
            times.append(time.perf_counter() - t0)
            accs[model].append(r["final"]["val_acc"])
        page += [timed(page_parts) * 1000 for _ in range(20)]
    head = (
        f"# vision_bench {time.strftime('%Y-%m-%d %H:%M')} torch {torch.__version__}, 1 thread, "
        f"{args.repeats} interleaved rounds, load average {os.getloadavg()[0]:.2f}"
    )
    lines = [head]
    for model, ts in runs.items():
        lines.append(
            f"{model} training, 600 steps, batch 64: median {statistics.median(ts):.1f} s, "
            f"min {min(ts):.1f} s, max {max(ts):.1f} s; held-out accuracy {accs[model][0]:.3f} (seed 0)"
        )
    q = statistics.quantiles(page, n=20)
    lines.append(
        f"page's own computations (patch 1, window 4): median {statistics.median(page):.1f} ms, p95 {q[18]:.1f} ms"
    )
    print("\n".join(lines))
    if args.out:
        with open(args.out, "a", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
