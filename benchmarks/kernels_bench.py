"""Sparse and linear kernels against their peers on the same function, interleaved (figures, not a test).

Setting: 1 batch, 4 heads, d_head 64, fp32, window 128 each side, L = 2048 .. 16384.
Every contender computes the same function: before anything is timed, each peer's output is
compared with this app's kernel and the run stops if they differ (local-attention is built with
``use_rotary_pos_emb=False``: with a ``dim`` it otherwise adds rotary position embeddings, a
different function). Contenders are timed in rounds, interleaved (A B C, A B C, ...), so a noisy
moment of this shared machine falls on all of them; each is warmed until steady first. Printed:
the median over rounds of each round's median, the spread (min–max of the round medians), the
achieved GFLOP/s as a fraction of this machine's measured matmul throughput, and the ratios.

  - sliding window (attn_core) vs lucidrains' local-attention vs compiled FlexAttention
  - peak memory of the sliding window vs the materialised full attention (at L <= 8192)
  - linear (elu) vs fused SDPA; causal linear vs causal SDPA

Run:  python benchmarks/kernels_bench.py [--lengths 2048,4096,8192,16384] [--rounds 5] [--device cpu|cuda]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import torch

from attn_core import bench
from attn_core.kernels import KERNELS

AGREE = 1e-4  # max |difference| of outputs (fp32) for two implementations to count as the same function


def contenders(q, k, v, w: int, dev: str) -> dict:
    """name -> a call computing softmax attention over |i - j| <= w (and the reference: this app's)."""
    L = q.shape[-2]
    out = {"attn_core sliding_window": lambda: KERNELS["sliding_window"].fn(q, k, v, window=w)}
    try:
        from local_attention import LocalAttention

        la = LocalAttention(
            window_size=w,
            causal=False,
            look_backward=1,
            look_forward=1,
            dim=q.shape[-1],
            autopad=True,
            exact_windowsize=True,
            use_rotary_pos_emb=False,  # the same function: no position embeddings added
        )
        out["local-attention"] = lambda: la(q, k, v)
    except ImportError:
        print("# local-attention not installed: skipped")
    try:
        from torch.nn.attention.flex_attention import create_block_mask, flex_attention

        t0 = time.perf_counter()
        bm = create_block_mask(lambda b, h, i, j: (i - j).abs() <= w, None, None, L, L, device=dev)
        flex = torch.compile(flex_attention)
        flex(q, k, v, block_mask=bm)
        bench.synchronize(dev)
        print(f"# L={L}: FlexAttention compile + first call {time.perf_counter() - t0:.1f} s (not timed)")
        out["FlexAttention (compiled)"] = lambda: flex(q, k, v, block_mask=bm)
    except Exception as err:  # noqa: BLE001 - no compiler on this machine: reported, not fatal
        print(f"# FlexAttention unavailable: {type(err).__name__}: {str(err).splitlines()[0][:120]}")
    return out


def check_agreement(calls: dict) -> None:
    """Stop unless every contender computes what the first one does."""
    names = list(calls)
    ref = calls[names[0]]()
    for name in names[1:]:
        diff = float((calls[name]() - ref).abs().max())
        print(f"#   {name} vs {names[0]}: max |Δ output| {diff:.2e}")
        if not diff <= AGREE:
            raise SystemExit(f"{name} computes a different function (max |Δ| {diff:.2e} > {AGREE}): not comparable")


MATMUL = "matmul 1024³ (the reference)"


def with_matmul(calls: dict, dev: str, dt) -> dict:
    """The contenders and a 1024³ matmul timed in the same rounds: the machine's throughput right
    then (on this shared VM it moved between 96 and 193 GFLOP/s from one run to the next)."""
    a, b = (torch.randn(1024, 1024, device=dev, dtype=dt) for _ in range(2))
    return {**calls, MATMUL: lambda: a @ b}


def interleaved(calls: dict, dev: str, rounds: int) -> dict[str, list[float]]:
    """Each contender's median per round, the contenders taking turns within every round."""
    for fn in calls.values():
        fn()
        bench.warm_up(fn, dev)
    per: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(rounds):
        for name, fn in calls.items():
            med, _, _ = bench.time_fn(fn, dev, min_run_time=0.2)
            per[name].append(med)
    return per


def report(per: dict[str, list[float]], flops: float | None) -> dict[str, float]:
    peak_gflops = 2 * 1024**3 / statistics.median(per.pop(MATMUL)) / 1e9
    print(f"{MATMUL:<28} {peak_gflops:.1f} GFLOP/s (median of the same rounds)")
    medians = {}
    for name, meds in per.items():
        m = statistics.median(meds)
        medians[name] = m
        line = f"{name:<28} median {m * 1e3:9.2f} ms  spread {min(meds) * 1e3:8.2f}–{max(meds) * 1e3:8.2f} ms"
        line += f"  n={len(meds)} rounds"
        if flops:
            gf = flops / m / 1e9
            line += f"  {gf:7.1f} GFLOP/s = {100 * gf / peak_gflops:5.1f} % of matmul"
        print(line, flush=True)
    return medians


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lengths", default="2048,4096,8192,16384")
    ap.add_argument("--window", type=int, default=128)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--device", default=bench.best_device())
    ap.add_argument("--dtype", default="fp32", choices=list(bench.DTYPES))
    args = ap.parse_args()
    dev, w, dt = args.device, args.window, bench.DTYPES[args.dtype]
    lengths = [int(x) for x in args.lengths.split(",")]
    info = bench.device_info(dev)
    print(f"# device {dev}: {info.get('name')}, threads {torch.get_num_threads()}, torch {torch.__version__}")
    print(f"# B=1 H=4 D=64 {args.dtype} window={w}; {args.rounds} rounds")
    sh = bench.Shape(batch=1, heads=4, d_head=64, window=w)
    for L in lengths:
        g = torch.Generator().manual_seed(0)
        q, k, v = (torch.randn(1, 4, L, 64, generator=g).to(dev, dt) for _ in range(3))
        print(f"## L = {L}")
        calls = contenders(q, k, v, w, dev)
        check_agreement(calls)
        per = interleaved(with_matmul(calls, dev, dt), dev, args.rounds)
        medians = report(per, bench.estimate_flops("sliding_window", L, sh))
        ours = medians["attn_core sliding_window"]
        for name, m in medians.items():
            if name != "attn_core sliding_window":
                print(f"#   attn_core sliding_window vs {name}: {m / ours:.2f}x {'faster' if m > ours else 'slower'}")
        if L <= 8192 and bench.estimate_bytes("full", L, sh, 4) < 0.5 * bench.free_bytes(dev):
            sw = bench.peak_bytes_cpu(calls["attn_core sliding_window"]) if dev == "cpu" else None
            full = bench.peak_bytes_cpu(lambda q=q, k=k, v=v: KERNELS["full"].fn(q, k, v)) if dev == "cpu" else None
            if sw and full:
                print(f"#   peak memory: sliding window {sw / 2**20:.1f} MiB = {100 * sw / full:.1f} % of full's")

    print("## linear attention vs fused SDPA")
    L = max(lengths)
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(1, 4, L, 64, generator=g).to(dev, dt) for _ in range(3))
    for causal in (False, True):
        lin = KERNELS["linear_elu"].fn(q, k, v, causal=causal)
        ref = KERNELS["linear_elu"].weights(q, k, causal=causal, scale=0.125) @ v if L <= 4096 else None
        if ref is not None:
            assert float((lin - ref).abs().max()) < AGREE
        calls = {
            f"sdpa{' causal' if causal else ''}": lambda c=causal: KERNELS["sdpa"].fn(q, k, v, causal=c),
            f"linear_elu{' causal' if causal else ''}": lambda c=causal: KERNELS["linear_elu"].fn(q, k, v, causal=c),
        }
        med = report(interleaved(with_matmul(calls, dev, dt), dev, args.rounds), None)
        a, b = med.values()
        print(
            f"#   L={L}: linear_elu{' causal' if causal else ''} {a / b:.1f}x faster than sdpa (different functions)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
