"""Real model and Inside the model on a decoder (a tiny random GPT-2 offered through ATTN_EXPLORER_MODELS), under
AppTest: the pages draw; the recomputed head and the model's attention agree with transformers' own eager
forward, loaded independently; the causal upper triangle is drawn blank; ablating nothing changes nothing and
zero-ablating a head matches a hook written here on transformers' own modules; the model's name round-trips
through the link; bad input gets one message in the UI's language."""

from __future__ import annotations

import base64
import json
import math
import time

import numpy as np
import pytest
import torch
from tiny_decoders import NAME
from tolerance import assert_close

from explorer.model import real

MODEL_PAGE, INSIDE = "pages/7_model.py", "pages/9_inside.py"
PROMPT = "the cat sat on the mat"


@pytest.fixture(scope="module")
def tiny(tiny_gpt2):
    return tiny_gpt2


def oracle(path: str):
    import transformers

    model = transformers.AutoModelForCausalLM.from_pretrained(path, attn_implementation="eager").eval()
    return model, transformers.AutoTokenizer.from_pretrained(path)


def charts(at) -> dict[str, dict]:
    out = {}
    for c in at.get("plotly_chart"):
        spec = json.loads(c.proto.spec)
        title = spec.get("layout", {}).get("title", {})
        out[title.get("text", "") if isinstance(title, dict) else str(title)] = spec
    return out


def chart(at, part: str) -> dict:
    found = [spec for title, spec in charts(at).items() if part in title]
    assert found, f"no chart titled '{part}' in {list(charts(at))}"
    return found[0]


def z_of(spec: dict) -> torch.Tensor:
    """A heatmap's cells, a blank (masked) cell as NaN (nested lists, or a typed array as plotly sends one)."""
    z = spec["data"][0]["z"]
    if isinstance(z, dict):
        shape = [int(n) for n in str(z["shape"]).split(",")]
        return torch.tensor(np.frombuffer(base64.b64decode(z["bdata"]), dtype=z["dtype"]).reshape(shape).copy())
    return torch.tensor([[math.nan if v is None else v for v in row] for row in z])


def metric(at, part: str) -> str:
    return next(m.value for m in at.metric if part in m.label)


def test_real_model_page_on_a_decoder_matches_transformers(app, tiny):
    at = app(MODEL_PAGE, query={"rm_model": NAME, "sentence": PROMPT, "rm_layer": "1", "rm_head": "2"})
    assert not at.error and at.session_state["model"] == NAME  # ?rm_model=, the key before, still opens it
    assert float(metric(at, "max |attn_core")) < 1e-5  # the head recomputed through steps.attend
    model, tok = oracle(tiny)
    ids = tok(PROMPT)["input_ids"]
    with torch.no_grad():
        own = model(input_ids=torch.tensor([ids]), output_attentions=True).attentions[1][0, 2]  # (L, L)
    L = len(ids)
    shown = z_of(chart(at, "attention probabilities"))  # the model's weights, as the page draws them
    future = torch.ones(L, L, dtype=torch.bool).triu(1)
    assert shown.shape == (L, L) and shown[future].isnan().all()  # the causal upper triangle: blank (masked)
    assert_close(shown[~future], own[~future])
    grid = z_of(chart(at, ""))  # the first chart: every layer x head, one trace
    assert grid.isnan().sum() >= 2 * 4 * L * (L - 1) // 2  # each panel's upper triangle blank
    assert any("causal mask" in c.value for c in at.caption)
    assert "Random (untrained)" in charts(at)


def test_chinese_on_a_decoder_never_shows_a_replacement_character(app, tiny):
    at = app(MODEL_PAGE, query={"rm_model": NAME, "sentence": "猫坐在垫子上，生命短暂"})
    assert not at.error
    pieces = list(at.dataframe[0].value["token"])
    assert len(pieces) > 6 and not any("\ufffd" in p for p in pieces), pieces
    assert "猫" in "".join(pieces)


