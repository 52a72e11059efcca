"""Why a head attends (attn_core.why): the atlas of every head and one weight's split, timed on the bundled
MiniLM and the shipped fortune-gpt, interleaved and repeated; medians, quartiles and the spread.

    python benchmarks/why_bench.py [--repeats 15] [--out benchmarks/results/why_cpu.txt]

Goals (issue "Why a head attends"): the atlas of all heads for 64 tokens < 0.5 s; one weight's source table
(with its causal check: a second forward pass) < 0.5 s.
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import torch
from record import emit, interleaved, summary

from attn_core import models as M
from attn_core import why

WORDS = (
    "the",
    "quick",
    "brown",
    "fox",
    "jumps",
    "over",
    "the",
    "lazy",
    "dog",
    "while",
    "seven",
    "tired",
    "students",
    "read",
    "about",
    "attention",
)


def text_of(m: M.Model, tokens: int) -> str:
    """A text of exactly ``tokens`` tokens for ``m`` (words repeated, then cut)."""
    words = [WORDS[0]]  # an empty text is refused
    while len(M.encode(m, " ".join(words)).ids) < tokens:
        words.append(WORDS[len(words) % len(WORDS)])
    while len(M.encode(m, " ".join(words)).ids) > tokens:
        words.pop()
    return " ".join(words)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=15)
    p.add_argument("--out", default="")
    args = p.parse_args()
    torch.set_num_threads(1)  # as the background worker runs it
    cases = {}
    for name in (M.BUNDLED, "fortune-gpt"):
        m = M.load(name)
        text = text_of(m, 64)
        n = len(M.encode(m, text).ids)
        last = m.layers - 1
        cases[f"{name} atlas, {n} tokens (forward included)"] = lambda m=m, t=text: why.atlas(
            m, M.forward(m, M.encode(m, t))
        )
        cases[f"{name} why, layer {last}, {n} tokens (forward, split, causal check)"] = (
            lambda m=m, t=text, q=n - 1, last=last: why.explain_weight(m, M.forward(m, M.encode(m, t)), last, 0, q, 1)
        )
    times = interleaved(cases, args.repeats)
    lines = summary("why_bench", times, args.repeats, torch.__version__)
    emit(lines, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
