"""The Explain page on a decoder under AppTest: a tiny random GPT-2 offered by the operator
(``ATTN_EXPLORER_MODELS``) and picked by the link (``?model=NAME``), its next token explained through the
background jobs, the numbers the page shows equal to the engine's, bad input answered in the UI's language."""

from __future__ import annotations

import math
import os
import re
import tempfile
import time

import pytest

from attn_core.explain import explain as X
from explorer.base.i18n import t
from explorer.base.safe import md

PAGE = "pages/10_explain.py"
NAME = "tiny-gpt2-32"  # not test_decoder_pages.py's name: the pages cache results by model name, per process
TEXT = "the cat sat on the mat"
CORPUS = ["the cat sat on the mat and the dog sat on the log", "猫坐在垫子上，狗坐在木头上。"]


def _tiny_gpt2(path) -> str:
    """A random 2-layer GPT-2 with a byte-level BPE trained here on two lines (nothing downloads)."""
    import torch
    from tokenizers import ByteLevelBPETokenizer
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(CORPUS * 8, vocab_size=300, min_frequency=1, show_progress=False, special_tokens=["<eos>"])
    tok = PreTrainedTokenizerFast(tokenizer_object=bpe._tokenizer, eos_token="<eos>")
    tok.model_max_length = 10**9
    torch.manual_seed(0)
    cfg = GPT2Config(vocab_size=len(tok), n_embd=32, n_layer=2, n_head=4, n_positions=32)
    cfg.bos_token_id = cfg.eos_token_id = tok.eos_token_id
    GPT2LMHeadModel(cfg).save_pretrained(str(path))
    tok.save_pretrained(str(path))
    return str(path)


@pytest.fixture(scope="module")
def tiny():
    """In a directory of its own, not pytest's tmp_path: pytest removes its older base directories when other
    sessions start, and the background worker loads the model from this directory later."""
    with tempfile.TemporaryDirectory(prefix="attn_explain_page_") as root:
        yield _tiny_gpt2(os.path.join(root, NAME))


@pytest.fixture
def offered(tiny, monkeypatch):
    """The tiny decoder offered by name, loaded as the page loads it."""
    from explorer.model import real

    monkeypatch.setenv("ATTN_EXPLORER_MODELS", f"{NAME}={tiny}")
    pre = real.wait_for(NAME, timeout=300)
    assert pre is not None and pre.causal
    return pre


def texts(at) -> str:
    parts = [m.value for m in at.markdown] + [c.value for c in at.caption] + [i.value for i in at.info]
    parts += [w.value for w in at.warning] + [f"{m.label} {m.value}" for m in at.metric]
    return "\n".join(str(p) for p in parts)


def until_explained(at, timeout: float = 900.0):
    """Rerun the page (as its poll does) until every part computed in the background has arrived."""
    pending = ("appears here when it is ready", "算好后显示在这里")
    deadline = time.monotonic() + timeout
    while (at.get("progress") or any(p in c.value for c in at.caption for p in pending)) and (
        time.monotonic() < deadline
    ):
        time.sleep(0.2)
        at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.get("progress"), "still computing"
    return at


def with_text(app, query: dict, text: str):
    at = app(PAGE, query)
    at.sidebar.text_area(key="sentence").set_value(text).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_page_draws_on_a_decoder_at_once(app, offered, lang):
    """What one forward pass gives is drawn at once, in the page's process: what is explained (the engine's
    numbers), the removals a decoder has, the tabs that need an encoder saying so."""
    at = with_text(app, {"lang": lang, "model": NAME}, TEXT)
    shown = texts(at)
    nt = X.explain(offered, TEXT, shapley=False, steps=8)["next_token"]
    assert t("ex_dec_intro", language=lang, model=md(NAME)) in shown
    assert f"{nt['logp']:.3f}" in shown and f"{math.exp(nt['logp']):.3f}" in shown  # what is explained, said
    removal = at.radio(key="ex_removal").options
    assert removal == [t("ex_rm_delete", language=lang), t("ex_rm_attention", language=lang)]  # no [MASK]
    infos = " ".join(i.value for i in at.info)
    assert t("ex_pair_decoder", language=lang, model=md(NAME)) in infos  # two sentences need an encoder
    assert t("ex_table_encoder", language=lang, model=md(NAME)) in infos
    assert ("direct share" if lang == "en" else "直接份额") not in shown  # no pooling in a decoder
    assert "\ufffd" not in shown


def test_the_encoder_is_still_the_default_with_its_own_choices(app, offered):
    at = app(PAGE)  # the decoder offered, but the link names no model: the bundled encoder, as before
    shown = texts(at)
    assert t("ex_intro") in shown and "is a decoder" not in shown
    assert at.radio(key="ex_removal").options == [t(k) for k in ("ex_rm_delete", "ex_rm_mask", "ex_rm_attention")]
    assert t("ex_pair_intro") in shown


def test_the_page_explains_a_decoders_next_token_through_the_background_jobs(app, offered):
    at = until_explained(with_text(app, {"model": NAME}, TEXT))
    shown = texts(at)
    expected = X.explain(offered, TEXT, shapley=False, layers=True)
    metric = next(m for m in at.metric if m.label == t("ex_ig_error", language="en"))
    assert metric.value == f"{100 * expected['ig_completeness_error']:.3f} %"  # the engine's number, via the job
    cells = [str(v) for df in at.dataframe for col in df.value.columns for v in df.value[col]]
    assert any("ρ" in c for c in cells)  # the agreement table, as for the encoder
    assert not re.search(r"\bnan\b", shown, re.IGNORECASE)


def test_bad_input_on_a_decoder_gets_a_message_and_the_page_stays(app, offered):
    at = with_text(app, {"model": NAME}, "cat " * 40)  # over the tiny model's 32 positions
    warned = " ".join(w.value for w in at.warning)
    assert "pieces" in warned and "32" in warned
    at.sidebar.text_area(key="sentence").set_value("   ").run()
    assert not at.exception
    at = app(PAGE, {"model": "no-such-model"})  # a link naming a model this server does not offer
    warned = " ".join(w.value for w in at.warning)
    assert "does not offer" in warned and "no-such-model" not in warned
    assert not at.exception
