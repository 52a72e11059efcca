"""Time and memory of the kernels in ``KERNELS`` on the best device present, honestly.

Timing: every kernel is warmed at every shape until its calls are steady (``warm_up``), then
timed with the device synchronised: at least 5 samples (``time_fn``), the median and the
interquartile range; a row whose spread is large is flagged and left out of the fitted slopes and
crossovers (``trustworthy``). Memory: CUDA ``max_memory_allocated`` after ``reset_peak_memory_stats``;
CPU the profiler's allocation events (peak of the running total during one call); MPS the
analytic estimate, labelled as such. Before each run its memory is estimated and a run that
would not fit the budget is skipped with the reason; an out-of-memory error becomes a row.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import json
import math
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field, fields

import torch

from .kernels import KERNELS, kernel_options
from .options import OPTIONS, add_flags, values_from

DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}
DEFAULT_KERNELS = ("full", "sdpa", "sliding_window", "linear_elu", "causal_linear", "performer", "linformer")
DEFAULT_LENGTHS = (256, 512, 1024, 2048, 4096, 8192, 16384)
BUDGET_FRACTION = 0.5  # of the memory free now
SWEEP_LOCK = threading.Lock()  # one sweep per process (server): concurrent timings mean nothing


# ---------------------------------------------------------------------------- device


def best_device() -> str:
    if torch.cuda.is_available():
        return "cuda"
    if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
        return "mps"
    return "cpu"


def available_devices() -> list[str]:
    return [d for d in ("cuda", "mps") if d == best_device() or (d == "cuda" and torch.cuda.is_available())] + ["cpu"]


def _address_space_left() -> int | None:
    """What this process may still map under its address-space limit (``ulimit -v``), if it has one."""
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
        if soft == resource.RLIM_INFINITY:
            return None
        with open("/proc/self/status") as fh:
            used = next(int(line.split()[1]) * 1024 for line in fh if line.startswith("VmSize:"))
        return max(0, soft - used)
    except (ImportError, OSError, ValueError, StopIteration):
        return None


def _cpu_available_bytes() -> int:
    left = _address_space_left()
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    free = int(line.split()[1]) * 1024
                    return free if left is None else min(free, left)
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 4 << 30


def free_bytes(device: str) -> int:
    if device == "cuda":
        return torch.cuda.mem_get_info()[0]
    if device == "mps":
        return int(torch.mps.recommended_max_memory() - torch.mps.driver_allocated_memory())
    return _cpu_available_bytes()


def device_info(device: str) -> dict:
    """What the page shows about the device: its name, memory and threads."""
    info = {"device": device, "threads": torch.get_num_threads(), "torch": torch.__version__}
    if device == "cuda":
        props = torch.cuda.get_device_properties(0)
        info.update(name=props.name, total_bytes=props.total_memory, free_bytes=free_bytes(device))
    elif device == "mps":
        info.update(
            name="Apple GPU (MPS)", total_bytes=int(torch.mps.recommended_max_memory()), free_bytes=free_bytes(device)
        )
    else:
        import platform

        info.update(
            name=platform.processor() or platform.machine(), cores=os.cpu_count(), free_bytes=free_bytes(device)
        )
    return info


def synchronize(device: str) -> None:
    if device == "cuda":
        torch.cuda.synchronize()
    elif device == "mps":
        torch.mps.synchronize()


# ---------------------------------------------------------------------------- analytic models


@dataclass(frozen=True)
class Shape:
    """The sweep's shape and every kernel option it passes (each kernel takes its own, and its FLOP
    model counts with the same values: block attention with its block, not the window)."""

    batch: int = 1
    heads: int = 4
    d_head: int = 64
    window: int = 128
    features: int = 64
    proj_k: int = 64
    causal: bool = False
    dilation: int = 2
    global_tokens: int = 1
    block: int = 2
    extra: tuple = ()  # kernel options registered beyond these fields (attn_core.options): (name, value) pairs

    def __post_init__(self) -> None:
        pairs = self.extra.items() if isinstance(self.extra, dict) else self.extra
        object.__setattr__(self, "extra", tuple(sorted((str(k), v) for k, v in pairs)))

    def __getattr__(self, name: str):  # an extra option reads like a field (a FLOP model's ``sh.stride``)
        for key, value in object.__getattribute__(self, "extra"):
            if key == name:
                return value
        raise AttributeError(name)


def fields_of_shape() -> set[str]:
    return {f.name for f in fields(Shape)}


def estimate_flops(kernel: str, L: int, sh: Shape) -> float:
    """Multiply-adds x 2 of the kernel's main products (softmax and elementwise work left out)."""
    return KERNELS[kernel].flops(L, sh)


