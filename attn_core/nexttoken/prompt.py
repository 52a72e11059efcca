"""A prompt as a decoder's tokens: checked, cut to the context from the left, each token shown as text.

A next-token model predicts from the end of its context, so a prompt longer than the context (less the room the
generation needs) loses its *first* tokens, not its last; ``Prompt.cut`` and ``cut_text`` say what was lost. A
tokenizer that puts a BOS token first keeps it first. Byte-level tokens that hold part of a character (a Chinese
character is 3 bytes, often 2 tokens) show the character they share, or their bytes (<E7>) when they never make a
whole one (``models.display_pieces``), so that no "�" is ever shown. What a page *names* a token (a bar, an
option, a table's cell) is its label (``label``, ``labels``: ``models.token_labels``' one display rule, whitespace
seen and a split character marked on each of its tokens as its part).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import AttentionConfigError
from ..models import display_pieces, token_label, token_labels


class PromptError(AttentionConfigError):
    """A prompt the model cannot predict from."""


@dataclass(frozen=True)
class Prompt:
    ids: tuple[int, ...]
    pieces: tuple[str, ...]  # one per id (see the module)
    cut: int  # tokens cut from the start
    cut_text: str  # what they said
    n_total: int  # tokens the whole prompt has


def pieces(tokenizer, ids) -> tuple[str, ...]:
    """Each token's text, byte pieces merged into whole characters (``models.display_pieces``)."""
    return display_pieces(tokenizer, [int(i) for i in ids])[0]


def piece(tokenizer, token: int) -> str:
    """One token's text on its own (a byte that is part of a character shows as its byte, e.g. <E7>)."""
    return display_pieces(tokenizer, [int(token)])[0][0]


def label(tokenizer, token: int) -> str:
    """One token's label on its own (``models.token_label``): '␣the', '↵', a stray byte as ⟨E5⟩."""
    return token_label(tokenizer, int(token))


def labels(tokenizer, ids) -> tuple[str, ...]:
    """Each token's label in its sequence (``models.token_labels``): a character over two tokens, 床 (1/2) 床 (2/2)."""
    return token_labels(tokenizer, [int(i) for i in ids])


def text_of(tokenizer, ids) -> str:
    """The text of ``ids`` as shown: each group of tokens that decodes to whole characters once, no "�"."""
    shown, group = display_pieces(tokenizer, [int(i) for i in ids])
    return "".join(p for i, (p, g) in enumerate(zip(shown, group)) if g == i)


def encode(m, text: str, *, room: int = 0) -> Prompt:
    """``text``'s tokens, cut from the start to leave ``room`` positions of the model's context for new tokens."""
    if not isinstance(text, str) or not text.strip():
        raise PromptError("prompt", "nexttoken_empty_prompt")
    tok = m.tokenizer
    ids = list(tok(text, add_special_tokens=True, verbose=False)["input_ids"])
    bos = getattr(tok, "bos_token_id", None)
    head = 1 if ids and bos is not None and ids[0] == bos else 0
    if len(ids) <= head:
        raise PromptError("prompt", "nexttoken_empty_prompt")
    limit = max(m.max_positions - room, head + 1)
    cut = max(len(ids) - limit, 0)
    kept = ids[:head] + ids[head + cut :]
    cut_text = text_of(tok, ids[head : head + cut]) if cut else ""
    return Prompt(tuple(kept), pieces(tok, kept), cut, cut_text, len(ids))
