"""A tiny randomly initialised GPT-2 (2 layers x 4 heads) with a byte-level BPE tokenizer trained here on a few
lines of English and Chinese, saved to a directory: the real-model pages' tests offer it to the app through
``ATTN_EXPLORER_MODELS`` (nothing downloads)."""

from __future__ import annotations

import os

CORPUS = [
    "the cat sat on the mat and the dog sat on the log",
    "When Mary and John went to the store, John gave a drink to Mary",
    "生命短暂，先吃甜点。猫坐在垫子上。",
    "attention lets every token look at the tokens before it",
]
NAME = "tiny-gpt2"


def build(folder, *, seed: int = 0, positions: int = 64) -> str:
    import torch
    from tokenizers import ByteLevelBPETokenizer
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(CORPUS * 8, vocab_size=300, min_frequency=1, show_progress=False, special_tokens=["<eos>"])
    tok = PreTrainedTokenizerFast(tokenizer_object=bpe._tokenizer, eos_token="<eos>")
    tok.model_max_length = 10**9  # the model's positions are the limit
    torch.manual_seed(seed)
    cfg = GPT2Config(vocab_size=len(tok), n_embd=32, n_layer=2, n_head=4, n_positions=positions)
    cfg.bos_token_id = cfg.eos_token_id = tok.eos_token_id
    model = GPT2LMHeadModel(cfg)
    with torch.no_grad():  # sharper than the default init: heads that attend somewhere, a peaked prediction
        for p in model.parameters():
            if p.dim() == 2:
                p.mul_(4.0)
    path = os.path.join(str(folder), NAME)
    model.save_pretrained(path)
    tok.save_pretrained(path)
    return path
