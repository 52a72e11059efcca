"""The server-wide cache keeps within its memory budget, shares identical concurrent work, and
never computes more than two results at once; big heatmaps are pooled, never sent whole."""

import threading
import time

import numpy as np
import torch

from explorer import figures as fig
from explorer.cache import COMPUTING, BoundedCache, nbytes


def test_nbytes_counts_the_tensors_of_a_trace():
    from attn_core import Settings, run_trace

    tr = run_trace(Settings())
    direct = sum(v.numel() * v.element_size() for v in vars(tr).values() if isinstance(v, torch.Tensor))
    assert nbytes(tr) > direct > 0  # plus the weights and the softmax stages


def test_the_oldest_entries_go_when_the_budget_is_passed():
    cache = BoundedCache(lambda n: torch.zeros(n, dtype=torch.uint8), max_bytes=1000, max_entries=100)
    for i in range(10):
        cache(300 + i)
    assert cache.total <= 1000 and len(cache.entries) == 3
    assert [k[0][0] for k in cache.entries] == [307, 308, 309]
    cache(5000)  # larger than the whole budget: returned, not kept
    assert cache.total <= 1000 and (5000,) not in [k[0] for k in cache.entries]


def test_identical_concurrent_calls_are_computed_once():
    calls = []

    def slow(x):
        calls.append(x)
        time.sleep(0.3)
        return torch.ones(4) * x

    cache = BoundedCache(slow, max_bytes=10**6, max_entries=10)
    out = []
    threads = [threading.Thread(target=lambda: out.append(cache(7))) for _ in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert calls == [7] and len(out) == 8 and all(torch.equal(o, out[0]) for o in out)


def test_at_most_two_results_are_computed_at_once_and_nesting_does_not_deadlock():
    running, peak, lock = [0], [0], threading.Lock()

    def work(x):
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        time.sleep(0.1)
        with lock:
            running[0] -= 1
        return torch.zeros(1)

    inner = BoundedCache(work, max_bytes=10**6, max_entries=100)
    outer = BoundedCache(lambda x: inner(x + 1000), max_bytes=10**6, max_entries=100)
    threads = [threading.Thread(target=outer, args=(i,)) for i in range(6)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(10)
    assert not any(th.is_alive() for th in threads)
    assert peak[0] <= 2
    assert COMPUTING.slots.acquire(blocking=False) and COMPUTING.slots.acquire(blocking=False)  # all released
    COMPUTING.slots.release()
    COMPUTING.slots.release()


def test_a_large_heatmap_is_the_mean_of_blocks_and_says_so():
    z = torch.arange(300 * 200, dtype=torch.float32).reshape(300, 200)
    f = fig.heatmap(z, fig.labels([f"k{i}" for i in range(200)]), fig.labels([f"q{i}" for i in range(300)]), title="W")
    data = np.asarray(f.data[0].z)
    assert data.shape == (100, 100)  # 300 rows in blocks of 3, 200 columns in blocks of 2
    assert np.isclose(data[0, 0], z[:3, :2].mean().item()) and np.isclose(data[-1, -1], z[-3:, -2:].mean().item())
    assert "mean of 3×2 blocks" in f.layout.title.text
    assert f.data[0].y[0].startswith("0–2 q0") and f.data[0].x[-1].startswith("198–199 k198")


def test_an_uneven_last_block_averages_only_what_is_there():
    z = torch.ones(130, 4)
    z[128:] = 5.0
    f = fig.heatmap(z, ["a", "b", "c", "d"], [str(i) for i in range(130)])
    data = np.asarray(f.data[0].z)
    assert data.shape == (65, 4) and np.allclose(data[-1], 5.0) and np.allclose(data[0], 1.0)


def test_token_text_is_escaped_for_plotly():
    f = fig.heatmap(
        torch.zeros(1, 1), fig.labels(["<a href='x'>t</a>"]), fig.labels(["<b>q</b>"]), title="<img src=x>"
    )
    assert f.data[0].x[0] == "0 &lt;a href='x'&gt;t&lt;/a&gt;" and "<img" not in f.layout.title.text


def test_the_error_curve_has_at_most_24_points_whatever_the_length():
    from explorer.variants import curve_points

    assert curve_points(6) == (1, 2, 3, 4, 5, 6)
    long = curve_points(500)
    assert len(long) <= 24 and long[0] == 1 and long[-1] == 500 and list(long) == sorted(set(long))
