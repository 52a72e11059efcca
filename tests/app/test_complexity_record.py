"""On a busy server the live sweep can be too noisy to fit a slope: the Complexity page then shows the slopes of the
sweep recorded on this machine (benchmarks/results/complexity_record_cpu.csv), says so with when and on what it was
measured, in both languages; a clean live sweep keeps its own. The record's slopes are worked out here from the file
itself (the csv module, numpy's least squares), not through attn_core.bench."""

import csv
import io
import json
import math
import os
import sys
from dataclasses import asdict

import numpy as np
import pytest
from conftest import run_made_up_sweep
from streamlit.testing.v1 import AppTest

from attn_core import bench
from explorer.base.i18n import STRINGS
from explorer.base.safe import md

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
APP = os.path.join(ROOT, "app.py")
RECORD = os.path.join(ROOT, "benchmarks", "results", "complexity_record_cpu.csv")
LENGTHS = (256, 512, 1024, 2048, 4096)  # the page's default lengths, as a lesson runs it
SLOPE = {"full": 2, "sdpa": 2}  # exact power laws: 2 for the full kernels, 1 for the rest


def record() -> tuple[dict, dict[str, float | None]]:
    """The record's header and, per kernel, the slope of log time against log L over its trustworthy rows (at least
    5 samples, IQR at most a quarter of the median) from L = 2048 up when there are two such, else all of them."""
    with open(RECORD, encoding="utf-8") as fh:
        head, body = fh.readline(), fh.read()
    meta = json.loads(head.lstrip("#"))
    by_kernel: dict[str, list[tuple[int, float]]] = {}
    for r in csv.DictReader(io.StringIO(body)):
        by_kernel.setdefault(r["kernel"], [])
        median, iqr = float(r["median_ms"] or 0), float(r["iqr_ms"] or 0)
        if int(r["seq_len"]) in LENGTHS and int(r["runs"]) >= 5 and median > 0 and iqr <= 0.25 * median:
            by_kernel[r["kernel"]].append((int(r["seq_len"]), median))
    fitted = {}
    for kernel, pts in by_kernel.items():
        upper = [p for p in pts if p[0] >= 2048]
        pts = upper if len(upper) >= 2 else pts
        fitted[kernel] = None if len(pts) < 2 else float(np.polyfit(*np.log(np.array(pts, dtype=float)).T, 1)[0])
    return meta, fitted


def made_up_rows(noisy: bool) -> list[dict]:
    rows = []
    for kernel in bench.DEFAULT_KERNELS:
        for L in LENGTHS:
            ms = 1e-5 * L ** SLOPE.get(kernel, 1)
            row = bench.Row(kernel, L, 1, 4, 64, "cpu", "fp32", False, median_ms=ms, runs=7)
            row.iqr_ms = (0.6 if noisy and L >= 512 else 0.01) * ms  # noisy: one trustworthy length left, no slope
            row.gflops, row.peak_bytes = 1.0, 1024 * L
            rows.append(asdict(row))
    return rows


def child(rows: list[dict]) -> list[str]:
    lines = [json.dumps({"row": r}) for r in rows] + [json.dumps({"matmul_gflops": 40.0})]
    return [sys.executable, "-c", f"print({chr(10).join(lines)!r})"]


@pytest.fixture(scope="module", params=["noisy", "clean"])
def sweep(request):
    """One finished made-up sweep of the page's default configuration, shared by the module's tests."""
    mp = pytest.MonkeyPatch()
    _, job = run_made_up_sweep(mp, child(made_up_rows(request.param == "noisy")))
    assert job.state == "done" and len(job.rows) == len(bench.DEFAULT_KERNELS) * len(LENGTHS)
    yield request.param
    mp.undo()


def page(lang: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["lang"] = lang
    at.run()
    at.switch_page("pages/6_complexity.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_slopes_are_the_recorded_ones_only_when_the_live_sweep_cannot_fit_them(sweep, lang):
    zh = lang == "zh"
    at = page(lang)
    col, double = STRINGS["cx_col_slope"][zh], STRINGS["cx_col_double"][zh]
    table = next(d.value for d in at.dataframe if col in d.value.columns)
    names = [STRINGS[f"kernel.{k}.label"][zh] for k in bench.DEFAULT_KERNELS]
    assert list(table[STRINGS["cx_col.kernel"][zh]]) == names
    notice = STRINGS["cx_recorded"][zh].strip().split("{")[0]
    said = [i.value for i in at.info if i.value.startswith(notice)]
    if sweep == "clean":  # its own slopes, exact: no word of a record
        assert list(table[col]) == [f"{SLOPE.get(k, 1):.2f}" for k in bench.DEFAULT_KERNELS] and not said
        return
    meta, fitted = record()
    assert any(v is not None for v in fitted.values())  # the record has slopes to give
    expected = [fitted.get(k) for k in bench.DEFAULT_KERNELS]
    assert list(table[col]) == ["—" if v is None else f"{v:.2f}" for v in expected]
    for text, v in zip(table[double], expected):  # the tour's question: how much longer when L doubles
        assert text == "—" if v is None else math.isclose(float(text.split()[-1]), 2**v, rel_tol=0.03, abs_tol=0.05)
    assert len(said) == 1, [i.value for i in at.info]  # said as such: when and on what it was measured
    named = (meta["measured"][:10], meta["measured"][11:16], md(meta["machine"]), md(meta["torch"]))
    assert all(part in said[0] for part in named), (named, said)
