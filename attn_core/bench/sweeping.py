"""The sweep: every kernel at every length L for one ``Shape``, one ``Row`` per (kernel, L), and its CSV.

Before each run its memory is estimated and a run that would not fit the budget is skipped with the reason; an
out-of-memory error becomes a row. One sweep at a time per process (``SWEEP_LOCK``): concurrent timings mean nothing.
"""

from __future__ import annotations

import csv
import math
import os
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field, fields, make_dataclass, replace

import torch

from ..kernels import KERNELS, kernel_options
from ..knobs import KNOBS, Beyond, in_context
from . import devices
from .devices import synchronize
from .timing import peak_bytes, time_fn, trustworthy, warm_up

DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}
DEFAULT_KERNELS = ("full", "sdpa", "sliding_window", "linear_elu", "causal_linear", "performer", "linformer")
DEFAULT_LENGTHS = (256, 512, 1024, 2048, 4096, 8192, 16384)
BUDGET_FRACTION = 0.5  # of the memory free now
SWEEP_LOCK = threading.Lock()  # one sweep per process (server): concurrent timings mean nothing
OWN = {"batch": 1, "d_head": 64}  # the Shape's own fields (at least 1 each); the rest are knobs with a sweep span


class _Shape(Beyond):
    """What every ``Shape`` has beside its fields: the kernel options registered after it was made, in ``extra``
    ((name, value) pairs), each read like a field (a FLOP model's ``sh.stride``)."""

    CONTEXT = "sweep"

    def __post_init__(self) -> None:
        self._sort_beyond()

    def __getattr__(self, name: str):  # only called for a name that is not a field
        for key, value in object.__getattribute__(self, "extra"):
            if key == name:
                return value
        raise AttributeError(name)


def _make_shape() -> type:
    """``Shape``: the sweep's own fields, then a field per knob with a sweep span (``attn_core.knobs``: heads,
    causal and every kernel option the sweep passes, with the sweep's default), then ``extra``."""
    kinds = {"int": int, "float": float, "bool": bool, "choice": str}
    rows = [(n, kinds[k.type], field(default=k.span("sweep").default)) for n, k in in_context("sweep").items()]
    own = [(n, int, field(default=v)) for n, v in OWN.items()]
    doc = """The sweep's shape and every kernel option it passes (each kernel takes its own, and its FLOP
    model counts with the same values: block attention with its block, not the window). Made from the table of
    knobs: a knob registered later travels in ``extra``."""
    cls = make_dataclass("Shape", [*own, *rows, ("extra", tuple, field(default=()))], bases=(_Shape,), frozen=True)
    cls.__module__, cls.__doc__ = __name__, doc
    return cls


Shape = _make_shape()
OPTION_NAMES = tuple(f.name for f in fields(Shape) if f.name in KNOBS and KNOBS[f.name].kernel_option)


def fields_of_shape() -> set[str]:
    return {f.name for f in fields(Shape)}


def estimate_flops(kernel: str, L: int, sh: Shape) -> float:
    """Multiply-adds x 2 of the kernel's main products (softmax and elementwise work left out)."""
    return KERNELS[kernel].flops(L, sh)


def estimate_bytes(kernel: str, L: int, sh: Shape, dtype_bytes: int) -> int:
    """Peak extra bytes one call allocates, analytically: inputs are not counted."""
    return KERNELS[kernel].peak_bytes(L, sh, dtype_bytes)


def replace_causal(sh: Shape, causal: bool) -> Shape:
    return replace(sh, causal=causal)


def shape_options(sh: Shape) -> dict:
    """The kernel options a shape carries (the same values the FLOP models read)."""
    return {**{name: getattr(sh, name) for name in OPTION_NAMES}, **dict(sh.extra)}


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


FLOOR_CODES = {1: "at_least_one", 0: "not_negative"}  # a number below its sweep span's low end


def _validate_shape(sh: Shape) -> None:
    """Each own field at least 1; each knob's value at least its sweep span's low end (the high end is the page's
    input's: the command line may ask for more), a choice one of its choices."""
    from ..errors import AttentionConfigError

    for name in OWN:
        if getattr(sh, name) < 1:
            raise AttentionConfigError(name, "at_least_one", value=getattr(sh, name))
    table = in_context("sweep")
    for name, value in [(n, getattr(sh, n)) for n in table if n in fields_of_shape()] + list(sh.extra):
        if name not in table:
            raise AttentionConfigError("extra", "unknown_choice", value=name, options=", ".join(table))
        k, span = table[name], table[name].span("sweep")
        if k.type == "choice":
            k.check(value, "sweep")
        elif k.type in ("int", "float") and value < span.low:
            code = FLOOR_CODES.get(span.low, "out_of_range")
            raise AttentionConfigError(name, code, value=value, low=span.low, high=span.high)


