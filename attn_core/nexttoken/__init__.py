"""Predicting the next token with a decoder (any family of ``attn_core.models``): the distribution and how a token
is drawn from it, generation with the KV cache, every position's prediction, the logit lens, what a head writes.

    decoder(name) -> Model                            an offered decoder (default: the shipped one)
    sampling(vocab=..., temperature=, top_k=, top_p=, seed=, greedy=) -> Sampling    checked settings
    predict(m, text, settings) -> Prediction          the next token's distribution and every position's top one
    generate(m, text, settings, max_new) -> Generation token by token with the KV cache (``cached=False``: without)
    check_cache(m, gen) -> dict                       the cached logits against the whole sequence recomputed
    branches(m, gen, step, n_new) -> list[dict]       the top 3 alternatives at a step, each continued greedily
    lens(m, text) -> Lens                             every layer × position's top token, ``decided_at``
    direct_effects(m, run, position, token) -> dict   heads (layers × heads), MLPs, ... summing to the logit
    head_vocab(m, run, layer, head, position) -> dict the tokens a head's output promotes and suppresses
    label(tok, id), labels(tok, ids)                  a token as every page names it (``models.token_labels``)

Bad input raises ``PromptError`` / ``SamplingError`` (``AttentionConfigError``s with a message in both languages).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from .generate import BRANCH_NEW, MAX_NEW, Generation, Step, branches, cache_size, check_cache, generate
from .heads import direct_effects, head_vocab
from .lens import Lens, decided, lens, lens_of, positions
from .model import decoder, decoders
from .prompt import Prompt, PromptError, encode, label, labels, piece
from .sampling import Distribution, Sampling, SamplingError, choose, sampling


@dataclass(frozen=True)
class Prediction:
    prompt: Prompt
    distribution: Distribution  # the next token's, after the last position
    positions: list[dict]  # every position's top prediction beside the token that follows it


def predict(m, text: str, settings: Sampling) -> Prediction:
    """One forward pass over the prompt (cut to the context from the start)."""
    prompt = encode(m, text)
    with torch.inference_mode():
        logits = m.hf(input_ids=torch.tensor([list(prompt.ids)]), use_cache=False).logits[0].float()
    return Prediction(prompt, choose(logits[-1], settings), positions(m, logits, prompt))


__all__ = [
    "BRANCH_NEW",
    "MAX_NEW",
    "Distribution",
    "Generation",
    "Lens",
    "Prediction",
    "Prompt",
    "PromptError",
    "Sampling",
    "SamplingError",
    "Step",
    "branches",
    "cache_size",
    "check_cache",
    "choose",
    "decided",
    "decoder",
    "decoders",
    "direct_effects",
    "encode",
    "generate",
    "head_vocab",
    "label",
    "labels",
    "lens",
    "lens_of",
    "piece",
    "positions",
    "predict",
    "sampling",
]
