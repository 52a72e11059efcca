"""The decoder that ships with the app (attn_core/models/bundled/fortune-gpt), checked against its own record.

It loads with transformers' own ``AutoModelForCausalLM`` from its directory; its held-out perplexity is
recomputed on the same held-out fortunes the training script set aside (Debian's ``fortunes`` and
``fortunes-zh``: scripts/test.sh installs them; missing, an error); its head scores are found again on
random tokens drawn from seeds the record did not use (its induction head did not form: the record says so, and
so does this test); Chinese text round-trips through its tokenizer.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os

import pytest
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODEL = os.path.join(ROOT, "attn_core", "models", "bundled", "fortune-gpt")
RECORD = os.path.join(ROOT, "benchmarks", "results", "decoder_train.json")


def _script():
    spec = importlib.util.spec_from_file_location("train_decoder", os.path.join(ROOT, "scripts", "train_decoder.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def shipped():
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model = AutoModelForCausalLM.from_pretrained(MODEL, attn_implementation="eager").eval()
    tok = AutoTokenizer.from_pretrained(MODEL)
    with open(RECORD, encoding="utf-8") as f:
        record = json.load(f)
    return model, tok, record


def test_it_is_a_gpt2_that_auto_classes_load(shipped):
    model, tok, record = shipped
    assert model.config.model_type == "gpt2"
    assert type(model).__name__ == "GPT2LMHeadModel"
    assert sum(p.numel() for p in model.parameters()) == record["parameters"]
    assert len(tok) == model.config.vocab_size
    weights = sum(os.path.getsize(os.path.join(MODEL, f)) for f in os.listdir(MODEL))
    assert weights < 25 * 2**20, f"the shipped directory is {weights / 2**20:.1f} MiB (goal <= 25)"


def test_held_out_perplexity_is_what_the_record_says(shipped):
    model, tok, record = shipped
    script = _script()
    root = script.FORTUNES
    if not (root / "fortunes").exists() or not (root / "tang300").exists():
        pytest.fail(f"Debian's fortunes and fortunes-zh are missing under {root}: scripts/test.sh installs them")
    test_texts = [t for _, t in script.corpus() if script.held_out(t)]
    data = script.stream(tok, test_texts)
    nll, count = script.held_out_loss(model, data, record["config"]["length"])
    assert count == record["held_out_tokens"]
    assert nll == pytest.approx(record["held_out"]["model_nats"], rel=1e-4)
    # and it learned something: better than both baselines on the same tokens
    assert math.exp(nll) < record["held_out"]["bigram_perplexity"] < record["held_out"]["unigram_perplexity"]


@pytest.mark.parametrize("seed", [101, 202])
def test_the_head_scores_of_the_record_hold_on_fresh_random_tokens(shipped, seed):
    """The record's per-head scores (induction, previous-token, duplicate-token, first-token) are found again on
    random tokens from seeds it did not use, and its verdict on the induction head (none formed: best score
    below 0.3, as at initialisation) with them."""
    model, tok, record = shipped
    script = _script()
    fresh = script.head_scores(model, len(tok), seed=seed)
    for name, recorded in record["scores"].items():
        got, want = torch.tensor(fresh[name]), torch.tensor(recorded)
        assert got.shape == (model.config.n_layer, model.config.n_head)
        assert torch.allclose(got, want, atol=0.03), f"{name}: {got} against the record's {want}"
    formed = float(torch.tensor(fresh["induction"]).max()) > 0.3
    assert formed == record["induction_formed"]


def test_chinese_round_trips_and_every_character_is_whole(shipped):
    _, tok, _ = shipped
    text = "床前明月光，疑是地上霜。人生得意须尽欢"
    ids = tok(text)["input_ids"]
    assert tok.decode(ids) == text
    assert "\ufffd" not in tok.decode(ids)
    common = sum(1 for i in ids if "\ufffd" not in tok.decode([i]))
    assert common >= len(ids) // 2, "most of these common characters should be whole tokens"
