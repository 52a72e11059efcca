"""The residual stream a head reads, split by where it comes from, exactly.

A source is a (L, d_model) tensor: the token embeddings, the position embeddings (BERT: the segment's too), each
earlier layer's heads (their outputs summed, without the output projection's bias), each earlier layer's MLP,
and ``bias``: every constant the stream picked up on the way (LayerNorms' β, the output projections' biases).
The sources add up to the stream (checked here against the model's own hidden states).

A norm is not linear, but it is once its divisor is fixed: LayerNorm(Σ s) = Σ γ ⊙ (s − mean s) / σ + β with σ
the whole stream's (RMSNorm: Σ γ ⊙ s / rms). So every source passes through every norm with the stream's own
divisor, and the split stays exact; what it leaves out is that removing a source would change σ (the causal
check in ``why.weight`` recomputes that through the model).
"""

from __future__ import annotations

import torch

from .. import models as M
from ..errors import AttentionConfigError
from ..models.run import family

BIAS = "bias"
ADDS_UP = 1e-3  # relative: sources that miss the model's stream by more are a model this split does not know


def _norm(module, parts: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Each part through ``module`` (LayerNorm or RMSNorm) with the divisor of their sum; β into ``bias``."""
    total = sum(parts.values())
    eps = getattr(module, "eps", None) or getattr(module, "variance_epsilon", 1e-6)
    weight = module.weight.detach().float()
    centred = isinstance(module, torch.nn.LayerNorm)
    if centred:
        div = (total.var(-1, unbiased=False, keepdim=True) + eps).sqrt()
        out = {k: weight * (v - v.mean(-1, keepdim=True)) / div for k, v in parts.items()}
    else:
        div = (total.pow(2).mean(-1, keepdim=True) + eps).sqrt()
        out = {k: weight * v / div for k, v in parts.items()}
    bias = getattr(module, "bias", None)
    if bias is not None:
        out[BIAS] = out.get(BIAS, torch.zeros_like(total)) + bias.detach().float()
    return out


def _heads_and_bias(m: M.Model, run: M.Run, layer: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(L, d_model) what layer ``layer``'s heads write together, and the output projection's bias (or zeros)."""
    writes = M.head_writes(m, run, layer).sum(0)
    _, b_o = M.out_proj(m, layer)
    return writes, (torch.zeros_like(writes) if b_o is None else b_o.expand_as(writes))


def _check(parts: dict[str, torch.Tensor], stream: torch.Tensor, m: M.Model) -> None:
    err = float((sum(parts.values()) - stream).abs().max())
    if err > ADDS_UP * max(float(stream.abs().max()), 1.0):
        raise AttentionConfigError("model", "no_split", model=m.name, err=f"{err:.3g}")


@torch.inference_mode()
def decoder_sources(m: M.Model, run: M.Run, layer: int) -> dict[str, torch.Tensor]:
    """The stream block ``layer`` of a pre-norm decoder receives, split: embeddings, then per earlier layer its
    heads and its MLP (and the biases, in ``bias``)."""
    fam = family(m)
    ids = torch.tensor(run.encoding.ids)
    parts = {k: v.float() for k, v in fam.embedding_parts(m.hf, ids).items()}
    parts[BIAS] = torch.zeros_like(run.resid[0])
    for earlier in range(layer):
        heads, b_o = _heads_and_bias(m, run, earlier)
        parts[f"L{earlier} heads"] = heads
        parts[BIAS] = parts[BIAS] + b_o
        parts[f"L{earlier} MLP"] = run.mlp_out[earlier]
    _check(parts, run.resid[layer], m)
    return parts


@torch.inference_mode()
def encoder_sources(m: M.Model, run: M.Run, layer: int) -> dict[str, torch.Tensor]:
    """The stream block ``layer`` of a post-norm encoder (BERT) receives, split through every LayerNorm."""
    fam = family(m)
    ids = torch.tensor(run.encoding.ids)
    parts = _norm(fam.embedding_norm(m.hf), {k: v.float() for k, v in fam.embedding_parts(m.hf, ids).items()})
    for earlier, block in enumerate(fam.blocks(m.hf)[:layer]):
        heads, b_o = _heads_and_bias(m, run, earlier)
        parts[f"L{earlier} heads"] = heads
        parts[BIAS] = parts[BIAS] + b_o
        after_attention, after_mlp = fam.norms(block)
        parts = _norm(after_attention, parts)
        y = sum(parts.values())
        parts[f"L{earlier} MLP"] = fam.mlp_output(block)(fam.mlp_input(block, y)).float()
        parts = _norm(after_mlp, parts)
    _check(parts, run.hidden[layer], m)
    return parts


def read_by_attention(m: M.Model, run: M.Run, layer: int) -> dict[str, torch.Tensor]:
    """What layer ``layer``'s attention reads (its input after any pre-norm), split by source, in order:
    embeddings first, earlier layers next, ``bias`` last."""
    if not m.causal:
        parts = encoder_sources(m, run, layer)
    else:
        with torch.inference_mode():
            parts = _norm(family(m).attn_norm(family(m).blocks(m.hf)[layer]), decoder_sources(m, run, layer))
        _check(parts, run.attn_in[layer], m)
    bias = parts.pop(BIAS)
    return parts | {BIAS: bias}