def validate_sweep(cfg: SweepConfig) -> None:
    from ..errors import AttentionConfigError

    unknown = [k for k in cfg.kernels if k not in KERNELS]
    if unknown:
        raise AttentionConfigError("kernels", "unknown_choice", value=", ".join(unknown), options=", ".join(KERNELS))
    if not cfg.kernels or not cfg.lengths:
        raise AttentionConfigError("kernels", "nothing_to_run")
    if any(L < 1 for L in cfg.lengths):
        raise AttentionConfigError("lengths", "lengths_positive")
    if cfg.dtype not in DTYPES:
        raise AttentionConfigError("dtype", "unknown_choice", value=cfg.dtype, options=", ".join(DTYPES))
    devices.check_device(cfg.device)
    if cfg.device == "cpu" and cfg.dtype == "fp16":
        raise AttentionConfigError("dtype", "fp16_cpu")
    _validate_shape(cfg.shape)
    if not (math.isfinite(cfg.min_run_time) and 0 < cfg.min_run_time <= 60):
        raise AttentionConfigError("min_run_time", "min_run_time", value=cfg.min_run_time)
    if cfg.budget_bytes is not None and cfg.budget_bytes < 0:
        raise AttentionConfigError("budget", "budget")
    if max(cfg.lengths) > 2**20:
        raise AttentionConfigError("lengths", "lengths_too_long", L=max(cfg.lengths))


def _size(n: int) -> str:
    return f"{n / 2**30:.1f} GiB" if n >= 2**30 else f"{n / 2**20:.1f} MiB"


def _options(kernel: str, cfg: SweepConfig) -> dict:
    return kernel_options(KERNELS[kernel], **shape_options(cfg.shape), seed=cfg.seed)


def _skip_reason(kernel: str, L: int, cfg: SweepConfig, est: int, budget: int) -> str | None:
    from ..errors import AttentionConfigError

    try:
        KERNELS[kernel].check(L, L, causal=cfg.shape.causal, cross=False, **_options(kernel, cfg))
    except AttentionConfigError as err:
        return f"skipped: {err.message}"
    if est > budget:
        return f"skipped: needs ~{_size(est)}, budget {_size(budget)}"
    return None


def _measure(row: Row, fn: Callable[[], object], cfg: SweepConfig) -> None:
    """Time ``fn`` into ``row``: the first call (a compiled kernel's compile, timed apart), the warm-up, the
    samples, GFLOP/s from the kernel's FLOP model, then the peak memory of one call."""
    dev = cfg.device
    t0 = time.perf_counter()
    fn(), synchronize(dev)
    if KERNELS[row.kernel].compiled:
        row.compile_s = time.perf_counter() - t0
    row.warmup_calls = 1 + warm_up(fn, dev)
    median, iqr, runs = time_fn(fn, dev, min_run_time=cfg.min_run_time)
    row.median_ms, row.iqr_ms, row.runs = median * 1e3, iqr * 1e3, runs
    row.gflops = estimate_flops(row.kernel, row.seq_len, replace_causal(cfg.shape, row.causal)) / median / 1e9
    if not trustworthy(row):
        row.status = f"ok, noisy (IQR {100 * iqr / median:.0f}% of the median): not used in fits"
    # memory after the timing: the profiler's bookkeeping must not disturb the times
    row.peak_bytes, row.peak_method = peak_bytes(fn, dev, row.est_bytes)


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
    if KERNELS[kernel].compiled:
        opts["compiled"] = True  # the compiled kernel at every length (FlexAttention runs unfused within one block)

    def fn():
        return KERNELS[kernel].fn(*qkv, causal=row.causal, **opts)

    try:
        _measure(row, fn, cfg)
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


def sweep(cfg: SweepConfig, *, should_stop: Callable[[], bool] = lambda: False) -> Iterator[Row]:
    """Rows one by one, kernel by kernel and length by length (shortest first). Stops early when
    ``should_stop()`` says so. Callers that share a process hold ``SWEEP_LOCK``."""
    validate_sweep(cfg)
    budget = cfg.budget_bytes
    if budget is None:
        budget = int(BUDGET_FRACTION * devices.free_bytes(cfg.device))
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


# ---------------------------------------------------------------------------- the rows as CSV and as a table


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
