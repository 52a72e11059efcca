"""A model family is one module: a throwaway family written here, in this file alone (OLMo: a Llama-style layout
whose norms are LayerNorms without weights), is registered with ``family.register`` and a tiny random OLMo built
here loads through ``models.load``, its heads recomputed through ``steps.attend`` agree with transformers' own
attention, the Real model page shows the family's own code, and the Next token notebook runs the family's own
forward cell to transformers' logits. No other file is edited; the registry is restored afterwards.

The oracle is transformers itself, loaded independently from the same directory (``output_attentions``, logits).
"""

from __future__ import annotations

import os
import sys

import pytest
import torch
from nexttoken_tiny import tokenizer
from test_nexttoken_notebook import code, run_cells, settings
from tolerance import assert_close

from attn_core import models as M
from attn_core import nexttoken as nt
from attn_core.models import family, llama
from attn_core.models.base import ModelUnavailable
from attn_core.notebook.nexttoken_nb import nexttoken_notebook
from explorer.model import causal

NAME = "olmo-test"
TEXT = "the cat sat on the mat, 猫坐在垫子上"

# ---- the family: what a new family's module would hold (attn_core/models/<family>.py) -------------------------
# OLMo keeps Llama's module names (model.layers[i].self_attn.q_proj, ..., model.rotary_emb), so its accessors,
# head weights and shapes are Llama's; what differs is what it claims, checks, names and writes out.

CAUSAL = True
MODEL_TYPES = ("olmo",)
ATTN_NORM = "LayerNorm without weights (input_layernorm)"
NOTEBOOK_FORWARD_TEXT = "nb_nt_forward_llama"  # a real family adds its own key to en.toml and zh.toml
auto, blocks, base, rotary = llama.auto, llama.blocks, llama.base, llama.rotary
attention, out_linear, mlp, final_norm = llama.attention, llama.out_linear, llama.mlp, llama.final_norm
attn_norm, mlp_output, unembed = llama.attn_norm, llama.mlp_output, llama.unembed
embedding_parts, embedding_modules, shape = llama.embedding_parts, llama.embedding_modules, llama.shape
head_weights, out_proj, values = llama.head_weights, llama.out_proj, llama.values


def check(hf, spec: str) -> None:
    llama.check(hf, spec)
    if getattr(hf.config, "clip_qkv", None) is not None:  # clamped Q, K, V: not what head_weights recomputes
        raise ModelUnavailable("model_family", spec=spec, kind=f"{type(hf).__name__} with clip_qkv")


def projection_code(m, layer: int, head: int, shapes: dict) -> str:
    d = m.d_head
    kv = head // (m.heads // m.kv_heads)
    return (
        f"attn = model.model.layers[{layer}].self_attn   # OLMo: rotary positions, weightless LayerNorm\n"
        f"W_q = attn.q_proj.weight[{head * d}:{(head + 1) * d}]   # head {head} of {m.heads}: {shapes['W_q']}\n"
        f"W_k = attn.k_proj.weight[{kv * d}:{(kv + 1) * d}]   # key/value head {kv} of {m.kv_heads}\n"
        f"x = model.model.layers[{layer}].input_layernorm(resid[{layer}])   # {shapes['x']}\n"
        f"Q = rotate(x @ W_q.T, position)   # {shapes['Q']}"
    )


NOTEBOOK_FORWARD = (
    "def layer_norm(x):  # OLMo: no weight, no bias\n"
    "    return torch.nn.functional.layer_norm(x, x.shape[-1:], eps=1e-5)\n\n\n"
    "def rotate_half(x):\n"
    "    half = x.shape[-1] // 2\n"
    "    return torch.cat([-x[..., half:], x[..., :half]], -1)\n\n\n"
    "def linear(x, name):\n"
    "    return x @ W[name + '.weight'].T + (W[name + '.bias'] if name + '.bias' in W else 0)\n\n\n"
    "H, KV = cfg.num_attention_heads, cfg.num_key_value_heads\n"
    "d = getattr(cfg, 'head_dim', None) or cfg.hidden_size // H\n"
    "theta = getattr(cfg, 'rope_theta', None) or (getattr(cfg, 'rope_parameters', None) or {})['rope_theta']\n"
    "inv_freq = 1.0 / theta ** (torch.arange(0, d, 2, dtype=torch.float64) / d)\n"
    "angles = torch.outer(torch.arange(L, dtype=torch.float64), inv_freq)\n"
    "cos, sin = torch.cat([angles, angles], -1).cos().float(), torch.cat([angles, angles], -1).sin().float()\n"
    "x = W['model.embed_tokens.weight'][ids]\n"
    "causal = torch.ones(L, L, dtype=torch.bool).tril()\n"
    "for i in range(cfg.num_hidden_layers):\n"
    "    p = f'model.layers.{i}.'\n"
    "    h = layer_norm(x)\n"
    "    q = linear(h, p + 'self_attn.q_proj').view(L, H, d).transpose(0, 1)\n"
    "    k = linear(h, p + 'self_attn.k_proj').view(L, KV, d).transpose(0, 1)\n"
    "    v = linear(h, p + 'self_attn.v_proj').view(L, KV, d).transpose(0, 1)\n"
    "    q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin\n"
    "    k, v = k.repeat_interleave(H // KV, 0), v.repeat_interleave(H // KV, 0)\n"
    "    scores = (q @ k.transpose(-1, -2) / d**0.5).masked_fill(~causal, float('-inf'))\n"
    "    x = x + linear((scores.softmax(-1) @ v).transpose(0, 1).reshape(L, H * d), p + 'self_attn.o_proj')\n"
    "    h = layer_norm(x)\n"
    "    x = x + linear(torch.nn.functional.silu(linear(h, p + 'mlp.gate_proj')) * linear(h, p + 'mlp.up_proj'),\n"
    "                   p + 'mlp.down_proj')\n"
    "x = layer_norm(x)\n"
)

