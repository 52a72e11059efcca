"""The decoder that ships with the app (attn_core/models/bundled/fortune-gpt), checked against its own record and
against the bar its data card sets.

It loads with transformers' own ``AutoModelForCausalLM`` from its directory; its held-out perplexity is
recomputed on the same held-out fortunes the training script set aside (Debian's ``fortunes`` and
``fortunes-zh``: scripts/test.sh installs them; missing, an error) and is no worse than the GPT-2 it replaced;
its induction head is found again on random tokens of the whole vocabulary drawn from seeds the training never
used (the batches draw from the run's seed 0, the logged probe from ``PROBE_SEED``), ablating it makes the copy as
hard as the first time, and a model whose heads are shuffled fails the same bar; Chinese text round-trips through
its tokenizer.
"""

from __future__ import annotations

import copy
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


GPT2_PERPLEXITY = 82.9  # the GPT-2 shipped before this model, on the same held-out tokens (its record: git history)
HELD_OUT_SEEDS = (101, 202)


def test_it_is_a_llama_that_auto_classes_load(shipped):
    model, tok, record = shipped
    assert model.config.model_type == "llama" == record["config"]["family"]
    assert type(model).__name__ == "LlamaForCausalLM" == record["architecture"]
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
    # a language model: better than both baselines on the same tokens, and than the GPT-2 it replaced
    assert math.exp(nll) < record["held_out"]["bigram_perplexity"] < record["held_out"]["unigram_perplexity"]
    assert math.exp(nll) <= GPT2_PERPLEXITY


@pytest.mark.parametrize("seed", HELD_OUT_SEEDS)
def test_the_induction_head_holds_on_fresh_random_tokens(shipped, seed):
    """The data card's bar on sequences the training never saw: a first token, 24 random tokens of the whole
    vocabulary, the same 24 again. Best induction head >= 0.4 and >= 5x the same architecture's at initialisation,
    the second copy's loss <= 0.3x the first's, a previous-token head >= 0.5."""
    model, tok, record = shipped
    script = _script()
    found = script.copy_probe(model, len(tok), seed=seed)
    assert script.formed(found), found
    assert found["previous_token_max"] >= 0.5, found
    torch.manual_seed(seed)
    fresh = type(model)(model.config).eval()
    init = script.copy_probe(fresh, len(tok), seed=seed)
    assert found["induction_max"] >= 5 * init["induction_max"], (found, init)
    assert record["induction_formed"] and record["formed_at_step"] is not None


def test_a_model_with_its_heads_shuffled_fails_the_bar(shipped):
    """The check above can fail: the same weights with each layer's query heads permuted (every query now meets
    another head's keys) form no induction head."""
    model, tok, _ = shipped
    script = _script()
    broken = copy.deepcopy(model)
    d = model.config.hidden_size // model.config.num_attention_heads
    order = torch.roll(torch.arange(model.config.num_attention_heads), 1)
    with torch.no_grad():
        for layer in broken.model.layers:
            q = layer.self_attn.q_proj.weight  # (H·d, d_model): head h's rows h·d .. (h + 1)·d
            q.copy_(q.view(len(order), d, -1)[order].reshape(q.shape))
    found = script.copy_probe(broken, len(tok), seed=HELD_OUT_SEEDS[0])
    assert not script.formed(found), found


def test_the_record_scores_hold_on_fresh_random_tokens(shipped):
    """The record's per-head scores (induction, previous-token, duplicate-token, first-token on 50 random tokens
    repeated) are found again on random tokens from a seed it did not use."""
    model, tok, record = shipped
    fresh = _script().head_scores(model, len(tok), seed=HELD_OUT_SEEDS[1])
    for name, recorded in record["scores"].items():
        got, want = torch.tensor(fresh[name]), torch.tensor(recorded)
        assert got.shape == (model.config.num_hidden_layers, model.config.num_attention_heads)
        assert torch.allclose(got, want, atol=0.05), f"{name}: {got} against the record's {want}"


def test_ablating_the_induction_head_makes_the_copy_hard_again():
    """On the app's own engine (attn_core.interpret.copying, checked against transformers in test_copying): zeroing
    the induction head raises the copy's loss by far more than zeroing a head of the last layer that does not look
    at the copy's source."""
    from attn_core import models
    from attn_core.interpret import copying as cp

    m = models.load("fortune-gpt")
    f = cp.copying(m, cp.repeated_prompt(m, "random", seed=HELD_OUT_SEEDS[0]))
    layer, head = f["head"]
    low = f["unrelated"]
    assert low[0] == m.layers - 1 > layer  # a head of the last layer, outside the circuit
    rise = f["ablated"][layer][head] - f["second_mean"]
    other = f["ablated"][low[0]][low[1]] - f["second_mean"]
    assert rise > 1.0 and rise > 10 * abs(other), (rise, other, f["first_mean"], f["second_mean"])


def test_chinese_round_trips_and_every_character_is_whole(shipped):
    _, tok, _ = shipped
    text = "床前明月光，疑是地上霜。人生得意须尽欢"
    ids = tok(text)["input_ids"]
    assert tok.decode(ids) == text
    assert "\ufffd" not in tok.decode(ids)
    common = sum(1 for i in ids if "\ufffd" not in tok.decode([i]))
    assert common >= len(ids) // 2, "most of these common characters should be whole tokens"


@pytest.mark.parametrize("family", ["llama", "gpt2"])
def test_the_training_script_builds_each_family_through_its_own_module(family):
    """``build`` asks the family's module for a fresh model (no family named in the script): the sizes asked for are
    the sizes the family's own reader finds, its model type is one the family claims, and it predicts every token."""
    from types import SimpleNamespace

    from attn_core.models.family import FAMILIES

    script = _script()
    assert family in script.arguments(["--out", "x", "--family", family]).family
    args = SimpleNamespace(d_model=48, layers=3, heads=4, d_ff=None)
    model = script.build(family, 97, args, SimpleNamespace(bos_token_id=1, eos_token_id=2)).eval()
    module = FAMILIES[family]
    assert model.config.model_type in module.MODEL_TYPES
    shape = module.shape(model)
    assert (shape["layers"], shape["heads"], shape["d_model"], shape["vocab"]) == (3, 4, 48, 97), shape
    with torch.no_grad():
        logits = model(torch.tensor([[1, 5, 9, 2]])).logits
    assert logits.shape == (1, 4, 97) and torch.isfinite(logits).all()
