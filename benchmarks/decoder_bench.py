"""A decoder on the real-model pages, for 64 tokens (issue 42's speed goals): a forward run with every attention
(< 0.1 s), one head taken apart through steps.attend (< 0.05 s), the all-heads ablation map on the next token
(< 2 s). The three are measured interleaved (one of each per round, so that a busy machine slows them alike);
medians with the spread (min, p90, max) are printed and judged against the goals.

    python benchmarks/decoder_bench.py [--model NAME] [--rounds 15] [--threads 1]

--model: an offered name (the shipped decoder when it is bundled, else the first decoder offered, e.g. one of
ATTN_EXPLORER_MODELS) or a directory. --threads: torch's threads (the heavy jobs' workers run with 1).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, ROOT)

import torch

from attn_core import models as M
from attn_core.interpret import ablate

TOKENS = 64
GOALS_S = {"forward": 0.1, "take_apart": 0.05, "ablation_map": 2.0}
TEXT = (
    "Once upon a time a small cat sat on a warm mat and watched the rain. "
    "生命短暂，先吃甜点。 The dog slept by the door while the kettle sang, "
    "and every token looked back at the tokens before it to guess the next one."
)


def first_decoder() -> str:
    for m in M.offered():
        if m.get("causal"):
            return m["name"]
    raise SystemExit("no decoder offered: bundle one or name one in ATTN_EXPLORER_MODELS, or pass --model DIR")


def prompt(pre, n: int) -> str:
    """A text of exactly ``n`` tokens for this model (the text repeated, then cut at a token boundary)."""
    ids = pre.tokenizer(TEXT * 8, add_special_tokens=False)["input_ids"]
    for cut in range(n, 0, -1):
        text = pre.tokenizer.decode(ids[:cut])
        if M.encode(pre, text).n_real == n:
            return text
    raise SystemExit(f"could not make a {n}-token prompt")


def spread(times: list[float]) -> str:
    s = sorted(times)
    p90 = s[min(len(s) - 1, round(0.9 * (len(s) - 1)))]
    low, high = s[0] * 1e3, s[-1] * 1e3
    return f"median {statistics.median(s) * 1e3:8.1f} ms  (min {low:.1f}, p90 {p90 * 1e3:.1f}, max {high:.1f})"


def measure(pre, text: str, rounds: int) -> dict[str, list[float]]:
    enc = M.encode(pre, text)
    layer, head = pre.layers - 1, pre.heads - 1
    w = M.head_weights(pre, layer, head)
    run = M.forward(pre, enc)
    steps = {
        "forward": lambda: M.forward(pre, M.encode(pre, text)),
        "take_apart": lambda: M.take_apart(run, M.head_weights(pre, layer, head), layer, head),
        "ablation_map": lambda: ablate.next_token_importance(pre, text),
    }
    for fn in steps.values():  # warm: the first call builds caches
        fn()
    times: dict[str, list[float]] = {k: [] for k in steps}
    for _ in range(rounds):
        for name, fn in steps.items():
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
    diff = M.take_apart(run, w, layer, head).max_diff
    print(f"head {layer}:{head} recomputed, max |attn_core - model| = {diff:.2e}")
    return times


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="")
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    pre = M.load(args.model or first_decoder())
    if not pre.causal:
        raise SystemExit(f"{pre.name} is not a decoder")
    text = prompt(pre, TOKENS)
    shown = os.path.basename(pre.path.rstrip(os.sep)) if pre.path else pre.name  # no path of this machine
    print(f"torch {torch.__version__}, {args.threads} thread(s), {platform.processor() or platform.machine()}")
    print(
        f"model {shown} ({pre.family}): {pre.layers} layers x {pre.heads} heads, d_model {pre.d_model}, "
        f"{pre.n_params:,} parameters; {TOKENS} tokens; {args.rounds} interleaved rounds"
    )
    times = measure(pre, text, args.rounds)
    ok = True
    for name, ts in times.items():
        met = statistics.median(ts) < GOALS_S[name]
        ok &= met
        print(f"{name:13s} {spread(ts)}  goal < {GOALS_S[name] * 1e3:.0f} ms: {'met' if met else 'NOT met'}")
    print(f"all-heads map = {pre.layers * pre.heads} heads ablated one at a time")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
