"""Minimal pairs on the model pages (explorer.model.pair_view) under AppTest: Real model, Inside, Explain and Next
token print the engine's numbers (``attn_core.interpret.minimal_pair`` run here, in this process: the line of words
recomputed from its attention in numpy, the ranking's order, B − A on the shared tokens, the next-token gap and
each head's ablation); the curated pairs are filtered for the model's kind, the UI language's first; a link's
hostile ``pair`` / ``pair_b`` gets a message in the UI's language and never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from background import until_done
from pair_words import moved
from streamlit.testing.v1 import AppTest
from tolerance import assert_close

from attn_core import models
from attn_core.interpret import minimal_pair as mp
from explorer.base.safe import md

MODEL_PAGE, INSIDE, EXPLAIN, NEXT = (
    "pages/7_model.py",
    "pages/9_inside.py",
    "pages/10_explain.py",
    "pages/11_next_token.py",
)
DECODER = "fortune-gpt"
APP = str(Path(__file__).resolve().parents[2] / "app.py")


@pytest.fixture(scope="module")
def encoder():
    return models.load()


@pytest.fixture(scope="module")
def decoder():
    from explorer.model import real

    real.wait_for(DECODER, timeout=300)  # the pages never wait for a model: loaded before they open
    return models.load(DECODER)


def texts(at) -> str:
    kinds = ("subheader", "markdown", "caption", "info", "success", "warning", "error")
    return "\n".join(str(e.value) for kind in kinds for e in at.get(kind))


def charts(at) -> dict[str, dict]:
    out = {}
    for c in at.get("plotly_chart"):
        spec = json.loads(c.proto.spec)
        out[spec["layout"].get("title", {}).get("text", "")] = spec
    return out


def table(at, column: str):
    """The first data frame that has ``column``."""
    return next(d.value for d in at.dataframe if column in d.value.columns)


def expected_words(m, r: dict, layer: int, head: int) -> str:
    """The page's line of words, from the engine's attention recomputed in numpy (tests/pair_words.py)."""
    w = moved(r, layer, head, "(the changed words)")
    q = r["queries"][r["query"]]
    assert_close(w.moved, q["moved"][layer][head])  # the engine's measure, the same numbers
    names, a, b, src, dst = w.names, w.a, w.b, w.src, w.dst
    word_a = m.tokenizer.decode([r["a"]["ids"][i] for i in q["a"]]).strip()
    word_b = m.tokenizer.decode([r["b"]["ids"][i] for i in q["b"]]).strip()
    query = word_a if word_a == word_b else f"{word_a} → {word_b}"
    return (
        f"Head **{md(f'{layer}:{head}')}**'s attention from **{md(query)}** moved most from **{md(names[src])}** "
        f"({a[src]:.2f} in A, {b[src]:.2f} in B) to **{md(names[dst])}** ({a[dst]:.2f} in A, {b[dst]:.2f} in B): "
        f"a share of **{w.moved:.2f}** of it went elsewhere."
    )


def ranked(r: dict, key: str = "moved") -> list[str]:
    return [f"{c['layer']}:{c['head']}" for c in r["ranking"]]


# --- Real model ------------------------------------------------------------------------------------------------


def opened(at):
    """The section opened, as the learner's click on its fold sends it."""
    at.session_state["mp_model_open"] = True
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_real_model_asks_nothing_until_the_section_is_opened(app):
    at = app(MODEL_PAGE)
    assert not [s for s in at.selectbox if s.key == "pair"] and not [c for c in charts(at) if "B − A" in c]
    assert at.session_state["heavy_watching_mp_model"] == []  # no job asked for: a class opening the page
    assert [e.label for e in at.expander].count("Minimal pair: change a word, see what moves") == 1


def test_real_model_draws_the_engines_pair(app, encoder):
    at = until_done(opened(app(MODEL_PAGE)))
    pair = mp.curated("encoder")[0]  # the default: the first pair written for an encoder, English first
    assert pair["id"] == "coref_tired_wide" and at.selectbox(key="pair").value == pair["id"]
    r = mp.minimal_pair(encoder, pair["a"], pair["b"])
    top = r["ranking"][0]
    layer, head = top["layer"], top["head"]
    assert at.selectbox(key="pair_head").value == f"{layer}:{head}"  # the most moved head unless chosen
    assert expected_words(encoder, r, layer, head) in texts(at)
    order = table(at, "head (layer:head)")
    assert list(order["head (layer:head)"]) == ranked(r)
    assert_close(np.asarray(order["moved"], dtype=float), np.round([c["moved"] for c in r["ranking"]], 3))
    assert list(order["moved"]) == sorted(order["moved"], reverse=True)
    drawn = charts(at)
    view = mp.head_view(r, layer, head)
    assert_close(np.asarray(drawn[f"B − A, head {layer}:{head}"]["data"][0]["z"]), np.asarray(view["diff"]))
    assert_close(np.asarray(drawn[f"A, head {layer}:{head} (shared tokens)"]["data"][0]["z"]), view["a_shared"])
    # A's and B's weights from 0 up; B − A on a scale centred on 0, its sign read from the colour
    assert drawn[f"B − A, head {layer}:{head}"]["data"][0]["zmid"] == 0
    assert "zmid" not in drawn[f"A, head {layer}:{head} (shared tokens)"]["data"][0]
    bars = drawn[f"Head {layer}:{head}: attention from tired → wide, A and B"]["data"]
    assert [s["name"] for s in bars] == ["A", "B"] and len(bars[0]["y"]) == len(r["shared"]) + 1


