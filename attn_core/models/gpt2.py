"""GPT-2: pre-norm blocks, learned absolute positions added to the embeddings, causal attention, and the query,
key and value projections fused in one ``Conv1D`` (``c_attn``: y = x W + b, W of shape (d_model, 3·d_model), the
query's columns first, then the key's, then the value's; head h owns columns h·d..(h+1)·d of each third).
Block l: a = attn(ln_1(x)); x = x + a; m = mlp(ln_2(x)); x = x + m. The logits: ln_f(x) W_Uᵀ (W_U tied to wte).
"""

from __future__ import annotations

import torch

from .base import HeadWeights, Model, ModelUnavailable, at, dims, lm_head

CAUSAL = True
MODEL_TYPES = ("gpt2",)


def auto(transformers):
    return transformers.AutoModelForCausalLM


def blocks(hf) -> list:
    return list(hf.transformer.h)


attention = at("attn")  # sees ln_1(x); returns (c_proj(context), weights)
out_linear = at("attn.c_proj")
mlp = at("mlp")
final_norm = at("transformer.ln_f")
attn_norm = at("ln_1")  # what attention reads: ln_1(x)
mlp_output = at("mlp")  # its output is what the MLP adds to the stream


def embedding_parts(hf, ids: torch.Tensor) -> dict[str, torch.Tensor]:
    """The stream entering block 0 by where it comes from: (L, d_model) each; they add up to it."""
    L = ids.shape[-1]
    return {"token": hf.transformer.wte(ids), "position": hf.transformer.wpe(torch.arange(L))}


def embedding_modules(hf) -> dict:
    return {"token": hf.transformer.wte, "position": hf.transformer.wpe}


unembed = lm_head  # both families end in ``lm_head``: (W_U, its bias or None)


def check(hf, spec: str) -> None:
    if not hasattr(hf, "transformer") or not hasattr(hf, "lm_head"):
        raise ModelUnavailable("model_family", spec=spec, kind=type(hf).__name__)
    if any(hasattr(b, "crossattention") for b in blocks(hf)):
        raise ModelUnavailable("model_family", spec=spec, kind=f"{type(hf).__name__} with cross-attention")


def shape(hf) -> dict:
    cfg = hf.config
    return dims(cfg.n_layer, cfg.n_head, cfg.n_embd, cfg.n_positions, cfg.vocab_size)


def head_weights(m: Model, layer: int, head: int) -> HeadWeights:
    """Head ``head``'s columns of the fused ``c_attn``, transposed to the (out, in) layout of ``steps``."""
    attn = attention(blocks(m.hf)[layer])
    W, b = attn.c_attn.weight.detach().float(), attn.c_attn.bias.detach().float()  # (d_model, 3 d_model), (3 d_model)
    d, dm = m.d_head, m.d_model

    def part(i: int) -> tuple[torch.Tensor, torch.Tensor]:
        cols = slice(i * dm + head * d, i * dm + (head + 1) * d)
        return W[:, cols].T.clone().unsqueeze(0), b[cols].clone().unsqueeze(0)  # (1, d, d_model), (1, d)

    cfg = m.hf.config
    return HeadWeights.of(
        part(0),
        part(1),
        part(2),
        kv_head=head,
        score="scaled_dot" if cfg.scale_attn_weights else "dot",
        temperature=float(layer + 1) if cfg.scale_attn_by_inverse_layer_idx else 1.0,
    )


def out_proj(m: Model, layer: int) -> tuple[torch.Tensor, torch.Tensor | None]:
    """(W_O (d_model, H·d), b_O): ``Conv1D`` computes ctx W + b, so W_O = Wᵀ."""
    proj = out_linear(blocks(m.hf)[layer])
    return proj.weight.detach().float().T.contiguous(), proj.bias.detach().float()


def values(attn, x: torch.Tensor, heads: int) -> torch.Tensor:
    B, L, dm = x.shape
    v = attn.c_attn(x).split(dm, dim=2)[2]
    return v.view(B, L, heads, -1).transpose(1, 2)


def base(hf):
    """The model without its LM head (its last hidden state is after ln_f)."""
    return hf.transformer
