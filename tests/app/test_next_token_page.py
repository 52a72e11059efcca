"""The Next token page (pages/11_next_token.py) on a tiny random GPT-2 offered through ATTN_EXPLORER_MODELS: it
draws in both languages; the same ?seed= samples the same token in two sessions, the token the engine draws;
greedy shows the argmax of the model's own logits; a link's bad values give their messages; Step and Back move
the generation; the direct-effects map and the other components sum to the model's logit for the chosen token."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
import torch
from background import until_done

from attn_core import nexttoken as nt
from explorer.model import real

PAGE = "pages/11_next_token.py"
TINY = Path(__file__).resolve().parents[1] / "unit" / "nexttoken_tiny.py"
PROMPT = "the cat sat on the mat"


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory):
    spec = importlib.util.spec_from_file_location("nexttoken_tiny", TINY)
    tiny = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tiny)
    folder = tmp_path_factory.mktemp("nt_page")
    tiny.build("gpt2", folder, positions=48)
    return folder


@pytest.fixture
def page(app, tiny_dir, monkeypatch):
    """The page with the tiny decoder offered (``tiny/gpt2``) and picked in the link."""
    monkeypatch.setenv(real.MODELS_ENV, f"tiny={tiny_dir}")
    real.wait_for("tiny/gpt2", timeout=300)  # the server's loader, as a page asks it (the page never waits)

    def make(**query) -> object:
        at = app(PAGE, query={"model": "tiny/gpt2", "prompt": PROMPT} | {k: str(v) for k, v in query.items()})
        return until_done(at)  # the generation and its branches come from a background worker

    return make


def texts(at) -> str:
    """Everything the page wrote, as one string."""
    kinds = ("title", "subheader", "markdown", "caption", "warning", "info", "success", "error")
    parts = [e.value for kind in kinds for e in at.get(kind)]
    return "\n".join(str(p) for p in parts)


def why(at) -> str:
    """The sentence that says why the chosen token is or is not the most probable one."""
    found = [e.value for e in list(at.info) + list(at.warning) if "u = " in e.value or "Greedy" in e.value]
    found += [e.value for e in list(at.info) + list(at.warning) if "贪心" in e.value or "u = " in e.value]
    assert found, texts(at)
    return found[0]


def engine(seed: int, **kw):
    m = nt.decoder("tiny/gpt2")
    return m, nt.predict(m, PROMPT, nt.sampling(vocab=m.vocab, seed=seed, **kw))


def shown(m, token: int) -> str:
    """The token as the page's sentences quote it: its label (``nt.label``), escaped for Markdown as Streamlit's
    element keeps it."""
    from explorer.nexttoken.views import shown as quote

    return quote(nt.label(m.tokenizer, token))


def matrix(z) -> list[list[float]]:
    """A heatmap's z from its JSON: nested lists, or Plotly's typed array (base64 with a dtype and shape)."""
    if isinstance(z, dict):
        import base64

        import numpy as np

        shape = [int(n) for n in str(z["shape"]).split(",")]
        return np.frombuffer(base64.b64decode(z["bdata"]), dtype=z["dtype"]).reshape(shape).tolist()
    return z


def charts(at) -> list[dict]:
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_page_draws_on_a_decoder_in_both_languages(page, lang):
    at = page(lang=lang, seed=3)
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    m, p = engine(3)
    assert shown(m, p.distribution.chosen) in why(at)
    ok = ("equals recomputing", "The last row equals") if lang == "en" else ("一致", "最后一行")
    assert all(any(o in s.value for s in at.success) for o in ok), [s.value for s in at.success]
    assert ("What a head writes" if lang == "en" else "一个头写入了什么") in texts(at)
    assert len(charts(at)) >= 4  # the bars, the query row, the cache, the lens, the heads' map


def test_the_same_seed_gives_the_same_token_in_two_sessions(page):
    first, second = page(seed=5, temp=2.0), page(seed=5, temp=2.0)
    assert why(first) == why(second)
    m, p = engine(5, temperature=2.0)
    assert shown(m, p.distribution.chosen) in why(first)


def test_greedy_shows_the_argmax_of_the_models_logits(page):
    at = page(greedy="true", temp=3.0)
    m = nt.decoder("tiny/gpt2")
    ids = nt.encode(m, PROMPT).ids
    with torch.inference_mode():
        logits = m.hf(input_ids=torch.tensor([list(ids)])).logits[0, -1]
    sentence = why(at)
    assert "Greedy is on" in sentence and shown(m, int(logits.argmax())) in sentence


@pytest.mark.parametrize(
    ("query", "says"),
    [
        ({"temp": "0"}, "A temperature of 0 cannot be used"),
        ({"temp": "-1"}, "A temperature of -1 cannot be used"),
        ({"top_p": "0"}, "top-p = 0 is not a share"),
        ({"top_p": "1.5"}, "top-p = 1.5 is not a share"),
        ({"top_k": "99999"}, "top_k = 99999 is outside the range 0..320"),
        ({"seed": "abc"}, "seed must be a whole number"),
        ({"max_new": "999"}, "max_new = 999 is outside the range 1..47"),
        ({"model": "nope"}, "This server does not offer the model the link names"),  # the model pages' one message
        ({"prompt": "   "}, "The prompt is empty"),
    ],
)
def test_a_links_bad_value_says_why(page, query, says):
    at = page(**query)
    assert not at.exception, [e.value for e in at.exception]
    shown_text = texts(at).replace("\\", "")
    assert says.lower() in shown_text.lower(), shown_text[:3000]


def test_a_bad_value_says_why_in_chinese(page):
    at = page(temp="0", lang="zh")
    assert "温度 0 无法使用" in texts(at).replace("\\", "")


def test_a_prompt_over_the_context_says_what_was_cut(page):
    long = " ".join(f"w{i}" for i in range(60)) + " the end"
    at = page(prompt=long)
    m = nt.decoder("tiny/gpt2")
    cut = nt.encode(m, long).cut
    assert cut > 0
    warning = " ".join(w.value for w in at.warning).replace("\\", "")
    assert f"The first {cut} tokens were cut: " in warning and "w0 w1" in warning


def step_of(at) -> int:
    return int(at.number_input(key="gen_step").value)


def test_step_and_back_move_the_generation(page):
    at = page(seed=2, max_new=5)
    assert step_of(at) == 1
    until_done(at.button(key="nt_step").click().run())
    until_done(at.button(key="nt_step").click().run())
    assert step_of(at) == 3 and "3" in str(at.query_params["gen_step"])
    m = nt.decoder("tiny/gpt2")
    gen = nt.generate(m, PROMPT, nt.sampling(vocab=m.vocab, seed=2), 5)
    shown_text = texts(at)
    layers, two, kv, length, d = gen.steps[2].cache_shape
    assert f"{layers} × {two} × {kv} × {length} × {d}" in shown_text  # the cache after the third step's forward
    until_done(at.button(key="nt_back").click().run())
    assert step_of(at) == 2 and not at.exception
    assert f"× {gen.steps[1].cache_shape[3]} ×" in texts(at)


def test_the_direct_effects_map_sums_to_the_models_logit(page):
    at = page(seed=4, nt_layer=1, nt_head=2)
    m, p = engine(4)
    token = p.distribution.chosen
    ids = list(p.prompt.ids)
    with torch.inference_mode():  # the model's own logit for the chosen token: the reference
        logit = float(m.hf(input_ids=torch.tensor([ids])).logits[0, -1, token])
    heads = next(c for c in charts(at) if c["data"][0]["type"] == "heatmap" and len(c["data"][0]["z"]) == m.layers)
    z = matrix(heads["data"][0]["z"])
    table = next(df.value for df in at.dataframe if "Component" in df.value.columns)
    others = table["Direct effect"].tolist()
    rest = others[0] + sum(others[2:])  # embeddings, then attention biases, MLPs, the norm's and unembedding's bias
    assert abs(sum(map(sum, z)) - others[1]) <= 1e-4 * max(1.0, abs(others[1]))  # the map is the heads' row
    assert abs(sum(map(sum, z)) + rest - logit) <= 1e-4 * max(1.0, abs(logit))
    assert f"**{logit:.5f}**" in texts(at).replace("\\", "") or f"{logit:.5f}" in texts(at)


def test_the_take_home_buttons_build_this_prediction_s_notebook(page, monkeypatch):
    import nbformat

    from explorer.classroom import takehome

    seen: dict[str, tuple] = {}
    real_button = takehome._button

    def spy(label, data, file_name, mime, key, container):
        seen[key] = (file_name, data)
        real_button(label, data, file_name, mime, key, container)

    monkeypatch.setattr(takehome, "_button", spy)
    takehome.FILES.clear()
    page(seed=6, top_k=20)
    name, data = seen["nt_dl_notebook"]
    assert name == "next_token.ipynb" and seen["nt_dl_script"][0] == "next_token.py"
    nb = nbformat.reads(data().decode(), 4)
    nbformat.validate(nb)
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    assert f"PROMPT = {PROMPT!r}" in code and "SEED, GREEDY = 6, False" in code and ", 20, " in code
    _, p = engine(6, top_k=20)
    assert f"'chosen': {p.distribution.chosen}," in code  # the app's own chosen token, for the last cell to compare
