"""The Complexity page draws what attn_core.bench.analysis computes: a sweep whose child prints made-up rows
(exact power laws) through the real job path, and the page's slopes, crossovers, % of matmul and verdict worked
out by hand."""

import json
import os
import sys
from dataclasses import asdict

from conftest import run_made_up_sweep

from attn_core import bench
from explorer.base.i18n import kernel_label

APP = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "app.py")
LAWS = {"full": (1e-5, 2), "sdpa": (6e-6, 2), "sliding_window": (2e-3, 1), "linear_elu": (4e-3, 1)}  # ms = c L^p
PEAK = 40.0  # the made-up matmul GFLOP/s


def made_up_rows() -> list[dict]:
    rows = []
    for kernel, (c, p) in LAWS.items():
        for L in (256, 512, 1024, 2048, 4096):
            ms = c * L**p
            noisy = (kernel, L) == ("linear_elu", 2048)  # IQR 50 %: drawn, left out of slopes and crossovers
            row = bench.Row(kernel, L, 1, 4, 64, "cpu", "fp32", False, median_ms=ms, runs=7)
            row.iqr_ms, row.gflops, row.peak_bytes = (0.5 if noisy else 0.01) * ms, L / 100, 1024 * L
            rows.append(asdict(row))
    return rows


def child(rows: list[dict]) -> list[str]:
    lines = [json.dumps({"row": r}) for r in rows] + [json.dumps({"matmul_gflops": PEAK})]
    return [sys.executable, "-c", f"print({chr(10).join(lines)!r})"]


def table(at, header: str):
    return next(d.value for d in at.dataframe if header in d.value.columns)


def test_the_page_shows_the_analysis_of_the_rows(monkeypatch):
    at, job = run_made_up_sweep(monkeypatch, child(made_up_rows()))
    at.run()
    assert not at.exception and job.state == "done" and len(job.rows) == 20

    slopes = table(at, "slope")  # exact power laws: 2 for the two full kernels, 1 for the others (as text)
    assert dict(zip(slopes["kernel"], slopes["slope"])) == {
        kernel_label("full"): "2.00",
        kernel_label("sdpa"): "2.00",
        kernel_label("sliding_window"): "1.00",
        kernel_label("linear_elu"): "1.00",
    }
    # the baseline is fused SDPA (100.7 ms at 4096 against 167.8); sliding window: 0.51 > 0.39 ms at 256,
    # 1.02 < 1.57 at 512 and faster from there; linear: 2.05 > 1.57 at 512, 4.10 < 6.29 at 1024 (2048 is noisy)
    cross = table(at, f"faster than {kernel_label('sdpa')} from L =")
    assert list(cross["kernel"]) == [kernel_label("sliding_window"), kernel_label("linear_elu")]
    assert list(cross[f"faster than {kernel_label('sdpa')} from L ="]) == ["512", "1024"]
    share = table(at, "% of matmul")  # L / 100 GFLOP/s of 40, to one decimal: 2.56 -> 6.4 %, 40.96 -> 102.4 %
    assert len(share) == 20 and list(share["% of matmul"].iloc[:5]) == [6.4, 12.8, 25.6, 51.2, 102.4]
    assert any("median, see status): 1." in w.value for w in at.warning)  # the one noisy row is counted
    verdict = f"{kernel_label('sliding_window')}: L ≥ 512, {kernel_label('linear_elu')}: L ≥ 1024"
    assert any(verdict in i.value for i in at.info)
