"""The Explain page's work. What one forward pass gives (raw attention, rollout, norms, the tokens)
is computed here at once and cached (``explorer.base.cache``); everything slower (value zeroing,
leave-one-out, integrated gradients, flow, the curves, the pair, Shapley values) is a background
job shared by every session that asks for the same plain values (``explorer.jobs.heavy``), whose parts
arrive as plain lists and floats while the page polls (``explorer.jobs.waiting``)."""

from __future__ import annotations

import json
from functools import lru_cache

from attn_core.explain import references, staged
from attn_core.explain import table as T
from explorer.base.cache import bounded
from explorer.model.real import wait_for


def _pre(name: str):
    pre = wait_for(name)
    assert pre is not None
    return pre


@bounded(max_mib=8)
def cheap(name: str, sentence: str) -> dict:
    """Tokens, notices, raw attention, rollout and norms per layer (raises AttentionConfigError)."""
    return staged.cheap(_pre(name), sentence)


def on(name: str, request: tuple[str, dict]) -> tuple[str, dict]:
    """``request`` for the offered model ``name``, named as such: the worker loads it by that name (once)."""
    return request[0], {**request[1], "model": name}


def explanation(sentence: str, removal: str, name: str) -> tuple[str, dict]:
    """The request for everything else: value zeroing, leave-one-out, integrated gradients, flow,
    the curves and the correlations; no Shapley."""
    return on(name, ("explain", {"sentence": sentence, "removal": removal, "steps": references.IG_STEPS}))


def shapley(sentence: str, removal: str, name: str) -> tuple[str, dict]:
    """Exact Shapley values of the words and their correlations with each method (≤ SHAPLEY_MAX words)."""
    return on(name, ("shapley", {"sentence": sentence, "removal": removal}))


def pair(a: str, b: str, name: str) -> tuple[str, dict]:
    """Why two sentences are similar, on the encoder ``name`` (the one picked, never the worker's first)."""
    return on(name, ("pair", {"a": a, "b": b, "steps": references.IG_STEPS}))


def pair_shapley(a: str, b: str, removal: str, name: str) -> tuple[str, dict]:
    return on(name, ("pair_shapley", {"a": a, "b": b, "removal": removal}))


@lru_cache(maxsize=1)
def table() -> dict | None:
    """The shipped corpus table (``python -m attn_core explain-table --json``), None if absent."""
    try:
        return json.loads(T.TABLE.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
