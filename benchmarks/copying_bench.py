"""Next token's "copying what came before" view, timed on the shipped decoder: the engine's whole computation (one
batched forward of 1 + layers x heads rows: the losses, the stripe, every head ablated) cold for each kind of
repeating prompt, as the background worker computes it (one thread); interleaved and repeated; medians, quartiles
and the spread. A second student opening the same link gets the same job's result (``explorer.jobs.heavy`` shares a
job by its key): nothing is computed again.

    python benchmarks/copying_bench.py [--repeats 15] [--out benchmarks/results/copying_cpu.txt]

Goal (issue "A decoder worth teaching with"): the copying view < 1 s warm (its job, once computed, is shared).
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import torch
from record import emit, interleaved, summary

from attn_core import models as M
from attn_core.interpret import copying as cp

PROMPT = "The cat sat on the mat because it was tired, and the dog sat on the log."


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=15)
    p.add_argument("--out", default="")
    args = p.parse_args()
    torch.set_num_threads(1)  # as a server thread shares the machine
    m = M.load("fortune-gpt")
    cases = {}
    for kind in cp.KINDS:
        ids = cp.repeated_prompt(m, kind, text=PROMPT, seed=3)
        cases[f"{kind}, {len(ids)} tokens"] = lambda ids=ids: cp.copying(m, ids)
    times = interleaved(cases, args.repeats)
    lines = summary("copying_bench", times, args.repeats, torch.__version__)
    emit(lines, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
