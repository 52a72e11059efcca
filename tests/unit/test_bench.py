"""The benchmark's logic: slopes, crossovers, the memory guard, the CSV, one sweep at a time."""

import csv
import io
import threading
import time

import pytest

from attn_core import bench
from attn_core.errors import AttentionConfigError


def test_slope_of_synthetic_power_laws():
    L = [512, 1024, 2048, 4096, 8192]
    assert bench.fit_slope(L, [3e-6 * x**2 for x in L]) == pytest.approx(2.0)
    assert bench.fit_slope(L, [0.01 * x for x in L]) == pytest.approx(1.0)
    assert bench.fit_slope([1024], [1.0]) is None


def test_crossover_on_synthetic_curves():
    full = {L: 1e-5 * L**2 for L in (256, 512, 1024, 2048, 4096)}
    linear = {L: 0.01 * L for L in full}  # equal at L = 1000
    assert bench.crossover(full, linear) == 1024
    assert bench.crossover(full, {L: 2 * v for L, v in full.items()}) is None
    # a kernel that wins early but loses again at the longest length has no crossover
    assert bench.crossover({1: 5, 2: 5, 3: 5}, {1: 1, 2: 1, 3: 9}) is None


def test_guard_skips_a_run_that_would_not_fit():
    cfg = bench.SweepConfig(
        kernels=("full", "sliding_window"), lengths=(4096,), budget_bytes=64 << 20, min_run_time=0.01
    )
    rows = list(bench.sweep(cfg))
    assert rows[0].status.startswith("skipped: needs ~") and rows[0].median_ms is None
    assert rows[1].status.startswith("ok") and rows[1].median_ms > 0 and rows[1].peak_bytes > 0


def test_csv_has_the_contract_columns():
    cfg = bench.SweepConfig(kernels=("sdpa", "linear_elu"), lengths=(64, 128), min_run_time=0.01)
    rows = list(bench.sweep(cfg))
    buf = io.StringIO()
    bench.rows_to_csv(rows, buf)
    table = list(csv.DictReader(io.StringIO(buf.getvalue())))
    need = {
        "kernel",
        "seq_len",
        "batch",
        "heads",
        "d_head",
        "device",
        "dtype",
        "median_ms",
        "iqr_ms",
        "peak_bytes",
        "status",
    }
    assert need <= set(table[0])
    assert [(r["kernel"], int(r["seq_len"])) for r in table] == [
        ("sdpa", 64),
        ("sdpa", 128),
        ("linear_elu", 64),
        ("linear_elu", 128),
    ]
    assert all(
        r["status"].startswith("ok") and float(r["median_ms"]) > 0 for r in table
    )  # "ok, noisy" is measured too


def test_a_second_sweep_is_queued_not_run_in_parallel():
    cfg = bench.SweepConfig(kernels=("sdpa",), lengths=(64,), min_run_time=0.01)
    spans, queued = {}, []

    def run(name):
        start = time.perf_counter()
        for _ in bench.exclusive_sweep(cfg, on_queued=lambda: queued.append(name), poll_s=0.01):
            pass
        spans[name] = (start, time.perf_counter())

    with bench.SWEEP_LOCK:  # a sweep is running
        t = threading.Thread(target=run, args=("second",))
        t.start()
        time.sleep(0.3)
        assert queued == ["second"] and "second" not in spans
        released = time.perf_counter()
    t.join(30)
    assert spans["second"][1] > released


def test_bad_sweeps_are_refused_clearly(monkeypatch):
    with pytest.raises(AttentionConfigError, match="Unknown kernel"):
        bench.validate_sweep(bench.SweepConfig(kernels=("nope",)))
    for device in ("tpu", "cuda:99", ""):  # no machine has these
        with pytest.raises(AttentionConfigError, match="not available"):
            bench.validate_sweep(bench.SweepConfig(device=device))
    monkeypatch.setattr(bench.devices, "available_devices", lambda: ["cpu"])  # a machine without a GPU, on any machine
    for device in ("cuda", "mps"):
        with pytest.raises(AttentionConfigError, match="not available") as err:
            bench.validate_sweep(bench.SweepConfig(device=device))
        assert "cpu" in str(err.value)  # what can be used instead
    bench.validate_sweep(bench.SweepConfig(device="cpu"))
    monkeypatch.setattr(bench.devices, "available_devices", lambda: ["cuda", "cpu"])  # and one with a GPU
    bench.validate_sweep(bench.SweepConfig(device="cuda"))


