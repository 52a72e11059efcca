"""What a benchmark script does with its report: print it, and append it to a record (``--out``) when asked."""

from __future__ import annotations

import os
import platform
import statistics
import time
from collections.abc import Callable


def emit(lines: list[str], out: str = "") -> None:
    """Print ``lines``; with ``out``, append them to that record, one blank line after."""
    print("\n".join(lines))
    if out:
        with open(out, "a", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n\n")


def interleaved(cases: dict[str, Callable[[], object]], repeats: int) -> dict[str, list[float]]:
    """Each case's times (ms): one warm-up call each, then ``repeats`` rounds that call every case once, so a noisy
    moment of the machine falls on every case alike."""
    times: dict[str, list[float]] = {k: [] for k in cases}
    for fn in cases.values():
        fn()  # warm up
    for _ in range(repeats):
        for k, fn in cases.items():
            t0 = time.perf_counter()
            fn()
            times[k].append((time.perf_counter() - t0) * 1000)
    return times


def summary(name: str, times: dict[str, list[float]], repeats: int, torch_version: str) -> list[str]:
    """A header (the script, when, the machine, torch, the rounds, the load) and each case's median, IQR and max."""
    head = (
        f"# {name} {time.strftime('%Y-%m-%d %H:%M')} {platform.processor() or platform.machine()}, "
        f"torch {torch_version}, 1 thread, {repeats} interleaved rounds, load {os.getloadavg()[0]:.2f}"
    )
    lines = [head]
    for k, ts in times.items():
        q = statistics.quantiles(ts, n=4)
        lines.append(f"{k}: median {statistics.median(ts):.1f} ms, IQR {q[0]:.1f}-{q[2]:.1f} ms, max {max(ts):.1f} ms")
    return lines