def test_another_head_is_drawn_with_its_own_numbers(app, encoder):
    at = until_done(app(MODEL_PAGE, query={"pair": "agreement_keys", "pair_head": "3:1"}))
    pair = next(p for p in mp.curated() if p["id"] == "agreement_keys")
    r = mp.minimal_pair(encoder, pair["a"], pair["b"])
    assert expected_words(encoder, r, 3, 1) in texts(at)
    assert_close(np.asarray(charts(at)["B − A, head 3:1"]["data"][0]["z"]), mp.head_view(r, 3, 1)["diff"])


@pytest.mark.parametrize(
    ("lang", "raw", "needle"),
    [
        ("en", "../../etc/passwd", "does not ship"),
        ("en", "<script>alert(1)</script>", "does not ship"),
        ("zh", "nonsense", "不在本应用自带"),
        ("en", "zh_negation_cat", "another kind of model than this encoder"),  # a decoder's pair on the encoder
        ("zh", "zh_negation_cat", "不适用于当前的编码器"),
    ],
)
def test_a_hostile_pair_in_the_link_gets_a_message(app, lang, raw, needle):
    at = app(MODEL_PAGE, query={"pair": raw, "lang": lang})
    assert not at.exception
    shown = texts(at)
    assert needle in shown and raw not in shown  # said, never echoed
    assert at.selectbox(key="pair").value == "coref_tired_wide"  # the page goes on with its default pair


def test_an_encoder_is_offered_only_the_pairs_written_for_it(app):
    at = opened(app(MODEL_PAGE, query={"lang": "zh"}))  # no Chinese pair suits the encoder: the English ones only
    options = at.selectbox(key="pair").options
    suited = [p for p in mp.curated() if p["suits"] in ("encoder", "both")]
    assert len(options) == len(suited) + 1  # and "your own"
    only_decoders = [p for p in mp.curated() if p["suits"] == "decoder"]
    assert not any(o.endswith(f" · {p['b']}") for p in only_decoders for o in options)


@pytest.mark.parametrize(
    ("query", "needle"),
    [
        ({"pair": "own", "pair_b": "word " * 60}, "Sentence B has 62 tokens; a minimal pair is compared for up to 48"),
        ({"pair": "own", "pair_b": "word " * 60, "lang": "zh"}, "句子 B 有 62 个词元"),
        ({"pair": "own", "pair_b": "x " * 800}, "Sentence B has 502 tokens"),  # cut to the box's 1,000 characters
        ({"pair": "own"}, "still the same as A"),  # the box opens with the page's sentence
        ({"pair": "own", "pair_b": "   "}, "Type sentence B"),
        ({"pair_b": "The  cat sat on the mat."}, "the same token for token"),  # ?pair_b= alone: your own
    ],
)
def test_a_hostile_sentence_b_gets_a_message(app, encoder, query, needle):
    at = app(MODEL_PAGE, query={"sentence": "The cat sat on the mat.", **query})
    assert not at.exception
    assert needle in texts(at), texts(at)
    assert not at.get("progress")  # refused before any job


def test_your_own_sentence_b_is_compared_with_the_pages_sentence(app, encoder):
    a, b = "The cat sat on the mat.", "The dog sat on the mat."
    at = until_done(app(MODEL_PAGE, query={"sentence": a, "pair_b": b}))
    assert at.selectbox(key="pair").value == "own"
    r = mp.minimal_pair(encoder, a, b)
    top = r["ranking"][0]
    assert expected_words(encoder, r, top["layer"], top["head"]) in texts(at)
    assert list(table(at, "head (layer:head)")["head (layer:head)"]) == ranked(r)


# --- Next token, Inside, Explain ---------------------------------------------------------------------------------


