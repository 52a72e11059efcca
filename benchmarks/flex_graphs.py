"""What a window sweep of FlexAttention compiles: sliding window at four windows, causal and not, then block at two
sizes and two lengths (one padded block), in a new process with an empty torch.compile cache, for two checkouts
alternated. Prints the graphs dynamo compiled, the compiler's CPU seconds (its g++ children) and the wall time.

    python benchmarks/flex_graphs.py --before ../old-checkout --after . --runs 2
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
import json, resource, time, torch
from torch._dynamo.utils import counters
from attn_core.kernels import run_kernel
g = torch.Generator().manual_seed(0)
t = time.perf_counter()
calls = [(40, "sliding_window", {"window": w}, c) for w in (1, 2, 3, 5) for c in (False, True)]
calls += [(L, "block", {"block": b}, False) for L in (40, 100) for b in (4, 8)]
for L, pattern, opts, causal in calls:
    q, k, v = (torch.randn(1, 2, L, 16, generator=g) for _ in range(3))
    run_kernel("flex", q, k, v, causal=causal, pattern=pattern, **opts)
c = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"calls": len(calls), "graphs": counters["stats"]["unique_graphs"],
                  "compiler_cpu_s": c.ru_utime + c.ru_stime, "wall_s": time.perf_counter() - t}))
"""


def one(checkout: str) -> dict:
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": cache, "PYTHONPATH": os.path.abspath(checkout)}
        out = subprocess.run(
            [sys.executable, "-c", CHILD], cwd=checkout, env=env, capture_output=True, text=True, check=True
        )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--before", required=True)
    ap.add_argument("--after", default=".")
    ap.add_argument("--runs", type=int, default=2)
    a = ap.parse_args()
    got: dict[str, list[dict]] = {"before": [], "after": []}
    for _ in range(a.runs):
        for side in ("before", "after"):
            got[side].append(one(getattr(a, side)))
    for side, rows in got.items():
        wall = [r["wall_s"] for r in rows]
        cpu = [r["compiler_cpu_s"] for r in rows]
        print(
            f"{side:6}  {rows[0]['calls']} calls  {rows[0]['graphs']} graphs"
            f"  compiler CPU median {statistics.median(cpu):.1f} s"
            f" ({', '.join(f'{x:.1f}' for x in cpu)})  wall median {statistics.median(wall):.1f} s"
            f" ({', '.join(f'{x:.1f}' for x in wall)})"
        )


if __name__ == "__main__":
    main()
