"""Pin as A on Cross-attention and Variants: A beside B against two independent computations, what is compared
where the shapes differ, a lesson's "predict what changes" counted in its poll, and hostile ``a=`` values."""

import json
from dataclasses import replace
from urllib.parse import urlencode

import pytest
import torch
from test_predict import gives_away
from tolerance import assert_close

from attn_core import run_trace
from attn_core.classroom.store import POLLS
from attn_core.compare import compare
from attn_core.knobs import in_context
from attn_core.pair import changed_most, words
from explorer.controls import DEFAULT_SOURCE, DEFAULTS

CROSS, VARIANTS = "pages/3_cross.py", "pages/5_variants.py"
PAIR = ("pair_a", "pair_b", "pair_diff", "pair_entropy", "pair_max", "pair_predict_a")


def _charts(at) -> dict:
    """The comparison's charts by their key's end: the figure specs the browser gets."""
    out = {}
    for c in at.get("plotly_chart"):
        for name in PAIR:
            if str(c.proto.id).endswith(name):
                out[name] = json.loads(c.proto.spec)
    return out


def _z(spec) -> torch.Tensor:
    return torch.tensor(spec["data"][0]["z"], dtype=torch.float64)


def _y(spec, n: int) -> list[torch.Tensor]:
    """Each series' values of a line chart, its missing points (a shorter sentence) dropped."""
    return [torch.tensor([v for v in d["y"][:n] if v is not None], dtype=torch.float64) for d in spec["data"]]


def _texts(at) -> str:
    kinds = ("markdown", "info", "warning", "caption", "success")
    return " ".join(str(e.value) for kind in kinds for e in at.get(kind)).replace("\\", "")


def _cross(sentence: str, source: str, **changed):
    """Cross-attention's settings, built here: the second sentence's queries over the first sentence's keys."""
    return replace(DEFAULTS, sentence=source, source=sentence, pad_to=0, **changed)


def _entropy(w: torch.Tensor) -> torch.Tensor:
    w = w.double()
    return -(w * torch.where(w > 0, w.log(), torch.zeros_like(w))).sum(-1)


# ---- Cross-attention ----


def test_cross_pin_then_two_heads_shows_a_b_and_b_minus_a_of_two_independent_traces(app):
    at = app(CROSS)
    assert not _charts(at)  # nothing pinned: no comparison
    at.button(key="pin_a").click().run()
    assert at.query_params.get("a")
    at.number_input(key="heads").set_value(2).run()
    assert not at.exception, [e.value for e in at.exception]
    charts = _charts(at)
    assert {"pair_a", "pair_b", "pair_diff"} <= set(charts)
    a = run_trace(_cross(DEFAULTS.sentence, DEFAULT_SOURCE))
    b = run_trace(_cross(DEFAULTS.sentence, DEFAULT_SOURCE, heads=2))
    assert a.attn.shape[1:] == (len(DEFAULT_SOURCE.split()), len(DEFAULTS.sentence.split()))  # L x S, not L x L
    assert_close(_z(charts["pair_a"]), a.attn[0])
    assert_close(_z(charts["pair_b"]), b.attn[0])
    assert_close(_z(charts["pair_diff"]), b.attn[0].double() - a.attn[0].double())
    assert float((b.attn[0] - a.attn[0]).abs().max()) > 1e-3  # two heads changed head 0's weights
    ranges = [(s["data"][0]["zmin"], s["data"][0]["zmax"]) for s in (charts["pair_a"], charts["pair_b"])]
    assert ranges[0] == ranges[1]  # one colour scale
    said = words(changed_most(a, b, 0), "en")
    assert said.split(":")[0] in _texts(at), said


