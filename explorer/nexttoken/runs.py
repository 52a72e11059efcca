"""The engine's results for the Next token page, cached server-wide on plain values (``explorer.base.cache.bounded``:
a class opening the same link computes each once). Results may hold tensors; they stay in these caches, never in
the session. Each function takes the model's offered name and the page's plain settings; the model is the one
the server's background loader holds under that name (``explorer.model.real``), the page having waited for it.

The shipped decoder is small (4 layers × 4 heads, d_model 128): one forward pass over 64 tokens takes a few
milliseconds, and the distribution, the lens and the heads' effects are one pass each, computed here. A generation
and its branches are a pass per token: those are requests for the background jobs (``explorer.jobs.heavy``), which
keep them out of the server's script threads (``benchmarks/nexttoken_page.py`` measures each).
"""

from __future__ import annotations

from attn_core import models
from attn_core import nexttoken as nt
from explorer.base.cache import bounded
from explorer.model import real
from explorer.nexttoken.settings import Choice, not_decoder

SHOWN = 12  # bars of the next-token distribution
N_NEW_BRANCH = 4  # greedy tokens after each alternative


def decoder(name: str):
    """The offered decoder ``name``, as the server's loader holds it (waiting for its load, which the page has
    done already); an encoder is refused (``nexttoken_not_decoder``, naming the decoders offered)."""
    m = real.wait_for(name)
    if not m.causal:
        raise not_decoder(name, offered())
    return m


def offered() -> list[str]:
    """The decoders this server offers, in menu order (the shipped one first)."""
    return nt.decoders()


def no_decoder() -> models.ModelUnavailable:
    return models.ModelUnavailable("nexttoken_no_decoder")


def max_new(m) -> int:
    """The most tokens one generation may add (``nt.MAX_NEW``, within the model's context)."""
    return min(nt.MAX_NEW, max(m.max_positions - 1, 1))


@bounded(max_mib=24)
def prediction(choice: Choice) -> dict:
    """The next token's distribution (its top bars, cut ones marked), the sampled token and why, and every
    position's own prediction, as plain values."""
    m = decoder(choice.model)
    p = nt.predict(m, choice.prompt, choice.sampling(m.vocab))
    d = p.distribution
    tok = m.tokenizer

    def pick(i: int) -> dict:
        return d.pick(i) | {"piece": nt.piece(tok, i), "label": nt.label(tok, i)}

    why = d.why()
    return {
        "pieces": list(p.prompt.pieces),
        "labels": list(nt.labels(tok, p.prompt.ids)),  # each token as the page names it (nt.labels)
        "ids": list(p.prompt.ids),
        "cut": p.prompt.cut,
        "cut_text": p.prompt.cut_text,
        "n_total": p.prompt.n_total,
        "top": [pick(int(i)) for i in d.order[:SHOWN]],
        "chosen": pick(d.chosen),
        "why": why | {"chosen": pick(d.chosen), "top": pick(why["top"]["id"])},
        "kept": int(d.kept.sum()),
        "kept_mass": float(d.probs[d.kept].sum()),
        "positions": p.positions,
        "vocab": m.vocab,
    }


def _request(choice: Choice, max_new: int) -> dict:
    """A generation's plain request for the background worker: the model by its offered name (the worker loads
    it through the same table, ``attn_core.models``), the prompt and the sampling settings."""
    return {
        "model": choice.model,
        "prompt": choice.prompt,
        "temperature": float(choice.temperature),
        "top_k": int(choice.top_k),
        "top_p": float(choice.top_p),
        "seed": int(choice.seed),
        "greedy": bool(choice.greedy),
        "max_new": int(max_new),
    }


def generation(choice: Choice, max_new: int) -> tuple[str, dict]:
    """The request for up to ``max_new`` tokens generated with the KV cache and the check against the whole
    sequence recomputed (``attn_core.nexttoken.plain.generation``), computed by a background worker: a step is
    one forward of the model, mostly Python, and a class's generations must not hold the server's threads."""
    return "next_token_generation", _request(choice, max_new)


def branches(choice: Choice, max_new: int, step: int) -> tuple[str, dict]:
    """The request for the top 3 tokens at ``step`` (0-based), each continued greedily."""
    return "next_token_branches", _request(choice, max_new) | {"step": int(step), "n_new": N_NEW_BRANCH}


@bounded(max_mib=48)
def forward(model: str, prompt: str) -> tuple[nt.Prompt, models.Run]:
    """The prompt's tokens and one forward run with every layer's residual stream and head outputs."""
    m = decoder(model)
    enc = nt.encode(m, prompt)
    return enc, models.forward(m, list(enc.ids))


@bounded(max_mib=8)
def lens(model: str, prompt: str) -> dict:
    """The logit lens as plain values: one row per layer (0: the embeddings) of one cell per position."""
    m = decoder(model)
    enc, run = forward(model, prompt)
    found = nt.lens_of(m, run, enc)
    return {
        "cells": found.cells(m.tokenizer),
        "final_prob": found.final_prob.tolist(),
        "decided_at": list(found.decided_at),
        "last_diff": found.last_diff,
        "pieces": list(enc.pieces),
        "labels": list(nt.labels(m.tokenizer, enc.ids)),
    }


@bounded(max_mib=4)
def effects(model: str, prompt: str, token: int) -> dict:
    """Every component's direct effect on ``token``'s logit at the last position (the heads as a layers × heads
    list), summing to the model's logit with the final norm's scale frozen."""
    m = decoder(model)
    enc, run = forward(model, prompt)
    found = nt.direct_effects(m, run, len(enc.ids) - 1, token)
    return (
        found
        | {"heads": found["heads"].tolist(), "attn_bias": found["attn_bias"].tolist()}
        | {"mlp": found["mlp"].tolist()}
    )


@bounded(max_mib=4)
def head_vocab(model: str, prompt: str, layer: int, head: int, token: int) -> dict:
    """What one head writes at the last position, read through the frozen final norm and the unembedding."""
    m = decoder(model)
    enc, run = forward(model, prompt)
    return nt.head_vocab(m, run, layer, head, len(enc.ids) - 1, token)
