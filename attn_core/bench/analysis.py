"""What a sweep's rows say: the curves, the fitted slopes, the baseline and the crossovers, the share of the
device's matmul throughput, and the verdict. Pure functions on the rows (anything with the ``Row`` fields); the
Complexity page and the CLI only draw or print them.

Only trustworthy rows (enough samples, a small spread: ``timing.trustworthy``) enter the slopes and crossovers.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from .sweeping import Shape, estimate_flops
from .timing import trustworthy

Series = dict[str, tuple[list[int], list[float]]]


def series(rows: list, field: str = "median_ms", *, scale: float = 1.0) -> Series:
    """Per kernel, in sweep order: the lengths and ``field`` (x ``scale``) of its measured rows."""
    out: Series = {}
    for r in rows:
        value = getattr(r, field)
        if r.median_ms and value:
            xs, ys = out.setdefault(r.kernel, ([], []))
            xs.append(r.seq_len)
            ys.append(value * scale)
    return out


def theory_curves(times: Series, sh: Shape) -> Series:
    """The FLOP count of each kernel against L, scaled to pass through its first measured time:
    where the measured curve bends away from it, something other than arithmetic dominates."""
    out = {}
    for k, (xs, ys) in times.items():
        if xs:
            f0 = estimate_flops(k, xs[0], sh)
            out[k] = (xs, [ys[0] * estimate_flops(k, x, sh) / f0 for x in xs])
    return out


def fit_range(rows: list, kernel: str, *, low: int = 2048) -> tuple[list[int], list[float]]:
    """(lengths, medians) of the kernel's trustworthy rows, from ``low`` up when there are 2 such."""
    ok = sorted((r.seq_len, r.median_ms) for r in rows if r.kernel == kernel and trustworthy(r))
    upper = [p for p in ok if p[0] >= low]
    pts = upper if len(upper) >= 2 else ok
    return [p[0] for p in pts], [p[1] for p in pts]


def fit_slope(lengths: list[float], values: list[float]) -> float | None:
    """Least-squares slope of log(value) against log(length): ≈2 for O(L²), ≈1 for O(L)."""
    pts = [(math.log(x), math.log(y)) for x, y in zip(lengths, values) if x and y and x > 0 and y > 0]
    if len(pts) < 2:
        return None
    mx = sum(p[0] for p in pts) / len(pts)
    my = sum(p[1] for p in pts) / len(pts)
    sxx = sum((p[0] - mx) ** 2 for p in pts)
    if sxx == 0:
        return None
    return sum((p[0] - mx) * (p[1] - my) for p in pts) / sxx


def crossover(baseline: dict[int, float], other: dict[int, float]) -> int | None:
    """The smallest measured L from which ``other`` is faster than ``baseline`` at every longer
    length measured for both; None if it never is (or no common length)."""
    common = sorted(set(baseline) & set(other))
    result = None
    for L in reversed(common):
        if other[L] < baseline[L]:
            result = L
        else:
            break
    return result


# ---------------------------------------------------------------------------- the Complexity page's analysis


def _families(families: Mapping[str, str] | None) -> Mapping[str, str]:
    if families is not None:
        return families
    from ..kernels import KERNELS

    return {name: spec.family for name, spec in KERNELS.items()}


def slopes(rows: list) -> dict[str, float | None]:
    """Per measured kernel (in sweep order), the slope fitted to its trustworthy rows from L = 2048 up; None
    where fewer than two trustworthy lengths are left to fit."""
    return {k: fit_slope(*fit_range(rows, k)) for k in series(rows)}


def noisy_rows(rows: list) -> list:
    """The rows that were measured but are not trustworthy (left out of the slopes and crossovers)."""
    return [r for r in rows if r.median_ms and not trustworthy(r)]


