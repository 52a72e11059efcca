"""The "Inside the model" page's computations, shared by every session. One intervention (two
passes) is computed here and cached on plain values (``explorer.base.cache.bounded``: a memory budget,
identical concurrent requests computed once); the slow ones (importance, patching, pruning, the
heads' roles) are requests for background jobs (``explorer.jobs.heavy``) whose results arrive as plain
lists and floats while the page polls. Never tensors in a session."""

from __future__ import annotations

from attn_core.interpret import ablate
from explorer.base.cache import bounded
from explorer.model.real import wait_for


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


def on(name: str, request: tuple[str, dict]) -> tuple[str, dict]:
    """``request`` for the offered model ``name``, named as such: the worker loads it by that name."""
    return request[0], {**request[1], "model": name}


def importance(sentence: str, mode: str, masked: tuple, second: str | None) -> tuple[str, dict]:
    """The request for each head's importance (72 ablated passes), a background job (``explorer.jobs.heavy``)."""
    return "importance", {"sentence": sentence, "mode": mode, "masked": list(masked), "second": second}


def patching(clean: str, corrupted: str) -> tuple[str, dict]:
    return "patching", {"clean": clean, "corrupted": corrupted}


def pruning() -> tuple[str, dict]:
    """Once per server and model: the corpus is the shipped one."""
    return "pruning", {}


def head_stats() -> tuple[str, dict]:
    """Once per server and model: the shipped probe set."""
    return "head_stats", {}
