"""Every sentence the model pages print on the shipped decoder is true of it, in both languages: Real model (with
the query-key map and every head's atlas open), Inside the model and Is attention an explanation?, under AppTest.
No "nan", "None" or "�" anywhere, none of the sentences only an encoder makes true (a sentence embedding, [CLS]
and [SEP], cosines of embeddings, MiniLM's 12 heads), the decoder's own name and what is explained said instead;
the most focused head and the strongest line are those a computation written here on transformers' own attention
finds among the queries with a choice, and the map draws a line to each key the causal mask allows, none other.
Nothing here depends on the shipped decoder's numbers (GPT-2 now, Llama-style later)."""

from __future__ import annotations

import json
import re
import time

import pytest
import torch

from explorer import figures as fig
from explorer.base.i18n import t
from explorer.figures.base import word
from explorer.model import real

DECODER = "fortune-gpt"
MODEL, INSIDE, EXPLAIN = "pages/7_model.py", "pages/9_inside.py", "pages/10_explain.py"
SENTENCE = "Life is short, eat dessert first"
BAD = ("nan", "None", "\ufffd")
# what only an encoder makes true (the pages' encoder sentences, and the Chinese catalogue's)
ENCODER_ONLY = {
    "en": ("encoder reads", "sentence embedding", "[CLS]", "[SEP]", "cos(e(", "mean pooling", "12 heads"),
    "zh": ("编码器读取", "句向量", "[CLS]", "[SEP]", "cos(e(", "平均池化", "12 个头"),
}
PENDING = ("appears here when it is ready", "算好后显示在这里")


@pytest.fixture(scope="module")
def decoder():
    pre = real.wait_for(DECODER, timeout=300)
    assert pre is not None and pre.causal
    return pre


def charts(block) -> list[dict]:
    return [json.loads(c.proto.spec) for c in block.get("plotly_chart")]


def chart_texts(spec: dict) -> list[str]:
    """What a chart says in words: its title, its alt text, its axes' titles, its annotations and traces' names."""
    lay = spec.get("layout", {})
    out = [lay.get("meta", {}).get("alt", "") if isinstance(lay.get("meta"), dict) else ""]
    for part in (lay.get("title"), lay.get("xaxis", {}).get("title"), lay.get("yaxis", {}).get("title")):
        out.append(part.get("text", "") if isinstance(part, dict) else str(part or ""))
    out += [a.get("text", "") for a in lay.get("annotations", [])]
    out += [tr.get("name", "") for tr in spec.get("data", []) if tr.get("name")]
    return out


def texts(block) -> list[str]:
    """Every text an element of ``block`` prints (a page, or one of its tabs)."""
    out = []
    for kind in ("title", "header", "subheader", "caption", "markdown", "info", "warning", "error", "success", "text"):
        out += [str(e.value) for e in block.get(kind)]
    out += [f"{m.label} {m.value}" for m in block.get("metric")]
    for frame in block.get("dataframe"):
        df = frame.value
        out += [str(c) for c in df.columns] + [str(v) for v in df.to_numpy().ravel()]
    for spec in charts(block):
        out += chart_texts(spec)
    return [x for x in out if x]


def settled(at, timeout: float = 900.0):
    """Rerun the page, as its poll does, until every part computed in the background has arrived."""
    deadline = time.monotonic() + timeout
    while (at.get("progress") or any(p in c.value for c in at.caption for p in PENDING)) and (
        time.monotonic() < deadline
    ):
        time.sleep(0.3)
        at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.get("progress"), "still computing"
    return at


def check_texts(shown: list[str], lang: str, name: str, skip: set[str] = frozenset(), heads: int = 0) -> None:
    phrases = [p for p in ENCODER_ONLY[lang] if not p.startswith(f"{heads} ")]  # unless the decoder has 12 too
    for text in shown:
        for bad in BAD:
            assert not re.search(rf"(?<![A-Za-z]){re.escape(bad)}(?![A-Za-z])", text), (bad, text)
        if text in skip:
            continue
        for phrase in phrases:
            assert phrase not in text, (phrase, text)
    assert any(name in x for x in shown), f"{name} is never named"


def oracle_attentions(pre) -> torch.Tensor:
    """(layers, H, L, L) the decoder's attention from transformers' own eager forward, loaded independently."""
    import transformers

    folder = real.pt.offered_paths()[DECODER]  # the oracle reads the weights itself, from the directory
    model = transformers.AutoModelForCausalLM.from_pretrained(folder, attn_implementation="eager")
    tok = transformers.AutoTokenizer.from_pretrained(folder)
    ids = torch.tensor([tok(SENTENCE)["input_ids"]])
    with torch.no_grad():
        out = model.eval()(input_ids=ids, output_attentions=True)
    return torch.stack([a[0] for a in out.attentions]).double()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_real_model_on_the_decoder_says_only_what_is_true_of_it(app, decoder, lang):
    query = {"rm_model": DECODER, "sentence": SENTENCE, "lang": lang, "qk_colour": "position"}
    at = settled(app(MODEL, query=query))
    shown = texts(at)
    check_texts(shown, lang, DECODER, heads=decoder.heads)
    assert t("dec.rm_intro", language=lang, name=DECODER) in shown
    assert any(t("qk_title_model", language=lang, l=0, h=0) in x for x in shown)  # the map is open: its text checked


