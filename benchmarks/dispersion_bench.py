"""Dispersion (Veličković et al. 2024, "softmax is not enough"): the largest weight softmax gives one key whose score
is Δ above n − 1 others, with and without their adaptive temperature, at n = 16, 256, 4096 (figures, not a test).

Each figure is ``attn_core.why.spread.dispersion``: softmax run on the float64 score vector [Δ, 0, ..., 0], beside the
closed form e^Δ / (e^Δ + n − 1); the adaptive temperature's β and the row's entropy are printed with it. Also timed:
the Variants page's whole curve (12 values of n, both rules), median and spread over the rounds.

    python benchmarks/dispersion_bench.py [--gaps 1 2 4] [--rounds 15] [--out benchmarks/results/dispersion_cpu.txt]
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import torch

from attn_core.why import spread as sp


def _commit() -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False)
        return out.stdout.strip() or "unknown"
    except OSError:
        return "unknown"


def table(gaps: list[float]) -> list[str]:
    lines = ["gap      n   softmax   closed form   adaptive   beta   H(softmax) nats"]
    for gap in gaps:
        plain = {r["n"]: r for r in sp.dispersion(gap, sp.QUOTED_NS)}
        adapt = {r["n"]: r for r in sp.dispersion(gap, sp.QUOTED_NS, adaptive=True)}
        for n in sp.QUOTED_NS:
            p, a = plain[n], adapt[n]
            lines.append(
                f"{gap:<5g} {n:>5}   {p['max_weight']:.5f}   {sp.closed_form(gap, n):.5f}       "
                f"{a['max_weight']:.5f}    {a['beta']:.3f}  {p['entropy']:.3f}"
            )
    return lines


def timing(rounds: int) -> str:
    def once() -> None:
        sp.dispersion(2.0)
        sp.dispersion(2.0, adaptive=True)

    once()
    runs = []
    for _ in range(rounds):
        t = time.perf_counter()
        once()
        runs.append((time.perf_counter() - t) * 1e3)
    q = statistics.quantiles(runs, n=4)
    return (
        f"the page's curve (12 n, both rules): median {statistics.median(runs):.2f} ms, "
        f"quartiles {q[0]:.2f}–{q[2]:.2f}, min–max {min(runs):.2f}–{max(runs):.2f} ({rounds} rounds)"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gaps", type=float, nargs="+", default=[1.0, 2.0, 4.0])
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    torch.set_num_threads(1)
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    head = [
        f"# benchmarks/dispersion_bench.py, {now}, commit {_commit()}, {platform.machine()} {os.cpu_count()}-core CPU",
        f"# torch {torch.__version__}, threads 1",
        "# The largest weight at a score gap Δ over n keys: softmax (run on [Δ, 0, ..., 0] in float64), the closed",
        "# form e^Δ/(e^Δ+n-1), and the adaptive temperature (arXiv 2410.01104's published rule: β = max(p(H), 1) for",
        "# H > 0.5 nats, p = -0.037 H^4 + 0.481 H^3 - 2.3 H^2 + 4.917 H - 1.791). p < 1 above H = 5.94 nats: where",
        "# softmax's entropy is above that (the last column), β = 1 and the adaptive figure equals softmax's.",
    ]
    lines = [*head, *table(args.gaps), "# " + timing(args.rounds)]
    text = "\n".join(lines) + "\n"
    print(text, end="")
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text)


if __name__ == "__main__":
    main()
