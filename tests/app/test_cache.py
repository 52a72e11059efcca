"""The server-wide cache keeps within its memory budget (in bytes), lets idle results go, shares identical
concurrent work, and computes two results at once, never more; big heatmaps are pooled, never sent whole."""

import sys
import threading
import time

import numpy as np
import torch

from explorer import figures as fig
from explorer.base.cache import COMPUTING, BoundedCache, nbytes


def test_nbytes_counts_the_tensors_of_a_trace():
    from attn_core import Settings, run_trace

    tr = run_trace(Settings())
    direct = sum(v.numel() * v.element_size() for v in vars(tr).values() if isinstance(v, torch.Tensor))
    assert nbytes(tr) > direct > 0  # plus the weights and the softmax stages


def deep_size(value) -> int:
    """An independent count of what ``value`` keeps alive: every object reachable through
    gc.get_referents, by sys.getsizeof, plus each distinct tensor storage once."""
    import gc
    import sys
    import types

    seen, storages, total, todo = set(), set(), 0, [value]
    while todo:
        obj = todo.pop()
        if id(obj) in seen or isinstance(obj, (type, types.ModuleType, types.FunctionType)):
            continue
        seen.add(id(obj))
        total += sys.getsizeof(obj)
        if isinstance(obj, torch.Tensor):
            st = obj.untyped_storage()
            if st.data_ptr() not in storages:
                storages.add(st.data_ptr())
                total += st.nbytes()
            continue
        todo.extend(gc.get_referents(obj))
    return total


def test_nbytes_counts_python_objects_and_views_like_an_independent_count():
    big = torch.zeros(1000, 1000)
    value = {
        "words": [f"token number {i}" * 3 for i in range(2000)],  # strings
        "curve": [float(i) for i in range(5000)],  # Python floats
        "row": big[0],  # a view keeps the whole 4 MB storage alive
        "again": big[1],  # the same storage: counted once
        "nested": ({"a": (1, 2, 3)}, [[0.5] * 100 for _ in range(50)]),
    }
    ours, theirs = nbytes(value), deep_size(value)
    assert 0.8 * theirs <= ours <= 1.25 * theirs, (ours, theirs)
    assert ours > 4_000_000 + 2000 * 90  # the storage, and the strings' characters
    assert nbytes(big[0]) >= 4_000_000  # a view of a large tensor costs its storage


def test_the_oldest_entries_go_when_the_budget_is_passed():
    cache = BoundedCache(lambda n: torch.zeros(n, dtype=torch.uint8), max_bytes=4000)
    for i in range(10):
        cache(1000 + i)
    each = nbytes(torch.zeros(1000, dtype=torch.uint8)) + nbytes(((1000,), ()))
    assert cache.total <= 4000 and len(cache.entries) == 4000 // each
    assert [k[0][0] for k in cache.entries][-1] == 1009 and cache.total == sum(s for _, s in cache.entries.values())
    cache(50_000)  # larger than the whole budget: returned, not kept
    assert cache.total <= 4000 and (50_000,) not in [k[0] for k in cache.entries]


def test_many_small_python_results_are_bounded_by_their_bytes_not_their_number():
    cache = BoundedCache(lambda i: [f"{i}-{j}" for j in range(100)], max_bytes=200_000)
    for i in range(1000):
        cache(i)
    assert cache.total <= 200_000 and 0 < len(cache.entries) < 1000
    assert sum(deep_size(v) for v, _ in cache.entries.values()) <= 1.25 * 200_000


def test_results_nobody_asks_for_expire_and_the_others_stay():
    now = [0.0]
    cache = BoundedCache(lambda x: torch.ones(10) * x, max_bytes=10**6, idle_s=100, clock=lambda: now[0])
    cache(1), cache(2)
    now[0] = 60.0
    cache(2)  # asked for again: its clock restarts
    now[0] = 130.0
    assert cache.expire_idle() > 0
    assert [k[0][0] for k in cache.entries] == [2] and cache.total == cache.entries[((2,), ())][1]
    now[0] = 161.0
    cache.expire_idle()
    assert not cache.entries and cache.total == 0


def test_expire_all_reaches_every_bounded_cache():
    from explorer.base import cache as module

    now = [0.0]
    a = BoundedCache(lambda x: torch.ones(5), max_bytes=10**6, idle_s=10, clock=lambda: now[0])
    b = BoundedCache(lambda x: torch.ones(5), max_bytes=10**6, idle_s=10, clock=lambda: now[0])
    a(1), b(1)
    assert module.expire_all(now=5.0) == 0 or a.entries  # not idle yet
    assert a.entries and b.entries
    module.expire_all(now=20.0)
    assert not a.entries and not b.entries


def _blocked_in(thread: threading.Thread, function: str) -> bool:
    """Whether ``thread`` is waiting (in threading's wait or acquire) somewhere inside ``function``."""
    frame = sys._current_frames().get(thread.ident)
    if frame is None or frame.f_code.co_name not in ("wait", "acquire"):
        return False
    while frame is not None:
        if frame.f_code.co_name == function:
            return True
        frame = frame.f_back
    return False


