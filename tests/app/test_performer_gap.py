"""The Variants page's Performer chart: its numbers against an independent computation, and the page draws it."""

import torch

from attn_core import Settings
from attn_core.compare import head0
from attn_core.kernels import full_attention
from explorer.variants import performer_gap


def test_gap_curves_match_an_independent_computation_and_show_where_features_help():
    s = Settings()
    res = performer_gap.gap_curves(s.key())
    q, k, v, base = head0(s)
    scale = base.scale
    L = q.shape[-2]
    for n, f in enumerate(res["factors"]):
        # uniform attention's error, written out: softmax in float64 against the plain mean of the values
        w = torch.softmax((q.double() @ k.double().transpose(-2, -1)) * scale * f, dim=-1)
        exact = (w @ v.double())[0, 0]
        mean = v.double()[0, 0].mean(0, keepdim=True).expand(L, -1)
        assert abs(res["uniform"][n] - float((mean - exact).norm() / exact.norm())) < 1e-6
        assert torch.allclose(full_attention(q.double(), k.double(), v.double(), scale=scale * f)[0, 0], exact)
    gaps = {m: [p - u for p, u in zip(res["performer"][m], res["uniform"])] for m in res["features"]}
    assert all(torch.isfinite(torch.tensor(g)).all() for g in gaps.values())
    # many features and small logits: clearly closer to softmax than averaging
    assert gaps[1024][0] < -0.3 * res["uniform"][0], gaps[1024]
    # more features never make it worse by much at the smallest scale (the curve the page shows falls)
    assert res["performer"][1024][0] < res["performer"][4][0]


def test_variants_page_draws_the_performer_chart_only_when_opened(app):
    performer_gap.gap_curves.clear()
    at = app("pages/5_variants.py")
    labels = [e.label for e in at.expander]
    assert any("random features" in label for label in labels), labels
    assert not at.exception
    charts = lambda: [c for c in at.get("plotly_chart") if "var_performer_gap" in str(c.proto.id)]
    assert not charts()  # closed: nothing computed, nothing drawn
    assert not performer_gap.gap_curves.entries
    at.session_state[performer_gap.OPEN_KEY] = True  # the learner opens it
    at.run()
    assert not at.exception
    assert len(charts()) == 1
    assert len(performer_gap.gap_curves.entries) == 1


def test_a_bad_expander_state_from_the_browser_closes_it_without_an_error(app):
    at = app("pages/5_variants.py")
    for junk in ("junk", None, float("nan"), 5):
        at.session_state[performer_gap.OPEN_KEY] = junk
        at.run()
        assert not at.exception, (junk, [e.value for e in at.exception])
        assert at.session_state[performer_gap.OPEN_KEY] is False, junk
        assert not [c for c in at.get("plotly_chart") if "var_performer_gap" in str(c.proto.id)]
    at.session_state[performer_gap.OPEN_KEY] = True
    at.run()
    assert [c for c in at.get("plotly_chart") if "var_performer_gap" in str(c.proto.id)]
