"""Every setting of the model and its kernels, declared once: one ``Knob`` per setting, from which the rest is made.

A ``Knob`` is one row of the table (not to be confused with ``config.Settings``, the trace's settings object, which
holds one value per row). Its name is its ``Settings`` field (else its key in ``Settings.extra``), its URL parameter,
session key and widget key, its ``LabConfig`` field (else ``LabConfig.added``), its ``bench.Shape`` field (else
``Shape.extra``) and its CLI flag. It gives its type and, per context, a ``Span``: the range, default and choices
that context takes, each left out (None) where it is the trace's:

- trace (the row's own ``low``/``high``/``default``/``choices``): the sidebar, the link, ``config.validate`` and
  the ``trace`` command;
- ``lab``: the Lab and the ``train`` command (None: the Lab does not take it);
- ``sweep``: the Complexity sweep, a ``bench.Shape`` field with the ``bench`` command's flag and the page's input
  (None: not swept);
- ``page``: the Variants page's own input of a kernel option (None: not drawn there).

A kernel option (``kernel_option=True``) is a row a kernel may take by its name (``Kernel.options``); it has its
own fields: the mask modes that use it too (``masks``: the sidebar shows it for them), the values an error curve
sweeps (``curve``) and the curve's log axis (``log``). From the table come ``config.LIMITS`` and the trace's
checks, the options each kernel receives (``trace.kernel_settings``), the commands' flags (``add_flags``), the Lab's
limits (``lab.LAB_LIMITS``), the fields it shares with the sidebar (``lab.SHARED``) and its fields' defaults, the
``bench.Shape`` dataclass and its check, the sidebar's rows (``explorer.controls``), the Variants page's inputs and
the Complexity page's inputs. A new setting registers itself with ``register(Knob(...))`` (a variant's new option
next to its kernel's ``register``) and nothing else changes: the sidebar draws it, the link carries it, the commands
take it, and the Lab and the sweep take it where it has their span. A row registered after the dataclasses were made
travels as (name, value) pairs beside their fields (``Beyond``).
"""

from __future__ import annotations

import argparse
import functools
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

from .errors import AttentionConfigError
from .masks import MASK_MODES
from .positions import SCHEMES
from .tokenize import MAX_TOKENS

TYPES = ("int", "float", "choice", "bool")
CONTEXTS = ("trace", "lab", "sweep", "page")


@dataclass(frozen=True)
class Span:
    """A knob in one context: its inclusive range, default, choices and error code (None / () / "" = the trace's).
    ``read_only``: the context reads it from the sidebar, brought into its own range, and a preset never writes it
    back (the Lab's seed, and its window: the Lab's range is narrower than the sidebar's)."""

    low: float | None = None
    high: float | None = None
    default: Any = None
    choices: tuple = ()
    code: str = ""
    read_only: bool = False


