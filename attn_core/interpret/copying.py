"""Copying what came before: a decoder's induction heads on a prompt that repeats itself (Olsson et al., 2022).

    repeated_prompt(m, kind, text=..., seed=..., n=...) -> list[int]   the token ids to look at
    copying(m, ids) -> dict                                            every number the Next token page shows

For token ids x (x[0] a first token), a query t **can copy** when its token occurred before, at j (the latest earlier
occurrence), and the token after it then is the token after it now: x[j + 1] == x[t + 1]. Its **source** is the
key j + 1, the token that followed the earlier occurrence: an induction head puts its weight there (the stripe one
below the diagonal of earlier occurrences). For each copying query t:

    second[t]  the model's loss (nats) on x[t + 1] at t                    (the copy)
    first[t]   the model's loss on the same token at j, its first time      (nothing to copy from yet)
    stripe     per head, the mean weight of the copying queries on their source
    ablated    per head, the copies' mean loss with that head's output zeroed (every head in one batch)

The head with the largest stripe is the induction head; ablating it should raise the copies' loss back toward the
first time's, and ablating a head outside the circuit (``unrelated``: a last-layer head that does not look at the
source) should barely change it. A previous-token head of an earlier layer, which the induction head reads, does not
look at the source either, yet ablating it breaks the copy: the Inside page's composition table names it.
"""

from __future__ import annotations

import torch

from attn_core.errors import AttentionConfigError

from . import hooks
from .ablate import _check_decoder

KINDS = ("random", "repeat", "prompt")  # random tokens twice, the prompt twice, the prompt as it is
RANDOM_LEN = 24  # random tokens in each half (the TransformerLens probe's length is 50; 24 fits every view)
MAX_TOKENS = 96  # the longest sequence the view computes (its map is drawn L x L)


def sources(ids: list[int]) -> list[int]:
    """For each position t, the key after the latest earlier occurrence of ids[t] (-1 if none): where an
    induction head looks."""
    last: dict[int, int] = {}
    out = []
    for t, tok in enumerate(ids):
        j = last.get(tok)
        out.append(-1 if j is None else j + 1)
        last[tok] = t
    return out


def copy_queries(ids: list[int]) -> list[tuple[int, int]]:
    """(t, j) for every query t that can copy: ids[t] occurred last at j < t and ids[j + 1] == ids[t + 1]."""
    src = sources(ids)
    return [(t, src[t] - 1) for t in range(len(ids) - 1) if src[t] > 0 and ids[src[t]] == ids[t + 1]]


def _first_token(m) -> int:
    tok = m.tokenizer
    first = tok.bos_token_id if tok.bos_token_id is not None else tok.eos_token_id
    return int(first if first is not None else 0)


def repeated_prompt(m, kind: str, *, text: str = "", seed: int = 0, n: int = RANDOM_LEN) -> list[int]:
    """The ids of a prompt that repeats: ``random`` (a first token, ``n`` random ordinary tokens of the whole
    vocabulary, the same again), ``repeat`` (a first token, the text's tokens, the same again) or ``prompt``
    (a first token and the text as it is). Cut to ``MAX_TOKENS`` and the model's context."""
    if kind not in KINDS:
        raise AttentionConfigError("copy", "unknown_choice", value=str(kind)[:40], options=", ".join(KINDS))
    first = _first_token(m)
    limit = min(MAX_TOKENS, m.max_positions)
    if kind == "random":
        specials = set(m.tokenizer.all_special_ids)
        vocab = torch.tensor([i for i in range(min(m.vocab, len(m.tokenizer))) if i not in specials])
        g = torch.Generator().manual_seed(int(seed))
        half = min(int(n), (limit - 1) // 2)
        r = vocab[torch.randint(len(vocab), (half,), generator=g)].tolist()
        return [first, *r, *r]
    ids = list(m.tokenizer(text, add_special_tokens=False)["input_ids"])
    if not ids:
        raise AttentionConfigError("prompt", "nexttoken_empty_prompt")
    if kind == "repeat":
        half = min(len(ids), (limit - 1) // 2)
        return [first, *ids[:half], *ids[:half]]
    return [first, *ids][:limit]


def _losses(m, logits: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
    """(B, L - 1) each position's loss (nats) on the next token."""
    return torch.nn.functional.cross_entropy(logits[:, :-1].transpose(1, 2), ids[:, 1:], reduction="none")


def unrelated(stripe: torch.Tensor, layer: int, head: int) -> list[int]:
    """A head outside the copying circuit, to ablate beside the induction head: of the last layer's heads, the one
    that looks at the source least (an earlier layer's head may be the previous-token head the induction head
    reads, and a head between them may pass its output on); when the induction head is in the last layer, the one
    of its other heads; with one layer of one head, itself."""
    layers, heads = stripe.shape
    last = [(layers - 1, h) for h in range(heads)] if layer < layers - 1 else []
    cells = last or [(layer, h) for h in range(heads) if h != head] or [(layer, head)]
    return list(min(cells, key=lambda c: float(stripe[c])))


def copying(m, ids: list[int]) -> dict:
    """Every number of the copying view (see the module) as plain values, from the model as it is and with each
    head zeroed in turn (one batch of 1 + layers x H rows)."""
    _check_decoder(m)
    if len(ids) < 3:
        raise AttentionConfigError("prompt", "copy_short", n=len(ids))
    ids = list(ids)[: min(MAX_TOKENS, m.max_positions)]
    pairs = copy_queries(ids)
    L, rows = len(ids), 1 + m.layers * m.heads
    x = torch.tensor([ids] * rows)
    keep = torch.ones(rows, L, dtype=torch.bool)
    modes = torch.zeros(rows, m.layers, m.heads, dtype=torch.int8)
    modes[1:].view(rows - 1, -1)[torch.arange(rows - 1), torch.arange(rows - 1)] = hooks.ZERO
    out = hooks.run(m, hooks.Batch(x, keep, keep.clone()), hooks.Plan(modes, keep), attentions=True)
    with torch.inference_mode():
        logits = m.hf.lm_head(out.hidden).float()
    loss = _losses(m, logits, x).double()  # (rows, L - 1)
    att = out.attentions[:, 0].double()  # (layers, H, L, L) the model as it is
    src = sources(ids)
    t = torch.tensor([p[0] for p in pairs], dtype=torch.long)
    j = torch.tensor([p[1] for p in pairs], dtype=torch.long)
    if len(pairs):
        keys = torch.tensor([src[i] for i in t.tolist()])
        stripe = att[:, :, t, keys].mean(-1)  # (layers, H)
        second = loss[:, t]  # (rows, n)
        first = loss[0, j]
        ablated = second[1:].mean(-1).view(m.layers, m.heads)
    else:
        stripe = torch.zeros(m.layers, m.heads, dtype=torch.double)
        second = loss[:, :0]
        first = loss[0, :0]
        ablated = torch.zeros(m.layers, m.heads, dtype=torch.double)
    best = int(stripe.flatten().argmax())
    return {
        "unrelated": unrelated(stripe, *divmod(best, m.heads)),
        "ids": ids,
        "sources": src,
        "copies": [list(p) for p in pairs],
        "loss": loss[0].tolist(),
        "first": first.tolist(),
        "second": second[0].tolist(),
        "first_mean": float(first.mean()) if len(pairs) else None,
        "second_mean": float(second[0].mean()) if len(pairs) else None,
        "stripe": stripe.tolist(),
        "ablated": ablated.tolist(),
        "head": list(divmod(best, m.heads)),
        "weights": att.view(-1, L, L)[best].tolist(),  # the induction head's map (L, L)
    }
