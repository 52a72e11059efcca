"""BERT-style encoders (BERT, RoBERTa, ELECTRA, MiniLM): post-norm blocks, learned absolute positions added to
the embeddings, bidirectional attention. Head h of layer l, with x the layer's input (L, d_model):
    Q = x W_qᵀ + b_q,  K = x W_kᵀ + b_k,  V = x W_vᵀ + b_v      (W_q = query.weight[h·d:(h+1)·d])
    weights = softmax(Q Kᵀ / √d, keys masked where the input is padding),  context = weights V
"""

from __future__ import annotations

import torch

from .base import HeadWeights, Model, ModelUnavailable, at, dims, rows

CAUSAL = False


def auto(transformers):
    return transformers.AutoModel


def blocks(hf) -> list:
    return list(hf.encoder.layer)


attention = at("attention.self")  # returns (context before the output projection, weights)
out_linear = at("attention.output.dense")
mlp = at(None)  # post-norm: what the MLP adds is not a term of a sum
final_norm = at(None)
unembed = at(None)
attn_norm = at(None)  # post-norm: attention reads the stream itself
mlp_output = at("output.dense")  # the MLP's last linear layer, before the block's second LayerNorm


def mlp_input(block, y: torch.Tensor) -> torch.Tensor:
    return block.intermediate(y)


def norms(block) -> tuple:
    """The two LayerNorms of a post-norm block: after attention (x + a) and after the MLP (y + m)."""
    return block.attention.output.LayerNorm, block.output.LayerNorm


embedding_norm = at("embeddings.LayerNorm")


def embedding_parts(hf, ids: torch.Tensor) -> dict[str, torch.Tensor]:
    """What the embeddings' LayerNorm receives, by source: (L, d_model) each; they add up to its input."""
    emb, L = hf.embeddings, ids.shape[-1]
    return {
        "token": emb.word_embeddings(ids),
        "position": emb.position_embeddings(torch.arange(L)),
        "segment": emb.token_type_embeddings(torch.zeros(L, dtype=torch.long)),
    }


def embedding_modules(hf) -> dict:
    emb = hf.embeddings
    return {"token": emb.word_embeddings, "position": emb.position_embeddings, "segment": emb.token_type_embeddings}


def check(hf, spec: str) -> None:
    encoder = getattr(hf, "encoder", None)
    if encoder is None or not hasattr(encoder, "layer"):
        raise ModelUnavailable("model_family", spec=spec, kind=type(hf).__name__)
    if not all(hasattr(attention(b), name) for b in encoder.layer for name in ("query", "key", "value")):
        raise ModelUnavailable("model_family", spec=spec, kind=type(hf).__name__)
    cfg = hf.config
    if getattr(cfg, "position_embedding_type", "absolute") != "absolute":
        raise ModelUnavailable("model_relative_positions", spec=spec, kind=cfg.position_embedding_type)


def shape(hf) -> dict:
    cfg = hf.config
    return dims(
        cfg.num_hidden_layers, cfg.num_attention_heads, cfg.hidden_size, cfg.max_position_embeddings, cfg.vocab_size
    )


def head_weights(m: Model, layer: int, head: int) -> HeadWeights:
    """Rows h·d..(h+1)·d of the query, key and value projections."""
    sa = attention(blocks(m.hf)[layer])
    sl = slice(head * m.d_head, (head + 1) * m.d_head)
    return HeadWeights.of(rows(sa.query, sl), rows(sa.key, sl), rows(sa.value, sl), kv_head=head)


def out_proj(m: Model, layer: int) -> tuple[torch.Tensor, torch.Tensor | None]:
    dense = out_linear(blocks(m.hf)[layer])
    return dense.weight.detach().float(), None if dense.bias is None else dense.bias.detach().float()


def values(attn, x: torch.Tensor, heads: int) -> torch.Tensor:
    """(B, H, L, d) the values of every head, from the attention's input x (B, L, d_model)."""
    B, L, _ = x.shape
    return attn.value(x).view(B, L, heads, -1).transpose(1, 2)


MODEL_TYPES: tuple[str, ...] = ()  # the fallback: a model_type no other family claims (``check`` decides on load)
ATTN_NORM = None  # post-norm: attention reads the stream itself


def projection_code(m: Model, layer: int, head: int, shapes: dict) -> str:
    """Rows h·d..(h+1)·d of the query projection, as code (``shapes``: W_q, x and Q, for the comments)."""
    d = m.d_head
    lo, hi = head * d, (head + 1) * d
    return (
        f"sa = model.encoder.layer[{layer}].attention.self\n"
        f"rows = slice({lo}, {hi})   # head {head} of {m.heads}\n"
        f"W_q, b_q = sa.query.weight[rows], sa.query.bias[rows]   # {shapes['W_q']}, ({d},)\n"
        f"x = hidden_states[{layer}][0]   # {shapes['x']}\nQ = x @ W_q.T + b_q   # {shapes['Q']}"
    )
