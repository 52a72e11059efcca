"""What the Complexity page says about a sweep's rows agrees with itself: the crossover heading names the kernel
its column compares with, a share of the matmul above 100 % is marked as unreliable (and why), a slope that
cannot be fitted is a dash with its reason in the UI's language, and a kernel has one colour in both charts.

A sweep whose child prints made-up rows, through the real job path (as test_complexity_analysis)."""

import json
import os
import sys
from dataclasses import asdict
from pathlib import Path

import pytest
from conftest import run_made_up_sweep
from streamlit.testing.v1 import AppTest

from attn_core import bench
from attn_core.bench import record
from explorer.base.i18n import STRINGS, kernel_label
from explorer.jobs import sweeps

APP = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "app.py")
# ms = c L^p; the materialised full kernel is the faster of the two full ones here, so it is the baseline
LAWS = {"full": (6e-6, 2), "sdpa": (1e-5, 2), "sliding_window": (2e-3, 1), "linear_elu": (4e-3, 1)}
PEAK = 40.0  # the made-up matmul GFLOP/s
LENGTHS = (256, 512, 1024, 2048, 4096)


def made_up_rows() -> list[dict]:
    rows = []
    for kernel, (c, p) in LAWS.items():
        for L in LENGTHS:
            ms = c * L**p
            noisy = kernel == "linear_elu" and L != 256  # one trustworthy length left: no slope
            row = bench.Row(kernel, L, 1, 4, 64, "cpu", "fp32", False, median_ms=ms, runs=7)
            row.iqr_ms = (0.5 if noisy else 0.01) * ms
            row.gflops = 177.0 if (kernel, L) == ("sliding_window", 4096) else 1.0  # 442.5 % of 40: implausible
            row.peak_bytes = None if kernel == "full" else 1024 * L  # the memory chart lacks the first kernel
            rows.append(asdict(row))
    return rows


def child(rows: list[dict]) -> list[str]:
    lines = [json.dumps({"row": r}) for r in rows] + [json.dumps({"matmul_gflops": PEAK})]
    return [sys.executable, "-c", f"print({chr(10).join(lines)!r})"]


@pytest.fixture(scope="module")
def runner():
    """One finished sweep of the made-up rows, shared by the module's tests (a finished sweep is shared)."""
    mp = pytest.MonkeyPatch()
    mp.setattr(record, "RECORD", Path(__file__).with_name("no_such_record.csv"))  # no recorded slopes to fall back on
    _, job = run_made_up_sweep(mp, child(made_up_rows()))
    assert job.state == "done" and len(job.rows) == 20
    yield sweeps.RUNNER
    mp.undo()


def page(lang: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["lang"] = lang
    at.run()
    at.switch_page("pages/6_complexity.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def table(at, header: str):
    return next(d.value for d in at.dataframe if header in d.value.columns)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_crossover_heading_names_the_baseline_its_column_uses(runner, lang):
    at = page(lang)
    base = (
        kernel_label(
            "full",
        )
        if lang == "en"
        else STRINGS["kernel.full.label"][1]
    )
    column = STRINGS["cx_from"][lang == "zh"].format(base=base)
    cross = table(at, column)  # the column compares with the materialised kernel, the faster full one here
    assert list(cross[STRINGS["cx_col.kernel"][lang == "zh"]])  # sliding window and linear
    heading = STRINGS["cx_cross"][lang == "zh"].split("{")[0]
    headings = [h.value for h in at.subheader if h.value.startswith(heading)]
    assert len(headings) == 1 and base in headings[0], headings
    other = STRINGS["kernel.sdpa.label"][lang == "zh"]
    assert "SDPA" not in headings[0] and other not in headings[0], headings


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_slope_that_cannot_be_fitted_is_a_dash_with_its_reason(runner, lang):
    at = page(lang)
    col = STRINGS["cx_col_slope"][lang == "zh"]
    slopes = table(at, col)
    by_kernel = dict(zip(slopes[STRINGS["cx_col.kernel"][lang == "zh"]], slopes[col]))
    label = STRINGS["kernel.linear_elu.label"][lang == "zh"]
    assert by_kernel[label] == "—" and "None" not in map(str, slopes[col]), by_kernel
    assert by_kernel[STRINGS["kernel.full.label"][lang == "zh"]] == "2.00"  # an exact power law: 2
    reason = STRINGS["cx_slope_none"][lang == "zh"]
    assert any(c.value == f"— {reason}" for c in at.caption), [c.value for c in at.caption]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_share_above_the_matmul_is_marked_unreliable(runner, lang):
    at = page(lang)
    zh = lang == "zh"
    share = table(at, STRINGS["cx_col_share"][zh])
    flags = share[STRINGS["cx_col_reliable"][zh]]
    over = share[STRINGS["cx_col_share"][zh]] > 100
    assert over.sum() == 1 and share[over][STRINGS["cx_col_share"][zh]].iloc[0] == 442.5  # 177 of 40 GFLOP/s
    assert list(flags[over]) == [STRINGS["cx_share_flag"][zh]]
    noisy = share[STRINGS["cx_col.kernel"][zh]] == STRINGS["kernel.linear_elu.label"][zh]
    assert list(flags[noisy]) == [STRINGS["cx_share_ok"][zh]] + [STRINGS["cx_share_noisy"][zh]] * 4
    assert set(flags[~over & ~noisy]) == {STRINGS["cx_share_ok"][zh]}
    assert any(c.value == STRINGS["cx_share_note"][zh].strip() for c in at.caption)


def test_a_kernel_has_one_colour_in_both_charts(runner):
    at = page("en")
    charts = {c.proto.id: json.loads(c.proto.spec) for c in at.get("plotly_chart")}
    specs = [s for s in charts.values() if s["layout"].get("xaxis", {}).get("type") == "log"]
    assert len(specs) == 2, [s["layout"].get("title") for s in charts.values()]
    colour = [
        {tr["name"]: tr["line"]["color"] for tr in s["data"] if tr.get("mode") == "lines+markers"} for s in specs
    ]
    time_colours, memory_colours = colour
    assert kernel_label("full") in time_colours and kernel_label("full") not in memory_colours  # no memory for it
    shared = set(time_colours) & set(memory_colours)
    assert len(shared) == 3 and all(time_colours[k] == memory_colours[k] for k in shared), colour
    assert len(set(time_colours.values())) == 4  # and four kernels, four colours
