"""Llama-style decoders (Llama, SmolLM, Qwen2, Mistral): pre-norm blocks with RMSNorm, rotary positions applied
to Q and K inside attention (the two halves of each head paired: x·cos + rotate_half(x)·sin), grouped-query
attention (H query heads share KV key/value heads: head h reads key/value head h // (H / KV)), causal.
Block l: a = o_proj(attn(input_layernorm(x))); x = x + a; m = mlp(post_attention_layernorm(x)); x = x + m.
The logits: norm(x) W_Uᵀ.
"""

from __future__ import annotations

import torch

from .base import HeadWeights, Model, ModelUnavailable, at, dims, lm_head, rows

CAUSAL = True
MODEL_TYPES = ("llama", "mistral", "qwen2")


def auto(transformers):
    return transformers.AutoModelForCausalLM


def blocks(hf) -> list:
    return list(hf.model.layers)


attention = at("self_attn")
out_linear = at("self_attn.o_proj")
mlp = at("mlp")
final_norm = at("model.norm")
attn_norm = at("input_layernorm")  # RMSNorm: what attention reads
mlp_output = at("mlp")


def embedding_parts(hf, ids: torch.Tensor) -> dict[str, torch.Tensor]:
    """The stream entering block 0: the token embeddings only (positions rotate Q and K inside attention)."""
    return {"token": hf.model.embed_tokens(ids)}


def embedding_modules(hf) -> dict:
    return {"token": hf.model.embed_tokens}


unembed = lm_head  # both families end in ``lm_head``: (W_U, its bias or None)


def check(hf, spec: str) -> None:
    inner = getattr(hf, "model", None)
    if inner is None or not hasattr(inner, "layers") or not hasattr(inner, "rotary_emb"):
        raise ModelUnavailable("model_family", spec=spec, kind=type(hf).__name__)
    for b in inner.layers:
        a = attention(b)
        if not all(hasattr(a, n) for n in ("q_proj", "k_proj", "v_proj", "o_proj")) or hasattr(a, "q_norm"):
            raise ModelUnavailable("model_family", spec=spec, kind=type(hf).__name__)
    if "dynamic" in str(getattr(inner.rotary_emb, "rope_type", "")):
        raise ModelUnavailable("model_family", spec=spec, kind=f"{type(hf).__name__} with dynamic rotary scaling")


def shape(hf) -> dict:
    cfg = hf.config
    limit = min(cfg.max_position_embeddings, window(cfg) or cfg.max_position_embeddings)
    kv, d = cfg.num_key_value_heads, attention(blocks(hf)[0]).head_dim
    return dims(
        cfg.num_hidden_layers, cfg.num_attention_heads, cfg.hidden_size, limit, cfg.vocab_size, kv_heads=kv, d_head=d
    )


def window(cfg) -> int | None:
    """A sliding window of keys (Mistral; Qwen2 with use_sliding_window), if any: prompts are cut to it, so the
    causal mask is the whole mask."""
    w = getattr(cfg, "sliding_window", None)
    uses = cfg.model_type == "mistral" or bool(getattr(cfg, "use_sliding_window", False))
    return int(w) if uses and w else None


def head_weights(m: Model, layer: int, head: int) -> HeadWeights:
    """Query head ``head``'s rows of q_proj, and the rows of k_proj and v_proj of the key/value head it shares."""
    attn = attention(blocks(m.hf)[layer])
    kv = head // (m.heads // m.kv_heads)
    d = m.d_head

    def head_rows(lin, i: int) -> tuple[torch.Tensor, torch.Tensor | None]:
        return rows(lin, slice(i * d, (i + 1) * d))

    rot = m.hf.model.rotary_emb
    return HeadWeights.of(
        head_rows(attn.q_proj, head),
        head_rows(attn.k_proj, kv),
        head_rows(attn.v_proj, kv),
        kv_head=kv,
        temperature=float(attn.scaling * d**0.5) ** -1,
        inv_freq=rot.inv_freq.detach().float().clone(),
        rope_scaling=float(rot.attention_scaling),
    )


def out_proj(m: Model, layer: int) -> tuple[torch.Tensor, torch.Tensor | None]:
    proj = out_linear(blocks(m.hf)[layer])
    return proj.weight.detach().float(), None if proj.bias is None else proj.bias.detach().float()


