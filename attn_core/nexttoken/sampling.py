"""From logits to the next token: temperature, top-k, top-p, a seeded draw or the most probable token.

Pure torch on one vector of logits (vocab,), no model. The order the filters apply is transformers' own
(``generate``'s warpers): the logits are divided by the temperature, top-k keeps the k highest, top-p keeps, among
those, the fewest tokens whose probabilities (renormalised after top-k) reach p. Formally, with the tokens ranked by
probability (ties: the lower id first), token r is kept by top-p when the tokens ranked before it add up to less
than p. The kept tokens' probabilities are renormalised and one uniform number u in [0, 1) drawn from a
``torch.Generator`` seeded with the seed picks the token whose bar, stacked in rank order, spans u: the same seed
gives the same token on every machine and in every process. Greedy takes the most probable token (what the
temperature tends to as it goes to 0), whatever the filters say (they never cut the top token).

Settings come from outside (a URL, a widget, the command line) and are checked here (``sampling``):
- temperature: 0.01 to 100. A temperature of 0 or below is refused rather than read as greedy: the logits are
  divided by it, and the page has a greedy switch that says what it does;
- top-k: 0 (off) to the vocabulary's size; top-p: above 0, at most 1 (1: off);
- seed: a whole number 0 to 2³²−1 (a string of digits is accepted: it comes from a URL).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from ..errors import AttentionConfigError

T_LOW, T_HIGH = 0.01, 100.0
SEED_MAX = 2**32 - 1
SHOWN = 10  # tokens described in ``Distribution.top``


class SamplingError(AttentionConfigError):
    """A sampling setting that cannot be used (temperature, top-k, top-p, seed)."""


@dataclass(frozen=True)
class Sampling:
    temperature: float = 1.0
    top_k: int = 0  # 0: off
    top_p: float = 1.0  # 1: off
    seed: int = 0
    greedy: bool = False


def _number(field: str, value, low: float, high: float) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise SamplingError(field, "out_of_range", value=value, low=low, high=high) from None
    if isinstance(value, bool) or not math.isfinite(x):
        raise SamplingError(field, "out_of_range", value=value, low=low, high=high)
    return x


def whole(field: str, value, low: int, high: int) -> int:
    """``value`` as an int in [low, high]: an int or a string of digits, never a fraction, a bool or NaN."""
    if isinstance(value, bool):
        raise SamplingError(field, "whole_number", low=low, high=high)
    if isinstance(value, str):
        text = value.strip()
        if not text.lstrip("+-").isdigit():
            raise SamplingError(field, "whole_number", low=low, high=high)
        value = int(text)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, int):
        raise SamplingError(field, "whole_number", low=low, high=high)
    if not low <= value <= high:
        raise SamplingError(field, "out_of_range", value=value, low=low, high=high)
    return value


def sampling(*, vocab: int, temperature=1.0, top_k=0, top_p=1.0, seed=0, greedy=False) -> Sampling:
    """Checked settings for a vocabulary of ``vocab`` tokens (a SamplingError names the one at fault)."""
    t = _number("temperature", temperature, T_LOW, T_HIGH)
    if not T_LOW <= t <= T_HIGH:
        raise SamplingError("temperature", "nexttoken_temperature", value=temperature, low=T_LOW, high=T_HIGH)
    k = whole("top_k", top_k, 0, vocab)
    try:
        p = float(top_p)
    except (TypeError, ValueError):
        p = math.nan
    if isinstance(top_p, bool) or not (0.0 < p <= 1.0):  # NaN fails too
        raise SamplingError("top_p", "nexttoken_top_p", value=top_p)
    s = whole("seed", seed, 0, SEED_MAX)
    return Sampling(temperature=t, top_k=k, top_p=p, seed=s, greedy=bool(greedy))


@dataclass(frozen=True)
class Distribution:
    """One next-token choice. Vectors are (vocab,), float64; ``order`` ranks the ids by probability."""

    logits: torch.Tensor  # the model's logits
    probs: torch.Tensor  # softmax(logits / temperature), before the filters
    kept: torch.Tensor  # bool: what top-k and top-p keep (the others are drawn greyed)
    sampled: torch.Tensor  # the kept tokens' probabilities renormalised (0 for the cut ones): what is drawn from
    order: torch.Tensor  # ids, most probable first (ties: lower id first)
    chosen: int
    u: float | None  # the uniform draw that picked ``chosen`` (None: greedy)
    settings: Sampling

    def rank(self, token: int) -> int:
        """1 for the most probable token."""
        return int((self.order == token).nonzero()[0, 0]) + 1

    def top(self, n: int = SHOWN, *, kept_only: bool = False) -> list[dict]:
        """The ``n`` most probable tokens (kept ones only: after the filters) as plain dicts."""
        ids = [int(i) for i in self.order if not kept_only or bool(self.kept[i])][:n]
        return [self.pick(i) for i in ids]

    def pick(self, token: int) -> dict:
        return {
            "id": token,
            "prob": float(self.probs[token]),
            "sampled_prob": float(self.sampled[token]),
            "logit": float(self.logits[token]),
            "rank": self.rank(token),
            "kept": bool(self.kept[token]),
        }

    def why(self) -> dict:
        """The data of the page's one sentence: is the chosen token the most probable one, and if not, its
        probability and rank, and the draw that picked it."""
        top = int(self.order[0])
        reason = "greedy" if self.u is None else ("top" if self.chosen == top else "sampled_lower")
        return {
            "reason": reason,
            "is_top": self.chosen == top,
            "chosen": self.pick(self.chosen),
            "top": self.pick(top),
            "u": self.u,
            "kept": int(self.kept.sum()),
        }


def ranked(scores: torch.Tensor) -> torch.Tensor:
    """Ids ordered by score, highest first; equal scores keep the lower id first."""
    return torch.sort(scores, descending=True, stable=True).indices


def keep(probs: torch.Tensor, order: torch.Tensor, top_k: int, top_p: float) -> torch.Tensor:
    """(vocab,) bool: the tokens top-k then top-p keep (see the module)."""
    kept = torch.ones_like(probs, dtype=torch.bool)
    if top_k:
        kept[order[top_k:]] = False
    if top_p < 1.0:
        in_order = torch.where(kept[order], probs[order], torch.zeros_like(probs))
        in_order = in_order / in_order.sum()
        before = torch.cumsum(in_order, 0) - in_order  # mass of the tokens ranked before each one
        kept[order[before >= top_p]] = False
    return kept


def draw(generator: torch.Generator) -> float:
    return float(torch.rand((), generator=generator, dtype=torch.float64))


def choose(logits: torch.Tensor, settings: Sampling, generator: torch.Generator | None = None) -> Distribution:
    """The distribution and the chosen token. ``generator``: the sequence's own, seeded once per generation
    (each step draws one number); None: a fresh one seeded with ``settings.seed`` (the first draw)."""
    z = logits.detach().double().reshape(-1)
    probs = torch.softmax(z / settings.temperature, 0)
    order = ranked(probs)
    kept = keep(probs, order, settings.top_k, settings.top_p)
    sampled = torch.where(kept, probs, torch.zeros_like(probs))
    sampled = sampled / sampled.sum()
    if settings.greedy:
        chosen, u = int(ranked(z)[0]), None
    else:
        if generator is None:
            generator = torch.Generator().manual_seed(settings.seed)
        u = draw(generator)
        stacked = torch.cumsum(sampled[order], 0)
        n_kept = int(kept.sum())
        at = min(int(torch.searchsorted(stacked, torch.tensor([u], dtype=torch.float64), right=True)), n_kept - 1)
        chosen = int(order[at])
    return Distribution(z, probs, kept, sampled, order, chosen, u, settings)
