"""The plain settings object that flows from widgets (or CLI flags) into the engine.

Frozen and made of plain values, so it hashes: pages cache on it, the CLI builds it from flags,
and the JSON export writes it back out under ``config`` with the same keys as the flags.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields, replace

from .errors import AttentionConfigError
from .masks import MASK_MODES
from .options import OPTIONS
from .options import limits as option_limits
from .tokenize import MAX_TOKENS

TUTORIAL_SENTENCE = "Life is short, eat dessert first"
SCORES = ("dot", "scaled_dot", "additive")
LAYOUTS = ("tutorial", "standard")
INITS = ("tutorial", "standard")
POSITIONS = ("none", "sinusoidal", "learned")

MAX_TRACE_BYTES = 192 * 2**20  # what one live view may take; the CLI can pass more

LIMITS = {  # field: (low, high); inclusive, for live use; the kernels' options' from attn_core.options
    "d_model": (1, 1024),
    "d_q": (1, 1024),
    "d_k": (1, 1024),
    "d_v": (1, 1024),
    "heads": (1, 32),
    "pad_to": (0, MAX_TOKENS),
    **option_limits(),
}


class Plain:
    """A dataclass of plain values, to a dict and back (keys it does not have are ignored): what
    caches, links, JSON and worker processes carry."""

    def to_dict(self) -> dict:
        return asdict(self)

    def key(self) -> tuple:
        """Its values as sorted (name, value) pairs: hashable, a cache key or a question's name."""
        return tuple(sorted(self.to_dict().items()))

    @classmethod
    def from_dict(cls, data: dict):
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


@dataclass(frozen=True)
class Settings(Plain):
    sentence: str = TUTORIAL_SENTENCE
    source: str | None = None  # keys/values come from here when set (cross-attention)
    seed: int = OPTIONS["seed"].default
    init: str = "tutorial"
    d_model: int = 16
    d_q: int = 24
    d_k: int = 24
    d_v: int = 28
    heads: int = 1
    layout: str = "tutorial"
    score: str = "scaled_dot"
    temperature: float = 1.0
    pos: str = "none"
    mask: str = "none"
    causal: bool = False  # AND-ed with any other mask
    window: int = OPTIONS["window"].default
    dilation: int = OPTIONS["dilation"].default
    global_tokens: int = OPTIONS["global_tokens"].default
    block: int = OPTIONS["block"].default
    pad_to: int = 0  # padding mode: the batch length; 0 = no padding
    dropout: float = 0.0
    residual_norm: bool = False
    kernel: str = "full"
    features: int = OPTIONS["features"].default  # performer's random features m
    proj_k: int = OPTIONS["proj_k"].default  # linformer's projected length k
    max_tokens: int = MAX_TOKENS
    max_bytes: int = MAX_TRACE_BYTES  # one trace's memory, refused beyond (a shared server's budget)
    # kernel options registered beyond these fields (attn_core.options), as sorted (name, value) pairs
    extra: tuple = ()

    def __post_init__(self) -> None:  # from JSON or a dict: lists of pairs -> sorted tuples (hashable)
        pairs = self.extra.items() if isinstance(self.extra, dict) else self.extra
        object.__setattr__(self, "extra", tuple(sorted((str(k), v) for k, v in pairs)))

    def with_options(self, **values) -> Settings:
        """These settings with kernel options changed: a field's by ``replace``, any other's in ``extra``."""
        known = {k: v for k, v in values.items() if k in FIELDS}
        extra = {**dict(self.extra), **{k: v for k, v in values.items() if k not in FIELDS}}
        return replace(self, **known, extra=tuple(extra.items()))

    def option(self, name: str):
        """A kernel option's value: its field, else ``extra``, else the option's default."""
        if name in FIELDS:
            return getattr(self, name)
        return dict(self.extra).get(name, OPTIONS[name].default)

    def resolved(self) -> Settings:
        """The settings the engine really uses: the standard layout fixes the head dims."""
        if self.layout == "standard" and self.heads >= 1 and self.d_model % self.heads == 0:
            d_head = self.d_model // self.heads
            return replace(self, d_q=d_head, d_k=d_head, d_v=d_head)
        return self


FIELDS = frozenset(f.name for f in fields(Settings))


def _choice(field: str, value: str, options: tuple[str, ...]) -> None:
    if value not in options:
        raise AttentionConfigError(field, "unknown_choice", value=value, options=", ".join(options))


def validate(s: Settings) -> Settings:
    """Check every setting and combination; return the resolved settings or raise
    ``AttentionConfigError`` naming the field and the fix."""
    _choice("init", s.init, INITS)
    _choice("layout", s.layout, LAYOUTS)
    _choice("score", s.score, SCORES)
    _choice("pos", s.pos, POSITIONS)
    _choice("mask", s.mask, MASK_MODES)
    for name, (low, high) in LIMITS.items():
        if name in OPTIONS or name not in FIELDS:
            continue
        value = getattr(s, name)
        if not isinstance(value, int) or isinstance(value, bool):
            raise AttentionConfigError(name, "whole_number", low=low, high=high)
        if not low <= value <= high:
            raise AttentionConfigError(name, "out_of_range", value=value, low=low, high=high)
    for name, value in [(n, getattr(s, n)) for n in OPTIONS if n in FIELDS] + list(s.extra):
        if name not in OPTIONS:
            raise AttentionConfigError("kernel", "unknown_choice", value=name, options=", ".join(OPTIONS))
        OPTIONS[name].check(value)
    if not (math.isfinite(s.temperature) and 0.01 <= s.temperature <= 100):
        raise AttentionConfigError("temperature", "temperature", value=s.temperature)
    if not (math.isfinite(s.dropout) and 0.0 <= s.dropout < 1.0):
        raise AttentionConfigError("dropout", "dropout", value=s.dropout)
    if s.layout == "standard" and s.d_model % s.heads:
        raise AttentionConfigError("heads", "heads_divide", d_model=s.d_model, heads=s.heads)
    r = s.resolved()
    if r.score in ("dot", "scaled_dot") and r.d_q != r.d_k:
        raise AttentionConfigError("d_k", "dot_sizes", d_q=r.d_q, d_k=r.d_k)
    if r.residual_norm and r.layout == "tutorial" and r.heads * r.d_v != r.d_model:
        raise AttentionConfigError(
            "residual_norm", "residual_sizes", d_model=r.d_model, heads=r.heads, width=r.heads * r.d_v
        )
    return r
