"""Is attention an explanation? on decoders: the next-token log-probability f(x) = log p(y* | x) explained.

Small randomly initialised decoders are built here (GPT-2; Llama-style with grouped-query attention, rotary
positions and a beginning-of-sequence token its tokenizer adds) and loaded through ``attn_core.models``. The
oracle is transformers itself, loaded independently from the same directory (``AutoModelForCausalLM``, eager
attention): its logits for leave-one-out and integrated gradients' two ends, its attention probabilities for
rollout, its hidden states for a layer re-run with nothing zeroed.
"""

from __future__ import annotations

import json
import math
import os
import tempfile

import numpy as np
import pytest
import torch
from nexttoken_tiny import build, tokenizer
from tolerance import assert_close

from attn_core import AttentionConfigError
from attn_core import models as M
from attn_core.explain import decoder as D
from attn_core.explain import explain as X
from attn_core.explain import internals, methods, references, staged
from attn_core.explain.pair import pair
from attn_core.explain.sentence import make_item

PROMPT = "the cat sat on the mat and 猫坐在"
KINDS = ("gpt2", "llama")


def _llama_with_bos(folder) -> str:
    """A Llama-style decoder (grouped-query attention, rotary positions, biases) whose tokenizer adds <s>, as
    Llama's do: nexttoken_tiny's byte-level BPE with a beginning-of-sequence token."""
    from tokenizers import processors
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    inner = tokenizer()._tokenizer
    inner.add_special_tokens(["<s>"])
    inner.post_processor = processors.TemplateProcessing(
        single="<s> $A", special_tokens=[("<s>", inner.token_to_id("<s>"))]
    )
    tok = PreTrainedTokenizerFast(tokenizer_object=inner, eos_token="<eos>", bos_token="<s>")
    tok.model_max_length = 10**9  # the model's positions are the limit
    torch.manual_seed(3)
    cfg = LlamaConfig(
        vocab_size=len(tok),
        hidden_size=48,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=6,
        num_key_value_heads=2,  # 3 query heads per key/value head
        max_position_embeddings=48,
        rope_theta=5000.0,
        attention_bias=True,
        tie_word_embeddings=False,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
    )
    model = LlamaForCausalLM(cfg)
    with torch.no_grad():  # larger logits than the default init: a prediction worth explaining
        for p in model.parameters():
            if p.dim() == 2:
                p.mul_(4.0)
    path = str(folder)
    model.save_pretrained(path)
    tok.save_pretrained(path)
    return path


@pytest.fixture(scope="module")
def models():
    """In a directory of its own (pytest removes its older tmp_path bases when other sessions start)."""
    torch.set_num_threads(1)  # a shared 2-core machine: one thread is several times faster than two fighting
    with tempfile.TemporaryDirectory(prefix="attn_explain_decoders_") as root:
        paths = {"gpt2": build("gpt2", os.path.join(root, "gpt2"), seed=1)}
        paths["llama"] = _llama_with_bos(os.path.join(root, "llama"))
        yield {k: M.load(p) for k, p in paths.items()}


def _oracle(m):
    import transformers

    return transformers.AutoModelForCausalLM.from_pretrained(m.path, attn_implementation="eager").eval()


def _logp(hf, ids, token, mask=None) -> float:
    """log p(token) after ``ids`` by transformers' own forward (``mask``: its attention_mask, 0 = masked key)."""
    x = torch.tensor([ids])
    mask = torch.ones_like(x) if mask is None else torch.tensor([mask])
    with torch.no_grad():
        logits = hf(input_ids=x, attention_mask=mask, position_ids=torch.arange(len(ids))[None]).logits
    return float(logits[0, -1].double().log_softmax(-1)[token])


@pytest.mark.parametrize("kind", KINDS)
def test_the_tokenizer_adds_what_the_test_says(models, kind):
    item = make_item(models[kind], PROMPT)
    assert (item.words[0] is None) == (kind == "llama")  # <s>: never removed, like [CLS]
    assert len(item.inner) == item.n - (kind == "llama")
    assert "\ufffd" not in "".join(item.pieces)  # the Chinese characters show whole
    assert "猫" in "".join(item.pieces)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("removal", ["delete", "attention"])
def test_leave_one_out_is_the_drop_in_the_next_token_logprob(models, kind, removal):
    m = models[kind]
    item = make_item(m, PROMPT)
    passed = references.full(m, item)
    hf = _oracle(m)
    ids = list(item.ids)
    with torch.no_grad():
        token = int(hf(input_ids=torch.tensor([ids])).logits[0, -1].argmax())
    assert passed.target.token == token
    whole = _logp(hf, ids, token)
    assert_close(passed.target.logp, whole)
    expected = []
    for i in range(item.n):
        if removal == "delete" or i == item.n - 1:  # the last piece gone: read the prediction at the one before
            without = _logp(hf, ids[:i] + ids[i + 1 :], token)
        else:  # the piece stays in place, masked out of every attention row by the model's own attention mask
            without = _logp(hf, ids, token, mask=[int(j != i) for j in range(item.n)])
        expected.append(whole - without)
    got = references.loo(m, item, removal, passed)
    assert_close(got, expected)
    assert np.abs(expected).max() > 1e-3  # a removal that changed nothing would pass vacuously


