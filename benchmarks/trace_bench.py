"""Full traces on this CPU: 64 tokens / 8 heads / d_model 512 (goal < 20 ms) and 512 tokens (goal < 300 ms)."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import torch
from torch.utils import benchmark

from attn_core import Settings, run_trace

for n in (64, 512):
    s = Settings(
        sentence=" ".join(f"w{i}" for i in range(n)), d_model=512, heads=8, layout="standard", init="standard"
    )
    run_trace(s)
    m = benchmark.Timer(
        "run_trace(s)", globals={"run_trace": run_trace, "s": s}, num_threads=torch.get_num_threads()
    ).blocked_autorange(min_run_time=2)
    print(
        f"trace L={n:4d} H=8 d_model=512: median {m.median * 1e3:7.2f} ms  "
        f"iqr {m.iqr * 1e3:6.2f} ms  runs {len(m.times)}"
    )
