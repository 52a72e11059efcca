"""Do attention sinks form in the Lab's models, with softmax and with sigmoid attention?

Gu et al. 2025 ("When attention sink emerges in language models") find that a language model's heads come to put a
large weight on the first token (a sink: its mean weight over the later queries above ε = 0.3), and that sigmoid
attention, whose rows need not sum to 1, does not grow them. This trains the Lab's one causal task (``repeat``,
next-token prediction) with ``full`` (softmax) and ``sigmoid`` attention on held-out seeds, one thread a run, and
prints the head detector's ``first`` score (``attn_core.lab.training.head_scores``: the weight on key 0 over each
row's total, queries t >= 1, 128 held-out examples) for every head at the end, the largest over the run, and the
reference value a causal uniform head has (the mean of 1 / (t + 1)).

    python benchmarks/lab_sinks.py > benchmarks/results/lab_sinks_cpu.txt
"""

from __future__ import annotations

import argparse
import datetime
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

SEEDS = (101, 102, 103)  # not the default, not used while choosing the settings
EPSILON = 0.3  # Gu et al.'s threshold on a head's mean first-token weight


def one(kernel: str, seed: int, layers: int, heads: int, steps: int) -> dict:
    import torch

    from attn_core.lab import LabConfig
    from attn_core.lab.training import train

    torch.set_num_threads(1)
    cfg = LabConfig(task="repeat", kernel=kernel, layers=layers, heads=heads, steps=steps, seed=seed, every=100)
    t0 = time.perf_counter()
    snaps = list(train(cfg))
    firsts = [[h["first"] for layer in s.scores for h in layer] for s in snaps if s.scores]
    peak = max(max(f) for f in firsts)
    return {"acc": snaps[-1].val_acc, "end": firsts[-1], "peak": peak, "s": time.perf_counter() - t0}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--heads", type=int, default=2)
    p.add_argument("--steps", type=int, default=600)
    a = p.parse_args()
    rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False)
    L = 12  # the repeat task's length
    uniform = sum(1 / (t + 1) for t in range(1, L)) / (L - 1)
    print(f"# {__doc__.splitlines()[0]}")
    print(
        f"# {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC, commit {rev.stdout.strip()}, "
        f"load average {os.getloadavg()[0]:.1f}; task repeat (L = {L}), {a.layers} layers x {a.heads} heads, "
        f"{a.steps} steps, seeds {', '.join(map(str, SEEDS))}"
    )
    print(f"# a causal uniform head scores {uniform:.3f}; a sink, Gu et al.'s criterion, >= {EPSILON}")
    head = f"{'kernel':8} {'seed':>5} {'val_acc':>8} {'first, every head at the end':>40}"
    print(f"{head} {'largest in run':>15} {'s':>6}")
    sinks = {}
    for kernel in ("full", "sigmoid"):  # no timing claim: the seconds are only what a run took here
        sinks[kernel] = 0
        for seed in SEEDS:
            r = one(kernel, seed, a.layers, a.heads, a.steps)
            heads = " ".join(f"{f:.3f}" for f in r["end"])
            sinks[kernel] += sum(f >= EPSILON for f in r["end"])
            print(f"{kernel:8} {seed:>5} {r['acc']:>8.3f} {heads:>40} {r['peak']:>15.3f} {r['s']:>6.1f}", flush=True)
    total = len(SEEDS) * a.layers * a.heads
    print("# heads at or above ε at the end: " + ", ".join(f"{k} {n} of {total}" for k, n in sinks.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
