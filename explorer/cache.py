"""A server-wide cache with a memory budget, for results that hold tensors.

Streamlit's caches bound the number of entries, not their size: 256 traces at the largest
settings are gigabytes. ``bounded(max_mib=...)`` keeps the most recently used results of a
function of plain values until their tensors together pass the budget (or ``max_entries``), then
drops the oldest. Identical calls that arrive together are computed once: the others wait for the
first (a class that opens the same link at the same moment costs one computation), and at most
two results are computed at once on the whole server (``COMPUTING``).
"""

from __future__ import annotations

import dataclasses
import functools
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import torch


def nbytes(value: Any, _depth: int = 0) -> int:
    """The bytes of the tensors (and numpy arrays) reachable in a result: fields of dataclasses,
    items of tuples, lists and dicts. Views of one storage are counted once per view, which can
    only over-count."""
    if _depth > 6:
        return 0
    if isinstance(value, torch.Tensor):
        return value.numel() * value.element_size()
    if hasattr(value, "nbytes") and hasattr(value, "dtype"):  # numpy
        return int(value.nbytes)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return sum(nbytes(getattr(value, f.name), _depth + 1) for f in dataclasses.fields(value))
    if isinstance(value, dict):
        return sum(nbytes(v, _depth + 1) for v in value.values())
    if isinstance(value, (list, tuple)):
        if value and isinstance(value[0], (int, float, str, bool)):
            return 8 * len(value)
        return sum(nbytes(v, _depth + 1) for v in value)
    return 0


class _Computing:
    """At most ``n`` cached results are computed at once on the server, whatever the number of
    sessions: each may take up to a view's memory budget while it is computed, and there are two
    cores. Re-entrant per thread (a cached function may call another)."""

    def __init__(self, n: int) -> None:
        self.slots = threading.BoundedSemaphore(n)
        self.local = threading.local()

    def __enter__(self) -> None:
        depth = getattr(self.local, "depth", 0)
        if depth == 0:
            self.slots.acquire()
        self.local.depth = depth + 1

    def __exit__(self, *exc) -> None:
        self.local.depth -= 1
        if self.local.depth == 0:
            self.slots.release()


COMPUTING = _Computing(2)


class BoundedCache:
    def __init__(self, fn: Callable, *, max_bytes: int, max_entries: int) -> None:
        self.fn = fn
        self.max_bytes = max_bytes
        self.max_entries = max_entries
        self.lock = threading.Lock()
        self.entries: OrderedDict[tuple, tuple[Any, int]] = OrderedDict()
        self.pending: dict[tuple, threading.Event] = {}
        self.total = 0

    def __call__(self, *args, **kwargs):
        key = (args, tuple(sorted(kwargs.items())))
        while True:
            with self.lock:
                if key in self.entries:
                    self.entries.move_to_end(key)
                    return self.entries[key][0]
                waiting = self.pending.get(key)
                if waiting is None:
                    self.pending[key] = threading.Event()
                    break
            waiting.wait()  # the same call is being computed by another session: share it
        try:
            with COMPUTING:
                value = self.fn(*args, **kwargs)
        finally:
            with self.lock:
                self.pending.pop(key).set()
        size = nbytes(value)
        with self.lock:
            if size <= self.max_bytes:
                self.entries[key] = (value, size)
                self.total += size
                while self.total > self.max_bytes or len(self.entries) > self.max_entries:
                    _, (_, dropped) = self.entries.popitem(last=False)
                    self.total -= dropped
        return value

    def clear(self) -> None:
        with self.lock:
            self.entries.clear()
            self.total = 0


def bounded(*, max_mib: float, max_entries: int = 256) -> Callable[[Callable], BoundedCache]:
    """Decorator: cache a function of plain, hashable arguments within ``max_mib`` of tensors."""

    def wrap(fn: Callable) -> BoundedCache:
        cache = BoundedCache(fn, max_bytes=int(max_mib * 2**20), max_entries=max_entries)
        functools.update_wrapper(cache, fn)
        return cache

    return wrap
