"""Pin as A on Step by step: A beside B, B − A equal to the engine's, a link's ``a=`` opening the comparison, a bad
one dropped with the link's notice, and Unpin."""

import json
from dataclasses import replace
from urllib.parse import urlencode

import pytest
import torch
from tolerance import assert_close

from attn_core import run_trace
from attn_core.pair import changed_most, step_matrices, words
from explorer.controls import DEFAULTS


def _charts(at) -> dict:
    """The comparison's charts by their key's end (pair_a, pair_b, pair_diff): the figure specs the browser gets."""
    out = {}
    for c in at.get("plotly_chart"):
        for name in ("pair_a", "pair_b", "pair_diff"):
            if str(c.proto.id).endswith(name):
                out[name] = json.loads(c.proto.spec)
    return out


def _z(spec) -> torch.Tensor:
    return torch.tensor(spec["data"][0]["z"], dtype=torch.float64)


def _texts(at) -> str:
    return " ".join(str(e.value) for kind in ("markdown", "info", "warning") for e in at.get(kind))


def test_pin_change_a_setting_and_the_difference_is_the_engines(app):
    at = app()
    assert not _charts(at)  # nothing pinned: no comparison
    at.button(key="pin_a").click().run()
    assert at.query_params.get("a")  # A in the link
    at.checkbox(key="causal").check().run()
    assert not at.exception, [e.value for e in at.exception]
    charts = _charts(at)
    assert set(charts) == {"pair_a", "pair_b", "pair_diff"}
    a, b = run_trace(DEFAULTS), run_trace(replace(DEFAULTS, causal=True))  # independent of the app's cache
    step = at.radio(key="step").value
    want = step_matrices(a, b, step, 0)
    assert_close(_z(charts["pair_a"]), want.a)
    assert_close(_z(charts["pair_b"]), want.b)
    assert_close(_z(charts["pair_diff"]), want.b - want.a)
    assert float((want.b - want.a).abs().max()) > 1e-3  # the causal mask changed this step
    ranges = [(s["data"][0]["zmin"], s["data"][0]["zmax"]) for s in (charts["pair_a"], charts["pair_b"])]
    assert ranges[0] == ranges[1]  # one colour scale for A and B
    said = words(changed_most(a, b, 0), "en")
    assert said.split(":")[0].replace("\\", "") in _texts(at).replace("\\", "")
    at.button(key="unpin_a").click().run()
    assert not _charts(at) and at.query_params.get("a") is None


def test_a_link_with_a_opens_the_comparison(app):
    at = app(query={"a": urlencode({"sentence": "the cat sat", "heads": "2"}), "step": "st_softmax"})
    charts = _charts(at)
    assert set(charts) == {"pair_a", "pair_b"}  # another sentence: no B − A, said instead
    assert _z(charts["pair_a"]).shape == (3, 3)
    a = run_trace(replace(DEFAULTS, sentence="the cat sat", heads=2))
    assert_close(_z(charts["pair_a"]), a.attn[0].double())
    assert "B − A" in _texts(at) and "different shapes" in _texts(at)


@pytest.mark.parametrize(
    "value",
    [
        "heads=999",  # out of range
        "bogus=1",  # not a setting
        "heads",  # no value
        "heads=3&d_model=8&layout=standard",  # settings that cannot work together
        "%ZZ&&",
    ],
)
def test_a_bad_a_is_dropped_with_the_link_notice(app, value):
    at = app(query={"a": value})
    assert not _charts(at) and at.query_params.get("a") is None
    notice = " ".join(str(w.value) for w in at.sidebar.warning)
    assert "cannot be used for: a." in notice, notice  # the parameter named, its value never echoed


def test_multihead_one_head_against_four(app):
    """ "What does going from 1 head to 4 do to these weights?": head 0 of each, B − A the engine's."""
    at = app("pages/2_multihead.py")
    at.button(key="pin_a").click().run()
    at.button(key="mh_show_four").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["heads"] == 4
    charts = _charts(at)
    a, b = run_trace(DEFAULTS), run_trace(replace(DEFAULTS, heads=4))
    want = step_matrices(a, b, "st_softmax", 0)
    assert_close(_z(charts["pair_a"]), a.attn[0].double())
    assert_close(_z(charts["pair_diff"]), want.b - want.a)
    assert words(changed_most(a, b, 0), "en").split(":")[0] in _texts(at).replace("\\", "")