def _until(condition, what: str, timeout: float = 30.0) -> None:
    """Wait for a state of the threads (not a duration): fails with ``what`` if it never comes."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.005)


def test_identical_concurrent_calls_are_computed_once():
    calls, started, release = [], threading.Event(), threading.Event()

    def slow(x):
        calls.append(x)
        started.set()
        assert release.wait(30)
        return torch.ones(4) * x

    cache = BoundedCache(slow, max_bytes=10**6)
    out = []
    first = threading.Thread(target=lambda: out.append(cache(7)))
    first.start()
    assert started.wait(30)
    others = [threading.Thread(target=lambda: out.append(cache(7))) for _ in range(7)]
    for th in others:
        th.start()
    # every other call has arrived while the first is still computing, and waits for it
    _until(lambda: all(_blocked_in(th, "__call__") for th in others), "the others never waited for the first")
    assert not cache.entries
    release.set()
    for th in [first, *others]:
        th.join(30)
    assert calls == [7] and len(out) == 8 and all(torch.equal(o, out[0]) for o in out)


def test_a_failed_computation_is_retried_by_a_waiting_call_not_shared():
    calls, started, release = [], threading.Event(), threading.Event()

    def flaky(x):
        calls.append(x)
        if len(calls) == 1:
            started.set()
            assert release.wait(30)
            raise RuntimeError("first call fails")
        return torch.ones(2)

    cache = BoundedCache(flaky, max_bytes=10**6)
    errors, out = [], []

    def first_call():
        try:
            cache(1)
        except RuntimeError as err:
            errors.append(err)

    a = threading.Thread(target=first_call)
    a.start()
    assert started.wait(30)
    b = threading.Thread(target=lambda: out.append(cache(1)))
    b.start()
    _until(lambda: _blocked_in(b, "__call__"), "the second call never waited")
    release.set()
    a.join(30), b.join(30)
    assert len(errors) == 1 and len(out) == 1 and calls == [1, 1] and not cache.pending


def test_two_results_are_computed_at_once_never_three_and_nesting_does_not_deadlock():
    running, peak, lock = [0], [0], threading.Lock()
    go = threading.Semaphore(0)

    def work(x):
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        assert go.acquire(timeout=30)
        with lock:
            running[0] -= 1
        return torch.zeros(1)

    inner = BoundedCache(work, max_bytes=10**6)
    outer = BoundedCache(lambda x: inner(x + 1000), max_bytes=10**6)  # holds its slot while inner runs
    threads = [threading.Thread(target=outer, args=(i,)) for i in range(6)]
    for th in threads:
        th.start()

    def settled(left: int) -> bool:
        alive = [th for th in threads if th.is_alive()]
        return (
            len(alive) == left
            and sum(_blocked_in(th, "work") for th in alive) == min(2, left)
            and all(_blocked_in(th, "work") or _blocked_in(th, "__enter__") for th in alive)
        )

    for left in (6, 4, 2):  # each round: two inside, every other one waiting for a slot
        _until(lambda left=left: settled(left), f"with {left} calls left, two were never computing at once")
        assert running[0] == 2
        go.release(2)
    for th in threads:
        th.join(30)
    assert not any(th.is_alive() for th in threads)
    assert peak[0] == 2
    assert COMPUTING.slots.acquire(blocking=False) and COMPUTING.slots.acquire(blocking=False)  # all released
    COMPUTING.slots.release()
    COMPUTING.slots.release()


def test_a_large_heatmap_is_the_mean_of_blocks_and_says_so():
    z = torch.arange(300 * 200, dtype=torch.float32).reshape(300, 200)
    f = fig.heatmap(
        z,
        fig.labels([f"k{i}" for i in range(200)]),
        fig.labels([f"q{i}" for i in range(300)]),
        title="W",
        style=fig.Style(),
    )
    data = np.asarray(f.data[0].z)
    assert data.shape == (100, 100)  # 300 rows in blocks of 3, 200 columns in blocks of 2
    assert np.isclose(data[0, 0], z[:3, :2].mean().item()) and np.isclose(data[-1, -1], z[-3:, -2:].mean().item())
    assert "mean of 3×2 blocks" in f.layout.title.text
    assert f.data[0].y[0].startswith("0–2 q0") and f.data[0].x[-1].startswith("198–199 k198")


def test_an_uneven_last_block_averages_only_what_is_there():
    z = torch.ones(130, 4)
    z[128:] = 5.0
    f = fig.heatmap(z, ["a", "b", "c", "d"], [str(i) for i in range(130)], style=fig.Style())
    data = np.asarray(f.data[0].z)
    assert data.shape == (65, 4) and np.allclose(data[-1], 5.0) and np.allclose(data[0], 1.0)


def test_token_text_is_escaped_for_plotly():
    f = fig.heatmap(
        torch.zeros(1, 1),
        fig.labels(["<a href='x'>t</a>"]),
        fig.labels(["<b>q</b>"]),
        title="<img src=x>",
        style=fig.Style(),
    )
    assert f.data[0].x[0] == "0 &lt;a href='x'&gt;t&lt;/a&gt;" and "<img" not in f.layout.title.text


def test_the_error_curve_has_at_most_24_points_whatever_the_length():
    from explorer.variants.results import curve_points

    assert curve_points(6) == (1, 2, 3, 4, 5, 6)
    long = curve_points(500)
    assert len(long) <= 24 and long[0] == 1 and long[-1] == 500 and list(long) == sorted(set(long))
