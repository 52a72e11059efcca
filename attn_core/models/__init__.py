"""Trained models behind one interface, one small module per architecture family (as transformers keeps one
modeling file per architecture): ``bert`` (BERT-style encoders), ``gpt2`` (fused ``c_attn``, learned absolute
positions, causal) and ``llama`` (rotary positions, grouped-query attention, RMSNorm: Llama, SmolLM, Qwen2,
Mistral). Callers (pages, CLI, notebook, interpret, explain) read this interface, never a family's module names.

    load(name) -> Model                  once per process per directory; eval mode, never written to
    offered() -> list[dict]              what this server offers (``python -m attn_core models --json``)
    encode(m, text) -> Encoding          token ids, the text to show for each (never "�"), how many were cut
    token_labels(tok, ids), token_label  one display rule for a token wherever a page names one: ␣ ↵ seen,
                                         a character split over byte tokens marked 床 (1/2), numbered from 1
    forward(m, ids) -> Run               attentions (layers, H, L, L), resid (layers + 1, L, d_model) before any
                                         final norm, attn_in, context (layers, L, H, d), attn_out and mlp_out
                                         (decoders: resid[l + 1] = resid[l] + attn_out[l] + mlp_out[l]), logits
    final_norm(m), unembed(m)            decoders: logits = final_norm(resid[-1]) W_Uᵀ (+ b)
    out_proj(m, layer)                   (W_O (d_model, H·d), b_O): attention's output = context W_Oᵀ + b_O
    head_weights(m, layer, head)         one head's W_q, W_k, W_v (its shared key/value head), scale, rotary
    take_apart(run, w, layer, head)      that head recomputed through ``steps.attend``, beside the model's own
    random_weights(m, seed=...)          untrained weights of the same shapes
"""

from . import family  # the Protocol every family module satisfies, and their registry
from .base import (
    FAMILY_NAMES,
    SUPPORTED,
    Encoding,
    HeadTrace,
    HeadWeights,
    Model,
    ModelUnavailable,
    Run,
    check_layer_head,
)
from .heads import head_mask, head_weights, overview, random_weights, recompute_all, row_entropy, take_apart, to_dict
from .labels import numbered, token_bytes, token_label, token_labels, visible
from .locate import (
    BUNDLED,
    BUNDLED_DIR,
    BUNDLED_PACKAGE,
    INSTALL,
    MODELS_ENV,
    bundled_path,
    describe,
    family_of,
    load,
    offered,
    offered_paths,
)
from .run import attention_inputs, final_norm, forward, head_context, head_writes, install, out_proj, unembed
from .text import display_pieces, encode, token_text

UNK_NOTICE = 0.2  # share of the sentence's pieces that are [UNK] from which the page says so
Pretrained = Model  # the encoder pages' names
ModelRun = Run

__all__ = [
    "BUNDLED",
    "BUNDLED_DIR",
    "BUNDLED_PACKAGE",
    "FAMILY_NAMES",
    "INSTALL",
    "MODELS_ENV",
    "SUPPORTED",
    "UNK_NOTICE",
    "Encoding",
    "HeadTrace",
    "HeadWeights",
    "Model",
    "ModelRun",
    "ModelUnavailable",
    "Pretrained",
    "Run",
    "attention_inputs",
    "bundled_path",
    "check_layer_head",
    "describe",
    "display_pieces",
    "encode",
    "family",
    "family_of",
    "final_norm",
    "forward",
    "head_context",
    "head_mask",
    "head_weights",
    "head_writes",
    "install",
    "load",
    "numbered",
    "offered",
    "offered_paths",
    "out_proj",
    "overview",
    "random_weights",
    "recompute_all",
    "row_entropy",
    "take_apart",
    "to_dict",
    "token_bytes",
    "token_label",
    "token_labels",
    "token_text",
    "unembed",
    "visible",
]
