"""Generation token by token, with the KV cache or without it, and the check that both give the same logits.

With the cache, the prompt runs once and each new token runs alone: its query attends over the keys and values
every earlier token left in the cache (transformers' ``DynamicCache``: per layer, keys and values of shape
(kv_heads, length, d_head)), so one step costs one token's forward instead of the whole sequence's. Without it,
every step reruns the whole sequence: the same logits, more work (the benchmark measures how much).

Each step records the distribution the token was drawn from (``sampling``), the cache after the forward that
predicted it (shape layers × 2 × kv_heads × length × d_head, and bytes) and that forward's query row over the cached
keys (layers × heads × length). ``MAX_NEW`` bounds a generation: each token is one forward of the model on a server
a whole class shares (64 tokens is a few seconds at worst on the shipped decoder's 2-core CPU, and a page's steps
stay readable); ``BRANCH_NEW`` bounds a branch's greedy continuation for the same reason (3 of them run at once).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from .prompt import Prompt, encode, label, piece, pieces, text_of
from .sampling import Distribution, Sampling, choose, whole

MAX_NEW = 64
BRANCH_NEW = 16
BRANCHES = 3
RTOL, ATOL = 1e-5, 1e-6  # cached vs recomputed logits: |a - b| <= ATOL + RTOL * max|b|


@dataclass(frozen=True)
class Step:
    distribution: Distribution
    chosen: int
    piece: str  # the chosen token's text on its own
    cache_shape: tuple[int, int, int, int, int] | None  # layers, 2 (keys, values), kv_heads, length, d_head
    cache_bytes: int
    attention: torch.Tensor | None  # (layers, heads, length): the predicting query's row over the keys


@dataclass(frozen=True)
class Generation:
    prompt: Prompt
    steps: tuple[Step, ...]
    ids: tuple[int, ...]  # the prompt's kept tokens, then the generated ones
    pieces: tuple[str, ...]  # one per id, byte pieces merged into characters
    text: str  # the prompt's kept text and the continuation
    cached: bool
    stopped: str  # "max_new" or "eos"

    @property
    def new_ids(self) -> tuple[int, ...]:
        return self.ids[len(self.prompt.ids) :]

    def logits(self) -> torch.Tensor:
        """(steps, vocab) the logits each token was chosen from."""
        return torch.stack([s.distribution.logits for s in self.steps])


def cache_size(cache) -> tuple[tuple[int, int, int, int, int] | None, int]:
    """(layers, 2, kv_heads, length, d_head) and the bytes the keys and values take."""
    layers = getattr(cache, "layers", None) if cache is not None else None
    if not layers:
        return None, 0
    k = layers[0].keys
    shape = (len(layers), 2, int(k.shape[1]), int(k.shape[2]), int(k.shape[3]))
    total = sum(x.numel() * x.element_size() for layer in layers for x in (layer.keys, layer.values))
    return shape, int(total)


def forward(hf, ids, cache=None, *, use_cache: bool = True, attention: bool = True):
    """(last position's logits (vocab,), the cache, the last query's attention (layers, heads, length) or None)."""
    with torch.inference_mode():
        out = hf(input_ids=torch.tensor([list(ids)]), cache=cache, use_cache=use_cache, output_attentions=attention)
    rows = None
    if attention and getattr(out, "attentions", None):
        rows = torch.stack([a[0, :, -1, :] for a in out.attentions]).float()
    return out.logits[0, -1].float(), (out.get("cache") if use_cache else None), rows


def run(m, ids, settings: Sampling, max_new: int, *, cached: bool = True, attention: bool = True) -> list[Step]:
    """Generate from ``ids`` (already within the context): ``max_new`` steps, or fewer if EOS is chosen."""
    generator = torch.Generator().manual_seed(settings.seed)
    eos = getattr(m.tokenizer, "eos_token_id", None)
    seq, steps = list(ids), []
    logits, cache, rows = forward(m.hf, seq, use_cache=cached, attention=attention)
    for _ in range(max_new):
        dist = choose(logits, settings, generator)
        shape, size = cache_size(cache)
        steps.append(Step(dist, dist.chosen, piece(m.tokenizer, dist.chosen), shape, size, rows))
        seq.append(dist.chosen)
        if dist.chosen == eos or len(steps) == max_new:
            break
        if cached:
            logits, cache, rows = forward(m.hf, [dist.chosen], cache, attention=attention)
        else:
            logits, _, rows = forward(m.hf, seq, use_cache=False, attention=attention)
    return steps


def generate(m, text: str, settings: Sampling, max_new=16, *, cached: bool = True, attention: bool = True):
    """Encode ``text`` (cut to leave room for ``max_new`` tokens) and generate; returns a ``Generation``."""
    limit = min(MAX_NEW, max(m.max_positions - 1, 1))
    n = whole("max_new", max_new, 1, limit)
    prompt = encode(m, text, room=n)
    steps = run(m, prompt.ids, settings, n, cached=cached, attention=attention)
    ids = prompt.ids + tuple(s.chosen for s in steps)
    stopped = "eos" if steps and steps[-1].chosen == getattr(m.tokenizer, "eos_token_id", None) else "max_new"
    text_out = text_of(m.tokenizer, ids)
    return Generation(prompt, tuple(steps), ids, pieces(m.tokenizer, ids), text_out, cached, stopped)


def check_cache(m, gen: Generation) -> dict:
    """The cached logits of every step against one full forward over the whole sequence, recomputed."""
    n_prompt = len(gen.prompt.ids)
    seq = list(gen.ids[:-1]) if gen.steps else list(gen.ids)
    with torch.inference_mode():
        full = m.hf(input_ids=torch.tensor([seq]), use_cache=False).logits[0].float()
    recomputed = full[n_prompt - 1 : n_prompt - 1 + len(gen.steps)]
    stepped = gen.logits().float()
    diff = float((stepped - recomputed).abs().max()) if gen.steps else 0.0
    allowed = ATOL + RTOL * float(recomputed.abs().max()) if gen.steps else ATOL
    return {"max_abs_diff": diff, "allowed": allowed, "ok": diff <= allowed, "positions": len(gen.steps)}


def branches(m, gen: Generation, step: int, n_new=4, *, alternatives: int = BRANCHES) -> list[dict]:
    """At ``step``, the ``alternatives`` most probable tokens, each continued ``n_new`` greedy tokens."""
    at = whole("step", step, 0, max(len(gen.steps) - 1, 0))
    n = whole("n_new", n_new, 0, BRANCH_NEW)
    dist = gen.steps[at].distribution
    prefix = list(gen.ids[: len(gen.prompt.ids) + at])
    room = m.max_positions - len(prefix) - 1
    out = []
    for token in [int(i) for i in dist.order[:alternatives]]:
        follow = run(m, prefix + [token], Sampling(greedy=True), min(n, room), attention=False) if n and room else []
        ids = [token] + [s.chosen for s in follow]
        out.append(
            {
                **dist.pick(token),
                "piece": piece(m.tokenizer, token),
                "label": label(m.tokenizer, token),
                "ids": ids,
                "text": text_of(m.tokenizer, ids),
                "chosen": token == gen.steps[at].chosen,
            }
        )
    return out
