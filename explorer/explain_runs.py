"""The Explain page's heavy work, computed once per server and shared by every session that asks
for the same plain values (model name, sentence, removal); results are plain lists and floats
(no tensors), bounded by ``explorer.cache``. Shapley values (2^m passes) only on request."""

from __future__ import annotations

import json
from functools import lru_cache

from attn_core.explain import explain as X
from attn_core.explain import pair as P
from attn_core.explain import table as T

from .cache import bounded
from .real import wait_for


def _pre(name: str):
    pre = wait_for(name)
    assert pre is not None
    return pre


@bounded(max_mib=32)
def explanation(name: str, sentence: str, removal: str) -> dict:
    """Every method, leave-one-out, integrated gradients, the curves and the correlations; no Shapley."""
    return X.explain(_pre(name), sentence, removal=removal, shapley=False, layers=True)


@bounded(max_mib=16)
def shapley(name: str, sentence: str, removal: str) -> dict:
    """Exact Shapley values of the words and their correlations with each method (≤ 10 words)."""
    return X.with_shapley(_pre(name), sentence, removal)


@bounded(max_mib=16)
def pair(name: str, a: str, b: str) -> dict:
    return P.pair(_pre(name), a, b)


@bounded(max_mib=8)
def pair_shapley(name: str, a: str, b: str, removal: str) -> dict:
    return P.pair_shapley(_pre(name), a, b, removal)


@lru_cache(maxsize=1)
def table() -> dict | None:
    """The shipped corpus table (``python -m attn_core explain-table --json``), None if absent."""
    try:
        return json.loads(T.TABLE.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
