"""The Real model page's cost: model load, the recompute after a change, warm page reruns.

Prints medians over repeated runs. Engine part: ``forward`` (the model with output_attentions)
plus ``take_apart`` of one head, for sentences of about 16, 32 and 64 WordPiece pieces. Page part
(AppTest, warm): a rerun after a layer/head change (the fragment and its charts) and after a
sentence change (a new model run, the overview and every chart).
"""

import os
import statistics
import sys
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, ROOT)

import torch

from attn_core import models as pt

WORDS = [
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
    "attention",
    "heads",
    "quietly",
    "learn",
    "which",
    "words",
    "matter",
    "most",
    "to",
    "each",
    "other",
    "in",
    "a",
    "sentence",
    "that",
    "keeps",
    "going",
    "on",
    "and",
    "on",
    "until",
    "it",
    "reaches",
    "sixty",
    "four",
    "pieces",
    "or",
    "so",
    "for",
    "this",
    "measurement",
    "of",
    "the",
    "page",
]


def sentence(n_pieces: int, pre: pt.Pretrained, shift: int = 0) -> str:
    words = (WORDS[shift:] + WORDS[:shift]) * 3
    for n in range(1, len(words)):
        if pt.encode(pre, " ".join(words[:n])).n_real >= n_pieces:
            return " ".join(words[:n])
    return " ".join(words)


def median_ms(fn, n: int = 15) -> float:
    fn()
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3


t0 = time.perf_counter()
pre = pt.load()
print(f"torch {torch.__version__}, {torch.get_num_threads()} threads")
print(f"model load (once per server, cached): {(time.perf_counter() - t0) * 1e3:.0f} ms")
for n in (16, 32, 64):
    s = sentence(n, pre)
    enc = pt.encode(pre, s)
    run = pt.forward(pre, enc)
    fwd = median_ms(lambda s=s: pt.forward(pre, pt.encode(pre, s)))
    head = median_ms(lambda run=run: pt.take_apart(run, pt.head_weights(pre, 3, 7), 3, 7))
    print(
        f"{enc.n_real:3d} pieces: tokenize + model forward {fwd:6.1f} ms, take one head apart {head:5.2f} ms, "
        f"total {fwd + head:6.1f} ms"
    )

from streamlit.testing.v1 import AppTest

from explorer.model import real

real.wait_for(pt.BUNDLED)  # a server loads it in the background at its first run; here, before timing pages
s64 = sentence(64, pre)
at = AppTest.from_file(os.path.join(ROOT, "app.py"), default_timeout=120)
at.query_params["sentence"] = s64
at.run()
at.switch_page("pages/7_model.py").run()
layer = [0]


def change_head():
    layer[0] = (layer[0] + 1) % 6
    at.number_input(key="rm_layer").set_value(layer[0]).run()


shift = [0]


def change_sentence():
    shift[0] += 1
    at.sidebar.text_area(key="sentence").set_value(sentence(64, pre, shift[0] % len(WORDS))).run()


print(f"page, 64 pieces, warm rerun after a layer change (cached model run): {median_ms(change_head, 12):6.1f} ms")
print(f"page, 64 pieces, rerun after a sentence change (new model run):     {median_ms(change_sentence, 8):6.1f} ms")
