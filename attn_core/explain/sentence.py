"""A sentence to explain: the model's pieces, which word each belongs to, and the same sentence
with some pieces removed, in one of three ways (the removal is a choice, and it is shown):

    delete     the pieces are taken out (the later ones move up a position; padding fills the batch)
    mask       each is replaced by [MASK]
    attention  each is masked out of every attention row (as a key) and out of the mean pooling

A decoder (``pre.causal``) has no [MASK]: it offers ``delete`` and ``attention`` (``removals``), its pieces are
shown as ``attn_core.models`` shows them (a Chinese character split over byte pieces shows whole, never "�"),
and its beginning-of-sequence token, if the tokenizer adds one, plays [CLS]'s part: never removed.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from ..errors import AttentionConfigError
from ..models import display_pieces
from ..pretrained import Pretrained

REMOVALS = ("delete", "mask", "attention")
DECODER_REMOVALS = ("delete", "attention")
MAX_PIECES = 128  # leave-one-out is one pass per piece, the norms n² vectors: longer sentences are refused


@dataclass(frozen=True)
class Item:
    text: str
    pieces: tuple[str, ...]  # [CLS] ... [SEP]
    ids: tuple[int, ...]
    words: tuple[int | None, ...]  # the word of each piece (None for [CLS] and [SEP])
    unk: int
    mask_id: int | None
    pad_id: int | None
    texts: tuple[str, ...] = ()  # each word's text, where the pieces' own do not spell it (a decoder's bytes)

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


def is_decoder(pre) -> bool:
    return bool(getattr(pre, "causal", False))


def removals(pre) -> tuple[str, ...]:
    """The removals this model offers."""
    return DECODER_REMOVALS if is_decoder(pre) else REMOVALS


def check_removal(pre, removal: str) -> None:
    if removal not in removals(pre):
        raise AttentionConfigError("removal", "unknown_choice", value=removal, options=", ".join(removals(pre)))


def _decoder_item(pre, text: str, ids: tuple[int, ...], words: tuple[int | None, ...]) -> Item:
    tok = pre.tokenizer
    n_words = len({w for w in words if w is not None})
    texts = []
    for w in range(n_words):
        texts.append(tok.decode([ids[i] for i, x in enumerate(words) if x == w]).strip())
    pieces, _ = display_pieces(tok, list(ids))
    return Item(text, pieces, ids, words, 0, None, tok.pad_token_id, tuple(texts))


def make_item(pre: Pretrained, text: str, *, field: str = "sentence") -> Item:
    """Tokenise with the model's own tokenizer; refuse what cannot be explained, saying why."""
    if not isinstance(text, str) or not text.strip():
        raise AttentionConfigError(field, "empty_sentence")
    if not any(ch.isalnum() for ch in text):
        raise AttentionConfigError(field, "explain_no_words")
    tok = pre.tokenizer
    enc = tok(text, add_special_tokens=True, truncation=False, verbose=False)
    n = len(enc["input_ids"])
    limit = min(MAX_PIECES, getattr(pre, "max_positions", MAX_PIECES))  # a decoder's context may be shorter
    if n > limit:
        raise AttentionConfigError(field, "explain_too_long", n=n, limit=limit)
    ids = tuple(enc["input_ids"])
    if is_decoder(pre):
        return _decoder_item(pre, text, ids, tuple(enc.word_ids()))
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
