"""The query-key map of one head with the shipped probe set (Real model, "Add the probe set's points"), timed on
the bundled MiniLM and the shipped fortune-gpt: cold and cached, interleaved and repeated; median, p10 and p90.

    python benchmarks/qk_map.py [--repeats 9] [--out benchmarks/results/qk_map_cpu.txt]

- cold: the probe set's 180 sentences through the model up to the head's layer (one batched forward pass stopped
  there, ``why.qkprobe.probe_states``),
  the head's queries and keys of every token (``probe_queries_keys``) and the map of all of them with this
  sentence's (``why.qk_map`` with ``more``): what the first learner to ask pays, once per model and server;
- states cached: another head of a layer already run (the projections and the map);
- cached: the map alone, from the cached points (what every later rerun with the option on computes);
- figure: the Plotly figure of those ~2 × 2,000-3,000 points (built on every rerun the map is open).

Goal (issue "Why a head attends", section 2): the map for one head with the probe set < 1 s.
Torch's default threads (the page computes it in its own run, not in a one-thread background worker).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import torch
from record import emit

from attn_core import models as M
from attn_core.interpret import corpus
from attn_core.why import qk_map, qkprobe

SENTENCE = "The animal didn't cross the street because it was too tired"
HEADS = {M.BUNDLED: (2, 5), "fortune-gpt": (1, 1)}


def cases_for(name: str) -> dict:
    """The four timed steps of one model, each a function of nothing."""
    from explorer import figures as fig

    m = M.load(name)
    layer, head = HEADS[name]
    sentences = corpus.sentences()
    ht = M.take_apart(M.forward(m, M.encode(m, SENTENCE)), M.head_weights(m, layer, head), layer, head)
    n = ht.Q.shape[-2]  # no padding: every token is real
    Q, K, scores, mask = ht.Q[0], ht.K[0], ht.scaled_scores[0], ht.mask
    states = qkprobe.probe_states(m, sentences, layer)
    points = qkprobe.probe_queries_keys(m, states, head)
    made = qk_map(Q, K, scores, mask, more=(points.Q, points.K))
    labels = fig.labels(list(ht.tokens[:n]))

    def cold():
        s = qkprobe.probe_states(m, sentences, layer)
        p = qkprobe.probe_queries_keys(m, s, head)
        return qk_map(Q, K, scores, mask, more=(p.Q, p.K))

    def states_cached():
        p = qkprobe.probe_queries_keys(m, states, head - 1)  # another head of the same layer
        return qk_map(Q, K, scores, mask, more=(p.Q, p.K))

    def figure():
        more = (made.more_queries, made.more_keys)
        row = ht.attn[0, 1, :n]
        return fig.qk_scatter(made.queries, made.keys, labels, labels, row, focus=1, style=fig.Style(), more=more)

    total = 2 * (n + points.Q.shape[0])
    return {
        f"{name} L{layer}H{head} cold ({len(sentences)} sentences, {total} points)": cold,
        f"{name} states cached (another head of the layer: projections + map)": states_cached,
        f"{name} cached (the map alone)": lambda: qk_map(Q, K, scores, mask, more=(points.Q, points.K)),
        f"{name} figure ({total} points)": figure,
    }


def commit() -> str:
    try:
        return subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=9)
    p.add_argument("--out", default="")
    args = p.parse_args()
    load_before = os.getloadavg()
    cases = {k: fn for name in HEADS for k, fn in cases_for(name).items()}
    times: dict[str, list[float]] = {k: [] for k in cases}
    for fn in cases.values():
        fn()  # warm up
    for _ in range(args.repeats):  # interleaved: every case once per round
        for k, fn in cases.items():
            t0 = time.perf_counter()
            fn()
            times[k].append((time.perf_counter() - t0) * 1000)
    load_after = os.getloadavg()
    head = (
        f"# qk_map {time.strftime('%Y-%m-%d %H:%M')} {platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} CPUs, torch {torch.__version__}, {torch.get_num_threads()} threads, commit {commit()}, "
        f"{args.repeats} interleaved rounds after a warm-up, load average before {load_before[0]:.2f} "
        f"after {load_after[0]:.2f}"
    )
    lines = [
        head,
        "# goal: the map for one head with the probe set < 1 s (cold: the probe set's forward pass included)",
    ]
    for k, ts in times.items():
        q = statistics.quantiles(ts, n=10)
        lines.append(f"{k}: median {statistics.median(ts):.1f} ms, p10 {q[0]:.1f} ms, p90 {q[8]:.1f} ms")
    emit(lines, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