@dataclass(frozen=True)
class Knob:
    """One setting. ``low``/``high``/``default``/``choices``: the trace's (the sidebar's too)."""

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
    page: Span | None = None  # the Variants page's input; None = not drawn there
    # how the sidebar draws it
    section: str = ""  # the catalogue key of its heading; "" = not drawn
    widget: str = ""  # "radio": a choice drawn as radio buttons
    fmt: str = "opt."  # a choice's labels: the catalogue key prefix of each value
    row: str = ""  # consecutive rows with the same row share one line
    step: float = 1
    label_key: str = ""  # the catalogue key of its label; "" = its name
    # a kernel option's own
    kernel_option: bool = False  # a kernel may take it by this name (``Kernel.options``)
    masks: tuple[str, ...] = ()  # mask modes that use it too: the sidebar shows it for them
    curve: tuple = ()  # the values an error curve sweeps; () = spread over the sentence length
    log: bool = False  # its error curve on a log axis

    def __post_init__(self) -> None:
        if self.type not in TYPES:
            raise ValueError(f"knob {self.name}: type must be one of {TYPES}")
        if not self.cli:
            object.__setattr__(self, "cli", "--" + self.name.replace("_", "-"))

    @property
    def label(self) -> str:
        """The catalogue key of its label."""
        return self.label_key or self.name

    def span(self, context: str = "trace") -> Span | None:
        """Its range, default and choices in ``context`` (the trace's filling what a context leaves out)."""
        own = Span(self.low, self.high, self.default, self.options(), self.code or "out_of_range")
        other = {"trace": own, "lab": self.lab, "sweep": self.sweep, "page": self.page}[context]
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
                options = ", ".join(map(str, span.choices))
                raise AttentionConfigError(self.name, "unknown_choice", value=value, options=options)
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
        if not (isinstance(value, int) or math.isfinite(value)) or value < span.low:  # an int may be past a float
            return False
        return value < span.high if self.below and context == "trace" else value <= span.high

    def parse(self, text: str, context: str = "trace") -> Any:
        """A command-line (or other text) value as this knob's value, checked in ``context``."""
        span = self.span(context)
        if self.type == "int":
            try:
                value = int(text)
            except (TypeError, ValueError):
                raise AttentionConfigError(self.name, "whole_number", low=span.low, high=span.high) from None
        elif self.type == "float":
            try:
                value = float(text)
            except (TypeError, ValueError):
                raise AttentionConfigError(self.name, span.code, value=text, low=span.low, high=span.high) from None
        elif self.type == "bool":
            value = {"true": True, "false": False, "1": True, "0": False}.get(str(text).lower(), text)
        else:
            value = text
        return self.check(value, context)


KNOBS: dict[str, Knob] = {}


def register(knob: Knob) -> Knob:
    """Add (or replace) a row; it takes its place at the end of its sidebar section."""
    KNOBS[knob.name] = knob
    return knob


def unregister(name: str) -> None:
    KNOBS.pop(name, None)


SCORES = ("dot", "scaled_dot", "additive")
LAYOUTS = ("tutorial", "standard")
INITS = ("tutorial", "standard")
POSITIONS = tuple(n for n, s in SCHEMES.items() if s.trace)  # none, sinusoidal, learned; the Lab adds rope, alibi
LAB_KERNELS = ("full", "sliding_window", "linear_elu", "causal_linear", "sigmoid")
PATTERNS = ("sliding_window", "dilated", "global_window", "block")  # the mask patterns FlexAttention runs
SIZE = 1024  # the trace's largest width
WIDE = 4096  # a kernel option's largest size


def _option(name: str, type_: str, default, low=None, high=None, **more) -> Knob:
    """A kernel option's row: drawn under the variant's heading unless it says otherwise."""
    return Knob(name, type_, default, low, high, kernel_option=True, **{"section": "sec_variant", **more})


