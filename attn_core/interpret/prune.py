"""Greedy head pruning over the shipped corpus, 10 % of the heads at a time (after Michel et al.,
2019, "Are Sixteen Heads Really Better than One?", who score heads on a task and prune BERT on MNLI).

Here the model is a sentence encoder with no task head, so a head's importance is what its removal
costs the embeddings: at each step, every remaining head is zero-ablated on top of those already
removed, over the corpus; the 10 % whose removal lowers the mean cosine to the unpruned embeddings
least go, and the curve records that mean cosine against the share of heads removed.
"""

from __future__ import annotations

import torch

from . import corpus, hooks
from .ablate import single_effects

MICHEL_BERT_MNLI = (
    0.4  # Michel et al.: ~40 % of BERT's heads removable before MNLI accuracy drops (another model, another task)
)
PRUNE_SENTENCES = 8  # spread over the probe set: each step runs every remaining head over these


def prune_texts() -> list[str]:
    texts = corpus.sentences()
    return texts[:: max(1, len(texts) // PRUNE_SENTENCES)][:PRUNE_SENTENCES]


def prune_curve(pre, texts: list[str] | None = None, share: float = 0.1) -> dict:
    """``removed`` (share of heads gone at each point), ``cosine`` (mean cosine to the unpruned
    embeddings), ``order`` (the heads in the order they went)."""
    texts = prune_texts() if texts is None else texts
    batch, _ = hooks.batch_of(pre, texts)
    total = pre.layers * pre.heads
    per_step = max(1, round(share * total))
    base_emb = hooks.run(pre, batch).embedding
    gone = torch.zeros(pre.layers, pre.heads, dtype=torch.int8)
    removed, cosines, order = [0.0], [1.0], []
    while len(order) < total:
        left = [(layer, head) for layer in range(pre.layers) for head in range(pre.heads) if not gone[layer, head]]
        emb, _ = single_effects(pre, batch, gone, left, hooks.ZERO)
        cost = (1 - hooks.cosine(emb, base_emb[None])).mean(-1)  # (candidates,)
        ranked = sorted(range(len(left)), key=lambda i: (float(cost[i]), left[i]))[:per_step]
        for i in ranked:
            gone[left[i]] = hooks.ZERO
            order.append(left[i])
        pruned = hooks.run(pre, batch, hooks.Plan(gone.expand(len(texts), -1, -1), batch.keep)).embedding
        removed.append(len(order) / total)
        cosines.append(float(hooks.cosine(pruned, base_emb).mean()))
    return {"removed": removed, "cosine": cosines, "order": order, "sentences": len(texts)}
