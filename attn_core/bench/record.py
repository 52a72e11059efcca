"""A recorded sweep of the machine the app is served from, to fall back on when the live one is too noisy.

A sweep on a busy server (a class on it, a training run beside it) can leave too few trustworthy rows to fit a
slope. The Complexity page then shows the slopes of a sweep recorded on this machine, said as such with when and
on what it was measured. The record is a CSV of ``Row`` (``rows_to_csv``) whose first line is ``# `` and a JSON
object: ``measured`` (ISO time), ``machine`` (what it ran on), ``torch``, ``causal`` and ``shape`` (the kernel
options, ``window`` and the like, that the rows do not carry).

Pure reading: a record that is absent or malformed reads as None (there is then nothing to fall back on).
"""

from __future__ import annotations

import csv
import functools
import io
import json
import math
from dataclasses import dataclass, fields, replace
from pathlib import Path

from .analysis import slopes
from .sweeping import CSV_COLUMNS, Row, Shape, SweepConfig

RECORD = Path(__file__).resolve().parents[2] / "benchmarks" / "results" / "complexity_record_cpu.csv"
_TYPES = {f.name: f.type for f in fields(Row)}


@dataclass(frozen=True)
class Record:
    rows: tuple[Row, ...]
    measured: str  # ISO time, UTC
    machine: str
    torch: str
    device: str
    dtype: str
    shape: Shape


def _value(name: str, text: str):
    kind = _TYPES[name]
    if text == "":
        if "None" in kind:
            return None
        if kind == "str":
            return ""
        raise ValueError(name)
    if kind.startswith("int"):
        return int(text)
    if kind.startswith("float"):
        value = float(text)
        if not math.isfinite(value) or value < 0:
            raise ValueError(name)
        return value
    if kind == "bool":
        if text not in ("True", "False"):
            raise ValueError(name)
        return text == "True"
    return text


def parse(text: str) -> Record | None:
    """The record in ``text``; None when it is not one (no header, a missing column, a bad number, mixed shapes)."""
    head, _, body = text.partition("\n")
    try:
        meta = json.loads(head.removeprefix("#").strip()) if head.startswith("#") else None
        if not isinstance(meta, dict):
            return None
        reader = csv.DictReader(io.StringIO(body))
        if set(reader.fieldnames or ()) != set(CSV_COLUMNS):
            return None
        rows = tuple(Row(**{k: _value(k, v) for k, v in line.items()}) for line in reader)
        if not rows:
            return None
        r0 = rows[0]  # causal is the shape's, in the header: a causal-only kernel's rows say True whatever it is
        if any(
            (r.batch, r.heads, r.d_head, r.device, r.dtype) != (r0.batch, r0.heads, r0.d_head, r0.device, r0.dtype)
            for r in rows
        ):
            return None
        options = {k: int(v) for k, v in meta.get("shape", {}).items()}
        causal = meta.get("causal", False)
        if not isinstance(causal, bool):
            return None
        shape = Shape(batch=r0.batch, heads=r0.heads, d_head=r0.d_head, causal=causal, **options)
        return Record(
            rows, str(meta["measured"]), str(meta["machine"]), str(meta["torch"]), r0.device, r0.dtype, shape
        )
    except (ValueError, TypeError, KeyError, AttributeError, csv.Error):
        return None


def load() -> Record | None:
    """The record at ``RECORD`` (read once per server)."""
    return read(RECORD)


@functools.lru_cache(maxsize=4)  # a few kB, read once per path
def read(path: Path) -> Record | None:
    try:
        return parse(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return None


def applies(record: Record, cfg: SweepConfig) -> bool:
    """Whether the record measured what ``cfg`` asks for: the same device, dtype and shape (its options too)."""
    return record.device == cfg.device and record.dtype == cfg.dtype and record.shape == replace(cfg.shape)


def fallback_slopes(rows: list, record: Record | None, cfg: SweepConfig) -> dict[str, float | None] | None:
    """The record's slopes for the live sweep's kernels over its lengths, when the live rows cannot fit a slope
    that the record can and the record measured this configuration; None to keep the live slopes."""
    live = slopes(rows)
    if record is None or not applies(record, cfg) or None not in live.values():
        return None
    kept = [r for r in record.rows if r.kernel in live and r.seq_len in cfg.lengths]
    recorded = slopes(kept)
    if not any(live[k] is None and recorded.get(k) is not None for k in live):
        return None
    return {k: recorded.get(k) for k in live}