def test_cli_bench_writes_csv(tmp_path, capsys):
    from attn_core.cli import main

    out = tmp_path / "b.csv"
    assert (
        main(
            [
                "bench",
                "--kernels",
                "sdpa,sliding_window",
                "--lengths",
                "64,128",
                "--window",
                "8",
                "--min-run-time",
                "0.01",
                "--csv",
                str(out),
            ]
        )
        == 0
    )
    with open(out) as f:
        assert len(list(csv.DictReader(f))) == 4
    assert main(["bench", "--kernels", "bogus"]) == 2
    assert "Unknown kernel" in capsys.readouterr().err


def test_series_and_theory_curves():
    sh = bench.Shape(batch=1, heads=2, d_head=16, causal=False, window=4)
    rows = [bench.Row("full", L, 1, 2, 16, "cpu", "float32", False) for L in (64, 128, 256)]
    for r, ms in zip(rows, (1.0, 4.0, 16.0)):
        r.median_ms, r.peak_bytes = ms, 2**20 * ms
    skipped = bench.Row("full", 512, 1, 2, 16, "cpu", "float32", False)  # not measured (e.g. the guard): left out
    s = bench.series(rows + [skipped])
    assert s == {"full": ([64, 128, 256], [1.0, 4.0, 16.0])}
    assert bench.series(rows, "peak_bytes", scale=2**-20)["full"][1] == [1.0, 4.0, 16.0]
    theory = bench.theory_curves(s, sh)["full"]
    assert theory[0] == [64, 128, 256] and theory[1][0] == 1.0
    ratio = bench.estimate_flops("full", 256, sh) / bench.estimate_flops("full", 64, sh)
    assert abs(theory[1][2] - ratio) < 1e-9 and ratio > 10  # full attention's FLOPs grow ~L^2


def test_slow_first_calls_are_warmed_away_and_every_row_has_at_least_five_samples(monkeypatch):
    """A kernel whose first calls at a shape are slow and get faster (like a cold allocator, page
    faults or a compile), on a simulated clock (so the test does not depend on this machine's
    load): without the warm-up, four of them would be among the first five samples."""
    from attn_core import bench
    from attn_core.kernels import KERNELS, full_attention, register, unregister

    clock = {"now": 0.0}
    calls = {}

    def cold_then_fast(q, k, v, *, causal=False, scale=None):
        n = calls[q.shape[-2]] = calls.get(q.shape[-2], 0) + 1
        clock["now"] += 0.32 / 2 ** (n - 1) if n <= 6 else 1e-4  # 320, 160, 80, 40, 20, 10 ms, then 0.1 ms
        return full_attention(q, k, v, causal=causal, scale=scale)

    monkeypatch.setattr(time, "perf_counter", lambda: clock["now"])  # the clock every bench module reads
    spec = {f: getattr(KERNELS["full"], f) for f in ("label", "family", "formula", "time", "memory", "paper")}
    spec |= {f: getattr(KERNELS["full"], f) for f in ("weights", "flops", "peak_bytes")}
    register("cold_test", cold_then_fast, **spec)
    try:
        cfg = bench.SweepConfig(kernels=("cold_test",), lengths=(64, 128), min_run_time=0.01)
        rows = list(bench.sweep(cfg))
    finally:
        unregister("cold_test")
    for row in rows:
        assert row.runs >= bench.MIN_SAMPLES and row.warmup_calls == 8  # six slow calls, then two steady
        assert row.median_ms == pytest.approx(0.1)  # none of the slow calls was timed
        assert bench.trustworthy(row)


def test_noisy_rows_stay_out_of_fits_and_crossovers():
    from attn_core import bench

    def row(L, ms, iqr, runs=5):
        r = bench.Row("k", L, 1, 1, 8, "cpu", "fp32", False, median_ms=ms, iqr_ms=iqr, runs=runs)
        return r

    rows = [row(2048, 10, 1), row(4096, 40, 2), row(8192, 5, 4), row(16384, 640, 10, runs=2)]
    lengths, medians = bench.fit_range(rows, "k")
    assert lengths == [2048, 4096]  # the noisy row (IQR 80%) and the 2-sample row are left out
    assert bench.fit_slope(lengths, medians) == pytest.approx(2.0)