def test_the_model_round_trips_through_the_link(app, tiny):
    at = app(MODEL_PAGE, query={"sentence": PROMPT})
    assert at.session_state["model"] == real.pt.BUNDLED and "model" not in at.query_params
    at.selectbox(key="model").set_value(NAME).run()
    assert not at.exception and at.query_params.get("model") == NAME
    link = {k: at.query_params[k] for k in at.query_params}
    again = app(MODEL_PAGE, query=link)
    assert again.session_state["model"] == NAME and float(metric(again, "max |attn_core")) < 1e-5
    old = app(INSIDE, query={"rm_model": NAME, "sentence": PROMPT})  # ?rm_model=, the key before: the same choice
    assert old.session_state["model"] == NAME and "rm_model" not in old.query_params
    assert any("next token" in m.label for m in old.metric)


@pytest.mark.parametrize("lang,needle", [("en", "does not offer"), ("zh", "没有提供")])
def test_a_link_naming_a_model_not_offered_gets_one_message(app, tiny, lang, needle):
    for page in (MODEL_PAGE, INSIDE):
        at = app(page, query={"rm_model": "no-such-model", "sentence": PROMPT, "lang": lang})
        said = [w.value for w in at.warning if needle in w.value]
        assert len(said) == 1 and "no-such-model" not in said[0], [w.value for w in at.warning]
        assert NAME in said[0]  # the models offered are named
        assert at.session_state["model"] == real.pt.BUNDLED and "model" not in at.query_params
        assert not at.error and at.metric  # the page goes on with the bundled encoder


def test_layer_and_head_out_of_range_are_dropped_and_named(app, tiny):
    at = app(MODEL_PAGE, query={"rm_model": NAME, "sentence": PROMPT, "rm_layer": "7", "rm_head": "9"})
    assert not at.error and float(metric(at, "max |attn_core")) < 1e-5
    assert at.session_state["rm_layer"] == 0 and at.session_state["rm_head"] == 0  # past 2 x 4: the defaults
    assert "rm_layer" not in at.query_params and "rm_head" not in at.query_params
    assert any("rm\\_layer" in w.value or "rm_layer" in w.value for w in at.warning), [w.value for w in at.warning]


def test_a_prompt_over_the_context_is_cut_and_said(app, tiny):
    at = app(MODEL_PAGE, query={"rm_model": NAME, "sentence": "the cat sat on the mat " * 20})
    assert not at.error and any("64 positions" in w.value for w in at.warning), [w.value for w in at.warning]
    assert float(metric(at, "max |attn_core")) < 1e-5


def zero_head_logprob(path: str, prompt: str, layer: int, head: int) -> tuple[float, float]:
    """log p(top token) before and after zeroing one head, written here on transformers' own modules: the head's
    slice of c_proj's input set to 0 (the oracle for the page's ablation)."""
    model, tok = oracle(path)
    x = torch.tensor([tok(prompt)["input_ids"]])
    d = model.config.n_embd // model.config.n_head
    with torch.no_grad():
        before = torch.log_softmax(model(input_ids=x).logits[0, -1].double(), -1)
        top = int(before.argmax())

        def zero(module, args):
            ctx = args[0].clone()
            ctx[..., head * d : (head + 1) * d] = 0
            return (ctx,)

        handle = model.transformer.h[layer].attn.c_proj.register_forward_pre_hook(zero)
        after = torch.log_softmax(model(input_ids=x).logits[0, -1].double(), -1)
        handle.remove()
    return float(before[top]), float(after[top])


def test_inside_on_a_decoder_ablating_nothing_changes_nothing_and_one_head_matches(app, tiny):
    at = app(INSIDE, query={"rm_model": NAME, "sentence": PROMPT})
    assert not at.error
    before, after = zero_head_logprob(tiny, PROMPT, 1, 2)
    shown = float(metric(at, "log p(top token)"))
    assert shown == pytest.approx(before, abs=1e-4)
    assert next(m for m in at.metric if "log p" in m.label).delta == "+0.0000"  # nothing ablated: no change
    at.multiselect(key="in_heads").set_value(["1:2"]).run()
    assert not at.exception
    assert float(metric(at, "log p(top token)")) == pytest.approx(after, abs=1e-4)
    assert abs(after - before) > 1e-3  # the check can tell an ablation from none