def baseline(rows: list, families: Mapping[str, str] | None = None) -> str | None:
    """The full-attention kernel the others are compared with: among the kernels of family "full" with
    trustworthy rows, the one measured at the longest length, the fastest there on a tie; None if none."""
    trusted = series([r for r in rows if trustworthy(r)])
    families = _families(families)
    at_longest = {}
    for k, (xs, ys) in trusted.items():
        if families.get(k) == "full":
            longest = max(xs)
            at_longest[k] = (-longest, ys[xs.index(longest)])
    return min(at_longest, key=at_longest.__getitem__) if at_longest else None


def crossovers(rows: list, base: str | None, families: Mapping[str, str] | None = None) -> dict[str, int | None]:
    """Per kernel not of family "full" with trustworthy rows: the length from which it is faster than ``base``
    at every longer length (``crossover``), None if never; {} without a baseline."""
    if base is None:
        return {}
    trusted = series([r for r in rows if trustworthy(r)])
    families = _families(families)
    if base not in trusted:
        return {}
    ref = dict(zip(*trusted[base]))
    return {k: crossover(ref, dict(zip(*xy))) for k, xy in trusted.items() if families.get(k) != "full"}


PLAUSIBLE_SHARE = 100.0  # % of the device's matmul: no kernel's arithmetic runs faster than the matmul itself


def share_flag(row, share: float) -> str | None:
    """Why a row's share of the matmul is not to be read as a speed: "implausible" above ``PLAUSIBLE_SHARE`` %
    (a disturbed timing of the row or of the matmul), "noisy" for a row that is not ``trustworthy``; None if it
    can be read."""
    if share > PLAUSIBLE_SHARE:
        return "implausible"
    return None if trustworthy(row) else "noisy"


def matmul_share(rows: list, peak_gflops: float) -> list[dict]:
    """Each row with a GFLOP/s figure: kernel, seq_len, gflops, ``share`` (its percentage of the device's matmul
    throughput ``peak_gflops``) and ``flag`` (``share_flag``: None when the figure can be read)."""
    out = []
    for r in rows:
        if r.gflops is not None and not math.isnan(r.gflops):
            share = 100 * r.gflops / peak_gflops
            out.append(
                {
                    "kernel": r.kernel,
                    "seq_len": r.seq_len,
                    "gflops": r.gflops,
                    "share": share,
                    "flag": share_flag(r, share),
                }
            )
    return out


def verdict(cross: Mapping[str, int | None]) -> list[tuple[str, int]]:
    """(kernel, L) for each kernel that overtakes the baseline, from L on: the page's rule of thumb."""
    return [(k, L) for k, L in cross.items() if L]


def projection_params(heads: int, d_head: int) -> tuple[int, int]:
    """(d_model, parameters of the four d_model x d_model projections W_q, W_k, W_v, W_o) of this shape."""
    d = heads * d_head
    return d, 4 * d**2


@dataclass
class Analysis:
    """Everything the Complexity page shows about a sweep's rows, computed (no drawing, no text)."""

    times: Series  # ms per kernel
    memory: Series  # MiB per kernel
    theory: Series  # the FLOP models through each kernel's first time
    slopes: dict[str, float | None]
    noisy: list
    baseline: str | None
    crossovers: dict[str, int | None]
    share: list[dict] | None  # None when the device's matmul throughput was not measured
    verdict: list[tuple[str, int]] = field(default_factory=list)


def analyse(
    rows: list, shape: Shape, *, peak_gflops: float | None = None, families: Mapping[str, str] | None = None
) -> Analysis:
    times = series(rows)
    base = baseline(rows, families)
    cross = crossovers(rows, base, families)
    return Analysis(
        times=times,
        memory=series(rows, "peak_bytes", scale=2**-20),
        theory=theory_curves(times, shape),
        slopes=slopes(rows),
        noisy=noisy_rows(rows),
        baseline=base,
        crossovers=cross,
        share=matmul_share(rows, peak_gflops) if peak_gflops else None,
        verdict=verdict(cross),
    )
