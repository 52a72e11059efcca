"""Two checkouts of this repository timed against each other on the same kernels (figures, not a test):
"did a refactor of attn_core change its speed?". Each (checkout, kernel) is timed in a fresh process
that imports attn_core from that checkout; the two checkouts take turns kernel by kernel, round after
round (A B, A B, ...), so a machine that slows down slows both. Each process warms the kernel up, then
prints the median of its samples; printed here: per kernel the median over rounds for each checkout,
the spread (min-max of the rounds) and the ratio new / old. Outputs are compared (max |Δ| between the two
checkouts' outputs on the same seeded input) before anything is timed.

    git worktree add /tmp/before <commit>
    python benchmarks/kernels_ab.py --old /tmp/before --new . --rounds 3 --length 4096 --threads 1
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

KERNELS = {  # name -> its options
    "full": {},
    "sliding_window": {"window": 128},
    "dilated": {"window": 64, "dilation": 2},
    "global_window": {"window": 64, "global_tokens": 8},
    "block": {"block": 64},
    "linear_elu": {},
    "causal_linear": {},
    "performer": {"features": 256, "seed": 0},
    "linformer": {"proj_k": 256, "seed": 0},
}

CHILD = r"""
import json, statistics, sys, time
sys.path.insert(0, sys.argv[1])
import torch
torch.set_num_threads(int(sys.argv[5]))
from attn_core.kernels import run_kernel
name, L, opts = sys.argv[2], int(sys.argv[3]), json.loads(sys.argv[4])
g = torch.Generator().manual_seed(0)
q, k, v = (torch.randn(1, 4, L, 64, generator=g) for _ in range(3))
out = run_kernel(name, q, k, v, **opts)
def once():
    t0 = time.perf_counter(); run_kernel(name, q, k, v, **opts); return time.perf_counter() - t0
for _ in range(3):
    once()
samples = []
t_end = time.perf_counter() + 1.0
while len(samples) < 5 or time.perf_counter() < t_end:
    samples.append(once())
torch.save(out, sys.argv[6])
print(json.dumps({"ms": 1e3 * statistics.median(samples), "n": len(samples)}))
"""


def child(root: str, name: str, args, out_path: str) -> dict:
    cmd = [sys.executable, "-c", CHILD, os.path.abspath(root), name, str(args.length), json.dumps(KERNELS[name])]
    cmd += [str(args.threads), out_path]
    res = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--old", required=True, help="the checkout before the change")
    ap.add_argument("--new", default=".", help="the checkout after it")
    ap.add_argument("--length", type=int, default=4096)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--kernels", default=",".join(KERNELS))
    args = ap.parse_args()
    import torch

    names = [n for n in args.kernels.split(",") if n]
    print(f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, L = {args.length}, B = 1, H = 4, d = 64, fp32,")
    print(f"# torch threads {args.threads}, {args.rounds} rounds; load average at the start {os.getloadavg()[0]:.1f}")
    times: dict[str, dict[str, list[float]]] = {n: {"old": [], "new": []} for n in names}
    tmp = f"/tmp/kernels_ab_{os.getpid()}"
    for r in range(args.rounds):
        for n in names:
            for side in ("old", "new"):
                times[n][side].append(child(getattr(args, side), n, args, f"{tmp}_{side}.pt")["ms"])
            if r == 0:
                a, b = torch.load(f"{tmp}_old.pt"), torch.load(f"{tmp}_new.pt")
                times[n]["diff"] = [float((a - b).abs().max())]
    head = f"{'kernel':16s} {'old ms':>9s} {'spread':>17s} {'new ms':>9s} {'spread':>17s}"
    print(f"{head} {'new/old':>8s} {'max |Δ|':>9s}")
    for n in names:
        o, w = times[n]["old"], times[n]["new"]
        mo, mw = statistics.median(o), statistics.median(w)
        print(
            f"{n:16s} {mo:9.2f} {min(o):8.2f}-{max(o):8.2f} {mw:9.2f} {min(w):8.2f}-{max(w):8.2f} {mw / mo:8.2f} "
            f"{times[n]['diff'][0]:9.2e}"
        )
    print(f"# load average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