# the table, in the sidebar's order within each section
for _row in (
    Knob("heads", "int", 1, 1, 32, section="sec_dims", lab=Span(1, 8), sweep=Span(1, 64, 4)),
    Knob("layout", "choice", "tutorial", choices=LAYOUTS, section="sec_dims", widget="radio", fmt="opt.layout."),
    Knob("d_model", "int", 16, 1, SIZE, section="sec_dims", lab=Span(4, 256, 32)),
    Knob("d_q", "int", 24, 1, SIZE, section="sec_dims", row="dims"),
    Knob("d_k", "int", 24, 1, SIZE, section="sec_dims", row="dims", lab=Span(1, 512, 16)),
    Knob("d_v", "int", 28, 1, SIZE, section="sec_dims", row="dims", lab=Span(1, 256, 16)),
    Knob("score", "choice", "scaled_dot", choices=SCORES, section="sec_scores", lab=Span()),
    Knob("temperature", "float", 1.0, 0.01, 100.0, code="temperature", section="sec_scores", step=0.1, lab=Span()),
    Knob(
        "kernel",
        "choice",
        "full",
        choices=(),  # the kernel registry's names: attn_core.kernels.registry gives them (the table imports no kernel)
        checked=False,  # the trace checks it against the registry
        section="sec_variant",
        fmt="kernel.{}.label",
        label_key="kernel_title",
        lab=Span(choices=LAB_KERNELS),
    ),
    Knob(
        "mask",
        "choice",
        "none",
        choices=MASK_MODES,
        section="sec_variant",
        lab=Span(choices=tuple(m for m in MASK_MODES if m != "padding")),
    ),
    Knob(
        "causal",
        "bool",
        False,
        help="AND a causal mask with any other",
        checked=False,
        section="sec_variant",
        sweep=Span(),
    ),
    _option(
        "window",
        "int",
        2,
        1,
        WIDE,
        help="sliding window, dilated, global + window: keys within w positions of the query",
        masks=("sliding_window", "dilated", "global_window"),
        lab=Span(1, 32, read_only=True),
        sweep=Span(default=128),
        page=Span(high=512, default=1),
    ),
    _option(
        "dilation",
        "int",
        2,
        1,
        512,
        help="dilated attention: every d-th key within the window",
        masks=("dilated",),
        sweep=Span(),
        page=Span(high=64),  # a sentence is short
    ),
    _option(
        "global_tokens",
        "int",
        1,
        0,
        512,
        help="global + window: the first g tokens attend and are attended everywhere",
        masks=("global_window",),
        sweep=Span(),
    ),
    _option(
        "block",
        "int",
        2,
        1,
        WIDE,
        help="block-local attention's block size",
        masks=("block",),
        sweep=Span(),
        page=Span(high=512),
    ),
    _option(
        "features",
        "int",
        16,
        1,
        WIDE,
        help="performer: random features m",
        curve=(1, 2, 4, 8, 16, 32, 64, 128, 256),
        log=True,
        sweep=Span(default=64),
        page=Span(high=1024),
    ),
    _option(
        "proj_k",
        "int",
        4,
        1,
        WIDE,
        help="linformer: projected length k",
        sweep=Span(default=64),
        page=Span(high=512, default=3),
    ),
    Knob(
        "pos",
        "choice",
        "none",
        choices=POSITIONS,
        section="sec_model",
        lab=Span(default="sinusoidal", choices=tuple(SCHEMES)),
    ),
    Knob("init", "choice", "tutorial", choices=INITS, section="sec_model", widget="radio"),
    _option(
        "seed",
        "int",
        123,
        0,
        2**31 - 1,
        help="the seed of the weights and of random features",
        section="sec_model",
        lab=Span(default=0, read_only=True),
    ),
    Knob(
        "dropout",
        "float",
        0.0,
        0.0,
        1.0,
        code="dropout",
        below=True,
        section="sec_model",
        lab=Span(high=0.9, code="lab_dropout"),
    ),
    Knob("residual_norm", "bool", False, checked=False, section="sec_model"),
    Knob("pad_to", "int", 0, 0, MAX_TOKENS, help="padding mask: pad the key side to this length"),
    _option(
        "pattern",
        "choice",
        "sliding_window",
        choices=PATTERNS,
        help="FlexAttention: the mask pattern it compiles",
        section="",
        sweep=Span(),
    ),
):
    register(_row)


def in_context(context: str = "trace") -> dict[str, Knob]:
    """The knobs ``context`` takes, in the table's order."""
    return {n: k for n, k in KNOBS.items() if context == "trace" or getattr(k, context) is not None}


def kernel_knobs() -> dict[str, Knob]:
    """The rows a kernel may take as options, in the table's order."""
    return {n: k for n, k in KNOBS.items() if k.kernel_option}


def limits(context: str = "trace", types: Iterable[str] = ("int",)) -> dict[str, tuple]:
    """``{name: (low, high)}`` of the knobs of these types in ``context``."""
    spans = {n: k.span(context) for n, k in in_context(context).items() if k.type in types}
    return {n: (s.low, s.high) for n, s in spans.items()}


def defaults(context: str = "trace") -> dict[str, Any]:
    return {n: k.span(context).default for n, k in in_context(context).items()}


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


