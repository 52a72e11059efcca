"""``python -m attn_core bench``: its flags, the table it prints (or JSON lines, what the Complexity page reads)."""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from dataclasses import asdict

from ..kernels import KERNELS
from ..knobs import add_flags, given, in_context
from .analysis import fit_slope
from .devices import DEVICES, best_device, device_info
from .sweeping import (
    DEFAULT_KERNELS,
    DEFAULT_LENGTHS,
    DTYPES,
    OWN,
    SWEEP_LOCK,
    Row,
    Shape,
    SweepConfig,
    fields_of_shape,
    format_table,
    rows_to_csv,
    sweep,
    validate_sweep,
)
from .timing import MIN_SAMPLES, matmul_gflops, trustworthy


def _int_list(text: str) -> tuple[int, ...]:
    try:
        return tuple(int(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a comma-separated list of integers") from None


def _add_shape_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--batch", type=int, default=OWN["batch"])
    p.add_argument("--d-head", type=int, default=OWN["d_head"], dest="d_head")
    # a flag per knob with a sweep span (attn_core.knobs: heads, causal, every kernel option but the seed, the
    # sweep's own), with a Shape's defaults for those it has fields for; not strict: a number out of range reaches
    # validate_sweep's message
    shape = Shape()
    add_flags(p, "sweep", defaults={name: getattr(shape, name) for name in _fields()})


def add_cli(sub) -> None:
    p = sub.add_parser("bench", help="time and memory of attention kernels against sequence length")
    p.add_argument("--kernels", default=",".join(DEFAULT_KERNELS), help=f"comma-separated, from: {','.join(KERNELS)}")
    p.add_argument("--lengths", type=_int_list, default=DEFAULT_LENGTHS)
    _add_shape_flags(p)
    p.add_argument("--device", choices=list(DEVICES), default=None)
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


def _fields() -> list[str]:
    """The knobs a Shape has a field for."""
    return [n for n in in_context("sweep") if n in fields_of_shape()]


def _extra_options() -> list[str]:
    """The knobs a Shape carries in ``extra``: those registered after it was made."""
    return [n for n in in_context("sweep") if n not in fields_of_shape()]


def config_from_args(args: argparse.Namespace) -> SweepConfig:
    names = (*OWN, *_fields())
    extra = given(args, "sweep", names=_extra_options(), checked=True)
    return SweepConfig(
        kernels=tuple(k.strip() for k in args.kernels.split(",") if k.strip()),
        lengths=tuple(args.lengths),
        shape=Shape(**{name: getattr(args, name) for name in names}, extra=extra),
        device=args.device or best_device(),
        dtype=args.dtype,
        min_run_time=args.min_run_time,
        budget_bytes=_budget(args.budget_mib),
    )


def cmd_bench(args) -> int:
    cfg = config_from_args(args)
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
    _print_slopes(rows, cfg.kernels)
    if args.csv:
        rows_to_csv(rows, args.csv)
        print(f"# wrote {args.csv}", file=sys.stderr)
    return 0


def _print_slopes(rows: list[Row], kernels: tuple[str, ...]) -> None:
    for kernel in kernels:
        ok = [r for r in rows if r.kernel == kernel and trustworthy(r)]
        slope = fit_slope([r.seq_len for r in ok], [r.median_ms for r in ok])
        if slope is not None:
            print(f"# slope {kernel}: {slope:.2f} (from {len(ok)} trustworthy rows)")


def _budget(mib: float | None) -> int | None:
    """--budget-mib in bytes; anything not a finite size becomes -1, which validate_sweep refuses."""
    if mib is None:
        return None
    return int(mib * 2**20) if math.isfinite(mib) and abs(mib) < 2**40 else -1


def _check_writable(path: str) -> None:
    """Fail before a minute of measuring, not after: the CSV's folder must exist and take a file."""
    from ..errors import AttentionConfigError

    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise AttentionConfigError("csv", "csv_is_dir", path=path)
    if not os.path.isdir(folder):
        raise AttentionConfigError("csv", "csv_no_folder", path=path)
    if not os.access(folder, os.W_OK):
        raise AttentionConfigError("csv", "csv_unwritable", path=path)


def _sweep_jsonl(cfg: SweepConfig) -> int:
    """One JSON line per row as it is measured, then ``{"matmul_gflops": ...}``. Started by a server (which names
    itself in ``ATTN_PARENT_PID``), it ends with that server: in a session of its own, its server's end would not
    reach it otherwise."""
    if os.environ.get("ATTN_PARENT_PID"):
        from ..command import die_with_parent

        die_with_parent()
    with SWEEP_LOCK:
        for row in sweep(cfg):
            print(json.dumps({"row": asdict(row)}), flush=True)
        print(json.dumps({"matmul_gflops": matmul_gflops(cfg.device, DTYPES[cfg.dtype])}), flush=True)
    return 0
