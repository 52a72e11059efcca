"""Inside the model's cost on this machine: the 72-head importance map and the patching map for a
32-piece sentence (goals: < 2 s and < 3 s), the greedy pruning curve, and the probe statistics
(computed once per server, then a cache hit).

Contenders for the importance map, interleaved round by round so that the machine's load falls on
all of them alike: ``layerwise`` (what the app runs: for each layer, its 12 ablations batched and
started from that layer's input), ``one batch`` (72 ablated copies run through all six layers in one
forward pass), ``one by one`` (72 separate runs). All three compute the same map (checked first).

    python benchmarks/interpret_bench.py            # writes benchmarks/results/interpret_cpu.txt
"""

import os
import statistics
import sys
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, ROOT)

import torch

from attn_core import models as pt
from attn_core.interpret import ablate, hooks, patch, prune

SENTENCE = (
    "The old lighthouse keeper watched the grey ships sail past the harbour while his daughter "
    "painted the wooden fence behind their small house near the quiet green river bank today"
)
ROUNDS = 7
OUT = os.path.join(ROOT, "benchmarks", "results", "interpret_cpu.txt")


def one_batch(pre, text):
    b, _ = hooks.batch_of(pre, [text])
    base = hooks.run(pre, b).embedding
    rows = pre.layers * pre.heads
    modes = torch.zeros(rows, pre.layers, pre.heads, dtype=torch.int8)
    for i, (layer, head) in enumerate(ablate.all_heads(pre)):
        modes[i, layer, head] = hooks.ZERO
    big = hooks.Batch(b.ids.expand(rows, -1), b.real.expand(rows, -1), b.keep.expand(rows, -1))
    emb = hooks.run(pre, big, hooks.Plan(modes, big.keep)).embedding
    return (1 - hooks.cosine(emb, base)).float().view(pre.layers, pre.heads)


def one_by_one(pre, text):
    out = torch.zeros(pre.layers, pre.heads)
    for layer, head in ablate.all_heads(pre):
        out[layer, head] = 1 - ablate.intervene(pre, text, [(layer, head)], "zero").cosine
    return out


def stats(xs):
    xs = sorted(xs)
    q = statistics.quantiles(xs, n=4) if len(xs) > 1 else [xs[0]] * 3
    p90 = xs[min(len(xs) - 1, round(0.9 * (len(xs) - 1)))]
    return (
        f"median {statistics.median(xs):.3f} s  IQR {q[0]:.3f}-{q[2]:.3f}  p90 {p90:.3f}  "
        f"min {xs[0]:.3f}  max {xs[-1]:.3f}"
    )


def timed(fn):
    t = time.perf_counter()
    value = fn()
    return time.perf_counter() - t, value


class Record(list):
    """Lines that are written to the record as they come (a run cut short still leaves its rounds)."""

    def append(self, line: str) -> None:
        super().append(line)
        print(line, flush=True)
        with open(OUT, "w") as f:
            f.write("\n".join(self) + "\n")


def main() -> None:
    pre = pt.load("")
    n = pt.encode(pre, SENTENCE).n_real
    corrupted = SENTENCE.replace("daughter", "brother")
    assert pt.encode(pre, corrupted).n_real == n
    lines = Record()
    for line in (
        "Inside the model (attn_core.interpret), CPU, fp32, torch threads: " + str(torch.get_num_threads()),
        f"sentence: {n} pieces; load average before: {os.getloadavg()}",
        "NOTE: this machine is shared: other engineers' tests, servers and benchmarks ran at the same time,",
        "so every figure here is an upper bound for a quiet machine; the load average is printed per round.",
    ):
        lines.append(line)
    ref = ablate.importance(pre, SENTENCE)["importance"]
    for name, fn in (("one batch", one_batch), ("one by one", one_by_one)):
        diff = float((fn(pre, SENTENCE) - ref).abs().max())
        lines.append(f"check: {name} vs layerwise, max |difference| = {diff:.2e}")
        assert diff < 1e-5
    contenders = {
        "importance, layerwise (the app)": lambda: ablate.importance(pre, SENTENCE),
        "importance, one batch of 72": lambda: one_batch(pre, SENTENCE),
        "patching map, layerwise (the app)": lambda: patch.patch_map(pre, SENTENCE, corrupted),
    }
    times = {k: [] for k in contenders}
    for r in range(ROUNDS):
        for k, fn in contenders.items():
            times[k].append(timed(fn)[0])
        lines.append(f"round {r}: load average {os.getloadavg()[0]:.1f}")
    lines.append("")
    for k, xs in times.items():
        lines.append(f"{k:36} {stats(xs)}  ({ROUNDS} rounds)")
    once, _ = timed(lambda: one_by_one(pre, SENTENCE))
    lines.append(f"{'importance, 72 runs one by one':36} {once:.3f} s  (timed once, after the rounds)")
    goal_imp = statistics.median(times["importance, layerwise (the app)"]) < 2.0
    goal_patch = statistics.median(times["patching map, layerwise (the app)"]) < 3.0
    lines.append(f"goal importance < 2 s (median): {'met' if goal_imp else 'NOT met'}")
    lines.append(f"goal patching < 3 s (median): {'met' if goal_patch else 'NOT met'}")
    from explorer.jobs.heavy import HEAVY
    from explorer.model import inside

    def head_stats() -> dict:  # the page's background job (a worker process), waited for
        job = HEAVY.ask(*inside.head_stats())
        while job.active:
            time.sleep(0.01)
        return job.result

    first, stats_value = timed(head_stats)
    again, _ = timed(head_stats)
    lines.append(
        f"probe statistics ({stats_value['sentences']['select'] + stats_value['sentences']['score']} sentences, "
        f"sinks and the [SEP] test, in the page's background worker, its start included): first call {first:.2f} s, "
        f"then the kept job {1000 * again:.3f} ms"
    )
    t_prune, curve = timed(lambda: prune.prune_curve(pre))
    lines.append(
        f"pruning curve ({curve['sentences']} sentences, {len(curve['removed']) - 1} steps): {t_prune:.1f} s once"
    )
    lines.append(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