def test_cross_a_with_another_second_sentence_compares_entropy_and_largest_weight(app):
    """A's queries are three words, B's eight: no B − A; each query's entropy and largest weight instead."""
    at = app(CROSS, query={"a": urlencode({"sentence": DEFAULTS.sentence, "source": "the cat sat"})})
    charts = _charts(at)
    assert {"pair_a", "pair_b", "pair_entropy", "pair_max"} <= set(charts) and "pair_diff" not in charts
    a = run_trace(_cross(DEFAULTS.sentence, "the cat sat"))
    b = run_trace(_cross(DEFAULTS.sentence, DEFAULT_SOURCE))
    assert _z(charts["pair_a"]).shape == (3, len(DEFAULTS.sentence.split()))
    ent_a, ent_b = _y(charts["pair_entropy"], 100)
    assert_close(ent_a, _entropy(a.attn[0]))
    assert_close(ent_b, _entropy(b.attn[0]))
    max_a, max_b = _y(charts["pair_max"], 100)
    assert_close(max_a, a.attn[0].amax(-1))
    assert_close(max_b, b.attn[0].amax(-1))
    assert "different shapes" in _texts(at)


def test_cross_a_whose_second_sentence_has_no_word_is_said_not_raised(app):
    at = app(CROSS, query={"a": urlencode({"source": "🙂 🙂"})})
    assert not at.exception and not _charts(at)
    assert "A cannot be shown on this page" in _texts(at)


# ---- Variants ----


def _page_inputs(**changed) -> dict:
    return {n: k.span("page").default for n, k in in_context("page").items()} | changed


def test_variants_pin_then_a_wider_window_shows_each_variants_error_and_weights_in_a_and_b(app):
    at = app(VARIANTS)
    at.button(key="pin_a").click().run()
    assert "var_window=1" in at.query_params["a"]  # the page's own inputs are kept in A
    at.number_input(key="var_window").set_value(3).run()
    assert not at.exception, [e.value for e in at.exception]
    picked = ["full", "sliding_window", "linear_elu"]
    ra = compare(DEFAULTS.with_options(**_page_inputs()), picked)
    rb = compare(DEFAULTS.with_options(**_page_inputs(window=3)), picked)
    charts = _charts(at)
    assert {"pair_a", "pair_b", "pair_diff"} <= set(charts)
    wa, wb = ra["kernels"]["sliding_window"]["weights"], rb["kernels"]["sliding_window"]["weights"]
    assert_close(_z(charts["pair_a"]), wa)
    assert_close(_z(charts["pair_b"]), wb)
    assert_close(_z(charts["pair_diff"]), wb.double() - wa.double())
    assert float((wb - wa).abs().max()) > 1e-3
    table = next(df.value for df in at.dataframe if "max |Δ output| in A" in df.value.columns)
    for name, row in zip(picked, table.itertuples(index=False)):
        assert_close(
            torch.tensor([row[1], row[2]]),
            torch.tensor([ra["kernels"][name]["max_abs"], rb["kernels"][name]["max_abs"]]),
        )
        assert_close(
            torch.tensor([row[3], row[4]]), torch.tensor([ra["kernels"][name]["kl"], rb["kernels"][name]["kl"]])
        )
    before, after = ra["kernels"]["sliding_window"]["max_abs"], rb["kernels"]["sliding_window"]["max_abs"]
    trend = "fell" if after < before else "rose"
    assert (
        f"error against full attention (max |Δ output|) {trend} from {before:.3g} in A to {after:.3g} in B"
        in _texts(at)
    )


def test_variants_a_pinned_elsewhere_with_another_sentence_compares_what_still_can(app):
    """``a=`` from Step by step (no page inputs: the page's own are used for A) with a shorter sentence."""
    at = app(VARIANTS, query={"a": urlencode({"sentence": "the cat sat"})})
    assert not at.exception, [e.value for e in at.exception]
    charts = _charts(at)
    assert {"pair_a", "pair_b", "pair_entropy"} <= set(charts) and "pair_diff" not in charts
    ra = compare(replace(DEFAULTS, sentence="the cat sat").with_options(**_page_inputs()), ["sliding_window"])
    wa = ra["kernels"]["sliding_window"]["weights"]
    assert_close(_z(charts["pair_a"]), wa)
    ent_a, _ = _y(charts["pair_entropy"], 100)
    assert_close(ent_a, _entropy(wa))


