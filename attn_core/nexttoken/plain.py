"""The Next token page's slow parts as plain values (lists, ints, floats, strings): a generation with its cache
check, and the branches at one step. ``python -m attn_core.heavy`` computes them in a worker process, so that a
class's generations never hold the server's script threads (each step is one forward of the model, mostly Python).

A request's arguments are plain too: the model (an offered name or its directory), the prompt, the sampling
settings (``temperature``, ``top_k``, ``top_p``, ``seed``, ``greedy``) and ``max_new``; the branches also ``step``
and ``n_new``. They are checked here as everywhere (``sampling``, ``whole``): a bad one is the engine's error.
"""

from __future__ import annotations

from .generate import Generation, branches, check_cache, generate
from .prompt import labels
from .sampling import Sampling, sampling


def settings_of(m, a: dict) -> Sampling:
    """The request's sampling settings, checked against the model's vocabulary."""
    keys = ("temperature", "top_k", "top_p", "seed", "greedy")
    return sampling(vocab=m.vocab, **{k: a[k] for k in keys})


def _generated(m, a: dict) -> Generation:
    return generate(m, a["prompt"], settings_of(m, a), a["max_new"])


def generation(m, a: dict) -> dict:
    """The generated tokens step by step (the chosen token, the cache's shape and bytes after the forward that
    predicted it, that forward's query row over the cached keys) and the check against the whole sequence."""
    gen = _generated(m, a)
    steps = [
        {
            "chosen": s.chosen,
            "piece": s.piece,
            "cache_shape": None if s.cache_shape is None else list(s.cache_shape),
            "cache_bytes": s.cache_bytes,
            "attention": None if s.attention is None else s.attention.tolist(),
        }
        for s in gen.steps
    ]
    return {
        "prompt_ids": list(gen.prompt.ids),
        "ids": list(gen.ids),
        "pieces": list(gen.pieces),
        "labels": list(labels(m.tokenizer, gen.ids)),  # each token as a page names it (a split character marked)
        "stopped": gen.stopped,
        "steps": steps,
        "check": check_cache(m, gen),
    }


def branches_at(m, a: dict) -> dict:
    """At ``a["step"]`` (0-based) of the same generation, the top alternatives each continued ``a["n_new"]``
    greedy tokens."""
    return {"branches": branches(m, _generated(m, a), a["step"], a["n_new"])}
