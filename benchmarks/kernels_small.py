"""The compiled CPU kernels against their PyTorch paths at the sizes the pages compute (figures, not a test).

The pages run the kernels on a sentence: L = 8 .. 1024 tokens, a few heads, small d_head. For each kernel
and length, the compiled kernel (``attn_core.kernels.native``) and the PyTorch path (``native.disabled()``,
what runs where no C++ compiler is) take turns over the rounds, each round timing a batch of calls of both;
the outputs are compared first. Printed: the median over rounds of the time per call, the spread (min–max of
the round medians) and the ratio.

Run:  python benchmarks/kernels_small.py [--rounds 7] [--threads 1]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import torch

from attn_core.kernels import KERNELS, native

CASES = [  # kernel, its options
    ("sliding_window", {"window": 3}),
    ("dilated", {"window": 2, "dilation": 2}),
    ("global_window", {"window": 2, "global_tokens": 1}),
    ("linear_elu", {}),
    ("causal_linear", {}),
]


def per_call(fn, n: int) -> float:
    t = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - t) / n


def contenders(fn, q, k, v, opts):
    """The kernel as it runs here (compiled) and on its PyTorch path."""

    def theirs():
        with native.disabled():
            return fn(q, k, v, **opts)

    return (lambda: fn(q, k, v, **opts)), theirs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--lengths", default="12,64,256,1024")
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--d-head", type=int, default=16)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    if native.library() is None:
        sys.exit(f"no compiled kernels here: {native.why()}")
    print(
        f"# torch {torch.__version__}, threads {args.threads}, B=1 H={args.heads} d_head={args.d_head} fp32; "
        f"load average at the start {os.getloadavg()[0]:.1f}"
    )
    for name, opts in CASES:
        for L in map(int, args.lengths.split(",")):
            g = torch.Generator().manual_seed(L)
            q, k, v = (torch.randn(1, args.heads, L, args.d_head, generator=g) for _ in range(3))
            ours, theirs = contenders(KERNELS[name].fn, q, k, v, opts)
            gap = (ours() - theirs()).abs().max().item()
            if not gap < 1e-4:
                sys.exit(f"{name} L={L}: the two paths differ by {gap}")
            n = max(5, int(0.02 / max(per_call(theirs, 3), 1e-6)))  # a batch of ~20 ms per contender
            rounds = {"compiled": [], "PyTorch path": []}
            for _ in range(args.rounds):
                rounds["compiled"].append(per_call(ours, n))
                rounds["PyTorch path"].append(per_call(theirs, n))
            med = {k: statistics.median(t) * 1e6 for k, t in rounds.items()}
            spread = {k: (min(t) * 1e6, max(t) * 1e6) for k, t in rounds.items()}
            ratio = med["PyTorch path"] / med["compiled"]
            print(
                f"{name:15s} L={L:5d}  compiled {med['compiled']:8.1f} us ({spread['compiled'][0]:.1f}–"
                f"{spread['compiled'][1]:.1f})  PyTorch path {med['PyTorch path']:8.1f} us "
                f"({spread['PyTorch path'][0]:.1f}–{spread['PyTorch path'][1]:.1f})  "
                f"{ratio:.2f}x {'faster' if ratio > 1 else 'slower'}  (max |Δ| {gap:.1e})"
            )
    print(f"# load average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
