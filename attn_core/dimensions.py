"""Every dimension of the model, declared once: one row per setting, from which the rest is generated.

A row gives the dimension's name (its ``Settings`` field, else its ``Settings.extra`` key; its URL
parameter, session key and widget key; its ``LabConfig`` field, else its ``LabConfig.added`` key),
its type, and its range, default and choices in each context where they differ: the trace's (the
row's own), the Lab's (``lab``: None = the Lab does not take it) and the Complexity sweep's
(``sweep``). From the table come ``config.LIMITS`` and the trace's checks, the ``trace`` and
``train`` commands' flags (``add_flags``), the Lab's limits (``lab.LAB_LIMITS``) and the fields it
shares with the sidebar (``lab.SHARED``), and the sidebar's rows (``explorer.controls``).

Kernel options have their own table (``attn_core.options``); this one is the model around them. A
new dimension registers itself with ``register_dimension(Dimension(...))`` and nothing else changes:
the sidebar draws it, the link carries it, both commands take it and the Lab reads it from the sidebar.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from .errors import AttentionConfigError
from .masks import MASK_MODES
from .positions import SCHEMES
from .tokenize import MAX_TOKENS

TYPES = ("int", "float", "choice", "bool")
CONTEXTS = ("trace", "lab", "sweep")


@dataclass(frozen=True)
class Span:
    """A dimension in one context: its inclusive range, default, choices and error code (None / () / "" =
    the trace's)."""

    low: float | None = None
    high: float | None = None
    default: Any = None
    choices: tuple = ()
    code: str = ""


@dataclass(frozen=True)
class Dimension:
    """One dimension. ``low``/``high``/``default``/``choices``: the trace's (the sidebar's too)."""

    name: str
    type: str  # int | float | choice | bool
    default: Any
    low: float | None = None
    high: float | None = None
    choices: tuple | Callable[[], tuple] = ()  # a callable: values known only later (the kernel registry)
    help: str = ""  # the CLI's help, English
    cli: str = ""  # its flag; "" = "--" + name with "_" -> "-"
    code: str = ""  # the error code of a value out of range; "" = out_of_range (whole_number for a non-int)
    below: bool = False  # the trace's high end is excluded (a dropout below 1)
    checked: bool = True  # config.validate checks it (False: checked where it is used, or any value works)
    lab: Span | None = None  # the Lab's; None = not a Lab setting
    sweep: Span | None = None  # the Complexity sweep's; None = not swept
    # how the sidebar draws it
    section: str = ""  # the catalogue key of its heading; "" = not drawn
    widget: str = ""  # "radio": a choice drawn as radio buttons
    fmt: str = "opt."  # a choice's labels: the catalogue key prefix of each value
    row: str = ""  # consecutive rows with the same row share one line
    step: float = 1
    late: bool = False  # drawn after its section's kernel options
    label_key: str = ""  # the catalogue key of its label; "" = its name

    def __post_init__(self) -> None:
        if self.type not in TYPES:
            raise ValueError(f"dimension {self.name}: type must be one of {TYPES}")
        if not self.cli:
            object.__setattr__(self, "cli", "--" + self.name.replace("_", "-"))

    def span(self, context: str = "trace") -> Span | None:
        """Its range, default and choices in ``context`` (the trace's filling what a context leaves out)."""
        own = Span(self.low, self.high, self.default, self.options(), self.code or "out_of_range")
        other = {"trace": own, "lab": self.lab, "sweep": self.sweep}[context]
        if other is None:
            return None
        filled = {k: getattr(own, k) for k in ("low", "high", "default") if getattr(other, k) is None}
        return replace(other, **filled, choices=other.choices or own.choices, code=other.code or own.code)

    def options(self) -> tuple:
        return tuple(self.choices() if callable(self.choices) else self.choices)

    def check(self, value: Any, context: str = "trace") -> Any:
        """``value`` if valid in ``context``, else an ``AttentionConfigError`` (the codes the checks have
        always raised: unknown_choice, whole_number, out_of_range, or the row's own ``code``)."""
        span = self.span(context)
        if self.type == "choice":
            if value not in span.choices:
                raise AttentionConfigError(self.name, "unknown_choice", value=value, options=", ".join(span.choices))
            return value
        if self.type == "bool":
            if not isinstance(value, bool):
                raise AttentionConfigError(self.name, "unknown_choice", value=value, options="true, false")
            return value
        low, high = span.low, span.high
        if self.type == "int" and (not isinstance(value, int) or isinstance(value, bool)):
            raise AttentionConfigError(self.name, "whole_number", low=low, high=high)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not self._inside(value, span, context):
            raise AttentionConfigError(self.name, span.code, value=value, low=low, high=high)
        return value

    def _inside(self, value, span: Span, context: str) -> bool:
        if not math.isfinite(value) or value < span.low:
            return False
        return value < span.high if self.below and context == "trace" else value <= span.high


DIMENSIONS: dict[str, Dimension] = {}


def register_dimension(dimension: Dimension) -> Dimension:
    """Add (or replace) a row; it takes its place at the end of its sidebar section."""
    DIMENSIONS[dimension.name] = dimension
    return dimension


def unregister_dimension(name: str) -> None:
    DIMENSIONS.pop(name, None)


def _kernels() -> tuple:
    from .kernels import KERNELS

    return tuple(KERNELS)


SCORES = ("dot", "scaled_dot", "additive")
LAYOUTS = ("tutorial", "standard")
INITS = ("tutorial", "standard")
POSITIONS = tuple(n for n, s in SCHEMES.items() if s.trace)  # none, sinusoidal, learned; the Lab adds rope, alibi
LAB_KERNELS = ("full", "sliding_window", "linear_elu", "causal_linear", "sigmoid")
SIZE = 1024  # the trace's largest width

for _row in (
    Dimension("heads", "int", 1, 1, 32, section="sec_dims", lab=Span(1, 8), sweep=Span(1, 64, 4)),
    Dimension("layout", "choice", "tutorial", choices=LAYOUTS, section="sec_dims", widget="radio", fmt="opt.layout."),
    Dimension("d_model", "int", 16, 1, SIZE, section="sec_dims", lab=Span(4, 256, 32)),
    Dimension("d_q", "int", 24, 1, SIZE, section="sec_dims", row="dims"),
    Dimension("d_k", "int", 24, 1, SIZE, section="sec_dims", row="dims", lab=Span(1, 512, 16)),
    Dimension("d_v", "int", 28, 1, SIZE, section="sec_dims", row="dims", lab=Span(1, 256, 16)),
    Dimension("score", "choice", "scaled_dot", choices=SCORES, section="sec_scores", lab=Span()),
    Dimension(
        "temperature", "float", 1.0, 0.01, 100.0, code="temperature", section="sec_scores", step=0.1, lab=Span()
    ),
    Dimension(
        "kernel",
        "choice",
        "full",
        choices=_kernels,
        checked=False,  # the trace checks it against the registry
        section="sec_variant",
        fmt="kernel.{}.label",
        label_key="kernel_title",
        lab=Span(choices=LAB_KERNELS),
    ),
    Dimension(
        "mask",
        "choice",
        "none",
        choices=MASK_MODES,
        section="sec_variant",
        lab=Span(choices=tuple(m for m in MASK_MODES if m != "padding")),
    ),
    Dimension("causal", "bool", False, help="AND a causal mask with any other", checked=False, section="sec_variant"),
    Dimension(
        "pos",
        "choice",
        "none",
        choices=POSITIONS,
        section="sec_model",
        lab=Span(default="sinusoidal", choices=tuple(SCHEMES)),
    ),
    Dimension("init", "choice", "tutorial", choices=INITS, section="sec_model", widget="radio"),
    Dimension(
        "dropout",
        "float",
        0.0,
        0.0,
        1.0,
        code="dropout",
        below=True,
        section="sec_model",
        late=True,
        lab=Span(high=0.9, code="lab_dropout"),
    ),
    Dimension("residual_norm", "bool", False, checked=False, section="sec_model", late=True),
    Dimension("pad_to", "int", 0, 0, MAX_TOKENS, help="padding mask: pad the key side to this length"),
):
    register_dimension(_row)


def in_context(context: str = "trace") -> dict[str, Dimension]:
    """The dimensions ``context`` takes, in the table's order."""
    return {n: d for n, d in DIMENSIONS.items() if context == "trace" or getattr(d, context) is not None}


def limits(context: str = "trace", types: Iterable[str] = ("int",)) -> dict[str, tuple]:
    """``{name: (low, high)}`` of the dimensions of these types in ``context``."""
    spans = {n: d.span(context) for n, d in in_context(context).items() if d.type in types}
    return {n: (s.low, s.high) for n, s in spans.items()}


def defaults(context: str = "trace") -> dict[str, Any]:
    return {n: d.span(context).default for n, d in in_context(context).items()}


class Live(Mapping):
    """A table made from the registered rows each time it is read (a row registered later is in it). One
    reading makes it once: a walk over its items, values or keys, a ``get``, an ``in`` (Mapping's own would
    make the whole table again for every row it reads, and the Lab validates its settings on every rerun)."""

    def __init__(self, make: Callable[[], dict]) -> None:
        self._make = make

    def __getitem__(self, name: str):
        return self._make()[name]

    def __contains__(self, name: object) -> bool:
        return name in self._make()

    def get(self, name: str, default=None):
        return self._make().get(name, default)

    def items(self):
        return self._make().items()

    def values(self):
        return self._make().values()

    def keys(self):
        return self._make().keys()

    def __iter__(self):
        return iter(self._make())

    def __len__(self) -> int:
        return len(self._make())

    def __repr__(self) -> str:
        return repr(self._make())


def add_flags(parser: argparse.ArgumentParser, context: str = "trace") -> argparse.ArgumentParser:
    """A flag per dimension of ``context`` (one the parser already has is skipped), ``dest`` = its name,
    default None (the caller's settings fill in): a number's type, a choice's values, a switch."""
    taken = {s for a in parser._actions for s in a.option_strings} | {a.dest for a in parser._actions}
    for d in in_context(context).values():
        if d.cli in taken or d.name in taken:
            continue
        more = {"help": d.help or None}
        if d.type == "bool":
            parser.add_argument(d.cli, dest=d.name, action="store_true", default=None, **more)
        elif d.type == "choice":
            parser.add_argument(d.cli, dest=d.name, choices=list(d.span(context).choices), **more)
        else:
            parser.add_argument(d.cli, dest=d.name, type=int if d.type == "int" else float, **more)
    return parser


def given(args, context: str = "trace") -> dict[str, Any]:
    """The dimensions' flags given on a command line (a namespace), by name."""
    names = in_context(context)
    return {n: getattr(args, n) for n in names if getattr(args, n, None) is not None}