def test_the_decoders_most_focused_head_strongest_line_and_map_lines_are_the_oracles(app, decoder):
    A = oracle_attentions(decoder)  # (layers, H, L, L)
    layers, heads, L, _ = A.shape
    best = max(
        (float(A[r, c, i, : i + 1].max()), r, c) for r in range(layers) for c in range(heads) for i in range(1, L)
    )
    focus = 4
    query = {"rm_model": DECODER, "sentence": SENTENCE, "rm_layer": "1", "rm_head": "2", "qk_colour": "position"}
    query["focus"] = str(focus)
    at = app(MODEL, query=query)
    specs = charts(at)
    overview = specs[0]["layout"]["meta"]["alt"]
    named = {"row": f"{t('rm_layer')} {best[1]}", "col": f"{t('head')} {best[2]}"}
    assert overview == t("alt_multiples_choice", **named, w=f"{best[0]:.2f}"), overview
    pieces = fig.labels([str(p) for p in at.dataframe[0].value[t("token")]])  # as the page labels the lines
    w, i, j = max((float(A[1, 2, i, j]), i, j) for i in range(1, L) for j in range(i + 1))
    lines = next(s for s in specs if s["layout"].get("title", {}).get("text") == t("rm_head_view", l=1, h=2))
    assert lines["layout"]["meta"]["alt"] == t("alt_lines_choice", q=word(pieces[i]), k=word(pieces[j]), w=f"{w:.2f}")
    qk = next(s for s in specs if "queries_curve" in s["layout"].get("meta", {}))
    assert int(at.session_state["focus"]) == focus
    keys = qk["data"][qk["layout"]["meta"]["queries_curve"] + 1]  # the queries' points, then the keys'
    ends = {(round(tr["x"][1], 5), round(tr["y"][1], 5)) for tr in qk["data"] if tr.get("mode") == "lines"}
    allowed = {(round(keys["x"][k], 5), round(keys["y"][k], 5)) for k in range(L) if k <= focus}  # j <= i: causal
    assert sum(tr.get("mode") == "lines" for tr in qk["data"]) == focus + 1 and ends == allowed


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_inside_on_the_decoder_says_only_what_is_true_of_it(app, decoder, lang):
    at = settled(app(INSIDE, query={"rm_model": DECODER, "sentence": SENTENCE, "lang": lang}))
    shown = texts(at)
    check_texts(shown, lang, DECODER, heads=decoder.heads)
    intro = t("dec.in_intro", language=lang, name=DECODER, layers=decoder.layers, heads=decoder.heads)
    assert intro in shown


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_explain_on_the_decoder_says_only_what_is_true_of_it(app, decoder, lang):
    at = settled(app(EXPLAIN, query={"model": DECODER, "sentence": SENTENCE, "lang": lang}))
    shown = texts(at)
    # the other tabs say, truly, that they need the encoder (named): their sentences are left out of that check
    skip = set(texts(at.tabs[1])) | set(texts(at.tabs[2]))
    check_texts(shown, lang, DECODER, skip, heads=decoder.heads)
    markdown = [m.value for m in at.markdown]
    assert t("ex_choice_raw_dec", language=lang, heads=decoder.heads) in markdown  # its own number of heads
    assert any(t("ex_ig_error", language=lang) in x for x in shown)  # integrated gradients arrived: its note checked


def atlas_page():
    """Every head's atlas as the Real model page draws it, from a made-up job result (2 layers x 3 heads)."""
    from explorer.model import why_view

    heads = [
        {
            "layer": a,
            "head": b,
            "entropy": 0.5 + a + b / 10,
            "first_token": 0.1 * b + 0.2 * a,
            "first_token_value_weighted": 0.05 * (a + b),
            "uniform_rows": False,
        }
        for a in range(2)
        for b in range(3)
    ]
    why_view.atlas_ui(heads, 2, 3)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_atlas_names_its_layer_axis_and_its_facts_say_layer_not_row(lang):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_function(atlas_page, default_timeout=60)
    at.session_state["lang"] = lang
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    specs = charts(at)
    assert len(specs) == 3
    layer, row = t("ax_layer", language=lang), t("ax_row", language=lang)
    for spec in specs:
        assert spec["layout"]["yaxis"]["title"]["text"] == layer
        alt = spec["layout"]["meta"]["alt"]
        assert f"{layer} " in alt and f"{row} " not in alt, alt
