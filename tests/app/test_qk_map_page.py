"""Step by step's "Queries and keys as a map" under AppTest: nothing computed until opened; opened, its points are
the engine's map of the page's own trace (exact at d_k = 2, PCA otherwise, said which); the additive score is
said not to fit; both languages."""

from __future__ import annotations

import json

import torch

from attn_core import run_trace
from attn_core.why import qk_map
from explorer.qk_view import OPEN_KEY

PAGE = "pages/1_steps.py"


def map_chart(at):
    found = [json.loads(c.proto.spec) for c in at.get("plotly_chart") if "chart_qk_map" in c.proto.id]
    return found[0] if found else None


def opened(at):
    at.session_state[OPEN_KEY] = True
    return at.run()


def test_the_map_is_drawn_only_once_opened(app):
    at = app(PAGE)
    assert map_chart(at) is None
    assert map_chart(opened(at)) is not None


def test_the_points_are_the_engines_map_of_the_pages_trace(app):
    at = opened(app(PAGE, query={"d_q": "2", "d_k": "2", "heads": "2", "head_steps": "1", "focus": "3"}))
    assert not at.exception, [e.value for e in at.exception]
    spec = map_chart(at)
    trace = run_trace(at.session_state["settings"])
    want = qk_map(trace.Q[1], trace.K[1], trace.scaled_scores[1], trace.mask)
    queries, keys = (next(d for d in spec["data"] if d.get("name") == n) for n in ("queries", "keys"))
    got_q = torch.tensor([queries["x"], queries["y"]]).T
    got_k = torch.tensor([keys["x"], keys["y"]]).T
    assert torch.allclose(got_q, want.queries, rtol=1e-5, atol=1e-6)
    assert torch.allclose(got_k, want.keys, rtol=1e-5, atol=1e-6)
    assert any("d_k = 2: the points are the vectors themselves" in c.value for c in at.caption)
    assert any(f"r = {want.correlation:.3f}" in c.value for c in at.caption)
    lines = [d for d in spec["data"] if d.get("mode") == "lines"]
    assert len(lines) == len(keys["x"])  # one line from the focus query to every key
    assert all(line["x"][0] == queries["x"][3] for line in lines)


def test_pca_is_said_with_the_share_it_keeps(app):
    at = opened(app(PAGE, query={"lang": "zh"}))
    spec = map_chart(at)
    assert spec is not None
    assert any("主成分" in c.value for c in at.caption)


def test_the_additive_score_is_said_not_to_fit(app):
    at = opened(app(PAGE, query={"score": "additive"}))
    assert not at.exception
    assert map_chart(at) is None
    assert any("additive score" in i.value for i in at.info)


def test_d_k_1_is_said_to_be_a_line(app):
    from explorer.i18n import STRINGS

    for lang in ("en", "zh"):
        at = opened(app(PAGE, query={"d_q": "1", "d_k": "1", "lang": lang}))
        assert not at.exception, [e.value for e in at.exception]
        spec = map_chart(at)
        keys = next(d for d in spec["data"] if d.get("name") in ("keys", "键"))
        assert all(y == 0 for y in keys["y"])  # one number each: the second axis is 0
        said = STRINGS["qk_one_dim"][lang == "zh"].split("r = ")[0]
        assert any(c.value.replace("\\", "").startswith(said) for c in at.caption), [c.value for c in at.caption]
