"""What a minimal pair costs the page that shows it, per rerun (explorer.model.pair_view): the background job's plain
result read for one head (its maps on the shared tokens and B − A, where the changed word's attention went, the line
of words, every head ranked) and its four charts built, beside the Real model page's own head view built from a
run it has (one heatmap of the same head, the page's cheapest chart of it). The job itself (both sentences run) is
timed by pair_bench.py; here, what every rerun of a page pays once the result has arrived, and the result's size as
the jobs' bounded keeping counts it. Interleaved and repeated; medians, quartiles and the spread.

    python benchmarks/pair_view_bench.py [--repeats 30] [--out benchmarks/results/pair_view_cpu.txt]
"""

from __future__ import annotations

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import torch
from record import emit, interleaved, summary

from attn_core import models as M
from attn_core.interpret import minimal_pair as mp
from explorer import figures as fig
from explorer.base.cache import nbytes
from explorer.model import pair_view as pv

A = "The animal didn't cross the street because it was too tired."
B = "The animal didn't cross the street because it was too wide."
STYLE = fig.Style()


def section(m, r: dict) -> None:
    """What the section does with a result on a rerun: the top head read and drawn, every head ranked."""
    top = r["ranking"][0]
    layer, head = top["layer"], top["head"]
    pv.words(r, layer, head, m.tokenizer)
    w = pv.query_weights(r, layer, head)
    fig.grouped_bars({"A": w["a"], "B": w["b"]}, fig.labels(pv.key_names(r)), style=STYLE, title="q")
    view = mp.head_view(r, layer, head)
    labels = fig.labels(view["labels"])
    for field in ("a_shared", "b_shared", "diff"):
        fig.heatmap(view[field], labels, labels, style=STYLE, title=field, weights=field != "diff")
    pv.ranking_rows(r["ranking"])


def head_chart(m, run, layer: int, head: int) -> None:
    """The Real model page's heatmap of one head, from the run it has cached."""
    labels = fig.labels(list(run.encoding.pieces))
    fig.heatmap(run.attentions[layer, head], labels, labels, style=STYLE, title="head", weights=True)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=30)
    p.add_argument("--out", default="")
    args = p.parse_args()
    torch.set_num_threads(1)
    cases, sizes = {}, []
    for m in (M.load(), M.load("fortune-gpt")):
        r = json.loads(json.dumps(mp.minimal_pair(m, A, B)))  # as the job hands it over
        run = M.forward(m, M.encode(m, A))
        top = r["ranking"][0]
        cases[f"{m.name} pair section, one rerun"] = lambda m=m, r=r: section(m, r)
        cases[f"{m.name} one head's heatmap (Real model)"] = lambda m=m, run=run, t=top: head_chart(
            m, run, t["layer"], t["head"]
        )
        sizes.append(f"{m.name} result kept: {nbytes(r) / 2**20:.2f} MiB ({len(r['a']['ids'])} tokens)")
    times = interleaved(cases, args.repeats)
    emit(summary("pair_view_bench", times, args.repeats, torch.__version__) + sizes, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