def until_done(at, timeout: float = 900.0):
    """Rerun the page until its background jobs have ended (the workers run at the lowest priority)."""
    from explorer.jobs.heavy import HEAVY

    deadline = time.monotonic() + timeout
    while any(j.active for j in HEAVY.jobs.values()) and time.monotonic() < deadline:
        time.sleep(0.5)
    at.run()
    assert not any(j.active for j in HEAVY.jobs.values()), "still computing"
    return at


def test_inside_maps_and_roles_on_a_decoder_are_the_engines(app, tiny):
    from attn_core import models as M
    from attn_core.interpret import ablate, decoder

    pre = M.load(tiny)
    at = app(INSIDE, query={"rm_model": NAME, "sentence": PROMPT})
    at.text_input(key="in_second").set_value("the dog sat on the mat").run()
    at.toggle(key="in_roles_go").set_value(True).run()
    until_done(at)
    assert not at.exception and not at.error, [e.value for e in at.error]
    drop = z_of(chart(at, "when this head alone is ablated"))
    assert_close(drop, ablate.next_token_importance(pre, PROMPT)["logprob_drop"])
    before, after = zero_head_logprob(tiny, PROMPT, 1, 2)
    assert drop[1, 2].item() == pytest.approx(before - after, abs=1e-4)  # one cell against the oracle hook
    restored = z_of(chart(at, "restored by patching"))
    assert_close(restored, decoder.patch_next_token(pre, PROMPT, "the dog sat on the mat")["restored"])
    table = at.dataframe[-1].value
    assert list(table["role"]) == ["previous-token", "duplicate-token", "induction", "first token (sink)"]
    assert all(0.0 <= s <= 1.0 for s in table["score (0–1)"])
    urls = [b.proto.url for b in at.get("link_button")]
    assert len(urls) == 4 and all(u.startswith(f"/model?model={NAME}&rm_layer=") for u in urls)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_named_tokens_that_are_not_single_tokens_get_a_message(app, tiny, lang):
    at = app(INSIDE, query={"rm_model": NAME, "sentence": PROMPT, "lang": lang})
    at.text_input(key="in_tok_a").set_value(" the").run()
    assert any(("both" in w.value) or ("同时" in w.value) for w in at.warning), [w.value for w in at.warning]
    at.text_input(key="in_tok_b").set_value("zzqqxxw").run()
    shown = " ".join(w.value for w in at.warning)
    assert ("not one" in shown) if lang == "en" else ("不是一个" in shown), shown
    assert not at.exception and not at.error and at.metric  # the rest of the page is drawn
    at.text_input(key="in_tok_b").set_value(" on").run()
    assert not at.warning, [w.value for w in at.warning]  # named: once seen under a loaded machine's suite
    assert any("logit(A)" in m.label for m in at.metric)


def test_inside_quotes_the_shipped_decoders_record_on_induction(app, tiny):
    """The record says an induction head formed: the page says so with its numbers; another decoder gets no such
    sentence (the record is the shipped model's)."""
    record = json.loads((real.pt.BUNDLED_DIR.parents[2] / "benchmarks/results/decoder_train.json").read_text())
    best = max(v for row in record["scores"]["induction"] for v in row)
    real.wait_for("fortune-gpt", timeout=300)
    at = app(INSIDE, query={"rm_model": "fortune-gpt", "sentence": PROMPT})
    said = [i.value for i in at.info if "formed an induction head" in i.value]
    assert len(said) == 1 and f"{best:.3f}" in said[0] and record["induction_formed"]
    other = app(INSIDE, query={"rm_model": NAME, "sentence": PROMPT})
    assert not [i.value for i in other.info if "induction head" in i.value]
