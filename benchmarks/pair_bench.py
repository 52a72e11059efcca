"""Minimal pairs timed as the background worker computes them (one thread): the comparison (``minimal_pair``: both
sentences run, aligned, every query's movement, the next-token distributions) on MiniLM and on the shipped decoder,
beside the two views it shows (``models.forward`` on each sentence, what the Real model page's head view runs): a
comparison should cost about those two views; then the decoder's ablation gap (every head ablated in both runs) and
the heads matched on the probe set (each model against a copy of its weights: both sides run, as for two
checkpoints). Interleaved and repeated; medians,
quartiles and the spread. A second student asking for the same pair gets the same job's result (``explorer.jobs``
shares a job by its key): nothing is computed again.

    python benchmarks/pair_bench.py [--repeats 15] [--match-repeats 5] [--out benchmarks/results/pair_cpu.txt]
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import torch
from record import emit, interleaved, summary

from attn_core import models as M
from attn_core.interpret import head_match as hm
from attn_core.interpret import minimal_pair as mp

A = "The animal didn't cross the street because it was too tired."
B = "The animal didn't cross the street because it was too wide."


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=15)
    p.add_argument("--match-repeats", type=int, default=5, dest="match_repeats")
    p.add_argument("--out", default="")
    args = p.parse_args()
    torch.set_num_threads(1)  # as the worker runs: one core per worker
    enc, dec = M.load(), M.load("fortune-gpt")
    cases = {}
    for m in (enc, dec):
        n = len(M.encode(m, A).ids)
        cases[f"{m.name} pair, {n} tokens"] = lambda m=m: mp.minimal_pair(m, A, B)
        cases[f"{m.name} two views (forward A, forward B)"] = lambda m=m: (
            M.forward(m, M.encode(m, A)),
            M.forward(m, M.encode(m, B)),
        )
    cases[f"{dec.name} ablation gap ({dec.layers * dec.heads} heads, both sentences)"] = lambda: mp.ablation_gap(
        dec, A, B
    )
    times = interleaved(cases, args.repeats)
    lines = summary("pair_bench", times, args.repeats, torch.__version__)
    n = len(hm.probe_items())
    match = {}
    for m in (dec, enc):
        twin = dataclasses.replace(m, hf=copy.deepcopy(m.hf))  # another checkpoint: its side is run too
        name = f"{m.name} heads matched with a copy ({n} probe sentences, roles)"
        match[name] = lambda m=m, t=twin: hm.match_models(m, t)
    times = interleaved(match, args.match_repeats)
    lines += summary("pair_bench (matching)", times, args.match_repeats, torch.__version__)[1:]
    emit(lines, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
