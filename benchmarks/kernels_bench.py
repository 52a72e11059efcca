"""This app's kernels beside their peers on the same function, in one interleaved run (figures, not a test).

Setting: 1 batch, 4 heads, d_head 64, fp32 (the Complexity page's default shape).

  1. sliding window (w = 128) at L = 2048 .. 16384: attn_core vs lucidrains' local-attention vs
     compiled FlexAttention, with peak memory beside the materialised full attention's; on a CPU also
     attn_core's PyTorch path (what runs where no C++ compiler builds the band kernel) and PyTorch's
     fused kernel alone on that path's inside blocks (what computing a band in blocks can reach);
  2. linear attention (elu + 1) at the longest L: attn_core's non-causal kernel vs a plain
     ``einsum`` of the same formula, and its causal kernel (chunked) vs the non-causal one;
  3. Performer (m = 256) at the longest L: attn_core vs performer-pytorch (when installed), time and
     the relative error of the output against exact softmax over 10 feature seeds, beside uniform
     attention's error (every query averaging the values);
  4. Performer's gap to uniform attention against the logits' scale and m (at L = 2048).

Honesty: before anything is timed, every contender's output is compared with a float64 reference
computed another way (banded softmax row block by row block; the linear formula as prefix sums of
outer products), and the run stops if one differs. Contenders are timed in rounds, interleaved
(A B C M, A B C M, ...), where M is a 1024³ matmul: the machine's throughput in the same rounds (this
VM is shared; its matmul moves by 2x from one minute to the next). Each contender is warmed until
steady first. Printed: the median over rounds of each round's median, the spread (min–max of the
round medians), GFLOP/s from the kernel's own FLOP model (``bench.estimate_flops`` with its own
options) as a fraction of the matmul's, peak memory (the CPU profiler's allocations during one call).

Run:  python benchmarks/kernels_bench.py [--lengths 2048,4096,8192,16384] [--rounds 5] [--device cpu|cuda]
      [--threads N] [--seeds 10] [--skip sliding,linear,performer,scales]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import math
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import torch
import torch.nn.functional as F

from attn_core import bench
from attn_core.kernels import KERNELS, native

AGREE = 1e-4  # max |difference| from the float64 reference (fp32 outputs) to count as the same function
MATMUL = "matmul 1024³ (reference)"
H, D = 4, 64


# ---------------------------------------------------------------------------- float64 references


def banded_reference(q, k, v, w: int, rows: int = 512) -> torch.Tensor:
    """Softmax over |i - j| <= w in float64, a block of query rows at a time (dense inside the block's reach)."""
    q, k, v = (t.double() for t in (q, k, v))
    L = q.shape[-2]
    out = torch.empty_like(q[..., : v.shape[-1]])
    for i0 in range(0, L, rows):
        i1 = min(L, i0 + rows)
        j0, j1 = max(0, i0 - w), min(L, i1 + w)
        s = q[..., i0:i1, :] @ k[..., j0:j1, :].transpose(-2, -1) / math.sqrt(q.shape[-1])
        i, j = torch.arange(i0, i1, device=q.device).view(-1, 1), torch.arange(j0, j1, device=q.device).view(1, -1)
        s = s.masked_fill((i - j).abs() > w, float("-inf"))
        out[..., i0:i1, :] = torch.softmax(s, dim=-1) @ v[..., j0:j1, :]
    return out


def linear_reference(q, k, v, causal: bool, rows: int = 1024) -> torch.Tensor:
    """elu + 1 linear attention in float64: non-causal from the two sums; causal as running sums of
    the outer products φ(k_j) v_jᵀ position by position (a block of positions at a time)."""
    pq, pk, v = F.elu(q.double()) + 1, F.elu(k.double()) + 1, v.double()
    if not causal:
        return (pq @ (pk.transpose(-2, -1) @ v)) / (pq @ pk.sum(-2).unsqueeze(-1))
    out = torch.empty_like(v)
    s = torch.zeros(*v.shape[:-2], pk.shape[-1], v.shape[-1], dtype=torch.float64, device=v.device)
    z = torch.zeros(*v.shape[:-2], pk.shape[-1], dtype=torch.float64, device=v.device)
    for i0 in range(0, q.shape[-2], rows):
        i1 = min(q.shape[-2], i0 + rows)
        outer = pk[..., i0:i1, :, None] * v[..., i0:i1, None, :]  # (.., n, D, Dv)
        run = s.unsqueeze(-3) + outer.cumsum(-3)
        zr = z.unsqueeze(-2) + pk[..., i0:i1, :].cumsum(-2)
        out[..., i0:i1, :] = (pq[..., i0:i1, :, None] * run).sum(-2) / (pq[..., i0:i1, :] * zr).sum(-1, keepdim=True)
        s, z = run[..., -1, :, :], zr[..., -1, :]
    return out


# ---------------------------------------------------------------------------- timing


def check(calls: dict, ref: torch.Tensor) -> None:
    for name, fn in calls.items():
        diff = float((fn().double() - ref).abs().max())
        print(f"#   {name}: max |Δ| from the float64 reference {diff:.2e}")
        if not diff <= AGREE:
            raise SystemExit(f"{name} computes a different function (max |Δ| {diff:.2e} > {AGREE}): not comparable")


def interleaved(calls: dict, dev: str, dt, rounds: int, min_run_time: float) -> dict[str, list[float]]:
    """Each contender's median per round, the contenders (and the matmul) taking turns in every round."""
    a, b = (torch.randn(1024, 1024, device=dev, dtype=dt) for _ in range(2))
    calls = {**calls, MATMUL: lambda: a @ b}
    for fn in calls.values():
        fn()
        bench.warm_up(fn, dev)
    per: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(rounds):
        for name, fn in calls.items():
            med, _, _ = bench.time_fn(fn, dev, min_run_time=min_run_time, min_samples=3)
            per[name].append(med)
    return per


def report(per: dict[str, list[float]], flops: dict[str, float], peaks: dict[str, int]) -> dict[str, float]:
    mm = [2 * 1024**3 / t / 1e9 for t in per.pop(MATMUL)]
    peak = statistics.median(mm)
    print(f"{MATMUL:<30} {peak:6.1f} GFLOP/s (median of the rounds; spread {min(mm):.1f}–{max(mm):.1f})")
    medians = {}
    for name, meds in per.items():
        m = statistics.median(meds)
        medians[name] = m
        line = f"{name:<30} median {m * 1e3:9.2f} ms  spread {min(meds) * 1e3:8.2f}–{max(meds) * 1e3:8.2f} ms"
        if name in flops:
            gf = flops[name] / m / 1e9
            line += f"  {gf:6.1f} GFLOP/s = {100 * gf / peak:5.1f} % of matmul"
        if name in peaks:
            line += f"  peak {peaks[name] / 2**20:7.1f} MiB"
        print(line, flush=True)
    return medians


def peak_of(fn, dev: str) -> int | None:
    if dev == "cpu":
        return bench.peak_bytes_cpu(fn)
    if dev == "cuda":
        return bench.peak_bytes_cuda(fn)
    return None


def inputs(L: int, dev: str, dt, scale: float = 1.0, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    q, k, v = (torch.randn(1, H, L, D, generator=g) for _ in range(3))
    return (q * scale).to(dev, dt), (k * scale).to(dev, dt), v.to(dev, dt)


# ---------------------------------------------------------------------------- 1. sliding window


def sliding(L: int, w: int, args, dev: str, dt) -> None:
    q, k, v = inputs(L, dev, dt)
    print(f"## sliding window, L = {L}, w = {w}")
    calls = {"attn_core sliding_window": lambda: KERNELS["sliding_window"].fn(q, k, v, window=w)}
    if dev == "cpu":
        built = native.library() is not None
        print(
            f"# attn_core's band kernel: {'compiled (native/band.cpp)' if built else 'unavailable: ' + native.why()}"
        )
        if built:
            calls["attn_core, PyTorch path"] = lambda: pytorch_path("sliding_window", q, k, v, window=w)
    try:
        from local_attention import LocalAttention

        la = LocalAttention(
            window_size=w,
            causal=False,
            look_backward=1,
            look_forward=1,
            dim=D,
            autopad=True,
            exact_windowsize=True,
            use_rotary_pos_emb=False,  # the same function: no position embeddings added
        )
        calls["local-attention"] = lambda: la(q, k, v)
    except ImportError:
        print("# local-attention not installed: skipped")
    try:
        from torch.nn.attention.flex_attention import create_block_mask, flex_attention

        t0 = time.perf_counter()
        bm = create_block_mask(lambda b, h, i, j: (i - j).abs() <= w, None, None, L, L, device=dev)
        flex = torch.compile(flex_attention)
        flex(q, k, v, block_mask=bm)
        bench.synchronize(dev)
        print(f"# FlexAttention compile + first call {time.perf_counter() - t0:.1f} s (not timed)")
        calls["FlexAttention (compiled)"] = lambda: flex(q, k, v, block_mask=bm)
    except Exception as err:  # noqa: BLE001 - no compiler here: reported, not fatal
        print(f"# FlexAttention unavailable: {type(err).__name__}: {str(err).splitlines()[0][:120]}")
    check(calls, banded_reference(q, k, v, w))
    sh = bench.Shape(batch=1, heads=H, d_head=D, window=w)
    flops = dict.fromkeys(calls, bench.estimate_flops("sliding_window", L, sh))
    if dev == "cpu":  # the fused kernel alone on attn_core's blocks: what the approach can reach
        name, fn, flops[name], computed = fused_blocks(q, k, v, w)
        calls[name] = fn
        print(
            f"# {name}: the CPU's fused attention on attn_core's query blocks and key windows, the inside blocks "
            f"only (no end blocks, no output assembled; GFLOP/s of their allowed pairs); "
            f"{100 * flops[name] / computed:.1f} % of the products it computes are pairs the window allows"
        )
    peaks = {name: peak_of(fn, dev) for name, fn in calls.items()}
    medians = report(interleaved(calls, dev, dt, args.rounds, args.min_run_time), flops, peaks)
    ours = medians["attn_core sliding_window"]
    for name, m in medians.items():
        if name != "attn_core sliding_window":
            print(f"#   attn_core sliding_window vs {name}: {m / ours:.2f}x {'faster' if m > ours else 'slower'}")
    full = bench.estimate_bytes("full", L, sh, torch.finfo(dt).bits // 8)
    if peaks["attn_core sliding_window"]:
        print(
            f"#   peak memory: attn_core {peaks['attn_core sliding_window'] / 2**20:.1f} MiB = "
            f"{100 * peaks['attn_core sliding_window'] / full:.2f} % of full attention's scores and weights "
            f"({full / 2**20:.0f} MiB, analytic)"
        )


def pytorch_path(name: str, q, k, v, **opts):
    """A kernel with the compiled kernels turned off: what runs where no C++ compiler is."""
    with native.disabled():
        return KERNELS[name].fn(q, k, v, **opts)


def fused_blocks(q, k, v, w: int):
    """``scaled_dot_product_attention`` over the sliding window's inside blocks as attn_core lays them
    out (each query block one head, its key window a strided view, the band a shared bias), to time
    alone: its name, the call, the FLOPs of the pairs it must compute and of those it computes."""
    from attn_core.kernels.banded import _band, _band_bias, _block_for, _inside, _inside_windows

    L = q.shape[-2]
    block, look = _block_for(w, L, q.device)
    width = (2 * look + 1) * block
    q3, k3, v3 = (t.reshape(-1, L, D).contiguous() for t in (q, k, v))
    a, b = _inside(-(-L // block), block, (look * block, L - (1 + look) * block))
    windows = _inside_windows(q3, k3, v3, a, b, block, look, width)
    bias = _band_bias(block, width, look, _band(w, False), q3)
    scale = 1 / math.sqrt(D)
    rows = q3.shape[0] * (b - a) * block  # every one of them sees its whole window: 2w + 1 keys
    return (
        f"fused kernel alone ({block}x{width})",
        lambda: F.scaled_dot_product_attention(*windows, attn_mask=bias, scale=scale),
        4 * rows * (2 * w + 1) * D,
        4 * rows * width * D,
    )


# ---------------------------------------------------------------------------- 2. linear


def plain_einsum(q, k, v):
    """The obvious code for elu + 1 linear attention: what a reader would write from the formula."""
    pq, pk = F.elu(q) + 1, F.elu(k) + 1
    kv = torch.einsum("bhsd,bhse->bhde", pk, v)
    return torch.einsum("bhld,bhde->bhle", pq, kv) / torch.einsum("bhld,bhd->bhl", pq, pk.sum(2)).unsqueeze(-1)


def linear(L: int, args, dev: str, dt) -> None:
    q, k, v = inputs(L, dev, dt)
    print(f"## linear attention (elu + 1), L = {L}")
    non = {
        "attn_core linear_elu": lambda: KERNELS["linear_elu"].fn(q, k, v),
        "plain einsum (same formula)": lambda: plain_einsum(q, k, v),
    }
    if dev == "cpu" and native.library() is not None:
        non["attn_core linear, PyTorch path"] = lambda: pytorch_path("linear_elu", q, k, v)
    check(non, linear_reference(q, k, v, causal=False))
    cau = {"attn_core causal_linear": lambda: KERNELS["causal_linear"].fn(q, k, v)}
    if dev == "cpu" and native.library() is not None:
        cau["attn_core causal, PyTorch path"] = lambda: pytorch_path("causal_linear", q, k, v)
    check(cau, linear_reference(q, k, v, causal=True))
    calls = {**non, **cau}
    sh = bench.Shape(batch=1, heads=H, d_head=D)
    flops = {
        **dict.fromkeys(non, bench.estimate_flops("linear_elu", L, sh)),
        **dict.fromkeys(cau, bench.estimate_flops("causal_linear", L, bench.replace_causal(sh, True))),
    }
    peaks = {name: peak_of(fn, dev) for name, fn in calls.items()}
    med = report(interleaved(calls, dev, dt, args.rounds, args.min_run_time), flops, peaks)
    lin, plain, causal = (
        med["attn_core linear_elu"],
        med["plain einsum (same formula)"],
        med["attn_core causal_linear"],
    )
    print(f"#   linear_elu vs the plain einsum: {plain / lin:.2f}x ({'faster' if lin < plain else 'slower'})")
    print(f"#   causal_linear / linear_elu time: {causal / lin:.2f}x")


# ---------------------------------------------------------------------------- 3. Performer


def performer_pytorch(m: int):
    """performer-pytorch's FastAttention with m features, or None when it is not installed.
    ``redraw(seed)`` draws new features as its ProjectionUpdater does."""
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            import warnings

            warnings.filterwarnings("ignore")
            from performer_pytorch import FastAttention
    except ImportError:
        return None
    fa = FastAttention(dim_heads=D, nb_features=m)

    def redraw(seed: int, dev: str):
        torch.manual_seed(seed)
        fa.redraw_projection_matrix(dev)
        return fa.to(dev)

    return redraw


def rel_error(out, exact) -> float:
    return float((out.double() - exact).norm() / exact.norm())


def exact_softmax(q, k, v):
    return F.scaled_dot_product_attention(q.double(), k.double(), v.double())


def performer_errors(q, k, v, m: int, seeds: int, dev: str) -> dict[str, list[float]]:
    exact = exact_softmax(q, k, v)
    errs = {"uniform attention": [rel_error(v.mean(-2, keepdim=True).expand_as(v), exact)]}
    errs["attn_core performer"] = [
        rel_error(KERNELS["performer"].fn(q, k, v, features=m, seed=s), exact) for s in range(seeds)
    ]
    ref = performer_pytorch(m)
    if ref is not None:
        errs["performer-pytorch"] = [rel_error(ref(s, dev)(q, k, v), exact) for s in range(seeds)]
    return errs


def performer(L: int, m: int, args, dev: str, dt) -> None:
    q, k, v = inputs(L, dev, dt)
    print(f"## Performer, L = {L}, m = {m}, q, k, v ~ N(0, 1) (logits q·k/√d with std 1)")
    errs = performer_errors(q, k, v, m, args.seeds, dev)
    for name, e in errs.items():
        spread = f" ± {statistics.stdev(e):.4f} (sd over {len(e)} feature seeds)" if len(e) > 1 else ""
        print(f"#   relative error of the output, {name:<20} {statistics.mean(e):.4f}{spread}")
    calls = {"attn_core performer": lambda: KERNELS["performer"].fn(q, k, v, features=m, seed=0)}
    ref = performer_pytorch(m)
    if ref is not None:
        fa = ref(0, dev)
        calls["performer-pytorch"] = lambda: fa(q, k, v)
    else:
        print("# performer-pytorch not installed: its time and error skipped")
    sh = bench.Shape(batch=1, heads=H, d_head=D, features=m)
    flops = dict.fromkeys(calls, bench.estimate_flops("performer", L, sh))
    peaks = {name: peak_of(fn, dev) for name, fn in calls.items()}
    med = report(interleaved(calls, dev, dt, args.rounds, args.min_run_time), flops, peaks)
    if "performer-pytorch" in med:
        a, b = med["attn_core performer"], med["performer-pytorch"]
        print(f"#   attn_core performer / performer-pytorch time: {a / b:.2f}x")


def scales(args, dev: str, dt) -> None:
    L = 2048
    print(f"## Performer's gap to uniform attention, L = {L}: q, k ~ s · N(0, 1), mean over {args.scale_seeds} seeds")
    print("#   s = the inputs' scale (the logits' std is s²);  error of the output relative to exact softmax")
    print(f"#   {'s':>4} {'m':>5} {'uniform':>8} {'attn_core':>10} {'perf-pytorch':>13}  attn_core − uniform")
    for s in (0.3, 0.5, 0.7, 1.0):
        q, k, v = inputs(L, dev, dt, scale=s)
        for m in (64, 256, 1024):
            e = performer_errors(q, k, v, m, args.scale_seeds, dev)
            u, ours = e["uniform attention"][0], statistics.mean(e["attn_core performer"])
            ref = f"{statistics.mean(e['performer-pytorch']):13.4f}" if "performer-pytorch" in e else f"{'-':>13}"
            print(f"#   {s:4.1f} {m:5d} {u:8.4f} {ours:10.4f} {ref}  {ours - u:+.4f}", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lengths", default="2048,4096,8192,16384")
    ap.add_argument("--window", type=int, default=128)
    ap.add_argument("--features", type=int, default=256)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--min-run-time", type=float, default=0.15, dest="min_run_time")
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--scale-seeds", type=int, default=3, dest="scale_seeds")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--skip", default="", help="comma-separated sections to skip: sliding,linear,performer,scales")
    ap.add_argument("--device", default=bench.best_device())
    ap.add_argument("--dtype", default="fp32", choices=list(bench.DTYPES))
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    dev, dt = args.device, bench.DTYPES[args.dtype]
    skip = {s.strip() for s in args.skip.split(",") if s.strip()}
    lengths = [int(x) for x in args.lengths.split(",")]
    info = bench.device_info(dev)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"# device {dev}: {info.get('name')}, {os.cpu_count()} cores, torch threads {torch.get_num_threads()}, "
        f"torch {torch.__version__}; load average at the start {load:.1f}"
    )
    print(f"# B=1 H={H} D={D} {args.dtype}; {args.rounds} interleaved rounds, each contender >= 3 samples a round")
    start = time.perf_counter()
    if "sliding" not in skip:
        for L in lengths:
            sliding(L, args.window, args, dev, dt)
    if "linear" not in skip:
        linear(max(lengths), args, dev, dt)
    if "performer" not in skip:
        performer(max(lengths), args.features, args, dev, dt)
    if "scales" not in skip:
        scales(args, dev, dt)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"# done in {time.perf_counter() - start:.0f} s; load average at the end {load:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
