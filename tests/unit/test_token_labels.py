"""The one display rule for a decoder's token (``attn_core.models.token_labels``), against hand-written labels.

The tokenizer is a byte-level BPE trained here (``nexttoken_tiny``: nothing downloads); its 256 single-byte tokens
let a test spell any byte sequence token by token, so a character split over byte tokens is written by hand."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from attn_core import models

TINY = Path(__file__).resolve().parent / "nexttoken_tiny.py"
BED = "床".encode()  # E5 BA 8A: one character, three bytes


@pytest.fixture(scope="module")
def tok():
    spec = importlib.util.spec_from_file_location("nexttoken_tiny", TINY)
    tiny = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tiny)
    return tiny.tokenizer()


def byte_ids(tok, data: bytes) -> list[int]:
    """One single-byte token per byte (GPT-2's printable stand-ins for the 256 bytes)."""
    from transformers.convert_slow_tokenizer import bytes_to_unicode

    stand_in = bytes_to_unicode()
    ids = tok.convert_tokens_to_ids([stand_in[b] for b in data])
    assert tok.unk_token_id is None or tok.unk_token_id not in ids
    return ids


@pytest.mark.parametrize(
    ("text", "label"),
    [
        (" ", "␣"),
        ("\n", "↵"),
        ("\t", "⇥"),
        ("\r", "␍"),
        (" the", "␣the"),
        ("a\n\n", "a↵↵"),
        ("\xa0", "⍽"),
        ("\x00", "␀"),
        ("\x7f", "␡"),
        ("\u200b", "⟨U+200B⟩"),
        ("", "∅"),
        ("猫", "猫"),
        ("<eos>", "<eos>"),
    ],
)
def test_visible_makes_whitespace_control_and_empty_pieces_seen(text, label):
    assert models.visible(text) == label


def test_whitespace_tokens_are_labelled_visibly(tok):
    ids = byte_ids(tok, b" \n\t")
    assert models.token_labels(tok, ids) == ("␣", "↵", "⇥")
    assert [models.token_label(tok, i) for i in ids] == ["␣", "↵", "⇥"]


def test_a_character_split_over_byte_tokens_is_marked_as_parts_of_it(tok):
    ids = byte_ids(tok, b"a" + BED + b" b")
    labels = models.token_labels(tok, ids)
    assert labels == ("a", "床 (1/3)", "床 (2/3)", "床 (3/3)", "␣", "b")


def test_a_byte_token_alone_shows_its_bytes_as_one_marked_fragment(tok):
    first, second, third = byte_ids(tok, BED)
    assert models.token_label(tok, first) == "⟨E5⟩"
    assert models.token_label(tok, third) == "⟨8A⟩"
    assert models.token_labels(tok, [first, second]) == ("⟨E5⟩", "⟨BA⟩")  # never a whole character: each alone


def test_a_merged_token_with_a_part_of_a_character_keeps_its_whole_part_readable(tok):
    """A token holding the last byte of one character and the whole of the next (90, then 在 = E5 9C A8), alone:
    the character written, the stray byte marked."""
    from transformers.convert_slow_tokenizer import bytes_to_unicode

    stand_in = bytes_to_unicode()
    spelled = "".join(stand_in[b] for b in b"\x90" + "在".encode())
    (token,) = tok.convert_tokens_to_ids([spelled])
    assert tok.convert_ids_to_tokens(token) == spelled  # the tokenizer trained here merged it
    assert models.token_label(tok, token) == "⟨90⟩在"


def test_numbered_labels_count_from_one():
    assert models.numbered(["␣the", "↵"]) == ["1 ␣the", "2 ↵"]
    assert models.numbered(["a"], start=5) == ["5 a"]


def test_no_label_is_blank_has_a_replacement_character_or_a_bare_byte(tok):
    """Every token of the vocabulary alone: something to see, never "�" nor an unmarked <DF>."""
    import re

    for i in range(len(tok)):
        label = models.token_label(tok, i)
        assert label.strip() and label == label.strip(), (i, label)
        assert "\ufffd" not in label and not re.search(r"<[0-9A-F]{2}>", label), (i, label)


class ByteFallback:
    """A SentencePiece-style tokenizer's byte-fallback tokens (Llama's <0xE5>), one id per byte: just enough of
    the tokenizer interface (``decode``, ``convert_ids_to_tokens``) for the display rule."""

    def decode(self, ids, **_) -> str:
        return bytes(ids).decode("utf-8", errors="replace")

    def convert_ids_to_tokens(self, token: int) -> str:
        return f"<0x{token:02X}>"


def test_byte_fallback_tokens_of_a_sentencepiece_tokenizer_follow_the_same_rule():
    tok = ByteFallback()
    assert models.token_labels(tok, list(BED + b"\n")) == ("床 (1/3)", "床 (2/3)", "床 (3/3)", "↵")
    assert models.token_label(tok, BED[0]) == "⟨E5⟩"  # never <0xE5>
