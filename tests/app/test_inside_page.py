"""Inside the model under AppTest, in English and Chinese: the numbers drawn are the engine's, and
bad input gets a message in the UI's language, no traceback, no NaN."""

import json
import math

import pytest
import torch
from background import until_done

from attn_core import models as pt
from attn_core.interpret import ablate, patch
from explorer.model import real

PAGE = "pages/9_inside.py"
SENTENCE = "The animal didn't cross the street because it was too tired"


def chart(at, title_part):
    for c in at.get("plotly_chart"):
        spec = json.loads(c.proto.spec)
        title = spec.get("layout", {}).get("title", {})
        if title_part in (title.get("text", "") if isinstance(title, dict) else str(title)):
            return spec
    raise AssertionError(f"no chart titled '{title_part}'")


def metric(at, label_part):
    return next(m.value for m in at.metric if label_part in m.label)


@pytest.fixture(scope="module")
def pre():
    return real.wait_for(pt.BUNDLED, timeout=300)


def test_the_page_never_waits_for_the_model(app, monkeypatch):
    """While the model loads in the background the page says so, draws nothing else and returns at once;
    once it has loaded, the next run draws the page (as the note's poll does)."""
    import threading

    gate = threading.Event()
    original = real.pt.load
    monkeypatch.setattr(real.pt, "load", lambda spec: (gate.wait(60), original(spec))[1])
    monkeypatch.setattr(real, "_LOADER", real._Loader())  # a server that has not loaded it yet
    at = app(PAGE)
    assert not at.exception and not at.get("plotly_chart")
    assert any("loading" in i.value for i in at.info)
    gate.set()
    real.wait_for(pt.BUNDLED, timeout=60)
    at.run()
    assert not at.exception and not any("loading" in i.value for i in at.info)


def test_importance_map_and_an_ablation_are_the_engines(app, pre):
    at = until_done(app(PAGE, query={"sentence": SENTENCE}))
    assert not at.error and metric(at, "Cosine to the original") == "1.000000"
    z = torch.tensor(chart(at, "when this head alone is ablated")["data"][0]["z"], dtype=torch.float32)
    assert torch.allclose(z, ablate.importance(pre, SENTENCE)["importance"], atol=1e-6)
    at.multiselect(key="in_heads").set_value(["2:5", "4:0"]).run()
    at.radio(key="in_mode").set_value("uniform").run()
    expect = ablate.intervene(pre, SENTENCE, [(2, 5), (4, 0)], "uniform").cosine
    assert not at.exception and float(metric(at, "Cosine to the original")) == pytest.approx(expect, abs=1e-6)
    assert expect < 0.9999


def test_patching_map_and_a_second_sentence_of_another_length(app, pre):
    corrupted = SENTENCE.replace("tired", "wide")
    at = app(PAGE, query={"sentence": SENTENCE})
    at.text_input(key="in_second").set_value(corrupted).run()
    until_done(at)
    z = torch.tensor(chart(at, "restored by patching")["data"][0]["z"], dtype=torch.float32)
    assert torch.allclose(z, patch.patch_map(pre, SENTENCE, corrupted)["restored"], atol=1e-5)
    assert math.isfinite(float(metric(at, "between the two sentences")))
    at.text_input(key="in_second").set_value("A much shorter one").run()
    until_done(at)  # the patching job refuses it with the engine's message
    assert not at.exception
    assert any("have" in w.value and "pieces" in w.value for w in at.warning), [w.value for w in at.warning]


def test_chinese_bad_input_every_token_masked_and_every_head(app, pre):
    at = app(PAGE, query={"sentence": "a cat", "lang": "zh"})
    assert at.title[0].value == "模型内部"
    mask = next(m for m in at.multiselect if str(m.key).startswith("in_mask"))
    mask.set_value(list(range(4))).run()
    assert not at.exception and any("所有词片都被遮蔽" in w.value for w in at.warning), [w.value for w in at.warning]
    mask = next(m for m in at.multiselect if str(m.key).startswith("in_mask"))
    mask.set_value([]).run()
    at.multiselect(key="in_heads").set_value([f"{i}:{j}" for i in range(6) for j in range(12)]).run()
    assert not at.exception and any("所有头都被消融" in i.value for i in at.info)
    assert math.isfinite(float(metric(at, "与原句向量的余弦")))


def test_hostile_sentences_stay_readable(app):
    for text, needle in (("我爱机器学习" * 5, "[UNK]"), ("a," * 300, "512")):  # 600 pieces, under 1000 characters
        at = until_done(app(PAGE, query={"sentence": text, "lang": "en"}))
        assert not at.exception
        shown = " ".join(w.value for w in at.warning)
        assert needle in shown, shown
        assert "nan" not in " ".join(m.value for m in at.metric).lower()
    assert "up to 128" in shown  # the 72-head maps refuse it, the rest of the page is drawn


def test_head_roles_table_links_to_the_head_view(app):
    at = app(PAGE, query={"sentence": SENTENCE})
    at.toggle(key="in_roles_go").set_value(True).run()
    assert not at.exception
    until_done(at)
    table = at.dataframe[0].value
    assert len(table) == 8 and set(table.columns) >= {"relation", "held-out accuracy %", "offset baseline %"}
    urls = [b.proto.url for b in at.get("link_button")]
    assert urls and all(u.startswith("/model?rm_layer=") and "&rm_head=" in u for u in urls)
    from attn_core.interpret import roles

    stats = roles.head_stats(real.wait_for(pt.BUNDLED))
    det = stats["relations"]["det"]
    assert f"/model?rm_layer={det['layer']}&rm_head={det['head']}" in urls
