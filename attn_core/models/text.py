"""A text as the model's tokens, and what to show for each.

WordPiece (BERT) pieces are shown as the tokenizer names them ("##ing"). A byte-level BPE token may hold part of
a character's UTF-8 bytes (a Chinese character is 3 bytes, often split over two tokens): its text alone would
decode to "�". So tokens are decoded in groups, each group extended with the next token until its bytes decode
whole (at most ``MAX_GROUP`` tokens), and every token of a group shows the group's text; ``Encoding.group`` says
which tokens share it. A group that never decodes whole shows its bytes as <E4><BD>, never "�".
"""

from __future__ import annotations

from ..errors import AttentionConfigError
from .base import Encoding, Model

MAX_GROUP = 8  # a UTF-8 character is at most 4 bytes; a group may chain two split characters
BAD = "\ufffd"


def _decode(tok, ids: list[int]) -> str:
    return tok.decode(ids, skip_special_tokens=False, clean_up_tokenization_spaces=False)


def _raw(tok, ids: list[int]) -> str:
    """Tokens that never decode whole, shown by their bytes when they are byte-level pieces."""
    from transformers.convert_slow_tokenizer import bytes_to_unicode

    byte = {v: k for k, v in bytes_to_unicode().items()}  # GPT-2's printable stand-ins for the 256 bytes
    out = []
    for piece in tok.convert_ids_to_tokens(ids):
        out.append(
            "".join(c if c not in byte else chr(byte[c]) if byte[c] < 0x80 else f"<{byte[c]:02X}>" for c in piece)
        )
    return "".join(out).replace(BAD, "<?>")


def token_text(tok, token_id: int) -> str:
    """One token's text to show alone (a byte piece as <E4>, never "�")."""
    text = _decode(tok, [int(token_id)])
    return _raw(tok, [int(token_id)]) if BAD in text else text


def groups(tok, ids: list[int]) -> list[tuple[int, int, str | None]]:
    """(first, end, text) of each group of tokens, in order: the shortest run from ``first`` that decodes whole (at
    most ``MAX_GROUP`` tokens), its text; a token that never does stands alone, its text None."""
    out: list[tuple[int, int, str | None]] = []
    i = 0
    while i < len(ids):
        for j in range(i + 1, min(len(ids), i + MAX_GROUP) + 1):  # the shortest group that decodes whole
            text = _decode(tok, ids[i:j])
            if BAD not in text:
                out.append((i, j, text))
                break
        else:
            j = i + 1
            out.append((i, j, None))
        i = j
    return out


def display_pieces(tok, ids: list[int]) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """(what to show for each token, the first token of each token's group)."""
    pieces: list[str] = []
    group: list[int] = []
    for i, j, text in groups(tok, ids):
        pieces += [_raw(tok, ids[i:j]) if text is None else text] * (j - i)
        group += [i] * (j - i)
    return tuple(pieces), tuple(group)


def encode(m: Model, text: str, *, pad_to: int = 0) -> Encoding:
    """The model's own tokens (with its special tokens), cut to its context; an encoder's are padded with [PAD]
    up to ``pad_to`` as if batched with a longer text (the padding mask then hides those keys)."""
    tok = m.tokenizer
    if not text.strip():
        raise AttentionConfigError("sentence", "empty_sentence")
    n_total = len(tok(text, add_special_tokens=True, truncation=False, verbose=False)["input_ids"])
    ids = list(tok(text, add_special_tokens=True, truncation=True, max_length=m.max_positions)["input_ids"])
    n_real = len(ids)
    special_ids = set(tok.all_special_ids)
    specials = sum(1 for i in ids if i in special_ids)
    unk = sum(1 for i in ids if tok.unk_token_id is not None and i == tok.unk_token_id)
    if m.causal:
        pieces, group = display_pieces(tok, ids)
        return Encoding(pieces, tuple(ids), n_real, n_total, unk, n_total > n_real, group, specials)
    pad_to = min(pad_to, m.max_positions)
    if pad_to > n_real:
        ids = ids + [tok.pad_token_id] * (pad_to - n_real)
    pieces = tuple(tok.convert_ids_to_tokens(ids))
    return Encoding(pieces, tuple(ids), n_real, n_total, unk, n_total > n_real, tuple(range(len(ids))), 2)
