"""Sparse and linear kernels against their references, on one input (figures, not a test).

Default (the goal's setting): 1 batch, 4 heads, d_head 64, fp32, L = 16 384, window 128 each side.
Prints medians (torch.utils.benchmark, all threads), interquartile ranges and peak memory:
  - sliding window (attn_core) vs lucidrains' local-attention vs compiled FlexAttention
  - peak memory of the sliding window vs the materialised full attention
  - linear (elu) vs fused SDPA; causal linear vs causal SDPA
Run:  python benchmarks/kernels_bench.py [--length 16384] [--device cpu|cuda]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import torch

from attn_core import bench
from attn_core.kernels import KERNELS


def measure(name, fn, device, *, memory=True):
    for _ in range(3):  # warm-up: thread pools, allocator caches
        fn()
    bench.synchronize(device)
    peak = None
    if memory:
        peak = bench.peak_bytes_cuda(fn) if device == "cuda" else bench.peak_bytes_cpu(fn)
    med, iqr, runs = bench.time_fn(fn, device, min_run_time=1.0)
    line = f"{name:<34} median {med * 1e3:9.2f} ms  iqr {iqr * 1e3:7.2f} ms  runs {runs:3d}"
    if peak is not None:
        line += f"  peak {peak / 2**20:9.1f} MiB"
    print(line, flush=True)
    return med, peak


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--length", type=int, default=16384)
    ap.add_argument("--window", type=int, default=128)
    ap.add_argument("--device", default=bench.best_device())
    ap.add_argument("--dtype", default="fp32", choices=list(bench.DTYPES))
    args = ap.parse_args()
    dev, L, w, dt = args.device, args.length, args.window, bench.DTYPES[args.dtype]
    print(
        f"# device {dev}: {bench.device_info(dev).get('name')}, threads {torch.get_num_threads()}, torch {torch.__version__}"
    )
    print(f"# B=1 H=4 D=64 {args.dtype} L={L} window={w}")
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(1, 4, L, 64, generator=g).to(dev, dt) for _ in range(3))
    res = {}
    res["sw"] = measure("sliding_window (attn_core)", lambda: KERNELS["sliding_window"].fn(q, k, v, window=w), dev)
    try:
        from local_attention import LocalAttention

        la = LocalAttention(
            window_size=w, causal=False, look_backward=1, look_forward=1, dim=64, autopad=True, exact_windowsize=True
        )
        res["la"] = measure("local-attention package", lambda: la(q, k, v), dev)
    except ImportError:
        print("# local-attention not installed: skipped")
    try:
        from torch.nn.attention.flex_attention import create_block_mask, flex_attention

        t0 = time.perf_counter()
        bm = create_block_mask(lambda b, h, i, j: (i - j).abs() <= w, None, None, L, L, device=dev)
        flex = torch.compile(flex_attention)
        flex(q, k, v, block_mask=bm)
        bench.synchronize(dev)
        print(f"# FlexAttention compile + first call: {time.perf_counter() - t0:.1f} s (not in the timing)")
        res["flex"] = measure("FlexAttention (compiled)", lambda: flex(q, k, v, block_mask=bm), dev)
    except Exception as err:  # noqa: BLE001 - no compiler on this machine, say: reported, not fatal
        print(f"# FlexAttention unavailable: {type(err).__name__}: {str(err).splitlines()[0][:120]}")
    full_est = bench.estimate_bytes("full", L, bench.Shape(), torch.finfo(dt).bits // 8)
    if full_est < 0.5 * bench.free_bytes(dev):
        res["full"] = measure("full (materialised)", lambda: KERNELS["full"].fn(q, k, v), dev)
    res["sdpa"] = measure("sdpa (fused)", lambda: KERNELS["sdpa"].fn(q, k, v), dev)
    res["lin"] = measure("linear_elu", lambda: KERNELS["linear_elu"].fn(q, k, v), dev)
    res["sdpa_c"] = measure("sdpa causal", lambda: KERNELS["sdpa"].fn(q, k, v, causal=True), dev)
    res["lin_c"] = measure("linear_elu causal", lambda: KERNELS["linear_elu"].fn(q, k, v, causal=True), dev)

    print("# ratios")
    if "la" in res:
        print(f"sliding_window vs local-attention: {res['la'][0] / res['sw'][0]:.2f}x faster")
    if "flex" in res:
        print(f"sliding_window / FlexAttention time: {res['sw'][0] / res['flex'][0]:.2f}")
    if "full" in res:
        print(f"sliding_window peak / full peak: {100 * res['sw'][1] / res['full'][1]:.1f} %")
    print(f"linear_elu vs sdpa: {res['sdpa'][0] / res['lin'][0]:.1f}x faster")
    print(f"causal linear vs causal sdpa: {res['sdpa_c'][0] / res['lin_c'][0]:.1f}x faster")
    return 0


if __name__ == "__main__":
    sys.exit(main())
