"""Shapley's players are the words a reader counts ("didn't" is one), punctuation apart: the limit message counts
and names exactly the players the values are computed for, and says what they are; integrated gradients take 64
steps by default, and their completeness error is then far below 1e-4 of the change they explain."""

import pytest

from attn_core import models as pt
from attn_core.cli.entry import build_parser
from attn_core.explain import references
from attn_core.explain.explain import notices, word_texts
from attn_core.explain.sentence import make_item
from explorer.base.i18n import STRINGS
from explorer.explain.views import shapley_limit

TWELVE = "I didn't think it would rain today, but it did."  # 10 words, a comma and a full stop to a reader
EIGHT = "I didn't think it wasn't good at all"  # refused as 12 players when the tokenizer's words were counted


@pytest.fixture(scope="module")
def pre():
    return pt.load()


def test_the_limit_message_counts_and_names_the_players_shapley_uses(pre):
    item = make_item(pre, TWELVE)
    players = word_texts(item)
    assert players == ["i", "didn't", "think", "it", "would", "rain", "today", ",", "but", "it", "did", "."]
    assert len(players) == item.n_words == 12  # what shapley() would enumerate: 2^12 subsets
    assert references.shapley(pre, item, "attention", references.full(pre, item).pooled[0]) is None
    note = next(n for n in notices(item) if n["code"] == "shapley_words")
    assert note["n"] == len(note["words"]) == 12 and note["words"] == players
    text = shapley_limit(players)
    assert text.count("“") == 12 and "“didn't”" in text  # the players, one by one
    assert "has 12" in text and "up to 10 players" in text and "as a reader counts them" in text


@pytest.mark.parametrize(
    "text,players",
    [
        (EIGHT, ["i", "didn't", "think", "it", "wasn't", "good", "at", "all"]),
        ("It didn't rain.", ["it", "didn't", "rain", "."]),
        ("It's 3.5 km, state-of-the-art!", ["it's", "3.5", "km", ",", "state-of-the-art", "!"]),
    ],
)
def test_a_sentence_within_the_limit_gets_one_value_per_word_a_reader_counts(pre, text, players):
    item = make_item(pre, text)
    assert word_texts(item) == players and shapley_limit(players) is None
    assert all(w is not None for w in item.words[1:-1]) and item.words[0] is None and item.words[-1] is None
    assert [w for w in item.words if w is not None] == sorted(w for w in item.words if w is not None)  # in order
    s = references.shapley(pre, item, "attention", references.full(pre, item).pooled[0])
    assert len(s["words"]) == len(players)
    assert s["sum"] == pytest.approx(s["v_all"] - s["v_none"], rel=1e-5, abs=1e-6)  # efficiency: Σ φ = v(N) − v(∅)


def test_a_chinese_sentence_keeps_a_player_per_character(pre):
    item = make_item(pre, "我爱自然语言处理。")
    assert item.n_words == 9  # the tokenizer's characters, and the full stop apart


def test_both_languages_say_what_a_player_is():
    for key in ("ex_shapley_intro", "ex_shapley_title", "ex_notice_shapley_words", "ex_pair_shapley_long"):
        en, zh = STRINGS[key]
        assert "punctuation apart" in en and "tokenizer word" not in en, key
        assert "标点单独计" in zh and "分词器词" not in zh, key
    for key in ("ex_shapley_intro", "ex_notice_shapley_words", "ex_choice_shapley", "ex_choice_shapley_dec"):
        en, zh = STRINGS[key]
        assert "as a reader counts them" in en and "按读者的数法" in zh, key


@pytest.mark.parametrize("text", [TWELVE, "The cat slept on the warm windowsill"])
def test_integrated_gradients_take_64_steps_and_are_complete(pre, text):
    assert references.IG_STEPS == 64
    assert build_parser()[0].parse_args(["explain", "a b"]).steps == 64  # the CLI's default too
    item = make_item(pre, text)
    ig = references.integrated_gradients(pre, item.ids, references.full(pre, item).pooled[0])
    assert ig["delta"] > 0.05  # a change worth explaining
    assert ig["error"] < 1e-4  # |Σ attributions − Δ| / |Δ|, relative