def estimate_bytes(kernel: str, L: int, sh: Shape, dtype_bytes: int) -> int:
    """Peak extra bytes one call allocates, analytically: inputs are not counted."""
    return KERNELS[kernel].peak_bytes(L, sh, dtype_bytes)


# ---------------------------------------------------------------------------- measuring


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
    import statistics

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


# ---------------------------------------------------------------------------- the sweep


@dataclass
class Row:
    kernel: str
    seq_len: int
    batch: int
    heads: int
    d_head: int
    device: str
    dtype: str
    causal: bool
    median_ms: float | None = None
    iqr_ms: float | None = None
    runs: int = 0  # timed samples (at least MIN_SAMPLES)
    warmup_calls: int = 0  # calls before timing, the first included
    peak_bytes: int | None = None
    peak_method: str = ""
    est_bytes: int = 0
    gflops: float | None = None
    compile_s: float | None = None
    status: str = "ok"


CSV_COLUMNS = [f.name for f in fields(Row)]


@dataclass(frozen=True)
class SweepConfig:
    kernels: tuple[str, ...] = DEFAULT_KERNELS
    lengths: tuple[int, ...] = DEFAULT_LENGTHS
    shape: Shape = field(default_factory=Shape)
    device: str = "cpu"
    dtype: str = "fp32"
    seed: int = 0
    min_run_time: float = 0.3
    budget_bytes: int | None = None  # default: BUDGET_FRACTION of the free memory


def validate_sweep(cfg: SweepConfig) -> None:
    from .errors import AttentionConfigError

    unknown = [k for k in cfg.kernels if k not in KERNELS]
    if unknown:
        raise AttentionConfigError("kernels", "unknown_choice", value=", ".join(unknown), options=", ".join(KERNELS))
    if not cfg.kernels or not cfg.lengths:
        raise AttentionConfigError("kernels", "nothing_to_run")
    if any(L < 1 for L in cfg.lengths):
        raise AttentionConfigError("lengths", "lengths_positive")
    if cfg.dtype not in DTYPES:
        raise AttentionConfigError("dtype", "unknown_choice", value=cfg.dtype, options=", ".join(DTYPES))
    if cfg.device not in ("cpu", "cuda", "mps") or (cfg.device != "cpu" and cfg.device not in available_devices()):
        raise AttentionConfigError(
            "device", "device_unavailable", device=cfg.device, options=", ".join(available_devices())
        )
    if cfg.device == "cpu" and cfg.dtype == "fp16":
        raise AttentionConfigError("dtype", "fp16_cpu")
    sh = cfg.shape
    for name in ("batch", "heads", "d_head", "window", "features", "proj_k", "dilation", "block"):
        if getattr(sh, name) < 1:
            raise AttentionConfigError(name, "at_least_one", value=getattr(sh, name))
    if sh.global_tokens < 0:
        raise AttentionConfigError("global_tokens", "not_negative", value=sh.global_tokens)
    if not (math.isfinite(cfg.min_run_time) and 0 < cfg.min_run_time <= 60):
        raise AttentionConfigError("min_run_time", "min_run_time", value=cfg.min_run_time)
    if cfg.budget_bytes is not None and cfg.budget_bytes < 0:
        raise AttentionConfigError("budget", "budget")
    if max(cfg.lengths) > 2**20:
        raise AttentionConfigError("lengths", "lengths_too_long", L=max(cfg.lengths))


def _size(n: int) -> str:
    return f"{n / 2**30:.1f} GiB" if n >= 2**30 else f"{n / 2**20:.1f} MiB"


def _options(kernel: str, cfg: SweepConfig) -> dict:
    sh = cfg.shape
    return kernel_options(KERNELS[kernel], **shape_options(sh), seed=cfg.seed)


def shape_options(sh: Shape) -> dict:
    """The kernel options a shape carries (the same values the FLOP models read)."""
    names = ("window", "features", "proj_k", "dilation", "global_tokens", "block")
    return {**{name: getattr(sh, name) for name in names}, **dict(sh.extra)}


