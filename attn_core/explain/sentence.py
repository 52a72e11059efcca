"""A sentence to explain: the model's pieces, which word each belongs to, and the same sentence
with some pieces removed, in one of three ways (the removal is a choice, and it is shown):

    delete     the pieces are taken out (the later ones move up a position; padding fills the batch)
    mask       each is replaced by [MASK]
    attention  each is masked out of every attention row (as a key) and out of the mean pooling
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from ..errors import AttentionConfigError
from ..pretrained import Pretrained

REMOVALS = ("delete", "mask", "attention")
MAX_PIECES = 128  # leave-one-out is one pass per piece, the norms n² vectors: longer sentences are refused


@dataclass(frozen=True)
class Item:
    text: str
    pieces: tuple[str, ...]  # [CLS] ... [SEP]
    ids: tuple[int, ...]
    words: tuple[int | None, ...]  # the word of each piece (None for [CLS] and [SEP])
    unk: int
    mask_id: int
    pad_id: int

    @property
    def n(self) -> int:
        return len(self.ids)

    @property
    def inner(self) -> list[int]:
        """The sentence's own pieces: every position but [CLS] and [SEP]."""
        return [i for i, w in enumerate(self.words) if w is not None]

    @property
    def n_words(self) -> int:
        return len({w for w in self.words if w is not None})

    def pieces_of(self, word: int) -> list[int]:
        return [i for i, w in enumerate(self.words) if w == word]


def make_item(pre: Pretrained, text: str, *, field: str = "sentence") -> Item:
    """Tokenise with the model's own tokenizer; refuse what cannot be explained, saying why."""
    if not isinstance(text, str) or not text.strip():
        raise AttentionConfigError(field, "empty_sentence")
    if not any(ch.isalnum() for ch in text):
        raise AttentionConfigError(field, "explain_no_words")
    tok = pre.tokenizer
    enc = tok(text, add_special_tokens=True, truncation=False, verbose=False)
    n = len(enc["input_ids"])
    if n > MAX_PIECES:
        raise AttentionConfigError(field, "explain_too_long", n=n, limit=MAX_PIECES)
    ids = tuple(enc["input_ids"])
    unk = sum(1 for i in ids if i == tok.unk_token_id)
    return Item(
        text,
        tuple(tok.convert_ids_to_tokens(list(ids))),
        ids,
        tuple(enc.word_ids()),
        unk,
        tok.mask_token_id,
        tok.pad_token_id,
    )


def removed(item: Item, remove: list[set[int]], removal: str) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """One row per set of positions to remove: (ids, keys, pooling weights), each (B, n)."""
    if removal not in REMOVALS:
        raise AttentionConfigError("removal", "unknown_choice", value=removal, options=", ".join(REMOVALS))
    B, n = len(remove), item.n
    base = torch.tensor(item.ids)
    ids = base.repeat(B, 1)
    keys = torch.ones(B, n, dtype=torch.bool)
    for b, gone in enumerate(remove):
        idx = torch.tensor(sorted(gone), dtype=torch.long)
        if not len(idx):
            continue
        if removal == "mask":
            ids[b, idx] = item.mask_id
        elif removal == "attention":
            keys[b, idx] = False
        else:
            kept = [i for i in range(n) if i not in gone]
            ids[b] = item.pad_id
            ids[b, : len(kept)] = base[kept]
            keys[b, len(kept) :] = False
    return ids, keys, keys.float()