def test_next_token_shows_both_predictions_and_the_heads_that_close_the_gap(app, decoder):
    pair = next(p for p in mp.curated() if p["id"] == "zh_coref_tired_wide")
    at = until_done(app(NEXT, query={"pair": pair["id"]}))
    r = mp.minimal_pair(decoder, pair["a"], pair["b"])
    gap = mp.ablation_gap(decoder, pair["a"], pair["b"])
    nxt = r["next_token"]
    shown = texts(at)
    assert f"A's most likely next token is **{md(nxt['top_a']['label'])}** ({nxt['top_a']['prob']:.2f})" in shown
    assert f"B's is **{md(nxt['top_b']['label'])}** ({nxt['top_b']['prob']:.2f})" in shown
    assert f"the two distributions are **{nxt['gap']:.4f}** bits apart" in shown
    best = gap["ranking"][0]
    best_name = md(f"{best['layer']}:{best['head']}")
    assert f"Removing head **{best_name}** from both runs closes **{100 * best['closed']:.0f} %** of the gap" in shown
    frame = table(at, "gap closed (%)")
    assert list(frame["head (layer:head)"]) == ranked(gap)
    closed = np.round([100 * c["closed"] for c in gap["ranking"]], 1)
    assert_close(np.asarray(frame["gap closed (%)"], dtype=float), closed)
    assert list(frame["gap closed (%)"]) == sorted(frame["gap closed (%)"], reverse=True)
    bars = charts(at)["Next token: A and B"]["data"]
    assert_close(np.asarray(bars[0]["y"]), [x["a"] for x in nxt["tokens"]])
    assert_close(np.asarray(bars[1]["y"]), [x["b"] for x in nxt["tokens"]])


def test_next_token_in_chinese_offers_the_chinese_pairs_first():
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["lang"] = "zh"
    at.session_state["mp_nt_open"] = True  # the section opened (folded away until then: nothing asked)
    at.run()
    at.switch_page(NEXT).run()
    assert not at.exception
    zh = [p for p in mp.curated("decoder") if p["language"] == "zh"]
    kinds = {"coreference": "指代", "agreement": "一致", "negation": "否定", "repeated_name": "重复的名字"}
    assert at.selectbox(key="pair").value == zh[0]["id"] == "zh_coref_tired_wide"
    assert at.selectbox(key="pair").options[: len(zh)] == [f"{kinds[p['kind']]} · zh · {p['b']}" for p in zh]
    assert "**A**：动物没有过马路，因为它太累了。" in texts(at)


def test_next_token_asks_nothing_until_the_section_is_opened(app):
    at = app(NEXT)
    assert not [s for s in at.selectbox if s.key == "pair"]
    assert at.session_state["heavy_watching_mp_next_token"] == []  # no job asked for: a class opening the page


def test_inside_opens_the_pair_from_a_link(app, encoder):
    at = until_done(app(INSIDE, query={"pair": "coref_trophy"}))
    pair = next(p for p in mp.curated() if p["id"] == "coref_trophy")
    r = mp.minimal_pair(encoder, pair["a"], pair["b"])
    top = r["ranking"][0]
    assert expected_words(encoder, r, top["layer"], top["head"]) in texts(at)
    assert list(table(at, "head (layer:head)")["head (layer:head)"]) == ranked(r)


def test_inside_on_a_decoder_links_to_next_token(app, decoder):
    at = until_done(app(INSIDE, query={"model": DECODER, "pair": "negation_robin"}))
    assert any("/next_token?" in b.proto.url and "pair=negation_robin" in b.proto.url for b in at.get("link_button"))
    pair = next(p for p in mp.curated() if p["id"] == "negation_robin")
    r = mp.minimal_pair(decoder, pair["a"], pair["b"])
    assert list(table(at, "head (layer:head)")["head (layer:head)"]) == ranked(r)


def test_explain_sets_what_moved_beside_what_matters(app, decoder):
    at = until_done(app(EXPLAIN, query={"model": DECODER, "pair": "repeated_name_drink"}))
    pair = next(p for p in mp.curated() if p["id"] == "repeated_name_drink")
    r = mp.minimal_pair(decoder, pair["a"], pair["b"])
    gap = mp.ablation_gap(decoder, pair["a"], pair["b"])
    top = r["ranking"][0]
    name = f"{top['layer']}:{top['head']}"
    place = ranked(gap).index(name) + 1
    shown = texts(at)
    assert expected_words(decoder, r, top["layer"], top["head"]) in shown
    assert f"The head whose attention moved most, **{md(name)}**, is number **{place}** of 16" in shown
    assert list(table(at, "gap closed (%)")["head (layer:head)"]) == ranked(gap)[:10]
