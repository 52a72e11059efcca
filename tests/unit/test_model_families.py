"""Every model family of ``attn_core.models`` against transformers' own eager forward.

Small randomly initialised models are built here from a config (GPT-2; Llama-style with grouped-query attention
and rotary positions; BERT) and saved with a byte-level BPE tokenizer trained here on a few lines (nothing
downloads). The oracle is transformers itself, loaded independently from the same directory: its attention
probabilities, hidden states and logits; its own modules for the projections and the rotary angles.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys

import pytest
import torch
from cli_run import in_process
from tolerance import assert_close

from attn_core import AttentionConfigError
from attn_core import models as M
from attn_core.cli import main
from attn_core.interpret import ablate, hooks, patch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CORPUS = [
    "the cat sat on the mat and the dog sat on the log",
    "attention lets every token look at the tokens before it",
    "生命短暂，先吃甜点。猫坐在垫子上。",
]
TEXT = "the cat sat on the mat, 生命短暂 and the dog"
FAMILIES = ("gpt2", "llama", "bert")


def _tokenizer(family: str):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    specials = ["<eos>", "[PAD]", "[CLS]", "[SEP]", "<s>"]
    t = Tokenizer(models.BPE())
    t.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    t.decoder = decoders.ByteLevel()
    alphabet = pre_tokenizers.ByteLevel.alphabet()
    t.train_from_iterator(
        CORPUS * 4, trainers.BpeTrainer(vocab_size=330, initial_alphabet=alphabet, special_tokens=specials)
    )
    kw = {"eos_token": "<eos>", "pad_token": "[PAD]"}
    if family == "bert":  # [CLS] text [SEP], as a BERT tokenizer encodes
        cls, sep = t.token_to_id("[CLS]"), t.token_to_id("[SEP]")
        t.post_processor = processors.TemplateProcessing(
            single="[CLS] $A [SEP]", special_tokens=[("[CLS]", cls), ("[SEP]", sep)]
        )
        kw |= {"cls_token": "[CLS]", "sep_token": "[SEP]"}
    if family == "llama":  # a beginning-of-sequence token, as Llama tokenizers add
        t.post_processor = processors.TemplateProcessing(
            single="<s> $A", special_tokens=[("<s>", t.token_to_id("<s>"))]
        )
        kw["bos_token"] = "<s>"
    tok = PreTrainedTokenizerFast(tokenizer_object=t, **kw)
    tok.model_max_length = 10**9  # the model's positions are the limit
    return tok


def _build(family: str, folder) -> str:
    from transformers import BertConfig, BertModel, GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM

    tok = _tokenizer(family)
    torch.manual_seed({"gpt2": 1, "llama": 2, "bert": 3}[family])
    V = len(tok)
    if family == "gpt2":
        model = GPT2LMHeadModel(GPT2Config(vocab_size=V, n_embd=32, n_layer=3, n_head=4, n_positions=40))
    elif family == "llama":
        cfg = LlamaConfig(
            vocab_size=V,
            hidden_size=48,
            intermediate_size=64,
            num_hidden_layers=2,
            num_attention_heads=6,
            num_key_value_heads=2,  # grouped-query attention: 3 query heads per key/value head
            max_position_embeddings=40,
            rope_theta=5000.0,
            attention_bias=True,
            tie_word_embeddings=False,
        )
        model = LlamaForCausalLM(cfg)
    else:
        model = BertModel(
            BertConfig(
                vocab_size=V,
                hidden_size=32,
                num_hidden_layers=2,
                num_attention_heads=4,
                intermediate_size=48,
                max_position_embeddings=40,
            )
        )
    path = os.path.join(str(folder), f"tiny-{family}")
    model.save_pretrained(path)
    tok.save_pretrained(path)
    return path


@pytest.fixture(scope="module")
def dirs(tmp_path_factory):
    root = tmp_path_factory.mktemp("families")
    return {f: _build(f, root) for f in FAMILIES}


@functools.cache
def _oracle(path: str, family: str):
    import transformers

    auto = transformers.AutoModel if family == "bert" else transformers.AutoModelForCausalLM
    return auto.from_pretrained(path, attn_implementation="eager").eval()


def _hf_run(path: str, family: str, ids):
    with torch.no_grad():
        return _oracle(path, family)(
            input_ids=torch.tensor([list(ids)]), output_attentions=True, output_hidden_states=True
        )


@pytest.mark.parametrize("family", FAMILIES)
def test_forward_matches_transformers_eager(dirs, family):
    m = M.load(dirs[family])
    assert m.family == family and m.causal == (family != "bert")
    enc = M.encode(m, TEXT)
    run = M.forward(m, enc)
    out = _hf_run(dirs[family], family, enc.ids)
    assert run.attentions.shape == (m.layers, m.heads, enc.n_real, enc.n_real)
    for layer in range(m.layers):
        assert_close(run.attentions[layer], out.attentions[layer][0], msg=f"attention of layer {layer}")
        assert_close(run.resid[layer], out.hidden_states[layer][0], msg=f"residual stream into block {layer}")
    if family == "bert":
        assert_close(run.resid[-1], out.last_hidden_state[0], msg="last hidden state")
        assert run.logits is None and run.attn_out is None
        return
    assert_close(run.logits, out.logits[0], msg="logits")
    # transformers' last hidden state is after the final norm; resid[-1] is before it
    assert_close(M.final_norm(m)(run.resid[-1]), out.hidden_states[-1][0], msg="final norm")
    W_U, b_U = M.unembed(m)
    assert b_U is None and W_U.shape == (m.vocab, m.d_model)
    assert_close(M.final_norm(m)(run.resid[-1]) @ W_U.T, out.logits[0], msg="unembedding")
    if family == "llama":  # causal: no weight on a later key, in the model's own attention
        assert float(run.attentions.triu(1).abs().max()) == 0.0


@pytest.mark.parametrize("family", ("gpt2", "llama"))
def test_the_residual_stream_decomposes_exactly_and_heads_write_through_W_O(dirs, family):
    m = M.load(dirs[family])
    run = M.forward(m, M.encode(m, TEXT))
    for layer in range(m.layers):
        assert torch.equal(run.resid[layer + 1], (run.resid[layer] + run.attn_out[layer]) + run.mlp_out[layer])
        W_O, b_O = M.out_proj(m, layer)
        assert W_O.shape == (m.d_model, m.heads * m.d_head)
        writes = M.head_writes(m, run, layer)  # (H, L, d_model)
        assert_close(writes.sum(0) + (0 if b_O is None else b_O), run.attn_out[layer], msg=f"head writes {layer}")


@pytest.mark.parametrize("family", FAMILIES)
def test_every_head_recomputed_through_steps_attend(dirs, family):
    m = M.load(dirs[family])
    enc = M.encode(m, TEXT, pad_to=30)  # an encoder's padding is masked; a decoder is never padded
    run = M.forward(m, enc)
    out = _hf_run(dirs[family], family, enc.ids[: enc.n_real])
    n = enc.n_real
    for layer in range(m.layers):
        for head in range(m.heads):
            ht = M.take_apart(run, M.head_weights(m, layer, head), layer, head)
            assert_close(ht.attn[0][:n, :n], out.attentions[layer][0, head], msg=f"head {layer}:{head}")
            assert_close(ht.context[0], run.context[layer][:, head], msg=f"context {layer}:{head}")
            if m.causal:
                assert bool(ht.mask.equal(torch.ones(n, n, dtype=torch.bool).tril()))
    assert float(M.recompute_all(m, run).max()) <= 1e-5


def test_a_llama_head_has_its_rotary_angles_and_its_shared_key_value_head(dirs):
    from transformers.models.llama.modeling_llama import apply_rotary_pos_emb

    m = M.load(dirs["llama"])
    assert (m.heads, m.kv_heads, m.d_head) == (6, 2, 8)
    run = M.forward(m, M.encode(m, TEXT))
    layer, L = 1, run.attn_in.shape[1]
    attn = m.hf.model.layers[layer].self_attn
    x = run.attn_in[layer][None]  # (1, L, d_model)
    q = attn.q_proj(x).view(1, L, 6, 8).transpose(1, 2)
    k = attn.k_proj(x).view(1, L, 2, 8).transpose(1, 2)
    cos, sin = m.hf.model.rotary_emb(x, torch.arange(L)[None])
    q, k = apply_rotary_pos_emb(q, k, cos, sin)  # transformers' own rotation
    for head in range(6):
        ht = M.take_apart(run, M.head_weights(m, layer, head), layer, head)
        assert ht.weights.kv_head == head // 3
        assert_close(ht.Q[0], q[0, head], msg=f"rotated Q of head {head}")
        assert_close(ht.K[0], k[0, head // 3], msg=f"rotated K of head {head}")
    w = M.head_weights(m, layer, 4)
    angles = w.angles(L)
    assert angles.shape == (L, 4)
    assert_close(angles[3], 3 * (1.0 / 5000.0 ** (torch.arange(0, 8, 2).float() / 8)), msg="angles")
    assert torch.equal(M.head_weights(m, 0, 3).W_k, M.head_weights(m, 0, 5).W_k)  # heads 3..5 share one


def test_a_gpt2_head_comes_from_the_fused_c_attn(dirs):
    m = M.load(dirs["gpt2"])
    run = M.forward(m, M.encode(m, TEXT))
    layer, head, d = 2, 3, m.d_head
    qkv = m.hf.transformer.h[layer].attn.c_attn(run.attn_in[layer])  # (L, 3 d_model), the model's own Conv1D
    ht = M.take_apart(run, M.head_weights(m, layer, head), layer, head)
    for i, got in enumerate((ht.Q[0], ht.K[0], ht.V[0])):
        assert_close(got, qkv[:, i * m.d_model + head * d : i * m.d_model + (head + 1) * d], msg="QKV"[i])


@pytest.mark.parametrize("family", FAMILIES)
def test_ablating_nothing_reproduces_the_model_and_patching_from_the_same_prompt_changes_nothing(dirs, family):
    m = M.load(dirs[family])
    texts = [TEXT, "the dog sat on the log"]
    batch, encs = hooks.batch_of(m, texts)
    none = torch.zeros(len(texts), m.layers, m.heads, dtype=torch.int8)
    base = hooks.run(m, batch, attentions=True)
    same = hooks.run(m, batch, hooks.Plan(none, batch.keep), attentions=True)
    assert torch.equal(same.embedding, base.embedding) and torch.equal(same.attentions, base.attentions)
    out = _hf_run(dirs[family], family, encs[0].ids)
    if m.causal:  # the measured vector is the one that predicts the next token, exactly as the model does
        assert_close(hooks.next_logits(m, base.embedding)[0], out.logits[0, -1], msg="next-token logits")
    zero = hooks.run(m, batch, hooks.Plan(none.clone().fill_(hooks.ZERO), batch.keep))
    assert float((zero.embedding - base.embedding).abs().max()) > 1e-3  # the hooks do act
    pm = patch.patch_map(m, TEXT, TEXT)
    assert pm["identical"] and torch.equal(pm["embeddings"], pm["corrupted_embedding"].expand_as(pm["embeddings"]))
    assert float(pm["restored"].abs().max()) == 0.0
    if m.causal:
        nt = ablate.next_token(m, TEXT)
        assert nt["logprob"] == nt["logprob_original"]
        assert nt["top_token"] == int(out.logits[0, -1].argmax())
        assert nt["logprob_original"] == pytest.approx(
            float(torch.log_softmax(out.logits[0, -1].double(), -1).max()), abs=1e-5
        )


@pytest.mark.parametrize("family", ("gpt2", "llama"))
def test_the_next_token_ablation_map_matches_one_ablation_at_a_time(dirs, family):
    m = M.load(dirs[family])
    pair = (" cat", " dog")
    imp = ablate.next_token_importance(m, TEXT, pair=pair)
    assert imp["logprob_drop"].shape == (m.layers, m.heads)
    for layer, head in ((0, 1), (m.layers - 1, m.heads - 1)):
        one = ablate.next_token(m, TEXT, heads=((layer, head),), pair=pair)
        assert imp["top_token"] == one["top_token"]
        assert imp["logprob_drop"][layer, head] == pytest.approx(one["logprob_original"] - one["logprob"], abs=1e-4)
        assert imp["logit_diff"][layer, head] == pytest.approx(one["logit_diff"], abs=1e-4)
    with pytest.raises(AttentionConfigError) as err:
        ablate.next_token(m, TEXT, pair=("catapult dog", " dog"))
    assert err.value.code == "next_token_one"


@pytest.mark.parametrize("family", ("gpt2", "llama"))
def test_chinese_shows_as_characters_never_as_byte_pieces(dirs, family):
    m = M.load(dirs[family])
    text = "生命短暂，先吃甜点。猫"
    enc = M.encode(m, text)
    assert all("\ufffd" not in p for p in enc.pieces)
    specials = set(m.tokenizer.all_special_ids)
    shown = "".join(enc.pieces[g] for i, g in enumerate(enc.group) if i == g and enc.ids[i] not in specials)
    assert shown == text and m.tokenizer.decode(enc.ids, skip_special_tokens=True) == text
    assert any(g != i for i, g in enumerate(enc.group)) or len(enc.ids) >= len(text.encode()) // 3


def test_models_json_lists_the_operators_directories(dirs, tmp_path):
    outside = str(tmp_path / "no-such-dir")
    env = os.environ | {M.MODELS_ENV: f"{os.path.dirname(dirs['gpt2'])};mine={dirs['llama']};{outside}"}
    env["PYTHONPATH"] = ROOT
    out = subprocess.run(
        [sys.executable, "-m", "attn_core", "models", "--json"], capture_output=True, text=True, env=env, check=True
    )
    got = {o["name"]: o for o in json.loads(out.stdout)}
    assert got[M.BUNDLED]["family"] == "bert" and got[M.BUNDLED]["causal"] is False
    assert got["tiny-gpt2"] == {
        "name": "tiny-gpt2",
        "family": "gpt2",
        "path": dirs["gpt2"],
        "layers": 3,
        "heads": 4,
        "d_head": 8,
        "kv_heads": 4,
        "causal": True,
    }
    assert (got["mine"]["family"], got["mine"]["kv_heads"], got["mine"]["path"]) == ("llama", 2, dirs["llama"])
    assert got["tiny-llama"]["path"] == dirs["llama"] and got["tiny-bert"]["family"] == "bert"
    assert {M.BUNDLED, "tiny-gpt2", "tiny-llama", "tiny-bert", "mine", "no-such-dir"} <= set(got)
    assert got["no-such-dir"]["available"] is False and got["no-such-dir"]["family"] is None  # offered, says so


@pytest.mark.parametrize("family", ("gpt2", "llama"))
def test_pretrained_cli_takes_an_offered_name_for_every_family(dirs, family, monkeypatch, capsys):
    """In this process (``main``; the operator's directories reach a real interpreter in the test above)."""
    monkeypatch.setenv(M.MODELS_ENV, os.path.dirname(dirs[family]))
    args = ["pretrained", TEXT, "--model", f"tiny-{family}", "--layer", "1", "--head", "3", "--json"]
    assert main(args) == 0
    data = json.loads(capsys.readouterr().out)
    hf = _hf_run(dirs[family], family, data["token_ids"])
    assert data["family"] == family and data["causal"] is True
    assert_close(torch.tensor(data["weights"]), hf.attentions[1][0, 3], msg="CLI weights")
    assert data["max_abs_diff"] <= 1e-5
    assert ("rotary_angles" in data) == (family == "llama")


def test_bad_input_gets_one_clear_error(dirs, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(M.ModelUnavailable) as err:
        M.load("no-such-model")
    assert err.value.code == "unknown_model" and M.BUNDLED in err.value.fix
    with pytest.raises(M.ModelUnavailable) as err:
        M.load(str(tmp_path))  # a directory, but no model in it
    assert err.value.code == "model_load_failed"
    from transformers import OPTConfig, OPTForCausalLM

    opt = str(tmp_path / "opt")
    OPTForCausalLM(
        OPTConfig(
            vocab_size=64,
            hidden_size=16,
            num_hidden_layers=1,
            num_attention_heads=2,
            ffn_dim=32,
            word_embed_proj_dim=16,
        )
    ).save_pretrained(opt)
    _tokenizer("gpt2").save_pretrained(opt)
    with pytest.raises(M.ModelUnavailable) as err:
        M.load(opt)
    assert err.value.code == "model_family" and "GPT-2" in err.value.fix and "Llama" in err.value.fix
    m = M.load(dirs["llama"])
    with pytest.raises(AttentionConfigError):
        M.encode(m, "   \n ")
    long = M.encode(m, "the cat sat " * 40)
    assert long.n_real == m.max_positions == 40 and long.cut == long.n_total - 40 > 0 and long.truncated
    M.forward(m, long)  # the cut prompt still runs
    for layer, head in ((2, 0), (0, 6), (-1, 0)):
        with pytest.raises(AttentionConfigError):
            M.head_weights(m, layer, head)


def test_interpret_and_heads_cli_on_decoders(dirs, monkeypatch, capsys):
    monkeypatch.setenv(M.MODELS_ENV, os.path.dirname(dirs["llama"]))

    def cli(*args: str) -> dict:
        """In this process (``main``), as the interpreter runs it."""
        code, out, err = in_process(capsys, [*args, "--json"])
        assert code == 0, err
        return json.loads(out)

    data = cli("interpret", TEXT, "--model", "tiny-llama", "--ablate", "0:1", "--pair", " cat| dog")
    nt = data["next_token"]
    hf = _hf_run(dirs["llama"], "llama", M.encode(M.load(dirs["llama"]), TEXT).ids)
    logp = torch.log_softmax(hf.logits[0, -1].double(), -1)
    assert nt["top_token"] == int(logp.argmax()) and nt["logprob_original"] == pytest.approx(
        float(logp.max()), abs=1e-5
    )
    assert nt["logprob_drop"][0][1] == pytest.approx(nt["logprob_original"] - nt["logprob"], abs=1e-4)
    assert nt["logprob"] != nt["logprob_original"]
    from attn_core.interpret import decoder

    heads = cli("heads", "--model", "tiny-gpt2")
    m = M.load(dirs["gpt2"])
    assert len(heads["heads"]) == m.layers * m.heads
    for h in heads["heads"]:
        assert all(0.0 <= h[k] <= 1.0 for k in ("induction", "previous_token", "duplicate_token", "first_token"))
    ids, T = decoder.repeated_tokens(m)  # the held-out repeated random tokens, scored by the model itself here
    with torch.no_grad():
        A = _oracle(dirs["gpt2"], "gpt2")(input_ids=ids, output_attentions=True).attentions
    q = torch.arange(T + 1, 2 * T + 1)
    for h in heads["heads"][::3]:
        induction = A[h["layer"]][:, h["head"], q, q - T + 1].mean()
        assert h["induction"] == pytest.approx(float(induction), abs=1e-5)