def _skip_reason(kernel: str, L: int, cfg: SweepConfig, est: int, budget: int) -> str | None:
    from .errors import AttentionConfigError

    try:
        KERNELS[kernel].check(L, L, causal=cfg.shape.causal, cross=False, **_options(kernel, cfg))
    except AttentionConfigError as err:
        return f"skipped: {err.message}"
    if est > budget:
        return f"skipped: needs ~{_size(est)}, budget {_size(budget)}"
    return None


def run_one(kernel: str, L: int, cfg: SweepConfig, budget: int) -> Row:
    sh, dev, dt = cfg.shape, cfg.device, DTYPES[cfg.dtype]
    row = Row(kernel, L, sh.batch, sh.heads, sh.d_head, dev, cfg.dtype, sh.causal or KERNELS[kernel].always_causal)
    row.est_bytes = estimate_bytes(kernel, L, sh, torch.finfo(dt).bits // 8)
    reason = _skip_reason(kernel, L, cfg, row.est_bytes, budget)
    if reason:
        row.status = reason
        return row
    g = torch.Generator(device="cpu").manual_seed(cfg.seed)
    qkv = [torch.randn(sh.batch, sh.heads, L, sh.d_head, generator=g).to(dev, dt) for _ in range(3)]
    opts = _options(kernel, cfg)

    def fn():
        return KERNELS[kernel].fn(*qkv, causal=row.causal, **opts)

    try:
        t0 = time.perf_counter()
        fn(), synchronize(dev)  # the first call (for a compiled kernel, the compile: timed apart)
        if KERNELS[kernel].compiled:
            row.compile_s = time.perf_counter() - t0
        row.warmup_calls = 1 + warm_up(fn, dev)
        median, iqr, runs = time_fn(fn, dev, min_run_time=cfg.min_run_time)
        row.median_ms, row.iqr_ms, row.runs = median * 1e3, iqr * 1e3, runs
        row.gflops = estimate_flops(kernel, L, replace_causal(sh, row.causal)) / median / 1e9
        if not trustworthy(row):
            row.status = f"ok, noisy (IQR {100 * iqr / median:.0f}% of the median): not used in fits"
        # memory after the timing: the profiler's bookkeeping must not disturb the times
        if dev == "cuda":
            row.peak_bytes, row.peak_method = peak_bytes_cuda(fn), "cuda max_memory_allocated"
        elif dev == "cpu":
            row.peak_bytes, row.peak_method = peak_bytes_cpu(fn), "cpu profiler allocations"
        else:
            row.peak_bytes, row.peak_method = row.est_bytes, "analytic estimate"
    except torch.OutOfMemoryError:
        row.status = "error: out of memory"
    except RuntimeError as err:
        text = str(err).splitlines()[0][:160]
        row.status = "error: out of memory" if "out of memory" in text.lower() else f"error: {text}"
    finally:
        qkv.clear()  # free the inputs before emptying the CUDA cache
        if dev == "cuda":
            torch.cuda.empty_cache()
    return row


def replace_causal(sh: Shape, causal: bool) -> Shape:
    from dataclasses import replace

    return replace(sh, causal=causal)


def sweep(cfg: SweepConfig, *, should_stop: Callable[[], bool] = lambda: False) -> Iterator[Row]:
    """Rows one by one, kernel by kernel and length by length (shortest first). Stops early when
    ``should_stop()`` says so. Callers that share a process hold ``SWEEP_LOCK``."""
    validate_sweep(cfg)
    budget = cfg.budget_bytes if cfg.budget_bytes is not None else int(BUDGET_FRACTION * free_bytes(cfg.device))
    for kernel in cfg.kernels:
        for L in sorted(cfg.lengths):
            if should_stop():
                return
            yield run_one(kernel, L, cfg, budget)


def exclusive_sweep(
    cfg: SweepConfig,
    *,
    on_queued: Callable[[], None] = lambda: None,
    should_stop: Callable[[], bool] = lambda: False,
    poll_s: float = 0.5,
) -> Iterator[Row]:
    """``sweep`` holding ``SWEEP_LOCK``: a second caller waits (``on_queued`` is told once)
    until the first is done, so two sweeps never time each other."""
    validate_sweep(cfg)
    if not SWEEP_LOCK.acquire(blocking=False):
        on_queued()
        while not SWEEP_LOCK.acquire(timeout=poll_s):
            if should_stop():
                return
    try:
        yield from sweep(cfg, should_stop=should_stop)
    finally:
        SWEEP_LOCK.release()


def series(
    rows: list[Row], field: str = "median_ms", *, scale: float = 1.0
) -> dict[str, tuple[list[int], list[float]]]:
    """Per kernel, in sweep order: the lengths and ``field`` (x ``scale``) of its measured rows."""
    out: dict[str, tuple[list[int], list[float]]] = {}
    for r in rows:
        value = getattr(r, field)
        if r.median_ms and value:
            xs, ys = out.setdefault(r.kernel, ([], []))
            xs.append(r.seq_len)
            ys.append(value * scale)
    return out


def theory_curves(
    times: dict[str, tuple[list[int], list[float]]], sh: Shape
) -> dict[str, tuple[list[int], list[float]]]:
    """The FLOP count of each kernel against L, scaled to pass through its first measured time:
    where the measured curve bends away from it, something other than arithmetic dominates."""
    out = {}
    for k, (xs, ys) in times.items():
        if xs:
            f0 = estimate_flops(k, xs[0], sh)
            out[k] = (xs, [ys[0] * estimate_flops(k, x, sh) / f0 for x in xs])
    return out


def fit_range(rows: list[Row], kernel: str, *, low: int = 2048) -> tuple[list[int], list[float]]:
    """(lengths, medians) of the kernel's trustworthy rows, from ``low`` up when there are 2 such."""
    ok = sorted((r.seq_len, r.median_ms) for r in rows if r.kernel == kernel and trustworthy(r))
    upper = [p for p in ok if p[0] >= low]
    pts = upper if len(upper) >= 2 else ok
    return [p[0] for p in pts], [p[1] for p in pts]


# ---------------------------------------------------------------------------- analysis


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


def rows_to_csv(rows: list[Row], path_or_buf) -> None:
    own = isinstance(path_or_buf, (str, os.PathLike))
    fh = open(path_or_buf, "w", newline="") if own else path_or_buf  # noqa: SIM115 - closed below when ours
    try:
        writer = csv.DictWriter(fh, fieldnames=CSV_COLUMNS)
        writer.writeheader()
        for r in rows:
            writer.writerow(asdict(r))
    finally:
        if own:
            fh.close()


def format_table(rows: list[Row]) -> str:
    head = f"{'kernel':<15} {'L':>6} {'median ms':>10} {'iqr ms':>8} {'n':>4} {'peak MiB':>9} {'GFLOP/s':>8}  status"
    lines = [head, "-" * len(head)]
    for r in rows:
        med = f"{r.median_ms:10.3f}" if r.median_ms is not None else f"{'-':>10}"
        iqr = f"{r.iqr_ms:8.3f}" if r.iqr_ms is not None else f"{'-':>8}"
        peak = f"{r.peak_bytes / 2**20:9.1f}" if r.peak_bytes is not None else f"{'-':>9}"
        gf = f"{r.gflops:8.1f}" if r.gflops is not None else f"{'-':>8}"
        lines.append(f"{r.kernel:<15} {r.seq_len:>6} {med} {iqr} {r.runs:>4} {peak} {gf}  {r.status}")
    return "\n".join(lines)


# ---------------------------------------------------------------------------- CLI


def _int_list(text: str) -> tuple[int, ...]:
    try:
        return tuple(int(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a comma-separated list of integers") from None


def add_cli(sub) -> None:
    p = sub.add_parser("bench", help="time and memory of attention kernels against sequence length")
    p.add_argument("--kernels", default=",".join(DEFAULT_KERNELS), help=f"comma-separated, from: {','.join(KERNELS)}")
    p.add_argument("--lengths", type=_int_list, default=DEFAULT_LENGTHS)
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--d-head", type=int, default=64, dest="d_head")
    p.add_argument("--window", type=int, default=128)
    p.add_argument("--features", type=int, default=64)
    p.add_argument("--proj-k", type=int, default=64, dest="proj_k")
    p.add_argument("--dilation", type=int, default=Shape.dilation)
    p.add_argument("--global-tokens", type=int, default=Shape.global_tokens, dest="global_tokens")
    p.add_argument("--block", type=int, default=Shape.block, help="block-local attention's block size")
    p.add_argument("--causal", action="store_true")
    add_flags(p, [n for n in OPTIONS if n != "seed"])  # every other kernel option (attn_core.options)
    p.add_argument("--device", choices=["cpu", "cuda", "mps"], default=None)
    p.add_argument("--dtype", choices=list(DTYPES), default="fp32")
    p.add_argument("--min-run-time", type=float, default=0.3, dest="min_run_time")
    p.add_argument(
        "--budget-mib",
        type=float,
        dest="budget_mib",
        help="skip runs estimated to need more memory than this (default: half of the free memory)",
    )
    p.add_argument("--csv", help="write one row per (kernel, L) to this file")
    p.add_argument(
        "--jsonl",
        action="store_true",
        help="print one JSON object per line instead of the table: each row as it is measured, "
        "then the device's matmul GFLOP/s (what the Complexity page reads)",
    )


def cmd_bench(args) -> int:
    cfg = SweepConfig(
        kernels=tuple(k.strip() for k in args.kernels.split(",") if k.strip()),
        lengths=tuple(args.lengths),
        shape=Shape(
            batch=args.batch,
            heads=args.heads,
            d_head=args.d_head,
            window=args.window,
            features=args.features,
            proj_k=args.proj_k,
            causal=args.causal,
            dilation=args.dilation,
            global_tokens=args.global_tokens,
            block=args.block,
            extra=values_from(args, [n for n in OPTIONS if n not in fields_of_shape() and n != "seed"]),
        ),
        device=args.device or best_device(),
        dtype=args.dtype,
        min_run_time=args.min_run_time,
        budget_bytes=_budget(args.budget_mib),
    )
    validate_sweep(cfg)
    if args.csv:
        _check_writable(args.csv)
    if args.jsonl:
        return _sweep_jsonl(cfg)
    info = device_info(cfg.device)
    print(
        f"# device {info['device']} ({info.get('name', '')}), {info['threads']} threads, torch {info['torch']}",
        flush=True,
    )
    print(
        f"# each row: warmed until steady, then >= {MIN_SAMPLES} timed samples (n); noisy rows are flagged", flush=True
    )
    rows: list[Row] = []
    start = time.perf_counter()
    with SWEEP_LOCK:
        for row in sweep(cfg):
            rows.append(row)
            print(format_table([row]).splitlines()[-1], flush=True)
    print(f"# {len(rows)} rows in {time.perf_counter() - start:.1f} s", flush=True)
    for kernel in cfg.kernels:
        ok = [r for r in rows if r.kernel == kernel and trustworthy(r)]
        slope = fit_slope([r.seq_len for r in ok], [r.median_ms for r in ok])
        if slope is not None:
            print(f"# slope {kernel}: {slope:.2f} (from {len(ok)} trustworthy rows)")
    if args.csv:
        rows_to_csv(rows, args.csv)
        print(f"# wrote {args.csv}", file=sys.stderr)
    return 0


def _budget(mib: float | None) -> int | None:
    """--budget-mib in bytes; anything not a finite size becomes -1, which validate_sweep refuses."""
    if mib is None:
        return None
    return int(mib * 2**20) if math.isfinite(mib) and abs(mib) < 2**40 else -1


def _check_writable(path: str) -> None:
    """Fail before a minute of measuring, not after: the CSV's folder must exist and take a file."""
    from .errors import AttentionConfigError

    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise AttentionConfigError("csv", "csv_is_dir", path=path)
    if not os.path.isdir(folder):
        raise AttentionConfigError("csv", "csv_no_folder", path=path)
    if not os.access(folder, os.W_OK):
        raise AttentionConfigError("csv", "csv_unwritable", path=path)


def _sweep_jsonl(cfg: SweepConfig) -> int:
    """One JSON line per row as it is measured, then ``{"matmul_gflops": ...}``."""
    with SWEEP_LOCK:
        for row in sweep(cfg):
            print(json.dumps({"row": asdict(row)}), flush=True)
        print(json.dumps({"matmul_gflops": matmul_gflops(cfg.device, DTYPES[cfg.dtype])}), flush=True)
    return 0
