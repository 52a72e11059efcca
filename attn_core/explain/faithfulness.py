"""Faithfulness without a reference (as ferret reports AOPC comprehensiveness and sufficiency):
remove the top k % of the sentence's pieces by a ranking (deletion), or keep only them (insertion),
and measure 1 − cos to the full embedding (a decoder: the drop in f = log p(y*), ``references.change_after``),
at k in ``KS``; the area is the mean over the k's.
A faithful ranking has a high deletion area (removing what it ranks first changes e(x) most) and a
low insertion area (keeping only that already gives e(x)). [CLS] and [SEP] (a decoder's BOS) are never removed.
"""

from __future__ import annotations

import math

import numpy as np

from .references import change_after
from .sentence import Item

KS = (1, 5, 10, 20, 50)  # percent of the sentence's own pieces


def top_count(k: int, m: int) -> int:
    """How many pieces k % of m is: rounded up, at least one."""
    return min(m, max(1, math.ceil(k * m / 100)))


def ranked(values: np.ndarray, inner: list[int]) -> list[int]:
    """The sentence's own pieces, highest value first (ties: earlier position first, stable)."""
    order = sorted(inner, key=lambda i: (-float(values[i]), i))
    return order


def curves(pre, item: Item, rankings: dict[str, np.ndarray], removal: str, target) -> dict:
    """{name: {"deletion": [...], "insertion": [...], "deletion_area", "insertion_area"}} in one batched pass."""
    inner = item.inner
    m = len(inner)
    sets, where = [], []
    for name, values in rankings.items():
        if values is None:
            continue
        order = ranked(np.asarray(values), inner)
        for k in KS:
            top = set(order[: top_count(k, m)])
            sets += [top, set(inner) - top]
            where.append(name)
    if not sets:
        return {}
    dist = change_after(pre, item, sets, removal, target)
    out: dict = {}
    for idx, name in enumerate(where):
        entry = out.setdefault(name, {"deletion": [], "insertion": []})
        entry["deletion"].append(float(dist[2 * idx]))
        entry["insertion"].append(float(dist[2 * idx + 1]))
    for entry in out.values():
        entry["deletion_area"] = float(np.mean(entry["deletion"]))
        entry["insertion_area"] = float(np.mean(entry["insertion"]))
    return out
