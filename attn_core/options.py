"""Every option a kernel takes, declared once: one row per option, from which the rest is generated.

A row gives the option's name (its keyword in a kernel's signature, its ``Settings`` field or
``Settings.extra`` key, its URL parameter, session key and widget key), its type, default and
inclusive limits, its catalogue key (the label the UI shows), its CLI flag and help, and the values
an error curve sweeps. From the table come ``config``'s limits and checks, the options object the
kernels receive (``trace.kernel_settings``), the CLI flags (``add_flags``), the sidebar's rows for
kernel options (``explorer.controls``), the Variants page's inputs and the Complexity sweep's argv.

A kernel names the options it takes (``Kernel.options``) by these names; a new variant that needs
a new option registers it next to itself with ``register_option(Option(...))`` and nothing else
changes: the sidebar shows it when that variant is chosen, the link carries it, the CLI takes it.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .errors import AttentionConfigError

TYPES = ("int", "float", "choice", "bool")
PATTERNS = ("sliding_window", "dilated", "global_window", "block")  # the mask patterns FlexAttention runs


@dataclass(frozen=True)
class Option:
    """One option. ``low``/``high`` bound numbers (inclusive); ``choices`` a choice's values."""

    name: str
    type: str  # int | float | choice | bool
    default: Any
    low: float | None = None
    high: float | None = None
    choices: tuple = ()
    label_key: str = ""  # the catalogue key of its label; "" = its name
    help: str = ""  # the CLI's help, English
    sweep: tuple = ()  # the values an error curve sweeps; () = spread over the sentence length
    cli: str = ""  # its flag; "" = "--" + name with "_" -> "-"
    # how the app draws it (beyond the contract's fields)
    section: str = "sec_variant"  # the sidebar heading it sits under; "" = not drawn in the sidebar
    masks: tuple[str, ...] = ()  # mask modes that use it too: the sidebar shows it for them
    page: tuple | None = None  # the Variants page's input, (default, high); None = not drawn there
    log: bool = False  # its error curve on a log axis

    def __post_init__(self) -> None:
        if self.type not in TYPES:
            raise ValueError(f"option {self.name}: type must be one of {TYPES}")
        if not self.label_key:
            object.__setattr__(self, "label_key", self.name)
        if not self.cli:
            object.__setattr__(self, "cli", "--" + self.name.replace("_", "-"))

    def check(self, value: Any) -> Any:
        """``value`` if it is a valid value of this option, else ``AttentionConfigError``
        (the same codes ``config.validate`` has always raised: whole_number, out_of_range)."""
        if self.type == "choice":
            if value not in self.choices:
                options = ", ".join(map(str, self.choices))
                raise AttentionConfigError(self.name, "unknown_choice", value=value, options=options)
            return value
        if self.type == "bool":
            if not isinstance(value, bool):
                raise AttentionConfigError(self.name, "unknown_choice", value=value, options="true, false")
            return value
        low, high = self.low, self.high
        if self.type == "int" and (not isinstance(value, int) or isinstance(value, bool)):
            raise AttentionConfigError(self.name, "whole_number", low=low, high=high)
        if self.type == "float" and (isinstance(value, bool) or not isinstance(value, (int, float))):
            raise AttentionConfigError(self.name, "out_of_range", value=value, low=low, high=high)
        if not ((isinstance(value, int) or math.isfinite(value)) and low <= value <= high):
            raise AttentionConfigError(self.name, "out_of_range", value=value, low=low, high=high)
        return value

    def parse(self, text: str) -> Any:
        """A command-line (or other text) value as this option's value, checked."""
        if self.type == "int":
            try:
                value = int(text)
            except (TypeError, ValueError):
                raise AttentionConfigError(self.name, "whole_number", low=self.low, high=self.high) from None
        elif self.type == "float":
            try:
                value = float(text)
            except (TypeError, ValueError):
                raise AttentionConfigError(
                    self.name, "out_of_range", value=text, low=self.low, high=self.high
                ) from None
        elif self.type == "bool":
            value = {"true": True, "false": False, "1": True, "0": False}.get(str(text).lower(), text)
        else:
            value = text
        return self.check(value)


OPTIONS: dict[str, Option] = {}


def register_option(option: Option) -> Option:
    """Add (or replace) a row; a variant that brings a new option calls this next to its ``register``."""
    OPTIONS[option.name] = option
    return option


