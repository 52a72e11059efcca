"""A server-wide cache with a memory budget, for results that hold tensors.

Streamlit's caches bound the number of entries, not their size: 256 traces at the largest
settings are gigabytes. ``bounded(max_mib=...)`` keeps the most recently used results of a
function of plain values until their bytes together (tensors' storages, numpy arrays, Python
strings, numbers and containers, the keys too: ``nbytes``) pass the budget, then drops the oldest.
There is no entry count: a budget in bytes is what bounds the server's memory.

A result nobody asked for in ``IDLE_S`` seconds is dropped too (``expire_idle``, run by one
background thread every ``SWEEP_S``), and the freed memory is handed back to the operating system
(glibc's ``malloc_trim``): after a class has left, the server's memory comes back down instead of
staying at the level of the busiest minute.

Identical calls that arrive together are computed once: the others wait for the first and get its
result (a class that opens the same link at the same moment costs one computation), and at most
two results are computed at once on the whole server (``COMPUTING``).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import dataclasses
import functools
import sys
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import torch

IDLE_S = 180.0  # a result unused this long is dropped
SWEEP_S = 20.0  # how often the idle results are looked for
_POINTER = 8


def nbytes(value: Any, _depth: int = 0, _seen: set | None = None) -> int:
    """The bytes a result keeps alive: tensors' storages (a view keeps its whole storage alive;
    a storage shared by several views is counted once), numpy arrays, and the Python objects
    around them (strings, numbers, lists, tuples, dicts, dataclasses and plain objects)."""
    seen = set() if _seen is None else _seen
    if _depth > 8:
        return 0
    if isinstance(value, torch.Tensor):
        storage = value.untyped_storage()
        ptr = storage.data_ptr()
        if ptr in seen:
            return sys.getsizeof(value)
        seen.add(ptr)
        return storage.nbytes() + sys.getsizeof(value)
    if hasattr(value, "nbytes") and hasattr(value, "dtype"):  # numpy
        return int(value.nbytes) + 112
    if value is None or isinstance(value, (bool, int, float, complex, str, bytes)):
        return sys.getsizeof(value)
    if id(value) in seen:
        return 0
    seen.add(id(value))
    inner = _depth + 1
    if isinstance(value, dict):
        return sys.getsizeof(value) + sum(nbytes(k, inner, seen) + nbytes(v, inner, seen) for k, v in value.items())
    if isinstance(value, (list, tuple, set, frozenset)):
        return sys.getsizeof(value) + sum(nbytes(v, inner, seen) for v in value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = [getattr(value, f.name) for f in dataclasses.fields(value)]
        return sys.getsizeof(value) + sum(nbytes(v, inner, seen) for v in fields)
    if hasattr(value, "__dict__") and not isinstance(value, type):
        return sys.getsizeof(value) + nbytes(vars(value), inner, seen)
    return sys.getsizeof(value)


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


class _Pending:
    """A computation in progress, with its result for the calls that waited for it."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.ok = False
        self.value: Any = None


_CACHES: weakref.WeakSet = weakref.WeakSet()


class BoundedCache:
    def __init__(
        self, fn: Callable, *, max_bytes: int, idle_s: float | None = None, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.fn = fn
        self.max_bytes = max_bytes
        self.idle_s = IDLE_S if idle_s is None else idle_s
        self.clock = clock
        self.lock = threading.Lock()
        self.entries: OrderedDict[tuple, tuple[Any, int]] = OrderedDict()  # key -> (value, bytes), oldest first
        self.used: dict[tuple, float] = {}  # key -> when it was last asked for
        self.pending: dict[tuple, _Pending] = {}
        self.total = 0
        _CACHES.add(self)

    def __call__(self, *args, **kwargs):
        key = (args, tuple(sorted(kwargs.items())))
        while True:
            with self.lock:
                if key in self.entries:
                    self.entries.move_to_end(key)
                    self.used[key] = self.clock()
                    return self.entries[key][0]
                waiting = self.pending.get(key)
                if waiting is None:
                    mine = self.pending[key] = _Pending()
                    break
            waiting.done.wait()  # the same call is being computed by another session: share it
            if waiting.ok:
                return waiting.value
            # it failed there: compute it here (and raise its error in this session too)
        try:
            with COMPUTING:
                value = self.fn(*args, **kwargs)
        except BaseException:
            with self.lock:
                self.pending.pop(key)
            mine.done.set()
            raise
        size = nbytes(value) + nbytes(key)
        with self.lock:  # kept before the waiters wake, so a late call finds it too
            if size <= self.max_bytes:
                self.entries[key] = (value, size)
                self.used[key] = self.clock()
                self.total += size
                while self.total > self.max_bytes:
                    self._drop(next(iter(self.entries)))
            mine.value, mine.ok = value, True
            self.pending.pop(key)
        mine.done.set()
        return value

    def _drop(self, key: tuple) -> None:
        _, size = self.entries.pop(key)
        self.used.pop(key, None)
        self.total -= size

    def expire_idle(self, now: float | None = None) -> int:
        """Drop the results nobody asked for in ``idle_s`` seconds; returns the bytes dropped."""
        now = self.clock() if now is None else now
        with self.lock:
            old = [k for k in self.entries if now - self.used.get(k, now) > self.idle_s]
            before = self.total
            for key in old:
                self._drop(key)
            return before - self.total

    def clear(self) -> None:
        with self.lock:
            self.entries.clear()
            self.used.clear()
            self.total = 0


def bounded(*, max_mib: float, idle_s: float | None = None) -> Callable[[Callable], BoundedCache]:
    """Decorator: cache a function of plain, hashable arguments within ``max_mib`` of memory."""

    def wrap(fn: Callable) -> BoundedCache:
        cache = BoundedCache(fn, max_bytes=int(max_mib * 2**20), idle_s=idle_s)
        functools.update_wrapper(cache, fn)
        _start_janitor()
        return cache

    return wrap


def _malloc_trim() -> None:
    """Hand freed heap memory back to the operating system (glibc only; elsewhere nothing)."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.malloc_trim(0)  # ctypes releases the GIL for the call
    except (OSError, AttributeError):
        pass


def expire_all(now: float | None = None) -> int:
    """``expire_idle`` on every cache; the memory handed back when anything was dropped."""
    dropped = sum(cache.expire_idle(now) for cache in list(_CACHES))
    if dropped:
        _malloc_trim()
    return dropped


_JANITOR: list[threading.Thread] = []


def _start_janitor() -> None:
    if _JANITOR:
        return

    def loop() -> None:
        while True:
            time.sleep(SWEEP_S)
            try:
                expire_all()
            except Exception as err:  # noqa: BLE001 - the janitor must never die; the next sweep tries again
                print(f"cache janitor: {err!r}", file=sys.stderr)

    thread = threading.Thread(target=loop, name="cache-janitor", daemon=True)
    _JANITOR.append(thread)
    thread.start()