# ---- the tests -------------------------------------------------------------------------------------------------


def _build(folder) -> str:
    from transformers import OlmoConfig, OlmoForCausalLM

    tok = tokenizer()
    torch.manual_seed(7)
    cfg = OlmoConfig(
        vocab_size=len(tok),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,  # grouped-query: 2 query heads per key/value head
        max_position_embeddings=48,
        rope_theta=5000.0,
        tie_word_embeddings=False,
        pad_token_id=None,
        bos_token_id=tok.eos_token_id,
        eos_token_id=tok.eos_token_id,
    )
    model = OlmoForCausalLM(cfg)
    with torch.no_grad():  # larger logits than the default init: a real distribution to sample from
        for p in model.parameters():
            p.mul_(4.0)
    path = os.path.join(str(folder), "tiny-olmo")
    model.save_pretrained(path)
    tok.save_pretrained(path)
    return path


@pytest.fixture(scope="module")
def olmo(tmp_path_factory):
    path = _build(tmp_path_factory.mktemp("new_family"))
    assert M.family_of("olmo") == "bert"  # before: no family claims it (and loading it fails: see below)
    family.register(NAME, sys.modules[__name__])  # the one line a new family adds
    try:
        yield M.load(path)
    finally:
        family.unregister(NAME)


def _oracle(m):
    import transformers

    return transformers.AutoModelForCausalLM.from_pretrained(m.path, attn_implementation="eager").eval()


def test_without_the_family_the_model_is_refused(tmp_path):
    if NAME in family.FAMILIES:
        pytest.skip("registered by the module fixture")
    with pytest.raises(ModelUnavailable):
        M.load(_build(tmp_path))


def test_it_loads_through_models_load_under_its_family(olmo):
    assert M.family_of("olmo") == NAME and family.of(olmo) is sys.modules[__name__]
    assert (olmo.causal, olmo.layers, olmo.heads, olmo.kv_heads, olmo.d_head) == (True, 2, 4, 2, 8)
    d = M.describe("tiny-olmo", olmo.path)
    assert (d["family"], d["causal"], d["kv_heads"]) == (NAME, True, 2)


def test_its_heads_recomputed_through_steps_attend_match_transformers(olmo):
    enc = M.encode(olmo, TEXT)
    run = M.forward(olmo, enc)
    with torch.no_grad():
        out = _oracle(olmo)(input_ids=torch.tensor([list(enc.ids)]), output_attentions=True)
    assert_close(run.logits, out.logits[0], msg="logits")
    for layer in range(olmo.layers):
        assert_close(run.attentions[layer], out.attentions[layer][0], msg=f"attention of layer {layer}")
        for head in range(olmo.heads):
            ht = M.take_apart(run, M.head_weights(olmo, layer, head), layer, head)
            assert ht.weights.kv_head == head // 2
            assert_close(ht.attn[0], out.attentions[layer][0, head], msg=f"head {layer}:{head}")
            assert_close(ht.context[0], run.context[layer][:, head], msg=f"context {layer}:{head}")
    assert float(M.recompute_all(olmo, run).max()) <= 1e-5


def test_the_real_model_page_shows_the_familys_own_code(olmo):
    shapes = {"W_q": "(8, 32)", "x": "(5, 32)", "Q": "(5, 8)"}
    shown = causal.projection_code(olmo, 1, 3, shapes)
    assert shown == projection_code(olmo, 1, 3, shapes) and "weightless LayerNorm" in shown
    assert "key/value head 1 of 2" in shown


def test_the_next_token_notebook_runs_the_familys_forward_to_transformers_logits(olmo, tmp_path):
    p = nt.predict(olmo, TEXT, settings(olmo))
    cells = code(nexttoken_notebook(olmo, p, prompt=TEXT, lang="en"))
    assert any(NOTEBOOK_FORWARD in c for c in cells)
    got = run_cells({"olmo": cells}, tmp_path)["olmo"]
    with torch.no_grad():  # the reference: transformers' own forward, loaded again, not the notebook's
        want = _oracle(olmo)(input_ids=torch.tensor([list(p.prompt.ids)])).logits[0, -1].double()
    assert got["ids"] == list(p.prompt.ids) and got["chosen"] == p.distribution.chosen
    assert_close(torch.tensor(got["logits"]), want)
