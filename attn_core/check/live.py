"""Live items: the options and the answer of a question computed by the engine for given settings.

Each function takes the settings and the query position to follow (``focus``) and returns a ``Live``: the
question's placeholders and the options, each a template name of the item (``bank.toml``'s ``templates``), its
placeholders and the misconception it stands for (``None`` for the one correct option). A question the engine
cannot answer with exactly one correct option for these settings (a tie, a single option) raises
``LiveUnavailable``; the item is then left out of the check, with the reason.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

import torch

from ..config import Settings
from ..errors import AttentionConfigError
from ..trace import check_settings, param_count, run_trace

MAX_KEYS = 10  # the top-key item offers at most this many words (the strongest ones, in the sentence's order)
TIE = (1e-6, 1e-5)  # (atol, rtol) under which two weights or two entropies count as equal


class LiveUnavailable(ValueError):
    """These settings give no single correct option: ``code`` (which reason: ``bank.toml``'s ``reason_<code>``)
    and its ``params``."""

    def __init__(self, code: str, **params) -> None:
        super().__init__(code, params)
        self.code, self.params = code, params


@dataclass(frozen=True)
class Option:
    template: str  # the item's template name
    params: dict  # its placeholders
    misconception: str | None  # the item's misconception key; None: the correct option


@dataclass(frozen=True)
class Live:
    params: dict  # the question's placeholders
    options: tuple[Option, ...]

    @property
    def answer(self) -> int:
        return next(i for i, o in enumerate(self.options) if o.misconception is None)


def _close(a: float, b: float) -> bool:
    atol, rtol = TIE
    return abs(a - b) <= atol + rtol * max(abs(a), abs(b))


def focus_of(trace, focus: int | None) -> int:
    """The query position followed: ``focus`` (default the second token, as ``trace`` prints), kept inside L."""
    L = trace.attn.shape[1]
    return min(max(1 if focus is None else focus, 0), L - 1)


def top_key(s: Settings, focus: int | None = None) -> Live:
    """Which key word the focus token attends to most in head 2 (head 1 with one head): the weights shown."""
    t = run_trace(s)
    head = 1 if t.settings.heads > 1 else 0
    q = focus_of(t, focus)
    row = t.attn[head, q].double()  # (S,)
    words = list(t.key_tokens.words)
    best: dict[str, float] = {}  # each distinct key word's largest weight, in the sentence's order
    allowed: dict[str, bool] = {}
    for j, word in enumerate(words):
        best[word] = max(best.get(word, -math.inf), float(row[j]))
        allowed[word] = allowed.get(word, False) or bool(t.mask[q, j])
    ranked = sorted(best, key=best.__getitem__, reverse=True)
    if len(ranked) < 2:
        raise LiveUnavailable("one_key")
    if _close(best[ranked[0]], best[ranked[1]]):
        raise LiveUnavailable("tie", a=ranked[0], b=ranked[1])
    kept = set(ranked[:MAX_KEYS])
    focus_word = t.tokens.words[q]

    def kind(word: str) -> str | None:
        if word == ranked[0]:
            return None
        return "self" if word == focus_word else ("other" if allowed[word] else "masked")

    options = tuple(Option("key", {"word": w}, kind(w)) for w in best if w in kept)
    return Live({"head": head + 1, "focus": focus_word, "position": q}, options)


def param_count_item(s: Settings, focus: int | None = None) -> Live:
    """The layer's parameter count (``trace.param_count``), among counts that each follow a misconception."""
    r = check_settings(s)
    count = param_count(r)
    total = count["total"]
    n_tokens = len(run_trace(s).tokens.words)
    wrong = {
        "heads": total * r.heads,  # each head as wide as the model
        "no_output": count["projections"],  # W_q, W_k, W_v only
        "per_token": total * n_tokens,  # a copy of the weights per token
        "formula": count["formula_4d2"],  # 4·d_model², whatever the head sizes
    }
    seen = {total}
    options = [Option("count", {"count": total}, None)]
    for key, value in wrong.items():
        if value not in seen:
            seen.add(value)
            options.append(Option("count", {"count": value}, key))
    if len(options) < 2:
        raise LiveUnavailable("one_option")
    options.sort(key=lambda o: o.params["count"])
    params = {k: getattr(r, k) for k in ("heads", "d_model", "d_q", "d_k", "d_v", "layout")}
    return Live(params, tuple(options))


def flatness(weights: torch.Tensor) -> float:
    """The entropy (nats) of a row of weights, normalised to sum to 1 (0 for a row with no weight)."""
    w = weights.double().clamp(min=0)
    total = float(w.sum())
    if total <= 0:
        return 0.0
    p = w[w > 0] / total
    return float(-(p * p.log()).sum())


def temperatures(s: Settings) -> tuple[float, float]:
    """The settings' temperature and twice it (or half of it and it, where twice is out of range)."""
    low = float(s.temperature)
    try:
        check_settings(replace(s, temperature=2 * low))
    except AttentionConfigError:
        return low / 2, low
    return low, 2 * low


def flatter(s: Settings, focus: int | None = None) -> Live:
    """Which of two temperatures gives the flatter row (the larger entropy) for the focus token in head 1."""
    low, high = temperatures(s)
    rows = [run_trace(replace(s, temperature=T, dropout=0.0)) for T in (low, high)]
    q = focus_of(rows[0], focus)
    h_low, h_high = (flatness(t.attn[0, q]) for t in rows)
    right = "equal" if _close(h_low, h_high) else ("high" if h_high > h_low else "low")
    params = {"low": low, "high": high}
    options = tuple(Option(k, params, None if k == right else k) for k in ("low", "high", "equal"))
    return Live({"focus": rows[0].tokens.words[q], "head": 1}, options)


LIVE: dict[str, Callable[[Settings, int | None], Live]] = {
    "top_key": top_key,
    "param_count": param_count_item,
    "flatter": flatter,
}
