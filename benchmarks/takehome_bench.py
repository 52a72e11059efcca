"""What the notebook export costs: building a notebook (cold and from the per-server cache) for views of several
sizes and the Real model's head, the per-rerun work of the buttons, and a Step-by-step rerun under AppTest with
the buttons against the same page with the helper replaced by a no-op (interleaved rounds).

    python benchmarks/takehome_bench.py [--rounds 15] > benchmarks/results/takehome_cpu.txt
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from dataclasses import replace

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import torch

from attn_core import Settings, run_trace
from attn_core import models as pt
from attn_core import notebook as nbk


def stats(xs: list[float]) -> str:
    xs = sorted(xs)
    p90 = xs[min(len(xs) - 1, round(0.9 * (len(xs) - 1)))]
    iqr = xs[(3 * len(xs)) // 4] - xs[len(xs) // 4]
    return (
        f"median {statistics.median(xs) * 1e3:9.4f} ms  p90 {p90 * 1e3:9.4f} ms  IQR {iqr * 1e3:7.4f} ms  n={len(xs)}"
    )


def timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=15)
    args = ap.parse_args()
    print(f"# takehome_bench  {time.strftime('%Y-%m-%d %H:%M:%S %Z')}  python {platform.python_version()}")
    print(f"# torch {torch.__version__}, {os.cpu_count()} CPUs, threads {torch.get_num_threads()}")
    print("# NOTE: a shared 2-core VM with other engineers' tests and servers running: figures are noisy.")
    base = Settings()
    long = " ".join(f"w{i}" for i in range(100))
    views = {
        "default (L=6, 1 head)": base,
        "4 heads, standard, LayerNorm": replace(base, heads=4, layout="standard", d_model=16, residual_norm=True),
        "linformer, 2 heads": replace(base, kernel="linformer", heads=2),
        "L=100, 8 heads, d_model 64": replace(base, sentence=long, heads=8, d_model=64, d_q=32, d_k=32, d_v=32),
    }
    traces = {name: run_trace(s) for name, s in views.items()}
    pre = pt.load("")
    heads = {}
    for name, sentence in (
        ("Real model, 12 pieces", "The animal didn't cross the street"),
        ("Real model, 102 pieces", long),
    ):
        run = pt.forward(pre, pt.encode(pre, sentence))
        heads[name] = (run, pt.take_apart(run, pt.head_weights(pre, 4, 9), 4, 9), sentence)

    builds = {name: [] for name in [*views, *heads]}
    sizes = {}
    for _ in range(args.rounds):  # interleaved: each round builds every kind once
        for name, s in views.items():
            t = traces[name]
            builds[name].append(timed(lambda s=s, t=t: nbk.trace_notebook(s, trace=t).ipynb()))
        for name, (run, ht, sentence) in heads.items():
            builds[name].append(
                timed(
                    lambda run=run, ht=ht, sentence=sentence: nbk.model_notebook(
                        pre, run, ht, sentence=sentence
                    ).ipynb()
                )
            )
    for name, s in views.items():
        sizes[name] = len(nbk.trace_notebook(s, trace=traces[name]).ipynb().encode())
    for name, (run, ht, sentence) in heads.items():
        sizes[name] = len(nbk.model_notebook(pre, run, ht, sentence=sentence).ipynb().encode())
    print("\n## building one notebook (.ipynb), the trace or head already computed (the server caches those)")
    for name, xs in builds.items():
        print(f"{name:32s} {stats(xs)}  size {sizes[name] / 1024:8.1f} KiB")

    check = {name: [] for name in views}
    for _ in range(args.rounds):
        for name in views:
            check[name].append(timed(lambda name=name: nbk.check_exportable(traces[name])))
    print(
        "\n## per page rerun: the buttons' own work (check_exportable; the notebook itself is built only on a click)"
    )
    for name, xs in check.items():
        print(f"{name:32s} {stats(xs)}")

    from explorer.classroom import takehome

    takehome.FILES.clear()
    items = base.key()
    cold = timed(lambda: takehome.trace_file("steps", items, "en", 1, 0, "ipynb"))
    hits = [timed(lambda: takehome.trace_file("steps", items, "en", 1, 0, "ipynb")) for _ in range(args.rounds * 10)]
    print(f"\n## a click, default view: cold {cold * 1e3:.2f} ms (trace included), then from the cache: {stats(hits)}")

    from streamlit.testing.v1 import AppTest

    from explorer.model import real

    real.wait_for(pt.BUNDLED, timeout=300)
    app = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "app.py")
    at = AppTest.from_file(app, default_timeout=120)
    at.run()
    at.switch_page("pages/1_steps.py").run()
    real_offer = takehome.offer
    with_buttons, without = [], []
    for n in range(args.rounds * 2):  # A/B interleaved: the same page, the helper real or a no-op
        for arm in ((with_buttons, real_offer), (without, lambda *a, **k: None))[:: 1 if n % 2 else -1]:
            takehome.offer = arm[1]
            arm[0].append(timed(lambda: at.run()))
    takehome.offer = real_offer
    print("\n## Step by step rerun under AppTest (whole script run), interleaved A/B")
    print(f"{'with the two buttons':32s} {stats(with_buttons)}")
    print(f"{'helper replaced by a no-op':32s} {stats(without)}")


if __name__ == "__main__":
    main()