# ---- Predict what changes, in a lesson ----


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_predict_what_changes_hides_b_until_answered_and_counts_the_class(app, lang):
    code = f"pair-{lang}"
    POLLS.end(code)
    # A: a softmax five times as hot; B: the default temperature. Which key will 'ist' attend to most now?
    query = {"a": urlencode({"temperature": "5.0"}), "predict": "true", "lesson": code, "focus": "1", "lang": lang}
    at = app(CROSS, query=query)
    a = run_trace(_cross(DEFAULTS.sentence, DEFAULT_SOURCE, temperature=5.0))
    b = run_trace(_cross(DEFAULTS.sentence, DEFAULT_SOURCE))
    charts = _charts(at)
    assert set(charts) == {"pair_predict_a"}  # A's row, nothing of B
    assert_close(torch.tensor(charts["pair_predict_a"]["data"][0]["y"]), a.attn[0, 1])
    ask = {"en": "Before you see B", "zh": "看到 B 之前"}[lang]
    assert any(ask in i.value for i in at.info)
    assert not gives_away(at, b.attn[0, 1]), gives_away(at, b.attn[0, 1])
    truth = int(b.attn[0, 1].argmax())
    at.radio(key="predict_pick_pair").set_value(truth).run()
    at.button(key="predict_reveal_pair").click().run()
    assert not at.exception, [e.value for e in at.exception]
    right = {"en": "Right: in B", "zh": "答对了：在 B 中"}[lang]
    assert any(right in s.value for s in at.success)
    assert {"pair_a", "pair_b", "pair_diff"} <= set(_charts(at))  # revealed: the comparison
    question = next(iter(POLLS.lessons[code].questions))
    assert question[0] == "cross" and question[2] == "pin"
    assert POLLS.tally(code, question, len(b.key_tokens.words))[truth] == 1  # counted as any prediction


@pytest.mark.parametrize("page", ["pages/1_steps.py", "pages/2_multihead.py"])
def test_predict_what_changes_on_step_by_step_and_multi_head_shows_a_and_asks_about_b(app, page):
    code = "pair-" + page.split("_")[1].split(".")[0]
    POLLS.end(code)
    query = {"a": urlencode({"temperature": "5.0"}), "predict": "true", "lesson": code, "focus": "1"}
    at = app(page, query=query)
    assert not at.exception, [e.value for e in at.exception]
    a = run_trace(replace(DEFAULTS, temperature=5.0))
    b = run_trace(DEFAULTS)
    charts = _charts(at)
    assert "pair_predict_a" in charts and "pair_b" not in charts  # A's row, nothing of B yet
    assert_close(torch.tensor(charts["pair_predict_a"]["data"][0]["y"]), a.attn[0, 1])
    assert not gives_away(at, b.attn[0, 1]), gives_away(at, b.attn[0, 1])
    truth = int(b.attn[0, 1].argmax())
    at.radio(key="predict_pick_pair").set_value(truth).run()
    at.button(key="predict_reveal_pair").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert {"pair_a", "pair_b"} <= set(_charts(at))  # revealed: the comparison
    question = next(iter(POLLS.lessons[code].questions))
    assert question[2] == "pin" and POLLS.tally(code, question, len(b.key_tokens.words))[truth] == 1


# ---- Hostile a= on these pages ----


@pytest.mark.parametrize("page", [CROSS, VARIANTS])
@pytest.mark.parametrize(
    "value",
    [
        "var_window=0",  # below the page input's range
        "var_window=99999",  # above it
        "var_features=abc",  # not a number
        "var_bogus=1",  # not a page input
        "source=" + "x" * 5000,  # longer than a= is read
        "heads=3&d_model=8&layout=standard",  # settings that cannot work together
        "%ZZ&&",
    ],
)
def test_a_bad_a_on_cross_and_variants_is_dropped_with_the_link_notice(app, page, value):
    at = app(page, query={"a": value})
    assert not at.exception, [e.value for e in at.exception]
    assert not _charts(at) and at.query_params.get("a") is None
    notice = " ".join(str(w.value) for w in at.sidebar.warning)
    assert "cannot be used for: a." in notice, notice
