"""What one rerun of the Next token page computes, timed on this machine: each cached result of
``explorer.nexttoken.runs`` computed afresh (the cache cleared before each repeat), and the generation and branches
its background worker computes (``attn_core.nexttoken.plain``, what ``attn_core.heavy`` runs), for a prompt of
--tokens tokens, and the whole page's compute at once. Each is run --repeat times; the median and the largest are
printed.

    python benchmarks/nexttoken_page.py [--model NAME] [--tokens 64] [--max-new 8] [--repeat 7]

A class shares one server: the page computes each of these once per setting (the cache is server-wide), so the
figure that matters is the first learner's wait for a new prompt or a new seed, the sum at the bottom.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from attn_core import nexttoken as nt
from attn_core.nexttoken import plain
from explorer.nexttoken import runs
from explorer.nexttoken.settings import Choice

TEXT = "once upon a time there was a small cat who liked to sleep in the warm sun by the door"
WORDS = TEXT.split()


def prompt_of(m, tokens: int) -> str:
    """Words repeated until the prompt has ``tokens`` tokens (at most the model's context)."""
    words, text = [], ""
    while len(nt.encode(m, text or "a").ids) < min(tokens, m.max_positions - 1):
        words.append(WORDS[len(words) % len(WORDS)])
        text = " ".join(words)
    return text


def timed(fn, repeat: int) -> tuple[float, float]:
    out = []
    for _ in range(repeat):
        for cache in (runs.prediction, runs.forward, runs.lens, runs.effects):
            cache.clear()
        runs.head_vocab.clear()
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return statistics.median(out), max(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="")
    ap.add_argument("--tokens", type=int, default=64)
    ap.add_argument("--max-new", type=int, default=8)
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    name = args.model or nt.decoders()[0]
    m = runs.decoder(name)
    text = prompt_of(m, args.tokens)
    c = Choice(name, text, 1.0, 0, 1.0, 0, False)
    L = len(nt.encode(m, text).ids)
    token = runs.prediction(c)["chosen"]["id"]
    request = {"prompt": text, "temperature": 1.0, "top_k": 0, "top_p": 1.0, "seed": 0, "greedy": False}
    request |= {"max_new": args.max_new, "step": 0, "n_new": runs.N_NEW_BRANCH}
    parts = {
        "prediction (distribution, every position)": lambda: runs.prediction(c),
        f"generation ({args.max_new} tokens, cache, check)": lambda: plain.generation(m, request),
        "branches (3 × 4 greedy tokens)": lambda: plain.branches_at(m, request),
        "logit lens (forward + every layer)": lambda: runs.lens(name, text),
        "direct effects (forward + every head)": lambda: runs.effects(name, text, token),
        "one head's vocabulary (forward + head)": lambda: runs.head_vocab(name, text, 0, 0, token),
    }

    def page() -> None:
        for fn in parts.values():
            fn()

    print(f"{m.name}: {m.family}, {m.layers} layers × {m.heads} heads, d_model {m.d_model}; prompt of {L} tokens")
    for label, fn in [*parts.items(), ("the whole page's compute (one rerun, nothing cached)", page)]:
        med, worst = timed(fn, args.repeat)
        print(f"  {label:<56} median {med * 1000:8.1f} ms   max {worst * 1000:8.1f} ms")


if __name__ == "__main__":
    main()
