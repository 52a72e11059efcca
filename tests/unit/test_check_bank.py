"""The concept check's item bank: every item complete in English and 中文 with exactly one correct option and a
named misconception per distractor; the live items' answers against the same quantities written out in torch; the
``items`` command's JSON and its refusals."""

from __future__ import annotations

import copy
import json
import math

import pytest
import torch

from attn_core.check import bank
from attn_core.check.live import LiveUnavailable, flatter, param_count_item, temperatures, top_key
from attn_core.config import Settings
from attn_core.locales import LANGS
from attn_core.trace import draw_weights, run_trace
from tests.cli_run import in_process

ITEMS = bank.load()
SETTINGS = [
    Settings(),
    Settings(heads=3, seed=7, sentence="the cat sat on the mat because it was warm"),
    Settings(heads=2, causal=True, temperature=0.5, sentence="a b c d e f"),
    Settings(heads=4, layout="standard", init="standard", d_model=32, sentence="Life is short, eat dessert first"),
    Settings(heads=2, score="dot", pos="sinusoidal", seed=3, sentence="one two three four"),
    Settings(sentence="le chat dort", source="the cat sleeps on the sofa", heads=2, seed=11),
]


def test_the_bank_has_enough_items_and_covers_every_concept():
    assert len(ITEMS) >= 16
    assert {item.concept for item in ITEMS} == set(bank.CONCEPTS)
    assert {item.live for item in ITEMS if item.live} == {"top_key", "param_count", "flatter"}


@pytest.mark.parametrize("item", ITEMS, ids=lambda i: i.id)
def test_every_item_is_complete_in_both_languages_with_exactly_one_correct_option(item):
    shown = {lang: bank.render(item, lang) for lang in LANGS}
    for lang, d in shown.items():
        assert d["question"].strip() and "{" not in d["question"], (lang, d["question"])
        assert len(d["options"]) >= 2 and all(o.strip() for o in d["options"])
        assert len(set(d["options"])) == len(d["options"])  # no two options read the same
        assert [m is None for m in d["misconceptions"]].count(True) == 1  # one correct, every other one named
        assert d["misconceptions"][d["answer"]] is None
        assert all(m.strip() for m in d["misconceptions"] if m is not None)
    en, zh = shown["en"], shown["zh"]
    assert (en["answer"], len(en["options"]), en["concept"], en["live"]) == (
        zh["answer"],
        len(zh["options"]),
        zh["concept"],
        zh["live"],
    )
    if not item.live:
        assert en["question"] != zh["question"]


def test_the_correct_option_is_not_always_in_the_same_place():
    places = [bank.render(item, "en")["answer"] for item in ITEMS if not item.live]
    assert len(set(places)) >= 3


def _raw():
    return copy.deepcopy(bank._data())


def _make_correct(option: dict) -> None:
    option.pop("misconception", None)
    option["correct"] = True


def _static_index(data):
    return next(i for i, raw in enumerate(data["items"]) if "live" not in raw)


@pytest.mark.parametrize(
    "breaks, says",
    [
        (lambda d, i: d["items"][i]["options"][0].update(correct=True, misconception=None) or None, "misconception"),
        (lambda d, i: [_make_correct(o) for o in d["items"][i]["options"]], "exactly one correct"),
        (lambda d, i: [o.pop("correct", None) for o in d["items"][i]["options"]], "distractor"),
        (lambda d, i: d["items"][i]["question"].pop("zh"), "languages"),
        (lambda d, i: d["items"][i]["options"][1].update(zh=" "), "empty"),
        (lambda d, i: d["items"][i].update(concept="vibes"), "concept"),
        (lambda d, i: d["items"][i + 1].update(id=d["items"][i]["id"]), "twice"),
        (lambda d, i: d["items"].__delitem__(slice(15, None)), "at least"),
        (lambda d, i: d["items"][-1].update(live="guess"), "live"),
    ],
)
def test_a_broken_bank_is_refused_naming_the_fault(breaks, says):
    data = _raw()
    bank.parse(data)  # as shipped: fine
    breaks(data, _static_index(data))
    with pytest.raises(bank.BankError, match=says):
        bank.parse(data)


# ---- live items against the quantities written out ------------------------------------------------------------


def _weights_written_out(s: Settings, temperature: float | None = None) -> tuple[torch.Tensor, object]:
    """(H, L, S) softmax weights from the trace's inputs (x and the drawn W_q, W_k): projections, q · k, 1/√d_k,
    the temperature, the causal mask and the softmax written here, not the engine's."""
    t = run_trace(s)
    r = t.settings
    w = draw_weights(r)
    x, xs = t.x.double(), t.x_source.double()
    q = torch.einsum("ld,hkd->hlk", x, w.W_q.double())
    k = torch.einsum("sd,hkd->hsk", xs, w.W_k.double())
    if w.b_q is not None:
        q, k = q + w.b_q.double()[:, None, :], k + w.b_k.double()[:, None, :]
    scores = q @ k.transpose(1, 2)
    if r.score == "scaled_dot":
        scores = scores / math.sqrt(r.d_k)
    scores = scores / (temperature if temperature is not None else r.temperature)
    if r.causal:
        L, S = scores.shape[1:]
        scores = scores.masked_fill(~torch.ones(L, S, dtype=torch.bool).tril(), -math.inf)
    return torch.softmax(scores, dim=-1), t


