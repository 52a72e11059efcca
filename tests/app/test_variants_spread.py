"""The Variants page's spread sections: entropies of softmax, linear attention and Performer, dispersion with
the adaptive temperature, and the window with global tokens, drawn in both languages from the engine's numbers."""

import json
import math

import pytest

from attn_core import Settings
from attn_core.why import spread as sp
from explorer.base.i18n import STRINGS
from explorer.variants import spread_view

PAGE = "pages/5_variants.py"


def _chart(at, key: str) -> dict:
    found = [json.loads(c.proto.spec) for c in at.get("plotly_chart") if key in str(c.proto.id)]
    assert len(found) == 1, key
    return found[0]


def _frames(at) -> list:
    return [d.value for d in at.dataframe]


@pytest.fixture
def opened():
    """The page with the spread sections' expander open from its first run (a link with va_gap or va_adaptive
    opens it by itself)."""
    from pathlib import Path

    from streamlit.testing.v1 import AppTest

    def make(query: dict | None = None) -> AppTest:
        at = AppTest.from_file(str(Path(__file__).resolve().parents[2] / "app.py"), default_timeout=120)
        for k, v in (query or {}).items():
            at.query_params[k] = v
        at.session_state[spread_view.OPEN_KEY] = True
        at.run()
        return at.switch_page(PAGE).run()

    return make


def test_nothing_is_computed_or_drawn_until_the_sections_are_opened(app, monkeypatch):
    def counted(*_a, **_k):
        raise AssertionError("computed while closed")

    monkeypatch.setattr(sp, "spread", counted)
    monkeypatch.setattr(sp, "dispersion", counted)
    at = app(PAGE, query={"sentence": "closed sections compute nothing"})
    assert not at.exception, [e.value for e in at.exception]
    assert STRINGS["va_ent_title"][0] not in [s.value for s in at.subheader]
    assert not [c for c in at.get("plotly_chart") if "va_dispersion_chart" in str(c.proto.id)]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_page_draws_the_three_sections_from_the_engines_numbers(app, lang):
    at = app(PAGE, query={"lang": lang, "va_gap": "3", "va_adaptive": "true"})
    assert not at.exception, [e.value for e in at.exception]
    heads = [s.value for s in at.subheader]
    for key in ("va_ent_title", "va_disp_title", "va_sink_title"):
        assert STRINGS[key][lang == "zh"] in heads, key
    # dispersion: both curves, softmax's the closed form at Δ = 3
    spec = _chart(at, "va_dispersion_chart")
    assert len(spec["data"]) == 2
    xs, ys = spec["data"][0]["x"], spec["data"][0]["y"]
    assert xs == list(sp.DISPERSION_NS)
    for n, y in zip(xs, ys):
        assert y == pytest.approx(math.exp(3) / (math.exp(3) + n - 1), rel=1e-6)
    adaptive = [r["max_weight"] for r in sp.dispersion(3.0, adaptive=True)]
    assert spec["data"][1]["y"] == pytest.approx(adaptive, rel=1e-9)
    # the entropy table and the sink table: the engine's numbers on the page's settings (window 1 on this page)
    frames = _frames(at)
    s = Settings().with_options(window=1)
    ent = spread_view.entropies(s.key())["kernels"]
    table = frames[0]
    # shown rounded: a value computed under another thread count may round the other way in its last digit
    kernels = spread_view.SPREAD_KERNELS
    assert list(table.iloc[:, 1]) == pytest.approx([ent[k]["entropy"] for k in kernels], abs=1.01e-4)
    assert list(table.iloc[:, 2]) == pytest.approx([ent[k]["effective_keys"] for k in kernels], abs=1.01e-3)
    sink = next(f for f in frames if len(f) == len(sp.SINK_GS))
    want = spread_view.sinks(s.key())["rows"]
    # four significant digits; an error at float32's rounding (g = 4 covers every key: ~5e-7) is noise, not a figure
    errors = [float(x) for x in sink.iloc[:, 1]]
    assert errors == pytest.approx([r["error"] for r in want], rel=1e-3, abs=1e-6)
    captions = " ".join(c.value for c in at.caption)
    assert "benchmarks/results" not in captions and "β = " in captions  # in words, no file a reader cannot open


def test_the_adaptive_curve_is_off_by_default(opened):
    at = opened()
    assert not at.exception
    assert len(_chart(at, "va_dispersion_chart")["data"]) == 1


@pytest.mark.parametrize(
    ("name", "raw"), [("va_gap", "abc"), ("va_gap", "1e400"), ("va_gap", "-1"), ("va_adaptive", "maybe")]
)
def test_a_hostile_value_in_the_link_is_named_and_the_default_used(app, name, raw):
    at = app(PAGE, query={name: raw})
    assert not at.exception
    notices = " ".join(w.value for w in at.warning).replace("\\_", "_")
    assert name in notices, notices
    assert name not in at.query_params
    spec = _chart(at, "va_dispersion_chart")
    assert len(spec["data"]) == 1  # the defaults: softmax alone, at Δ = 2
    assert spec["data"][0]["y"][0] == pytest.approx(math.exp(2) / (math.exp(2) + 1), rel=1e-6)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_uniform_rows_are_said_with_entropy_log_n(opened, lang):
    """One word repeated, no positions: every query and key is the same vector, so every row is uniform."""
    at = opened({"lang": lang, "sentence": "ha ha ha ha", "pos": "none"})
    assert not at.exception
    said = STRINGS["va_ent_uniform"][lang == "zh"].split("{")[0]
    assert any(i.value.startswith(said) for i in at.info), [i.value for i in at.info]
    table = _frames(at)[0]
    assert list(table.iloc[:, 1]) == pytest.approx([round(math.log(4), 4)] * 3)
    assert list(table.iloc[:, 2]) == pytest.approx([4.0] * 3)


def test_no_uniform_notice_on_the_default_sentence(opened):
    at = opened()
    said = STRINGS["va_ent_uniform"][0].split("{")[0]
    assert not any(i.value.startswith(said) for i in at.info)


def test_weights_the_engine_refuses_are_said_not_shown(opened, monkeypatch):
    def refuse(*_a, **_k):
        raise ValueError("not a distribution")

    spread_view.entropies.clear()
    monkeypatch.setattr(sp, "spread", refuse)
    at = opened({"sentence": "a refused input"})  # a sentence no other test caches
    spread_view.entropies.clear()
    assert not at.exception
    assert any(w.value == STRINGS["va_ent_refused"][0] for w in at.warning), [w.value for w in at.warning]
    assert STRINGS["va_sink_title"][0] in [s.value for s in at.subheader]  # the rest of the page still drawn
