"""Small things a learner reads: a range message names the control by its own noun, a constant mask's colour bar
is 0..1, a causal Multi-head caption speaks of the focus token, dropped emoji are named, the Tutorial says whose
sentence it uses, and no text speaks of how the app was made."""

import json
import re

import pytest
import torch

from attn_core import AttentionConfigError
from attn_core.tokenize import dropped_symbols, split_words
from explorer import figures as fig
from explorer.base import i18n
from explorer.base.i18n import STRINGS, error_text

QUERY = {"heads": "2", "sentence": "Attention learns what to read"}


@pytest.mark.parametrize(("lang", "noun"), [("en", "Heads"), ("zh", "头数")])
def test_a_range_message_names_the_control_by_its_noun(monkeypatch, lang, noun):
    monkeypatch.setattr(i18n, "lang", lambda: lang)
    message, fix = error_text(AttentionConfigError("heads", "out_of_range", value=9, low=1, high=8))
    assert noun in message and noun in fix, (message, fix)
    assert "a heads" not in fix and "Pick a" not in fix
    if lang == "en":
        assert fix == "Choose a value between 1 and 8 for Heads."


def mask_chart(at) -> dict:
    title = STRINGS["mask_matrix"][0]
    specs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    return next(s for s in specs if s["layout"]["title"]["text"].startswith(title))


def test_an_all_ones_mask_has_a_0_to_1_colour_bar(app):
    at = app("pages/1_steps.py", {**QUERY, "step": "st_mask", "mask": "none"})
    heat = mask_chart(at)["data"][0]
    assert {v for row in heat["z"] for v in row} == {1}  # every pair may attend
    assert (heat["zmin"], heat["zmax"]) == (0, 1)


def test_a_constant_matrix_gets_a_range_that_holds_it():
    for value, expected in ((1.0, (0, 1)), (0.0, (0, 1)), (3.0, (0, 3)), (-2.0, (-2, 1))):
        trace = fig.heatmap(torch.full((3, 3), value), list("abc"), list("abc"), style=fig.Style()).data[0]
        assert (trace.zmin, trace.zmax) == expected, value
    trace = fig.heatmap(torch.arange(9.0).reshape(3, 3), list("abc"), list("abc"), style=fig.Style()).data[0]
    assert trace.zmin is None and trace.zmax is None  # a matrix that varies keeps its own range


def test_a_causal_multihead_caption_speaks_of_the_focus_token(app):
    at = app("pages/2_multihead.py", {**QUERY, "mask": "causal"})
    words = QUERY["sentence"].split()
    first = f"'{words[0]}' attends most to '{words[0]}' (1.00)"
    alts = [c.value for c in at.caption if "attends most to" in c.value]
    assert len(alts) == 2, [c.value for c in at.caption]  # one per head shown
    assert not any(first in a for a in alts), alts
    assert all(a.startswith(f"'{words[1]}' attends most to") for a in alts), alts  # the focus token: the second


def test_emoji_are_named_when_they_are_left_out(app):
    assert dropped_symbols("I love 🍕 and ∑ math!") == ["🍕", "∑"]
    assert dropped_symbols("Family 👨‍👩‍👧 ok ❤️") == ["👨‍👩‍👧", "❤️"]
    assert split_words("Family 👨‍👩‍👧 ok ❤️") == ["Family", "ok"]  # no invisible joiner left as a token
    assert dropped_symbols("no symbols, here.") == []
    at = app("pages/1_steps.py", {**QUERY, "sentence": "I love pizza 🍕"})
    shown = [c.value for c in at.caption if "🍕" in c.value]
    assert shown == [STRINGS["tokens_dropped"][0].format(chars="🍕")], [c.value for c in at.caption]


def test_the_tutorial_says_it_uses_its_own_sentence(app):
    at = app("pages/4_tutorial.py", {**QUERY, "lang": "zh"})
    said = [i.value for i in at.info if "Life is short, eat dessert first" in i.value]
    assert said == [STRINGS["tut_own_sentence"][1].format(sentence="Life is short, eat dessert first")]


def test_no_text_speaks_of_how_the_app_was_made():
    made = re.compile(r"\bissues?\b|\bthe team\b|议题", re.IGNORECASE)
    found = [(k, v) for k, pair in STRINGS.items() for v in pair if made.search(v)]
    assert not found, found