@pytest.mark.parametrize("s", SETTINGS, ids=range(len(SETTINGS)))
def test_the_top_key_is_the_word_with_the_largest_weight_written_out(s):
    weights, t = _weights_written_out(s)
    head = 1 if s.heads > 1 else 0
    row = weights[head, 1]
    words = list(t.key_tokens.words)
    best = {}
    for j, word in enumerate(words):
        best[word] = max(best.get(word, -1.0), float(row[j]))
    expected = max(best, key=best.get)
    live = top_key(s)
    shown = bank.render(bank.by_id()["live-top-key"], "en", s)
    assert shown["options"][shown["answer"]] == expected == live.options[live.answer].params["word"]
    assert set(shown["options"]) <= set(words)
    assert f"head {head + 1}" in shown["question"] and f"'{t.tokens.words[1]}'" in shown["question"]


def test_the_top_key_item_is_left_out_where_one_word_is_all_there_is():
    with pytest.raises(LiveUnavailable):
        top_key(Settings(sentence="the the the"))  # one key word: nothing to choose
    shown, left = bank.check_items("zh", Settings(sentence="the the the"), ids=("live-top-key", "qkv-shape"))
    assert [d["id"] for d in shown] == ["qkv-shape"] and "live-top-key" in left[0]


def _count_drawn(s: Settings) -> int:
    """The layer's parameters counted as the engine draws them: every tensor's elements."""
    w = draw_weights(s.resolved())
    tensors = [w.W_q, w.W_k, w.W_v, w.b_q, w.b_k, w.b_v, w.W_o, w.b_o]
    if w.additive is not None:
        tensors += [w.additive.W_a, w.additive.U_a, w.additive.v]
    return sum(x.numel() for x in tensors if x is not None)


@pytest.mark.parametrize("s", [*SETTINGS, Settings(score="additive", heads=2, d_q=8, d_k=6)], ids=range(7))
def test_the_parameter_count_is_every_drawn_tensors_elements(s):
    shown = bank.render(bank.by_id()["live-params"], "en", s)
    assert int(shown["options"][shown["answer"]].replace(",", "")) == _count_drawn(s)
    assert len(shown["options"]) >= 2


def test_the_parameter_count_of_the_standard_layer_is_torchs_multihead_attention():
    s = Settings(heads=4, layout="standard", init="standard", d_model=32)
    mha = torch.nn.MultiheadAttention(32, 4, bias=True)
    live = param_count_item(s)
    assert live.options[live.answer].params["count"] == sum(p.numel() for p in mha.parameters())


def _entropy(row: torch.Tensor) -> float:
    p = row[row > 0]
    return float(-(p * p.log()).sum())


@pytest.mark.parametrize("s", SETTINGS, ids=range(len(SETTINGS)))
def test_the_flatter_temperature_has_the_larger_entropy_written_out(s):
    low, high = temperatures(s)
    h_low = _entropy(_weights_written_out(s, low)[0][0, 1])
    h_high = _entropy(_weights_written_out(s, high)[0][0, 1])
    shown = bank.render(bank.by_id()["live-flatter"], "en", s)
    assert shown["options"][:2] == [f"T = {low:g}", f"T = {high:g}"]
    expected = 2 if math.isclose(h_low, h_high, rel_tol=1e-5, abs_tol=1e-6) else (1 if h_high > h_low else 0)
    assert shown["answer"] == expected


def test_with_one_key_to_attend_both_temperatures_are_equally_flat():
    s = Settings(causal=True, sentence="a b c")
    assert flatter(s, focus=0).answer == 2  # the first query sees itself only: weight 1 at any temperature
    assert flatter(s, focus=2).answer == 1


def test_a_temperature_at_its_top_compares_half_of_it():
    s = Settings(temperature=100.0)
    assert temperatures(s) == (50.0, 100.0)


# ---- the command -------------------------------------------------------------------------------------------------


def test_items_json_in_chinese_with_settings_flags(capsys):
    code, out, err = in_process(capsys, ["items", "--json", "--lang", "zh", "--heads", "2", "--seed", "5", "a b c d"])
    assert code == 0 and not err
    data = json.loads(out)
    assert data["lang"] == "zh" and data["left_out"] == []
    assert [d["id"] for d in data["items"]] == [item.id for item in ITEMS]
    for d in data["items"]:
        assert {"id", "concept", "question", "options", "answer", "live"} <= set(d)
    live = {d["id"]: d for d in data["items"]}
    assert live["live-top-key"] == bank.render(
        bank.by_id()["live-top-key"], "zh", Settings(heads=2, seed=5, sentence="a b c d")
    )


@pytest.mark.parametrize(
    "argv",
    [
        ["items", "--items", "qkv-shape,nope"],
        ["items", "--items", "qkv-shape,qkv-shape"],
        ["items", "--heads", "0"],
        ["items", "--lang", "fr"],
        ["items", "--temperature", "nan"],
        ["lesson"],
    ],
)
def test_a_bad_flag_is_refused_in_one_line(capsys, argv):
    code, out, err = in_process(capsys, argv)
    assert code == 2 and not out
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