def unregister_option(name: str) -> None:
    OPTIONS.pop(name, None)


for _row in (
    Option(
        "window",
        "int",
        2,
        1,
        4096,
        help="sliding window, dilated, global + window: keys within w positions of the query",
        masks=("sliding_window", "dilated", "global_window"),
        page=(1, 512),
    ),
    Option(
        "dilation",
        "int",
        2,
        1,
        512,
        help="dilated attention: every d-th key within the window",
        masks=("dilated",),
        page=(2, 64),  # a sentence is short
    ),
    Option(
        "global_tokens",
        "int",
        1,
        0,
        512,
        help="global + window: the first g tokens attend and are attended everywhere",
        masks=("global_window",),
    ),
    Option("block", "int", 2, 1, 4096, help="block-local attention's block size", masks=("block",), page=(2, 512)),
    Option(
        "features",
        "int",
        16,
        1,
        4096,
        help="performer: random features m",
        sweep=(1, 2, 4, 8, 16, 32, 64, 128, 256),
        page=(16, 1024),
        log=True,
    ),
    Option("proj_k", "int", 4, 1, 4096, help="linformer: projected length k", page=(3, 512)),
    Option(
        "seed", "int", 123, 0, 2**31 - 1, help="the seed of the weights and of random features", section="sec_model"
    ),
    Option(
        "pattern",
        "choice",
        "sliding_window",
        choices=PATTERNS,
        help="FlexAttention: the mask pattern it compiles",
        section="",
    ),
):
    register_option(_row)


def limits(names: Iterable[str] | None = None) -> dict[str, tuple]:
    """``{name: (low, high)}`` of the numeric options (all, or ``names``)."""
    picked = OPTIONS if names is None else {n: OPTIONS[n] for n in names}
    return {n: (o.low, o.high) for n, o in picked.items() if o.type in ("int", "float")}


def defaults(names: Iterable[str] | None = None) -> dict[str, Any]:
    picked = OPTIONS if names is None else names
    return {n: OPTIONS[n].default for n in picked}


def values_from(source, names: Iterable[str] | None = None) -> dict[str, Any]:
    """The validated values of ``names`` (all options when None) found in a namespace or a dict;
    an option that is absent (or None) is left out. Raises ``AttentionConfigError`` for a bad one."""
    get = source.get if isinstance(source, dict) else lambda n: getattr(source, n, None)
    out = {}
    for name in OPTIONS if names is None else names:
        value = get(name)
        if value is not None:
            out[name] = OPTIONS[name].check(value)
    return out


def _flag_type(option: Option, strict: bool):
    def parse(text: str):
        try:
            return option.parse(text)
        except AttentionConfigError as err:
            if strict or err.code == "whole_number" or option.type in ("choice", "bool"):
                raise argparse.ArgumentTypeError(str(err)) from None
            return int(text) if option.type == "int" else float(text)  # the caller's own check says it

    parse.__name__ = option.type  # argparse names the type in its message
    return parse


def add_flags(
    parser: argparse.ArgumentParser,
    names: Iterable[str] | None = None,
    defaults: dict | None = None,
    *,
    strict: bool = True,
):
    """Add a flag per option (all, or ``names``; one the parser already has is skipped) with
    ``dest`` = the option's name; a bad value is refused by argparse with one line (the engine's
    message: what is wrong and what to pick). ``defaults`` override the flags' defaults (None
    when absent: the caller's own settings fill in). ``strict=False``: a number out of range is
    let through for the caller's own check (``config.validate`` raises the same message, and
    the command returns 2 instead of argparse's exit)."""
    taken = {s for a in parser._actions for s in a.option_strings} | {a.dest for a in parser._actions}
    defaults = defaults or {}
    for name in OPTIONS if names is None else names:
        o = OPTIONS[name]
        if o.cli in taken or o.name in taken:
            continue
        extra = {"choices": list(o.choices)} if o.type == "choice" else {}
        if o.type == "bool":
            parser.add_argument(o.cli, dest=o.name, action="store_true", default=defaults.get(name), help=o.help)
            continue
        parser.add_argument(
            o.cli, dest=o.name, type=_flag_type(o, strict), default=defaults.get(name), help=o.help or None, **extra
        )
    return parser