def values(attn, x: torch.Tensor, heads: int) -> torch.Tensor:
    B, L, _ = x.shape
    v = attn.v_proj(x).view(B, L, -1, attn.head_dim).transpose(1, 2)  # (B, KV, L, d)
    return v.repeat_interleave(heads // v.shape[1], dim=1)


def base(hf):
    """The model without its LM head (its last hidden state is after the final norm)."""
    return hf.model


def rotary(hf, hidden: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(cos, sin) for positions 0..L-1, as the model computes them for every layer."""
    positions = torch.arange(hidden.shape[1], device=hidden.device)[None]
    return hf.model.rotary_emb(hidden, positions)


ATTN_NORM = "RMSNorm (input_layernorm)"


def fresh(vocab: int, *, d_model: int, layers: int, heads: int, d_ff: int | None, bos: int, eos: int):
    """An untrained Llama of this size (transformers' own class, eager attention so its weights can be read; tied
    embeddings, RoPE), as the training script builds one (``scripts/train_decoder.py``)."""
    from transformers import LlamaConfig, LlamaForCausalLM

    cfg = LlamaConfig(
        vocab_size=vocab,
        hidden_size=d_model,
        intermediate_size=d_ff or 11 * d_model // 4,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=heads,
        max_position_embeddings=256,
        rope_theta=10000.0,
        tie_word_embeddings=True,
        attention_dropout=0.0,
        bos_token_id=bos,
        eos_token_id=eos,
        attn_implementation="eager",
    )
    return LlamaForCausalLM(cfg)


def projection_code(m: Model, layer: int, head: int, shapes: dict) -> str:
    """Query head ``head``'s rows of q_proj and its shared key/value head's rows of k_proj, as code."""
    d = m.d_head
    lo, hi = head * d, (head + 1) * d
    group = m.heads // m.kv_heads
    kv = head // group
    return (
        f"attn = model.model.layers[{layer}].self_attn   # Llama-style: rotary positions, grouped-query\n"
        f"W_q = attn.q_proj.weight[{lo}:{hi}]   # head {head} of {m.heads}: {shapes['W_q']}\n"
        f"W_k = attn.k_proj.weight[{kv * d}:{(kv + 1) * d}]   # key/value head {kv} of {m.kv_heads}, "
        f"shared by {group} query heads\n"
        f"x = model.model.layers[{layer}].input_layernorm(resid[{layer}])   # RMSNorm: {shapes['x']}\n"
        f"Q = rotate(x @ W_q.T, position)   # {shapes['Q']}: each pair of dims turned by its angle"
    )


NOTEBOOK_FORWARD_TEXT = "nb_nt_forward_llama"
NOTEBOOK_FORWARD = (
    "def rms_norm(x, w, eps):\n"
    "    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w\n\n\n"
    "def rotate_half(x):\n"
    "    half = x.shape[-1] // 2\n"
    "    return torch.cat([-x[..., half:], x[..., :half]], -1)\n\n\n"
    "def linear(x, name):\n"
    "    return x @ W[name + '.weight'].T + (W[name + '.bias'] if name + '.bias' in W else 0)\n\n\n"
    "H, KV = cfg.num_attention_heads, cfg.num_key_value_heads\n"
    "d = getattr(cfg, 'head_dim', None) or cfg.hidden_size // H\n"
    "theta = getattr(cfg, 'rope_theta', None) or (getattr(cfg, 'rope_parameters', None) or {})['rope_theta']\n"
    "eps = cfg.rms_norm_eps\n"
    "inv_freq = 1.0 / theta ** (torch.arange(0, d, 2, dtype=torch.float64) / d)\n"
    "angles = torch.outer(torch.arange(L, dtype=torch.float64), inv_freq)  # rotary: each pair turns by its angle\n"
    "cos, sin = torch.cat([angles, angles], -1).cos().float(), torch.cat([angles, angles], -1).sin().float()\n"
    "x = W['model.embed_tokens.weight'][ids]  # no position embedding: the rotation carries the positions\n"
    "causal = torch.ones(L, L, dtype=torch.bool).tril()\n"
    "for i in range(cfg.num_hidden_layers):\n"
    "    p = f'model.layers.{i}.'\n"
    "    h = rms_norm(x, W[p + 'input_layernorm.weight'], eps)\n"
    "    q = linear(h, p + 'self_attn.q_proj').view(L, H, d).transpose(0, 1)\n"
    "    k = linear(h, p + 'self_attn.k_proj').view(L, KV, d).transpose(0, 1)\n"
    "    v = linear(h, p + 'self_attn.v_proj').view(L, KV, d).transpose(0, 1)\n"
    "    q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin\n"
    "    k, v = k.repeat_interleave(H // KV, 0), v.repeat_interleave(H // KV, 0)  # grouped-query: shared heads\n"
    "    scores = (q @ k.transpose(-1, -2) / d**0.5).masked_fill(~causal, float('-inf'))\n"
    "    x = x + linear((scores.softmax(-1) @ v).transpose(0, 1).reshape(L, H * d), p + 'self_attn.o_proj')\n"
    "    h = rms_norm(x, W[p + 'post_attention_layernorm.weight'], eps)\n"
    "    gate = torch.nn.functional.silu(linear(h, p + 'mlp.gate_proj'))\n"
    "    x = x + linear(gate * linear(h, p + 'mlp.up_proj'), p + 'mlp.down_proj')\n"
    "x = rms_norm(x, W['model.norm.weight'], eps)\n"
)