def test_a_one_piece_prompt_without_bos_is_left_with_the_start_token(models):
    m = models["gpt2"]
    item = make_item(m, "cat")
    assert item.n == 1 and item.inner == [0]
    passed = references.full(m, item)
    hf = _oracle(m)
    token = passed.target.token
    start = m.tokenizer.bos_token_id  # GPT-2's <|endoftext|>-style start: here <eos>, set as bos in the config
    start = m.tokenizer.eos_token_id if start is None else start
    expected = _logp(hf, list(item.ids), token) - _logp(hf, [start], token)
    assert_close(references.loo(m, item, "delete", passed), [expected])


@pytest.mark.parametrize("kind", KINDS)
def test_integrated_gradients_are_complete_against_the_models_own_two_ends(models, kind):
    m = models[kind]
    item = make_item(m, PROMPT)
    passed = references.full(m, item)
    ig = references.integrated_gradients(m, item.ids, passed.target, references.IG_STEPS)
    hf = _oracle(m)
    specials = set(m.tokenizer.all_special_ids)
    base = [i if i in specials else D.baseline_token(m.tokenizer) for i in item.ids]
    delta = _logp(hf, list(item.ids), passed.target.token) - _logp(hf, base, passed.target.token)
    assert_close(ig["delta"], delta, rtol=1e-4)
    assert abs(delta) > 1e-2
    assert abs(float(ig["attr"].sum()) - delta) <= 1e-3 * abs(delta)
    if kind == "llama":
        assert ig["attr"][0] == 0.0  # <s> is in the baseline as it is: its path has no length


def _rollout_last_row(attentions: torch.Tensor) -> np.ndarray:
    """Rollout written out here: A_l = (W_l + I) / 2 with W_l the heads' mean, M = A_L ... A_1, M's last row."""
    W = attentions.double().mean(1).numpy()  # (layers, n, n)
    n = W.shape[-1]
    M_ = np.eye(n)
    for layer in range(len(W)):
        M_ = (0.5 * W[layer] + 0.5 * np.eye(n)) @ M_
    return M_[-1]


@pytest.mark.parametrize("kind", KINDS)
def test_rollout_is_causal_and_equals_one_written_from_the_models_attentions(models, kind):
    m = models[kind]
    item = make_item(m, PROMPT)
    result = X.explain(m, PROMPT, shapley=False, steps=16, layers=True)
    with torch.no_grad():
        out = _oracle(m)(input_ids=torch.tensor([list(item.ids)]), output_attentions=True)
    att = torch.stack(out.attentions)[:, 0]
    assert_close(result["methods"]["rollout"], _rollout_last_row(att))
    passed = references.full(m, item)
    rolled = methods.rollout_matrices(X.head_mean(passed))
    later = np.triu(np.ones(rolled.shape[-2:], dtype=bool), 1)
    assert np.all(rolled[:, later] == 0)  # no output draws on a later piece, at any depth
    k = item.n - 3  # a prefix's rollout is the whole prompt's row k - 1: the later pieces change nothing before them
    short = D.full(m, item.ids[:k])
    prefix = methods.rollout(X.head_mean(short), last=True)
    assert_close(prefix, rolled[-1, k - 1, :k])
    assert_close(result["methods"]["raw"], att.double().mean(1)[-1, -1])  # the last query's row, last layer