class Beyond:
    """A frozen dataclass with one field of sorted (name, value) pairs (``BEYOND``) for the rows registered after
    it was made: ``value(name)`` reads a field or a pair (else the row's default in ``CONTEXT``),
    ``with_values(**values)`` sets either. ``Settings.extra``, ``LabConfig.added`` and ``Shape.extra``."""

    BEYOND = "extra"
    CONTEXT = "trace"

    def _sort_beyond(self) -> None:  # from JSON or a dict: lists of pairs -> sorted tuples (hashable)
        pairs = getattr(self, self.BEYOND)
        pairs = pairs.items() if isinstance(pairs, dict) else pairs
        object.__setattr__(self, self.BEYOND, tuple(sorted((str(k), v) for k, v in pairs)))

    def value(self, name: str):
        """A knob's value: its field, else its pair, else its default in ``CONTEXT``."""
        if name in _names(type(self)):
            return getattr(self, name)
        return dict(getattr(self, self.BEYOND)).get(name, KNOBS[name].span(self.CONTEXT).default)

    def with_values(self, **values):
        """A copy with these knobs changed: a field's by ``replace``, any other's in the pairs."""
        own = _names(type(self))
        known = {k: v for k, v in values.items() if k in own}
        more = {**dict(getattr(self, self.BEYOND)), **{k: v for k, v in values.items() if k not in own}}
        return replace(self, **known, **{self.BEYOND: tuple(more.items())})


@functools.cache
def _names(cls) -> frozenset[str]:
    return frozenset(f.name for f in fields(cls))


def _flag_type(knob: Knob, context: str, strict: bool):
    def parse(text: str):
        try:
            return knob.parse(text, context)
        except AttentionConfigError as err:
            if strict or err.code == "whole_number" or knob.type in ("choice", "bool"):
                raise argparse.ArgumentTypeError(str(err)) from None
            return int(text) if knob.type == "int" else float(text)  # the caller's own check says it

    parse.__name__ = knob.type  # argparse names the type in its message
    return parse


def add_flags(
    parser: argparse.ArgumentParser,
    context: str = "trace",
    *,
    names: Iterable[str] | None = None,
    defaults: Mapping[str, Any] | None = None,
    strict: bool = False,
) -> argparse.ArgumentParser:
    """A flag per knob of ``context`` (or ``names`` of them; one the parser already has is skipped), ``dest`` =
    its name: a number's and a choice's value read as the knob reads it (a bad one refused by argparse with the
    engine's one line: what is wrong and what to pick), a switch. ``defaults``: the flags' defaults (None when
    absent: the caller's own settings fill in). ``strict=False``: a number out of ``context``'s range is let
    through for the caller's own check (the same message, and the command returns 2 instead of argparse's exit)."""
    taken = {s for a in parser._actions for s in a.option_strings} | {a.dest for a in parser._actions}
    defaults = defaults or {}
    table = in_context(context)
    for name in table if names is None else names:
        k = table[name]
        if k.cli in taken or k.name in taken:
            continue
        more = {"default": defaults.get(name), "help": k.help or None}
        if k.type == "bool":
            parser.add_argument(k.cli, dest=k.name, action="store_true", **more)
            continue
        if k.type == "choice":
            more["choices"] = list(k.span(context).choices)
        parser.add_argument(k.cli, dest=k.name, type=_flag_type(k, context, strict), **more)
    return parser


def given(args, context: str = "trace", names: Iterable[str] | None = None, *, checked: bool = False) -> dict:
    """The knobs' values given on a command line (a namespace) or in a dict, by name: those of ``context`` (or
    ``names``); one absent (or None) is left out. ``checked``: each checked in ``context`` (an
    ``AttentionConfigError`` for a bad one)."""
    get = args.get if isinstance(args, dict) else lambda n: getattr(args, n, None)
    table = in_context(context)
    out = {n: get(n) for n in (table if names is None else names) if get(n) is not None}
    return {n: table[n].check(v, context) for n, v in out.items()} if checked else out
