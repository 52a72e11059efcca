"""The plain settings object that flows from widgets (or CLI flags) into the engine.

Frozen and made of plain values, so it hashes: pages cache on it, the CLI builds it from flags,
and the JSON export writes it back out under ``config`` with the same keys as the flags.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace

from .errors import AttentionConfigError

# INITS, LAYOUTS, POSITIONS, SCORES: the names config has always had
from .knobs import INITS, KNOBS, LAYOUTS, POSITIONS, SCORES, Beyond, kernel_knobs, limits  # noqa: F401
from .tokenize import MAX_TOKENS

TUTORIAL_SENTENCE = "Life is short, eat dessert first"
MAX_TRACE_BYTES = 192 * 2**20  # what one live view may take; the CLI can pass more

# field: (low, high), inclusive, for live use: every whole-number knob's (attn_core.knobs)
LIMITS = limits("trace")
_D = {name: k.default for name, k in KNOBS.items()}  # the trace's defaults, for the fields below


class Plain:
    """A dataclass of plain values, to a dict and back (keys it does not have are ignored): what
    caches, links, JSON and worker processes carry."""

    def to_dict(self) -> dict:
        return asdict(self)

    def key(self) -> tuple:
        """Its values as sorted (name, value) pairs: hashable, a cache key or a question's name."""
        return tuple(sorted(self.to_dict().items()))

    def __getitem__(self, name: str):
        """A field's value by its name (a link's, a lesson's): ``settings["heads"]``."""
        if name not in self:
            raise KeyError(name)
        return getattr(self, name)

    def __contains__(self, name: object) -> bool:
        return name in {f.name for f in fields(self)}

    @classmethod
    def from_dict(cls, data: dict):
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


@dataclass(frozen=True)
class Settings(Plain, Beyond):
    sentence: str = TUTORIAL_SENTENCE
    source: str | None = None  # keys/values come from here when set (cross-attention)
    seed: int = _D["seed"]
    init: str = _D["init"]
    d_model: int = _D["d_model"]
    d_q: int = _D["d_q"]
    d_k: int = _D["d_k"]
    d_v: int = _D["d_v"]
    heads: int = _D["heads"]
    layout: str = _D["layout"]
    score: str = _D["score"]
    temperature: float = _D["temperature"]
    pos: str = _D["pos"]
    mask: str = _D["mask"]
    causal: bool = _D["causal"]  # AND-ed with any other mask
    window: int = _D["window"]
    dilation: int = _D["dilation"]
    global_tokens: int = _D["global_tokens"]
    block: int = _D["block"]
    pad_to: int = _D["pad_to"]  # padding mode: the batch length; 0 = no padding
    dropout: float = _D["dropout"]
    residual_norm: bool = _D["residual_norm"]
    kernel: str = _D["kernel"]
    features: int = _D["features"]  # performer's random features m
    proj_k: int = _D["proj_k"]  # linformer's projected length k
    max_tokens: int = MAX_TOKENS
    max_bytes: int = MAX_TRACE_BYTES  # one trace's memory, refused beyond (a shared server's budget)
    # knobs registered beyond these fields (attn_core.knobs), as sorted (name, value) pairs
    extra: tuple = ()

    def __post_init__(self) -> None:
        self._sort_beyond()

    def with_options(self, **values) -> Settings:
        """These settings with knobs changed: a field's by ``replace``, any other's in ``extra``."""
        return self.with_values(**values)

    def option(self, name: str):
        """A knob's value: its field, else ``extra``, else its default."""
        return self.value(name)

    def resolved(self) -> Settings:
        """The settings the engine really uses: the standard layout fixes the head dims."""
        if self.layout == "standard" and self.heads >= 1 and self.d_model % self.heads == 0:
            d_head = self.d_model // self.heads
            return replace(self, d_q=d_head, d_k=d_head, d_v=d_head)
        return self


FIELDS = frozenset(f.name for f in fields(Settings))


def validate(s: Settings) -> Settings:
    """Check every setting and combination; return the resolved settings or raise
    ``AttentionConfigError`` naming the field and the fix."""
    model = [k for k in KNOBS.values() if k.checked and not k.kernel_option]
    for k in sorted(model, key=lambda k: k.type != "choice"):  # the choices first, then the numbers
        if k.type != "float":
            k.check(s.option(k.name))
    options = kernel_knobs()  # then every kernel option, and every knob beyond the fields
    for name, value in [(n, getattr(s, n)) for n in options if n in FIELDS] + list(s.extra):
        if name not in KNOBS:
            raise AttentionConfigError("kernel", "unknown_choice", value=name, options=", ".join(options))
        KNOBS[name].check(value)
    for k in model:  # the real numbers last
        if k.type == "float":
            k.check(s.option(k.name))
    return _combinations(s)


def _combinations(s: Settings) -> Settings:
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
