"""Shapley's players are the tokenizer's words, punctuation apart: the limit message counts and names exactly the
players the values are computed for, and says what they are; integrated gradients take 64 steps by default, and
their completeness error is then far below 1e-4 of the change they explain."""

import pytest

from attn_core import pretrained as pt
from attn_core.cli.entry import build_parser
from attn_core.explain import references
from attn_core.explain.explain import notices, word_texts
from attn_core.explain.sentence import make_item
from explorer.explain.views import shapley_limit
from explorer.i18n import STRINGS

ELEVEN = "I didn't think it would rain today, but it did."  # 10 words and a full stop to a reader


@pytest.fixture(scope="module")
def pre():
    return pt.load()


def test_the_limit_message_counts_and_names_the_players_shapley_uses(pre):
    item = make_item(pre, ELEVEN)
    players = word_texts(item)
    assert players == ["i", "didn", "'", "t", "think", "it", "would", "rain", "today", ",", "but", "it", "did", "."]
    assert len(players) == item.n_words == 14  # what shapley() would enumerate: 2^14 subsets
    assert references.shapley(pre, item, "attention", references.full(pre, item).pooled[0]) is None
    note = next(n for n in notices(item) if n["code"] == "shapley_words")
    assert note["n"] == len(note["words"]) == 14 and note["words"] == players
    text = shapley_limit(players)
    assert text.count("“") == 14 and "“didn” · “'” · “t”" in text  # the players, one by one
    assert "has 14" in text and "up to 10 players" in text and "tokenizer word (punctuation apart)" in text


def test_a_sentence_within_the_limit_gets_one_value_per_player(pre):
    item = make_item(pre, "It didn't rain.")
    players = word_texts(item)
    assert players == ["it", "didn", "'", "t", "rain", "."] and shapley_limit(players) is None
    s = references.shapley(pre, item, "attention", references.full(pre, item).pooled[0])
    assert len(s["words"]) == len(players)


def test_both_languages_say_what_a_player_is():
    for key in ("ex_shapley_intro", "ex_shapley_title", "ex_notice_shapley_words", "ex_pair_shapley_long"):
        en, zh = STRINGS[key]
        assert "tokenizer word" in en and "punctuation apart" in en, key
        assert "分词器词" in zh and "标点单独计" in zh, key


@pytest.mark.parametrize("text", [ELEVEN, "The cat slept on the warm windowsill"])
def test_integrated_gradients_take_64_steps_and_are_complete(pre, text):
    assert references.IG_STEPS == 64
    assert build_parser()[0].parse_args(["explain", "a b"]).steps == 64  # the CLI's default too
    item = make_item(pre, text)
    ig = references.integrated_gradients(pre, item.ids, references.full(pre, item).pooled[0])
    assert ig["delta"] > 0.05  # a change worth explaining
    assert ig["error"] < 1e-4  # |Σ attributions − Δ| / |Δ|, relative