def _block_with_value_zeroed(hf, kind: str, layer: int, x: torch.Tensor, probs: torch.Tensor, j: int):
    """transformers' block ``layer`` written out with its own modules, piece j's value zeroed in every head:
    out = h + mlp(norm_2(h)), h = x + W_O (probs @ V); probs (H, n, n) the model's own (Q and K are unchanged)."""
    if kind == "gpt2":
        block = hf.transformer.h[layer]
        norm_1, norm_2, out_proj = block.ln_1, block.ln_2, block.attn.c_proj
        v = block.attn.c_attn(norm_1(x)).split(x.shape[-1], dim=-1)[2]
    else:
        block = hf.model.layers[layer]
        norm_1, norm_2, out_proj = block.input_layernorm, block.post_attention_layernorm, block.self_attn.o_proj
        v = block.self_attn.v_proj(norm_1(x))
    H, n = probs.shape[0], x.shape[0]
    v = v.view(n, -1, x.shape[-1] // H).transpose(0, 1)  # (key/value heads, n, d_head): d_head = d_model / H here
    v = v.repeat_interleave(H // v.shape[0], dim=0)  # grouped-query attention: each query head's shared values
    v[:, j] = 0
    h = x + out_proj((probs @ v).transpose(0, 1).reshape(n, -1))
    return h + block.mlp(norm_2(h))


@pytest.mark.parametrize("kind", KINDS)
def test_value_zeroing_nothing_changes_nothing_and_zeroing_a_piece_changes_only_later_outputs(models, kind):
    m = models[kind]
    item = make_item(m, PROMPT)
    passed = references.full(m, item)
    hf = _oracle(m)
    with torch.no_grad():
        run = hf(input_ids=torch.tensor([list(item.ids)]), output_hidden_states=True, output_attentions=True)
    states = run.hidden_states
    n = item.n
    keys = torch.ones(3, n, dtype=torch.bool)
    j = n // 2
    zero = torch.zeros(3, n, dtype=torch.bool)
    zero[2, j] = True
    for layer in range(m.layers):
        x = passed.hidden[layer][0].expand(3, n, m.d_model)
        out = D.attend(m, layer, x, keys, zero_value=zero)[0]
        nothing = D.attend(m, layer, x[:1], keys[:1])[0]
        assert_close(out[0], passed.hidden[layer + 1][0])  # nothing zeroed: the model's own next residual stream
        assert_close(out[1], out[0])
        assert_close(nothing[0], out[0])
        if layer + 1 < m.layers:  # transformers' last hidden state is after the final norm
            assert_close(out[0], states[layer + 1][0])
        assert_close(out[2, :j], out[0, :j])  # causal: a piece's value reaches no earlier output
        assert float((out[2, j:] - out[0, j:]).abs().max()) > 1e-4
        with torch.no_grad():
            zeroed = _block_with_value_zeroed(hf, kind, layer, x[0], run.attentions[layer][0], j)
        assert_close(out[2], zeroed)
    vz = internals.value_zeroing(m, passed)
    assert vz.shape == (m.layers, n) and np.isfinite(vz).all()
    assert_close(vz.sum(-1), np.ones(m.layers))  # rows normalised, rolled out: the last output's shares sum to 1


@pytest.mark.parametrize("kind", KINDS)
def test_the_explanation_has_the_encoders_table_and_curves_and_the_stages_give_it(models, kind):
    m = models[kind]
    result = X.explain(m, PROMPT, shapley=True, steps=16, layers=True)
    assert result["next_token"]["text"] and "\ufffd" not in result["next_token"]["text"]
    assert set(result["methods"]) == set(X.METHODS)
    assert set(result["correlation"]["rollout"]) == {"loo", "ig", "shapley"}
    assert "loo_direct" not in result["references"]  # no pooling: no direct share
    for curve in result["curves"].values():
        assert len(curve["deletion"]) == len(result["ks"]) and all(math.isfinite(v) for v in curve["insertion"])
    for rows in result["layers"].values():
        assert len(rows) == m.layers and all(math.isfinite(v) for row in rows for v in row)
    staged_result = staged.merged(m, PROMPT, steps=16)
    split = staged.merged_split(m, PROMPT, steps=16)
    whole = X.explain(m, PROMPT, shapley=False, steps=16, layers=True)
    for key in ("methods", "references", "layers", "curves", "correlation", "tokens", "next_token"):
        assert staged_result[key] == whole[key], key
        assert split[key] == whole[key], key


def test_bad_input_gets_a_message(models):
    m = models["gpt2"]
    for text, code in (("   ", "empty_sentence"), ("word " * 60, "explain_too_long")):
        with pytest.raises(AttentionConfigError) as err:
            X.explain(m, text)
        assert err.value.code == code
    with pytest.raises(AttentionConfigError) as err:
        X.explain(m, PROMPT, removal="mask")  # a decoder has no [MASK]
    assert err.value.code == "unknown_choice" and "mask" not in err.value.params["options"]
    with pytest.raises(AttentionConfigError) as err:
        pair(m, PROMPT, "the dog")
    assert err.value.code == "explain_pair_decoder"
    with pytest.raises(AttentionConfigError) as err:  # over the context: 48 positions, under the 128 explained
        make_item(m, "cat " * 50)
    assert err.value.params["limit"] == 48 and err.value.params["n"] > 48


def test_the_cli_explains_a_decoder_by_name_and_refuses_what_it_cannot(models, capsys, monkeypatch):
    from attn_core.cli import main

    m = models["llama"]
    monkeypatch.setenv(M.MODELS_ENV, f"tiny-llama={m.path}")  # offered by name, as the app offers it
    assert main(["explain", PROMPT, "--model", "tiny-llama", "--steps", "16", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["family"] == "llama" and out["causal"] is True
    expected = X.explain(m, PROMPT, steps=16)
    assert out["next_token"] == expected["next_token"] and out["tokens"] == expected["tokens"]
    assert_close(out["references"]["loo"], expected["references"]["loo"])
    assert set(out["correlation"]["rollout"]) == {"loo", "ig", "shapley"}
    for argv, said in (
        (["--removal", "mask"], "delete, attention"),
        (["--second", "the dog"], "is a decoder"),
        (["--model", "no-such-model"], "no-such-model"),
    ):
        model = [] if "--model" in argv else ["--model", "tiny-llama"]
        code = main(["explain", PROMPT, *model, *argv, "--json"])
        captured = capsys.readouterr()
        assert code != 0 and not captured.out and said in captured.err
        assert "Traceback" not in captured.err
