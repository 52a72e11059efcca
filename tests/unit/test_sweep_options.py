"""The Complexity sweep passes each kernel its own options: the child's argv carries every option
of the shape (dilation, global tokens and block too, not the window alone), and each row's GFLOP/s
comes from that kernel's own FLOP model with those values (block attention from its block size)."""

import json

import pytest

from attn_core import bench
from attn_core.cli import main
from attn_core.kernels import pattern_pairs
from attn_core.knobs import KNOBS
from explorer.jobs import sweeps


def test_the_sweep_argv_carries_every_kernel_option_and_the_rows_count_with_them(capsys):
    shape = bench.Shape(batch=1, heads=2, d_head=16, window=3, block=16, dilation=3, global_tokens=2)
    kernels = ("block", "dilated", "global_window")
    cfg = bench.SweepConfig(kernels=kernels, lengths=(96,), min_run_time=0.01, shape=shape)
    argv = sweeps.command(cfg)
    for name, value in bench.shape_options(shape).items():
        assert argv[argv.index(KNOBS[name].cli) + 1] == str(value), name
    assert main(argv[3:]) == 0  # what the child runs
    lines = capsys.readouterr().out.splitlines()
    rows = {r["kernel"]: r for r in (json.loads(x)["row"] for x in lines if '"row"' in x)}
    assert set(rows) == set(cfg.kernels) and all(r["status"].startswith("ok") for r in rows.values()), rows
    pairs = {  # counted independently: the pattern's own pairs with the shape's values
        "block": 6 * 16 * 16,  # 96 tokens = 6 blocks of 16, each 16 x 16 (not a window of 3)
        "dilated": pattern_pairs("dilated", 96, causal=False, window=3, dilation=3),
        "global_window": pattern_pairs("global_window", 96, causal=False, window=3, global_tokens=2),
    }
    for name, r in rows.items():
        flops = 1 * 2 * 4 * pairs[name] * 16
        assert r["gflops"] == pytest.approx(flops / (r["median_ms"] / 1e3) / 1e9, rel=1e-3), name
