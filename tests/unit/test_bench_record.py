"""The recorded sweep the Complexity page falls back on: read only when it is one, used only for the configuration
it measured and only where the live rows cannot fit a slope that it can."""

import io
import json
from dataclasses import replace

from attn_core import bench
from attn_core.bench import record


def rows(noisy_from: int | None = None) -> list[bench.Row]:
    out = []
    for kernel, p in (("full", 2), ("linear_elu", 1)):
        for L in (256, 512, 1024, 2048, 4096):
            r = bench.Row(kernel, L, 1, 4, 64, "cpu", "fp32", False, median_ms=1e-5 * L**p, runs=7)
            r.iqr_ms = (0.6 if noisy_from is not None and L >= noisy_from else 0.01) * r.median_ms
            out.append(r)
    return out


def text(rs: list[bench.Row], meta: dict | None = None) -> str:
    buf = io.StringIO()
    bench.rows_to_csv(rs, buf)
    meta = (
        {"measured": "2026-12-06T08:17:06Z", "machine": "x86_64, 2 threads", "torch": "2.13"} if meta is None else meta
    )
    return "# " + json.dumps(meta) + "\n" + buf.getvalue()


CFG = bench.SweepConfig(kernels=("full", "linear_elu"), lengths=(256, 512, 1024, 2048, 4096))


def test_a_record_reads_back_as_written():
    rec = record.parse(text(rows()))
    assert (
        rec is not None and list(rec.rows) == rows() and rec.shape == bench.Shape() and rec.machine.startswith("x86")
    )


def test_what_is_not_a_record_reads_as_none():
    good = text(rows())
    head, body = good.split("\n", 1)
    bad = [
        body,  # no header
        "# not json\n" + body,
        text(rows(), {"machine": "x"}),  # no date
        head + "\n" + body.replace("full,256", "full,abc"),
        head + "\n" + body.replace(",7,", ",7.5,", 1),
        head + "\n" + body.replace("False", "maybe", 1),
        head + "\n" + body.replace(",1,4,64,", ",1,8,64,", 1),  # two shapes in one record
        head + "\n" + body.split("\n", 1)[0] + "\n",  # no rows
        head + "\n" + body.replace("kernel,", "colonel,", 1),
        "",
    ]
    assert [record.parse(t) for t in bad] == [None] * len(bad)


def test_the_record_fills_in_only_slopes_the_live_sweep_cannot_fit():
    rec = record.parse(text(rows()))
    assert record.fallback_slopes(rows(), rec, CFG) is None  # clean: the live slopes stay
    fallback = record.fallback_slopes(rows(noisy_from=512), rec, CFG)
    assert fallback is not None and abs(fallback["full"] - 2) < 1e-9 and abs(fallback["linear_elu"] - 1) < 1e-9
    assert record.fallback_slopes(rows(noisy_from=512), None, CFG) is None  # no record: nothing to fall back on
    other = replace(CFG, shape=bench.Shape(heads=8))  # a record of another shape says nothing of this one
    assert record.fallback_slopes(rows(noisy_from=512), rec, other) is None
    noisy_record = record.parse(text(rows(noisy_from=512)))  # a record that cannot fit them either: no use
    assert record.fallback_slopes(rows(noisy_from=512), noisy_record, CFG) is None


def test_the_shipped_record_is_one_and_measured_the_pages_default_sweep():
    rec = record.load()
    assert rec is not None and rec.device == "cpu" and rec.dtype == "fp32" and rec.shape == bench.Shape()
    assert {r.kernel for r in rec.rows} == set(bench.DEFAULT_KERNELS)
