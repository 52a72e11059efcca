"""The "Inside the model" page's computations, cached on plain values and shared by every session
(``explorer.cache.bounded``: a memory budget, identical concurrent requests computed once, at most
two computations at once on the server). Results are plain lists and floats, never tensors in a
session."""

from __future__ import annotations

from attn_core.interpret import ablate, patch, prune, roles

from .cache import bounded
from .real import wait_for


def _pre(name: str):
    pre = wait_for(name)
    assert pre is not None
    return pre


@bounded(max_mib=48)
def intervention(name: str, sentence: str, heads: tuple, mode: str, masked: tuple, second: str | None) -> dict:
    iv = ablate.intervene(_pre(name), sentence, heads, mode, masked, second)
    return {
        "tokens": list(iv.tokens),
        "cosine": iv.cosine,
        "pair_cosine": iv.pair_cosine,
        "pair_cosine_original": iv.pair_cosine_original,
        # (layers, H, L, L) for the 72 panels, drawn up to 64 pieces; the budget counts it
        "attentions": iv.attentions if len(iv.tokens) <= 64 else None,
        "changed": float((iv.attentions - iv.original).abs().max()),
    }


@bounded(max_mib=8)
def importance(name: str, sentence: str, mode: str, masked: tuple, second: str | None) -> dict:
    r = ablate.importance(_pre(name), sentence, mode, masked, second)
    return {k: v.tolist() for k, v in r.items()}


@bounded(max_mib=8)
def patching(name: str, clean: str, corrupted: str) -> dict:
    r = patch.patch_map(_pre(name), clean, corrupted)
    return {
        "restored": r["restored"].tolist(),
        "base_distance": r["base_distance"],
        "identical": r["identical"],
    }


@bounded(max_mib=4)
def pruning(name: str) -> dict:
    """Once per server and model: the corpus is the shipped one."""
    return prune.prune_curve(_pre(name))


@bounded(max_mib=16)
def head_stats(name: str) -> dict:
    """Once per server and model: the shipped probe set."""
    return roles.head_stats(_pre(name))
