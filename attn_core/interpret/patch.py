"""Activation patching (the twin of ablation, as in TransformerLens): run a corrupted sentence of the
same length, and for each head copy its output (its slice of the context before the output
projection, and its weights) from the clean sentence's run into the corrupted one.

With d(x) = 1 - cos(pooled(x), pooled(clean)), head (l, h)'s restored share is
    (d(corrupted) - d(corrupted with (l, h) patched from clean)) / d(corrupted)
1 = that head alone restores the clean embedding, 0 = it changes nothing, < 0 = it moves further away.
"""

from __future__ import annotations

import torch

from attn_core.errors import AttentionConfigError

from . import hooks
from .ablate import all_heads, check_length, single_effects

IDENTICAL = 1e-7  # d(corrupted) below this: the two sentences give the same embedding


def patched_runs(pre, clean: str, corrupted: str):
    """The corrupted prompt run once per head, that head's output patched in from the clean run: (the clean
    encoding, the corrupted one, the clean output vector, the patched ones (heads, 1, ...), the unpatched run)."""
    bc, (ec,) = hooks.batch_of(pre, [clean])
    bk, (ek,) = hooks.batch_of(pre, [corrupted])
    if ec.n_real != ek.n_real:
        raise AttentionConfigError("second", "patch_length", n=ec.n_real, m=ek.n_real)
    check_length(pre, ec)
    none = torch.zeros(1, pre.layers, pre.heads, dtype=torch.int8)
    record = hooks.Plan(none, bc.keep, record=True)
    clean_emb = hooks.run(pre, bc, record).embedding
    source = {layer: (ctx[0], w[0]) for layer, (ctx, w) in record.capture.items()}
    emb, start = single_effects(pre, bk, none[0], all_heads(pre), hooks.PATCH, source=source)
    return ec, ek, clean_emb, emb, start


def patch_map(pre, clean: str, corrupted: str) -> dict:
    """``restored`` (layers, H), ``distance`` (layers, H) = d after each patch, ``base_distance`` = d(corrupted)."""
    ec, ek, clean_emb, emb, start = patched_runs(pre, clean, corrupted)
    d0 = float(1 - hooks.cosine(start.embedding, clean_emb)[0])
    dist = (1 - hooks.cosine(emb[:, 0], clean_emb)).view(pre.layers, pre.heads)
    identical = d0 < IDENTICAL
    restored = torch.zeros_like(dist) if identical else (d0 - dist) / d0
    return {
        "tokens": ec.pieces,
        "corrupted_tokens": ek.pieces,
        "restored": restored.float(),
        "distance": dist.float(),
        "base_distance": d0,
        "identical": identical,
        "embeddings": emb[:, 0],
        "corrupted_embedding": start.embedding[0],
    }
