"""Tiny randomly initialised decoders saved to a directory, with a tiny byte-level BPE tokenizer trained in the
test (nothing downloads): GPT-2 (learned positions, LayerNorm, Conv1D) and Llama-style (rotary positions,
grouped-query attention, RMSNorm). ``build(kind, folder)`` writes one and returns its directory."""

from __future__ import annotations

import os

CORPUS = [
    "the cat sat on the mat and the dog sat on the log",
    "once upon a time there was a small cat who liked to sleep",
    "猫坐在垫子上，狗坐在木头上。",
    "attention lets every token look at the tokens before it",
]


def tokenizer():
    from tokenizers import ByteLevelBPETokenizer
    from transformers import PreTrainedTokenizerFast

    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(CORPUS * 8, vocab_size=320, min_frequency=1, show_progress=False, special_tokens=["<eos>"])
    tok = PreTrainedTokenizerFast(tokenizer_object=bpe._tokenizer, eos_token="<eos>")
    tok.model_max_length = 10**9  # the model's positions are the limit
    return tok


def build(kind: str, folder, *, seed: int = 0, positions: int = 48) -> str:
    """Write a random ``kind`` ("gpt2" or "llama") decoder and its tokenizer into ``folder``; its path."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM

    tok = tokenizer()
    eos = tok.eos_token_id
    torch.manual_seed(seed)
    if kind == "gpt2":
        cfg = GPT2Config(vocab_size=len(tok), n_embd=32, n_layer=3, n_head=4, n_positions=positions)
        cfg.bos_token_id = cfg.eos_token_id = eos
        model = GPT2LMHeadModel(cfg)
    else:
        cfg = LlamaConfig(
            vocab_size=len(tok),
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=3,
            num_attention_heads=4,
            num_key_value_heads=2,
            max_position_embeddings=positions,
            tie_word_embeddings=False,
            bos_token_id=eos,
            eos_token_id=eos,
        )
        model = LlamaForCausalLM(cfg)
    with torch.no_grad():  # larger logits than the default init, so that sampling has a real distribution
        for p in model.parameters():
            if p.dim() == 2:
                p.mul_(4.0)
        if kind == "gpt2":  # biases and LayerNorm's γ and β away from 0 and 1: every term of the decomposition counts
            for p in model.parameters():
                if p.dim() == 1:
                    p.add_(0.3 * torch.randn_like(p))
    path = os.path.join(str(folder), kind)
    model.save_pretrained(path)
    tok.save_pretrained(path)
    return path


def without_head(m, layer: int, head: int):
    """A copy of ``m``'s transformers model with one head's output removed: its columns of the output projection
    (no hook of the engine's involved), for checking the engine's ablations against."""
    import copy

    import torch

    hf, d = copy.deepcopy(m.hf), m.d_head
    with torch.no_grad():
        if m.family == "gpt2":  # Conv1D: weight (in, out), rows are the heads' context dimensions
            hf.transformer.h[layer].attn.c_proj.weight[head * d : (head + 1) * d, :] = 0
        else:
            hf.model.layers[layer].self_attn.o_proj.weight[:, head * d : (head + 1) * d] = 0
    return hf
