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

import bisect
import re
from dataclasses import dataclass

import torch

from ..errors import AttentionConfigError
from ..models import Pretrained, display_pieces

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


# A word as a reader counts it: letters and digits, joined inside by an apostrophe or a hyphen ("didn't",
# "state-of-the-art") or, between digits, by a point or a comma ("3.5"); a CJK character is a word of its own (as
# the tokenizers have it); any other character that is not a space (punctuation) is a word apart.
_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af"
READER_WORD = re.compile(
    rf"[{_CJK}]"
    rf"|(?:(?![{_CJK}])[^\W_])+(?:(?:['\u2019\-]|(?<=\d)[.,](?=\d))(?:(?![{_CJK}])[^\W_])+)*"
    r"|[^\s]"
)


def reader_words(text: str, spans: list[tuple[int, int] | None]) -> list[int | None]:
    """For each of the tokenizer's words (its characters ``spans`` in ``text``, None for a word with none), the
    reader's word it is part of, numbered from 0 in order: the tokenizer cuts "didn't" into three words ("didn",
    "'", "t"), a reader counts one, and the players of Shapley's values are the words a reader counts (its limit
    refused "I didn't think it wasn't good at all", 8 words, as 12). Punctuation stays a word apart."""
    starts = [m.start() for m in READER_WORD.finditer(text)]
    found: list[int | None] = []
    for span in spans:
        if span is None:
            found.append(None)
            continue
        a, b = span
        first = next((i for i in range(a, b) if not text[i].isspace()), a)
        found.append(bisect.bisect_right(starts, first) - 1 if starts else None)
    # numbered from 0 in the order they come; a tokenizer word before every reader word joins the first
    order = {w: i for i, w in enumerate(dict.fromkeys(max(w, 0) for w in found if w is not None))}
    return [None if w is None else order[max(w, 0)] for w in found]


def _grouped(text: str, enc) -> tuple[int | None, ...]:
    """Each piece's reader word (None for [CLS], [SEP] and whatever else has no word of the tokenizer's)."""
    words = enc.word_ids()
    tokenizer_words = sorted({w for w in words if w is not None})
    spans = []
    for w in tokenizer_words:
        span = enc.word_to_chars(w)
        spans.append(None if span is None else (span.start, span.end))
    mapped = dict(zip(tokenizer_words, reader_words(text, spans), strict=True))
    return tuple(None if w is None else mapped[w] for w in words)


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
    words = _grouped(text, enc)
    if is_decoder(pre):
        return _decoder_item(pre, text, ids, words)
    unk = sum(1 for i in ids if i == tok.unk_token_id)
    return Item(
        text,
        tuple(tok.convert_ids_to_tokens(list(ids))),
        ids,
        words,
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
