"""Why this weight? on the Real model page, under AppTest: the background jobs' results drawn, checked against
the engine's own forward and transformers' probabilities; a masked key said, not split; a link's query or key
out of range dropped with a notice; both languages."""

from __future__ import annotations

import math
import time

import pytest
import torch
from background import until_done
from test_decoder_pages import chart, charts, metric, z_of
from tiny_decoders import NAME

from attn_core import models as M
from explorer.model import real

PAGE = "pages/7_model.py"
SENTENCE = "The animal didn't cross the street because it was too tired"


@pytest.fixture(scope="module")
def tiny(tiny_gpt2):
    return tiny_gpt2


def _page(app, **query):
    return until_done(app(PAGE, query={"sentence": SENTENCE, "rm_why": "1"} | query))


def test_the_split_adds_up_to_the_models_score_and_the_weight_is_the_models(app):
    at = _page(app, rm_layer="4", rm_head="9", rm_query="3", rm_key="1")
    assert not at.exception and not at.error
    assert any(s.value == "Why this weight?" for s in at.subheader)
    m = real.wait_for(M.BUNDLED)
    run = M.forward(m, M.encode(m, SENTENCE))
    want = float(run.attentions[4, 9, 3, 1])
    assert math.isclose(float(metric(at, "the model's weight")), want, abs_tol=1e-4)
    score = float(metric(at, "scaled score"))
    cells = z_of(chart(at, "The score by what the residual stream carries"))
    assert cells.shape[0] == cells.shape[1] == 2 * 4 + 4  # token, position, segment, 4 layers' heads and MLPs, biases
    assert math.isclose(float(cells.sum()), score, abs_tol=1e-3)
    terms = chart(at, "largest of 32 terms")["data"][0]["y"]
    assert len(terms) == 16 and abs(terms[0]) >= abs(terms[-1])
    assert any("when the model runs again without it" in m.value for m in at.markdown)
    for measure in ("Mean entropy (nats)", "Weight on the first token", "weighted by what it writes"):
        assert z_of(chart(at, measure)).shape == (6, 12)


def test_the_chinese_page_writes_its_sources_in_chinese(app):
    from explorer.jobs.heavy import HEAVY

    query = {"sentence": SENTENCE, "rm_why": "1", "rm_layer": "2", "rm_head": "0", "rm_query": "2", "rm_key": "0"}
    query["lang"] = "zh"
    app(PAGE, query=query)  # asks for the jobs (AppTest cannot rerun a page whose radio labels are translated)
    deadline = time.monotonic() + 600
    while any(job.active for job in list(HEAVY.jobs.values())) and time.monotonic() < deadline:
        time.sleep(0.2)
    at = app(PAGE, query=query)  # the results, drawn at once
    assert any(s.value == "为什么是这个权重？" for s in at.subheader)
    spec = chart(at, "按残差流携带的内容拆分分数")
    names = spec["data"][0]["y"]
    assert "词元" in names and "第 1 层的头" in names and "偏置" in names and not any("heads" in n for n in names)


def test_a_later_key_in_a_decoder_is_masked_and_not_split(app, tiny):
    at = _page(app, rm_model=NAME, sentence="the cat sat on the mat", rm_query="1", rm_key="3")
    assert any("is masked for the query" in i.value for i in at.info)
    assert "The score by what the residual stream carries" not in charts(at)


def test_a_query_out_of_range_in_the_link_is_dropped_with_a_notice(app):
    at = _page(app, rm_query="999", rm_key="-4")
    assert not at.exception and at.session_state["rm_query"] == 1 and at.session_state["rm_key"] == 0
    assert "rm_query" not in at.query_params and "rm_key" not in at.query_params
    assert {"rm_query", "rm_key"} <= set(at.session_state["_url_notices"])


@pytest.mark.parametrize("bad", ["1.5", "nan", "x"])
def test_a_broken_query_value_falls_back(app, bad):
    at = _page(app, rm_query=bad)
    assert not at.exception and at.session_state["rm_query"] == 1
    assert torch.isfinite(torch.tensor(float(metric(at, "scaled score"))))


def test_the_section_computes_nothing_until_it_is_switched_on(app):
    from explorer.jobs.heavy import HEAVY

    before = {k for k, j in HEAVY.jobs.items() if j.kind in ("why_weight", "atlas")}
    at = app(PAGE, query={"sentence": "Nothing is asked of the workers here"})
    assert any(s.value == "Why this weight?" for s in at.subheader) and not at.get("progress")
    assert {k for k, j in HEAVY.jobs.items() if j.kind in ("why_weight", "atlas")} == before
    assert "The score by what the residual stream carries" not in charts(at)
