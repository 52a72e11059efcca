"""The Explain page under AppTest, in both languages: every section drawn from the engine's
numbers, Shapley only on request, bad input answered with a message in the UI's language."""

import math
import re
import time

import pytest

PAGE = "pages/10_explain.py"


def texts(at) -> str:
    parts = [m.value for m in at.markdown] + [c.value for c in at.caption] + [i.value for i in at.info]
    parts += [w.value for w in at.warning] + [f"{m.label} {m.value}" for m in at.metric]
    return "\n".join(str(p) for p in parts)


def computing(at) -> bool:
    """A part is still computing in the background: a progress bar, or a section saying it will come."""
    pending = ("appears here when it is ready", "算好后显示在这里")
    return bool(at.get("progress")) or any(p in c.value for c in at.caption for p in pending)


def until_explained(at, timeout: float = 600.0):
    """Rerun the page (as its poll does) until every part computed in the background has arrived."""
    deadline = time.monotonic() + timeout
    while computing(at) and time.monotonic() < deadline:
        time.sleep(0.2)
        at.run()
    assert not computing(at), "still computing"
    return at


def no_nan(at) -> None:
    assert not re.search(r"\bnan\b", texts(at), re.IGNORECASE)
    for df in at.dataframe:
        for col in df.value.columns:
            for v in df.value[col]:
                assert not (isinstance(v, float) and math.isnan(v)), col


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_page_explains_the_sentence_in_each_language(app, lang):
    at = until_explained(app(PAGE, {"lang": lang}))
    assert at.title[0].value == ("Is attention an explanation?" if lang == "en" else "注意力是解释吗？")
    assert len(at.tabs) == 3
    shown = texts(at)
    assert ("completeness error" if lang == "en" else "完备性误差") in shown
    assert ("direct share" if lang == "en" else "直接份额") in shown
    assert any("ρ" in str(v) for df in at.dataframe for v in df.value.iloc[:, 1])  # the agreement table
    no_nan(at)
    assert "Σ φ" not in shown  # Shapley waits for its button
    at.button(key="ex_shapley_go").click().run()
    assert not at.exception
    until_explained(at)
    assert "Σ φ" in texts(at)
    no_nan(at)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_bad_sentences_get_a_message_in_the_ui_language(app, lang):
    at = app(PAGE, {"lang": lang})
    sentence = at.sidebar.text_area(key="sentence")  # the page explains the sidebar's sentence
    sentence.set_value("!!! ... ?").run()
    assert not at.exception
    warned = " ".join(w.value for w in at.warning)
    assert ("only punctuation" if lang == "en" else "只有标点") in warned
    at.sidebar.text_area(key="sentence").set_value("word " * 190).run()  # 192 pieces, over the 128 explained
    warned = " ".join(w.value for w in at.warning)
    assert ("192 pieces" if lang == "en" else "192 个词元") in warned
    at.sidebar.text_area(key="sentence").set_value("Hello").run()
    assert not at.exception
    until_explained(at)
    cells = " ".join(str(v) for df in at.dataframe for col in df.value.columns for v in df.value[col])
    assert ("no correlation: fewer than 3 pieces" if lang == "en" else "无相关：词元少于 3 个") in cells
    no_nan(at)
    at.text_input(key="ex_b_negation").set_value("   ").run()
    until_explained(at)
    warned = " ".join(w.value for w in at.warning)
    assert ("second sentence is empty" if lang == "en" else "第二个句子是空的") in warned


def test_the_pair_and_the_table(app):
    at = until_explained(app(PAGE, {"lang": "en"}))
    shown = texts(at)
    assert "cos(e(a), e(b))" in shown and "What attention alone would have said" in shown
    at.text_input(key="ex_b_negation").set_value("I like this film").run()
    until_explained(at)
    assert "The two sentences are the same" in texts(at)
    assert "Over 117 sentences at layer 6" in texts(at)  # the reading, written from the table's numbers
    assert "Abnar & Zuidema (2020), Table 3" in " ".join(str(v) for df in at.dataframe for v in df.value.iloc[:, 0])
    no_nan(at)


def test_a_new_sidebar_sentence_is_the_one_explained(app):
    """One sentence, one source of truth: a sentence typed in the sidebar while the page is open is
    the one the page explains (its tokens on the overview), not the one it was opened with."""
    at = app(PAGE, {"lang": "en"})
    at.sidebar.text_area(key="sentence").set_value("zebras graze quietly").run()
    assert not at.exception
    at = until_explained(at)
    from attn_core.explain.staged import cheap
    from explorer import figures as fig
    from explorer.model import real

    tokens = cheap(real.wait_for(real.pt.BUNDLED), "zebras graze quietly")["tokens"]
    assert list(overview_spec(at)["data"][0]["x"]) == fig.labels(tokens)
    assert "zebras graze quietly" in [x.value for x in at.text]


def test_the_cheap_part_is_drawn_at_once_and_the_rest_as_it_arrives(app, one_thread):
    """A new sentence: raw attention, rollout and norms (one forward pass) are drawn in the first run
    with a progress bar for the rest, which the page gets from its background job on a later run."""
    from attn_core.explain import explain as X
    from attn_core.explain.explain import METHODS
    from explorer.model import real

    sentence = "Otters hold hands while they sleep on the water"
    at = app(PAGE, {"lang": "en"})
    at.sidebar.text_area(key="sentence").set_value(sentence).run()
    assert not at.exception
    assert at.get("progress"), "no progress bar while the rest computes"
    first = overview_rows(at)
    assert {"raw attention", "rollout"} <= {r.lower() for r in first}
    assert "flow" not in {r.lower() for r in first}  # max-flow is among the slow parts
    until_explained(at)
    assert not at.get("progress")
    full = overview_rows(at)
    assert len(full) > len(first)
    direct = X.explain(real.wait_for(real.pt.BUNDLED), sentence, shapley=False, layers=True)
    z = overview_z(at)
    expect = [m for m in METHODS if direct["methods"][m] is not None]
    assert len(z) == len(expect) + 2
    for row, m in zip(z, expect, strict=False):
        top = max(abs(v) for v in direct["methods"][m])
        assert row == pytest.approx([v / top for v in direct["methods"][m]], rel=1e-5, abs=1e-7)


def overview_spec(at) -> dict:
    import json

    for c in at.get("plotly_chart"):
        spec = json.loads(c.proto.spec)
        title = spec.get("layout", {}).get("title", {})
        text = title.get("text", "") if isinstance(title, dict) else str(title)
        if text.startswith("Every explanation"):
            return spec
    raise AssertionError("no overview chart")


def overview_rows(at) -> list[str]:
    return list(overview_spec(at)["data"][0]["y"])


def overview_z(at) -> list[list[float]]:
    return overview_spec(at)["data"][0]["z"]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_sentence_past_shapleys_limit_is_told_so_once_where_shapley_is(app, lang):
    """The limit (the players counted and named) is said in the Shapley section, not again among the notices."""
    at = app(PAGE, {"lang": lang, "sentence": "I didn't think it would rain today, but it did."})
    assert not at.exception
    said = [i.value for i in at.info if ("up to 10 players" if lang == "en" else "不超过 10 个参与者") in i.value]
    assert len(said) == 1 and "12" in said[0], said  # the words a reader counts ("didn't" one), punctuation apart
