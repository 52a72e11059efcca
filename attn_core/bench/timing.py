"""Timing a call honestly: warm it until it is steady, then at least ``MIN_SAMPLES`` timed samples, the median and
the interquartile range, a row flagged as noisy when its spread is large; and the peak memory of one call."""

from __future__ import annotations

import contextlib
import os
import statistics
import sys
import time
from collections.abc import Callable, Iterator

import torch

from .devices import synchronize

MIN_SAMPLES = 5  # a row has at least this many timed samples
NOISY = 0.25  # a row whose IQR is above this fraction of its median is flagged and left out of fits


def warm_up(fn: Callable[[], object], device: str, *, most: int = 12, budget_s: float = 3.0) -> int:
    """Call ``fn`` until it is steady: two calls in a row within 20% of each other (a cold start
    gets faster call by call: allocator growth, page faults, thread start-up, a compile), at most
    ``most`` calls or ``budget_s`` seconds. Timing the cold calls measured a 651 ms row that takes
    23 ms warm. Returns the number of calls."""
    previous, start = None, time.perf_counter()
    for n in range(1, most + 1):
        t0 = time.perf_counter()
        fn()
        synchronize(device)
        took = time.perf_counter() - t0
        if previous is not None and previous / 1.2 <= took <= previous * 1.2:
            return n
        previous = took
        if time.perf_counter() - start > budget_s:
            return n
    return most


def time_fn(
    fn: Callable[[], object], device: str, *, min_run_time: float = 0.3, min_samples: int = MIN_SAMPLES
) -> tuple[float, float, int]:
    """(median s, IQR s, number of samples) of a warm ``fn``, device synchronised: at least
    ``min_samples`` samples and ``min_run_time`` seconds; calls shorter than ~2 ms are timed in
    blocks (a sample is a block's mean) so the timer's own cost stays out."""
    t0 = time.perf_counter()
    fn()
    synchronize(device)
    one = time.perf_counter() - t0
    number = max(1, min(1000, int(0.002 / max(one, 1e-9))))
    samples: list[float] = []
    start = time.perf_counter()
    while len(samples) < min_samples or (time.perf_counter() - start < min_run_time and len(samples) < 10_000):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        synchronize(device)
        samples.append((time.perf_counter() - t0) / number)
    q1, median, q3 = statistics.quantiles(samples, n=4, method="inclusive")
    return median, q3 - q1, len(samples)


def trustworthy(row) -> bool:
    """Measured with enough samples and a small spread: only such rows enter fits and crossovers."""
    return bool(row.median_ms) and row.runs >= MIN_SAMPLES and (row.iqr_ms or 0.0) <= NOISY * row.median_ms


def matmul_gflops(device: str, dtype: torch.dtype = torch.float32, n: int = 1024) -> float:
    """This device's measured matmul throughput: the ceiling the kernels are compared with."""
    a = torch.randn(n, n, device=device, dtype=dtype)
    b = torch.randn(n, n, device=device, dtype=dtype)
    (a @ b), synchronize(device)
    median, _, _ = time_fn(lambda: a @ b, device, min_run_time=0.2)
    return 2 * n**3 / median / 1e9


# ---------------------------------------------------------------------------- peak memory of one call


@contextlib.contextmanager
def _quiet_stderr() -> Iterator[None]:
    """Silence file descriptor 2 for the duration: the profiler's C++ side prints a
    "profiler_start/stop" line pair there per use, which would fill a server's log."""
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError):  # no real stderr (a captured stream): nothing to silence
        yield
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


def peak_bytes_cpu(fn: Callable[[], object]) -> int:
    """Peak of the running total of allocations during one call, from the profiler's events."""
    from torch.profiler import ProfilerActivity, profile

    with _quiet_stderr(), profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        out = fn()
        del out
    events = []

    def walk(node) -> None:
        extra = getattr(node, "extra_fields", None)
        if extra is not None and hasattr(extra, "alloc_size"):
            events.append((node.start_time_ns, extra.alloc_size))
        for child in node.children:
            walk(child)

    for root in prof.profiler.kineto_results.experimental_event_tree():
        walk(root)
    total = peak = 0
    for _, size in sorted(events):
        total += size
        peak = max(peak, total)
    return peak


def peak_bytes_cuda(fn: Callable[[], object]) -> int:
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    base = torch.cuda.memory_allocated()
    out = fn()
    torch.cuda.synchronize()
    del out
    return torch.cuda.max_memory_allocated() - base


def peak_bytes(fn: Callable[[], object], device: str, estimate: int) -> tuple[int, str]:
    """(peak bytes, how they were measured) of one call on ``device``; MPS: the analytic ``estimate``."""
    if device == "cuda":
        return peak_bytes_cuda(fn), "cuda max_memory_allocated"
    if device == "cpu":
        return peak_bytes_cpu(fn), "cpu profiler allocations"
    return estimate, "analytic estimate"
