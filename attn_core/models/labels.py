"""One display rule for a token: what a page writes for it wherever it names one (a chart's tick or bar, an option
to pick, a table's cell, a token quoted in a sentence). Pages of every decoder family use it; the text of a
sequence (tokens joined back into prose) is ``text.display_pieces``'s, not this.

- Whitespace and control characters are seen: a space is ␣, a newline ↵, a tab ⇥, a carriage return ␍, a no-break
  space ⍽ (any other space ␣), a control character its Unicode control picture (␀ … ␟, ␡), an invisible format
  character its code point (⟨U+200B⟩); an empty piece is ∅. So no label is blank.
- A character split over several byte tokens (a Chinese character is 3 bytes, often 2 tokens) is written on each
  of them with the part that token is: 床 (1/2), 床 (2/2). Tokens that decode whole only together form a group
  (``text.groups``); the group's text is written once per token, numbered.
- A token that never makes a whole character, alone or with its neighbours, shows its stray bytes in hexadecimal
  as one marked fragment, ⟨E5 BA⟩, and whatever whole characters it holds as themselves (⟨90⟩在): never "�" and
  never a bare <E5>.
- Numbered labels count from 1 (``numbered``): the most probable token is 1, the first token of a prompt is 1.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from .text import BAD, _decode, groups

SEEN = {" ": "␣", "\n": "↵", "\t": "⇥", "\r": "␍", "\xa0": "⍽"}
EMPTY = "∅"
SP_BYTE = re.compile(r"<0x([0-9A-Fa-f]{2})>")  # a SentencePiece byte-fallback token
STRAY = range(0xDC80, 0xDD00)  # a byte that is no part of a whole character, as ``surrogateescape`` decodes it


def _char(c: str) -> str:
    if c in SEEN:
        return SEEN[c]
    kind = unicodedata.category(c)
    if kind == "Zs":
        return "␣"
    if kind == "Cc":
        code = ord(c)
        return chr(0x2400 + code) if code < 0x20 else "␡" if code == 0x7F else f"⟨U+{code:04X}⟩"
    if kind in ("Cf", "Zl", "Zp", "Co", "Cn"):
        return f"⟨U+{ord(c):04X}⟩"
    return c


def visible(text: str) -> str:
    """``text`` with every space and control character seen (see the module); ∅ for an empty piece."""
    return "".join(map(_char, text)) if text else EMPTY


@lru_cache(maxsize=1)
def _byte_of() -> dict[str, int]:
    from transformers.convert_slow_tokenizer import bytes_to_unicode

    return {v: k for k, v in bytes_to_unicode().items()}  # GPT-2's printable stand-ins for the 256 bytes


def token_bytes(tok, token_id: int) -> bytes | None:
    """The bytes a byte-level token stands for (byte-level BPE, or SentencePiece's <0xE5>); None for another."""
    piece = tok.convert_ids_to_tokens(int(token_id))
    if not isinstance(piece, str):
        return None
    found = SP_BYTE.fullmatch(piece)
    if found:
        return bytes([int(found[1], 16)])
    byte = _byte_of()
    if piece and all(c in byte for c in piece):
        return bytes(byte[c] for c in piece)
    return None


def fragment(data: bytes) -> str:
    """Bytes that are not all whole characters: the whole ones seen as ``visible`` writes them, each run of stray
    bytes as one ⟨E5 BA⟩."""
    out: list[str] = []
    stray: list[int] = []
    for c in data.decode("utf-8", errors="surrogateescape"):
        if ord(c) in STRAY:
            stray.append(ord(c) - 0xDC00)
            continue
        if stray:
            out.append("⟨" + " ".join(f"{b:02X}" for b in stray) + "⟩")
            stray = []
        out.append(_char(c))
    if stray:
        out.append("⟨" + " ".join(f"{b:02X}" for b in stray) + "⟩")
    return "".join(out) if out else EMPTY


def _alone(tok, token_id: int) -> str:
    """A token that never decodes whole."""
    data = token_bytes(tok, token_id)
    if data is not None:
        return fragment(data)
    return visible(_decode(tok, [int(token_id)]).replace(BAD, "⟨?⟩"))


def token_labels(tok, ids) -> tuple[str, ...]:
    """Each token's label in its sequence: a character split over several tokens marked on each as its part."""
    ids = [int(i) for i in ids]
    out: list[str] = []
    for i, j, text in groups(tok, ids):
        if text is None:
            out.append(_alone(tok, ids[i]))
        elif j - i == 1:
            out.append(visible(text))
        else:
            out += [f"{visible(text)} ({k}/{j - i})" for k in range(1, j - i + 1)]
    return tuple(out)


def token_label(tok, token_id: int) -> str:
    """One token's label on its own (a candidate, a top prediction, a token a head promotes)."""
    return token_labels(tok, [int(token_id)])[0]


def numbered(labels, *, start: int = 1) -> list[str]:
    """'1 ␣the', '2 ↵': the number first (two tokens may look alike), counting from ``start`` (1)."""
    return [f"{n} {label}" for n, label in enumerate(labels, start)]
