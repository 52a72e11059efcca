"""How long the Explain page's computations take for a 16-piece sentence (issue 29's goals: every
method and leave-one-out < 1 s, integrated gradients at 32 steps < 1 s, flow < 1 s, Shapley at 10
words < 5 s), with torch on 2 threads (the server's setting) and on 1, interleaved in rounds.

    python benchmarks/explain_bench.py [--rounds 7] [--out benchmarks/results/explain_cpu.txt]

Each round runs every contender once, in the same order, so that a busy moment of the shared
machine falls on all of them; the record gives the median, the quartiles, min and max per contender,
and the load average before and after (the machine is shared with others while it runs).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from attn_core import models as pt
from attn_core.explain import explain as X
from attn_core.explain import methods, references
from attn_core.explain.sentence import make_item

SIXTEEN = "The volunteers quietly reorganised the cosy neighbourhood library again yesterday"  # 16 pieces
TEN_WORDS = SIXTEEN  # and 10 words


def contenders(pre) -> dict:
    item = make_item(pre, SIXTEEN)
    ten = make_item(pre, TEN_WORDS)

    def methods_and_loo():
        passed = references.full(pre, item)
        X.last_only(pre, passed)
        references.loo(pre, item, "attention", passed)

    def flow_only():
        methods.flow(X.head_mean(references.full(pre, item)))

    def ig32():
        references.integrated_gradients(pre, item.ids, references.full(pre, item).pooled[0], 32)

    def shapley10():
        references.shapley(pre, ten, "attention", references.full(pre, ten).pooled[0])

    def page_without_shapley():
        X.explain(pre, SIXTEEN, shapley=False, layers=True)

    return {
        "methods + leave-one-out": methods_and_loo,
        "flow": flow_only,
        "integrated gradients (32 steps)": ig32,
        "Shapley (10 words)": shapley10,
        "page's explanation (no Shapley)": page_without_shapley,
    }


def timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def summary(xs: list[float]) -> str:
    q = statistics.quantiles(xs, n=4) if len(xs) > 1 else [xs[0]] * 3
    return f"median {statistics.median(xs):.3f} s  IQR {q[0]:.3f}-{q[2]:.3f}  min {min(xs):.3f}  max {max(xs):.3f}"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "explain_cpu.txt"))
    args = ap.parse_args()
    pre = pt.load()
    item, ten = make_item(pre, SIXTEEN), make_item(pre, TEN_WORDS)
    assert item.n == 16 and ten.n_words == 10, (item.n, ten.n_words)
    cases = contenders(pre)
    threads = (2, 1)
    for n in threads:  # warm-up, not timed
        torch.set_num_threads(n)
        for fn in cases.values():
            fn()
    load_before = os.getloadavg()
    times = {(n, k): [] for n in threads for k in cases}
    for _ in range(args.rounds):
        for n in threads:
            torch.set_num_threads(n)
            for name, fn in cases.items():
                times[(n, name)].append(timed(fn))
    load_after = os.getloadavg()
    lines = [
        "Explain page computations (benchmarks/explain_bench.py), CPU, fp32, batch as the engine batches.",
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, torch {torch.__version__}",
        f"sentence: {item.n} pieces ({SIXTEEN!r}); Shapley sentence: {ten.n_words} words, {ten.n} pieces",
        f"rounds: {args.rounds}, contenders interleaved in each round, threads 2 then 1",
        (
            f"load average before {load_before[0]:.1f}, after {load_after[0]:.1f} (1-minute): the machine was shared "
            "with other engineers' builds and tests while this ran; timings under that load are not a quiet machine's."
        ),
        "",
    ]
    for n in threads:
        for name in cases:
            lines.append(f"threads {n}  {name:34s} {summary(times[(n, name)])}")
    text = "\n".join(lines) + "\n"
    print(text)
    Path(args.out).write_text(text)


if __name__ == "__main__":
    main()
