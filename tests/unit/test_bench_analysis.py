"""The Complexity page's analysis (attn_core.bench.analysis) on made-up rows, against numbers worked out by hand."""

import pytest

from attn_core import bench
from attn_core.bench import analysis

FAMILIES = {"dense": "full", "fused": "full", "local": "sparse", "lin": "linear", "proj": "low_rank"}


def row(kernel, L, ms, *, iqr=None, runs=7, gflops=None, peak=None, status="ok"):
    r = bench.Row(kernel, L, 1, 4, 64, "cpu", "fp32", False, median_ms=ms, runs=runs if ms else 0)
    r.iqr_ms = (0.01 * ms if ms else None) if iqr is None else iqr
    r.gflops, r.peak_bytes, r.status = gflops, peak, status
    return r


def made_up():
    """Times in ms at L = 256 .. 4096, chosen so the answers can be read off:

    L       dense  fused  local  lin   proj
    256       1     0.8    2     4     9
    512       4     3      4     2.5   9
    1024     16     12     8     6     9
    2048     64     48    16     7     50 (noisy: IQR 40 ms)
    4096    256    192    32     8     -- (skipped)
    """
    t = {
        "dense": (1, 4, 16, 64, 256),
        "fused": (0.8, 3, 12, 48, 192),
        "local": (2, 4, 8, 16, 32),
        "lin": (4, 2.5, 6, 7, 8),
        "proj": (9, 9, 9, 50, None),
    }
    rows = []
    for k, ms in t.items():
        for L, m in zip((256, 512, 1024, 2048, 4096), ms):
            if m is None:
                rows.append(row(k, L, None, status="skipped: needs ~9 GiB"))
            elif (k, L) == ("proj", 2048):
                rows.append(row(k, L, m, iqr=40.0, status="ok, noisy"))
            else:
                rows.append(row(k, L, m, gflops=L / 64, peak=L * 1024))
    return rows


def test_the_baseline_is_the_full_kernel_fastest_at_the_longest_length():
    rows = made_up()
    # both "full" kernels reach 4096; fused is faster there (192 < 256)
    assert analysis.baseline(rows, FAMILIES) == "fused"
    # without fused's 4096 row, dense is the one measured longest
    assert analysis.baseline([r for r in rows if (r.kernel, r.seq_len) != ("fused", 4096)], FAMILIES) == "dense"
    # a noisy row does not count: fused's 4096 row made noisy also hands the baseline to dense
    noisy = [row("fused", 4096, 192, iqr=100.0) if (r.kernel, r.seq_len) == ("fused", 4096) else r for r in rows]
    assert analysis.baseline(noisy, FAMILIES) == "dense"
    assert analysis.baseline([r for r in rows if r.kernel in ("local", "lin")], FAMILIES) is None


def test_crossovers_against_the_baseline_by_hand():
    rows = made_up()
    cross = analysis.crossovers(rows, "fused", FAMILIES)
    # local vs fused: 2>0.8, 4>3, 8<12, 16<48, 32<192 -> faster from 1024 on
    # lin vs fused: 4>0.8, 2.5<3, 6<12, 7<48, 8<192 -> from 512
    # proj: trustworthy at 256, 512, 1024 only (2048 noisy, 4096 skipped): 9>0.8, 9>3, 9<12 -> from 1024
    assert cross == {"local": 1024, "lin": 512, "proj": 1024}
    # against dense: local 2>1, 4=4 (not faster), 8<16 ... -> 1024; lin 4>1, 2.5<4, ... -> 512
    assert analysis.crossovers(rows, "dense", FAMILIES) == {"local": 1024, "lin": 512, "proj": 1024}
    # a kernel that is faster early but slower at its longest common length never crosses over
    late = [row("dense", L, ms) for L, ms in ((256, 5), (512, 5), (1024, 5))]
    late += [row("lin", L, ms) for L, ms in ((256, 1), (512, 1), (1024, 9))]
    assert analysis.crossovers(late, "dense", FAMILIES) == {"lin": None}
    assert analysis.crossovers(rows, None, FAMILIES) == {}
    assert analysis.verdict({"local": 1024, "lin": None, "proj": 512}) == [("local", 1024), ("proj", 512)]


def test_slopes_on_exact_powers_of_L():
    lengths = (512, 1024, 2048, 4096, 8192)
    rows = [row("sq", L, 3e-6 * L**2) for L in lengths] + [row("lin", L, 0.01 * L) for L in lengths]
    # from 2048 up only (when there are two such rows): a quadratic start below it does not bend the fit
    rows += [row("bent", 512, 1.0), row("bent", 1024, 4.0)] + [row("bent", L, 0.002 * L) for L in (2048, 4096, 8192)]
    rows.append(row("one", 4096, 1.0))
    slopes = analysis.slopes(rows)
    assert list(slopes) == ["sq", "lin", "bent", "one"]  # sweep order
    assert slopes["sq"] == pytest.approx(2.0) and slopes["lin"] == pytest.approx(1.0)
    assert slopes["bent"] == pytest.approx(1.0)
    assert slopes["one"] is None  # one point has no slope


def test_share_of_matmul_and_the_noisy_rows():
    rows = made_up()
    share = analysis.matmul_share(rows, 80.0)
    measured = [r for r in rows if r.gflops is not None]
    assert len(share) == len(measured) == 23  # 25 rows, less the noisy one and the skipped one (no GFLOP/s)
    first = share[0]
    assert first == {"kernel": "dense", "seq_len": 256, "gflops": 4.0, "share": 5.0, "flag": None}  # 4 of 80 = 5 %
    assert share[4]["share"] == pytest.approx(100 * 64 / 80)  # dense at 4096: 64 GFLOP/s
    assert [(r.kernel, r.seq_len) for r in analysis.noisy_rows(rows)] == [("proj", 2048)]


def test_analyse_gathers_it_with_the_registry_families():
    """With real kernel names and no families given, the registry's families decide the baseline."""
    rows = [row("full", L, 1e-5 * L**2) for L in (1024, 2048, 4096)]
    rows += [row("linear_elu", L, 0.011 * L) for L in (1024, 2048, 4096)]
    shape = bench.Shape(heads=4, d_head=64)
    out = analysis.analyse(rows, shape, peak_gflops=None)
    # full: 10.5, 41.9, 167.8 ms; linear_elu: 11.3, 22.5, 45.1 ms -> faster from 2048
    assert out.baseline == "full" and out.crossovers == {"linear_elu": 2048}
    assert out.verdict == [("linear_elu", 2048)]
    assert out.share is None and out.noisy == []
    assert out.times["full"] == ([1024, 2048, 4096], [r.median_ms for r in rows[:3]])
    assert out.memory == {}  # no row has a peak
    assert out.theory["full"][1][0] == rows[0].median_ms
    assert analysis.projection_params(4, 64) == (256, 4 * 256 * 256)
