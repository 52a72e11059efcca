"""What FlexAttention compiles for a window sweep, and how fast its compiled kernel runs, for checkouts alternated.

Each run is a new process with an empty torch.compile cache: 12 calls (sliding window at windows 1, 2, 3 and 5, causal
and not, L = 40; block at sizes 4 and 8 at L = 40 and 100, both padded to one 128 block), then the kernel timed at
L = 4096 (batch 1, 4 heads, d 64, window 16, not causal; the median of 21 calls after one that compiles). Prints the
graphs dynamo compiled, the compiler's CPU seconds (its g++ children), the 12 calls' wall time and the kernel's.

    python benchmarks/flex_graphs.py constants=. tensors=../a-checkout --runs 3

``--mask-mod``: the compiled kernel alone at that size in this process, one block mask built once for each way of
writing the sliding window's mask_mod (the window a constant, a tensor; and causality a tensor too), interleaved.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

CHILD = r"""
import json, resource, statistics, time, torch
from torch._dynamo.utils import counters
import inspect
from attn_core.kernels import flex_attention, run_kernel
# the compiled kernel at every length: a checkout since the unfused path within one block asks for it
ALWAYS = {"compiled": True} if "compiled" in inspect.signature(flex_attention).parameters else {}
g = torch.Generator().manual_seed(0)
t = time.perf_counter()
calls = [(40, "sliding_window", {"window": w}, c) for w in (1, 2, 3, 5) for c in (False, True)]
calls += [(L, "block", {"block": b}, False) for L in (40, 100) for b in (4, 8)]
for L, pattern, opts, causal in calls:
    q, k, v = (torch.randn(1, 2, L, 16, generator=g) for _ in range(3))
    run_kernel("flex", q, k, v, causal=causal, pattern=pattern, **opts, **ALWAYS)
wall = time.perf_counter() - t
c = resource.getrusage(resource.RUSAGE_CHILDREN)
q, k, v = (torch.randn(1, 4, 4096, 64, generator=g) for _ in range(3))
run_kernel("flex", q, k, v, pattern="sliding_window", window=16, **ALWAYS)
times = []
for _ in range(21):
    t = time.perf_counter()
    run_kernel("flex", q, k, v, pattern="sliding_window", window=16, **ALWAYS)
    times.append(time.perf_counter() - t)
print(json.dumps({"calls": len(calls), "graphs": counters["stats"]["unique_graphs"],
                  "compiler_cpu_s": c.ru_utime + c.ru_stime, "wall_s": wall,
                  "kernel_ms": statistics.median(times) * 1e3}))
"""


def one(checkout: str) -> dict:
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": cache, "PYTHONPATH": os.path.abspath(checkout)}
        out = subprocess.run(
            [sys.executable, "-c", CHILD], cwd=checkout, env=env, capture_output=True, text=True, check=True
        )
    return json.loads(out.stdout.strip().splitlines()[-1])


def _spread(values: list[float], fmt: str = ".1f") -> str:
    return f"median {statistics.median(values):{fmt}} ({', '.join(f'{x:{fmt}}' for x in values)})"


def mask_mods(rounds: int) -> None:
    import time

    import torch
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention

    torch.manual_seed(0)
    L, W = 4096, 16
    q, k, v = (torch.randn(1, 4, L, 64) for _ in range(3))
    window, any_key = torch.tensor(W), torch.tensor(True)
    ways = {
        "window a constant": lambda b, h, i, j: (i - j).abs() <= W,
        "window a tensor": lambda b, h, i, j: (i - j).abs() <= window,
        "causality a tensor too": lambda b, h, i, j: ((i - j).abs() <= window) & ((j <= i) | any_key),
    }
    fn = torch.compile(flex_attention, dynamic=False)
    blocks = {name: create_block_mask(mod, None, None, L, L, device="cpu") for name, mod in ways.items()}
    first = fn(q, k, v, block_mask=blocks["window a constant"])
    for name in ways:
        assert torch.allclose(fn(q, k, v, block_mask=blocks[name]), first, atol=1e-5), name
    times: dict[str, list[float]] = {name: [] for name in ways}
    for _ in range(rounds):
        for name in ways:
            t = time.perf_counter()
            fn(q, k, v, block_mask=blocks[name])
            times[name].append((time.perf_counter() - t) * 1e3)
    for name, ts in times.items():
        q25, q75 = statistics.quantiles(ts, n=4)[0], statistics.quantiles(ts, n=4)[2]
        print(f"{name:24}  median {statistics.median(ts):.1f} ms  quartiles {q25:.1f}-{q75:.1f} ms ({rounds} calls)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("checkouts", nargs="*", help="NAME=PATH, each a checkout of this project")
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--mask-mod", action="store_true", help="the kernel alone, three ways of writing the mask_mod")
    ap.add_argument("--rounds", type=int, default=40)
    a = ap.parse_args()
    if a.mask_mod:
        mask_mods(a.rounds)
        return
    named = dict(item.split("=", 1) for item in a.checkouts)
    got: dict[str, list[dict]] = {name: [] for name in named}
    for _ in range(a.runs):
        for name, path in named.items():
            got[name].append(one(path))
    for name, rows in got.items():
        print(
            f"{name:10}  {rows[0]['calls']} calls  {rows[0]['graphs']} graphs"
            f"  compiler CPU {_spread([r['compiler_cpu_s'] for r in rows])} s"
            f"  wall {_spread([r['wall_s'] for r in rows])} s"
            f"  kernel at L=4096 {_spread([r['kernel_ms'] for r in rows])} ms"
        )


if __name__ == "__main__":
    main()
