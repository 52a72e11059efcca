"""Tokens the way the tutorial makes them, extended to text without spaces.

The tutorial drops commas, splits on whitespace, sorts the unique words and numbers them:
"Life is short, eat dessert first" -> {Life: 0, dessert: 1, eat: 2, first: 3, is: 4, short: 5},
ids [0, 4, 5, 2, 1, 3]. Chinese and Japanese runs have no spaces, so each CJK character is a token
of its own; mixed text works ("我爱 attention" -> 我, 爱, attention).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from .errors import EmptyTextError, TooManyTokensError

MAX_TOKENS = 512
PAD = "[PAD]"

# Han, Hiragana, Katakana, Hangul syllables, CJK punctuation is dropped separately.
_CJK = (
    "\u3040-\u309f"  # Hiragana
    "\u30a0-\u30ff"  # Katakana
    "\u3400-\u4dbf"  # CJK Extension A
    "\u4e00-\u9fff"  # CJK Unified Ideographs
    "\uf900-\ufaff"  # CJK Compatibility Ideographs
    "\uac00-\ud7af"  # Hangul syllables
)
_TOKEN = re.compile(rf"[{_CJK}]|[^\s{_CJK}]+")


def _is_punct(ch: str) -> bool:
    return unicodedata.category(ch).startswith(("P", "S"))


_JOINERS = "'-\u2019"  # kept inside a word: don't, state-of-the-art


def split_words(text: str) -> list[str]:
    """Words in order of appearance: punctuation dropped, CJK characters split apart."""
    chars = []
    for i, ch in enumerate(text):
        inside = 0 < i < len(text) - 1 and text[i - 1].isalnum() and text[i + 1].isalnum()
        keep = not _is_punct(ch) or (ch in _JOINERS and inside)
        if keep and chars and chars[-1] == " " and (ch in "\u200d\ufe0f" or unicodedata.category(ch) == "Mn"):
            keep = i > 0 and not _is_punct(text[i - 1]) and text[i - 1] not in "\u200d\ufe0f"  # an emoji's joiner
        chars.append(ch if keep else " ")
    return _TOKEN.findall("".join(chars))


def dropped_symbols(text: str) -> list[str]:
    """The symbols ``split_words`` leaves out that a reader may miss: emoji and other symbols (Unicode category
    S: 🍕, ∑, €), each once in order of appearance, with the joiners and variation selectors that belong to an
    emoji kept on it. Punctuation is left out too, as the tutorial does, and is not listed."""
    out: list[str] = []
    current = ""
    for ch in text:
        if unicodedata.category(ch).startswith("S"):
            if current and not current.endswith("\u200d"):
                out.append(current)
                current = ""
            current += ch
        elif current and (ch in "\u200d\ufe0f" or unicodedata.category(ch) == "Mn"):
            current += ch  # a joiner or a variation selector: part of the emoji before it
        else:
            if current:
                out.append(current)
            current = ""
    if current:
        out.append(current)
    return list(dict.fromkeys(s.rstrip("\u200d") for s in out))


@dataclass(frozen=True)
class Tokens:
    words: tuple[str, ...]  # the sequence, in order (L,)
    vocab: dict[str, int]  # sorted unique words -> id
    ids: tuple[int, ...]  # (L,)


def build_vocab(*word_lists: list[str] | tuple[str, ...]) -> dict[str, int]:
    """Sorted unique words of all lists, numbered in that order (the tutorial's ``dc``)."""
    return {w: i for i, w in enumerate(sorted({w for words in word_lists for w in words}))}


def tokenize(
    text: str,
    *,
    vocab: dict[str, int] | None = None,
    field: str = "sentence",
    max_tokens: int = MAX_TOKENS,
) -> Tokens:
    """Split ``text`` and map it to ids; ``vocab`` defaults to the text's own sorted vocabulary."""
    words = split_words(text)
    if not words:
        raise EmptyTextError(field, "empty_text")
    if len(words) > max_tokens:
        raise TooManyTokensError(field, "too_many_tokens", n=len(words), limit=max_tokens)
    vocab = build_vocab(words) if vocab is None else vocab
    return Tokens(words=tuple(words), vocab=vocab, ids=tuple(vocab[w] for w in words))
