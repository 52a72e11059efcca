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
