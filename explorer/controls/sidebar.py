"""The sidebar's table: a row per knob with a section (``attn_core.knobs``: the model's settings and the kernel
options), in the table's order, and the few rows that are the sidebar's own.

Sections come in the order the table first names them, each with its knobs in the table's order; a knob registered
later gets its row, at the end of its section, with no edit here. The few rows drawn otherwise than their knob's
type says are in ``DRAWN_AS``: the variant's choices (the ones this server runs), when the mask and the causal
switch show, and dropout (a switch and a rate).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from attn_core import Settings
from attn_core.config import FIELDS, TUTORIAL_SENTENCE
from attn_core.knobs import KNOBS, Knob
from explorer.controls.control import Control

DEFAULT_SOURCE = "Das Leben ist kurz, iss zuerst den Nachtisch"
DEFAULTS = Settings()
_KINDS = {"int": "int", "float": "float", "bool": "switch", "choice": "choice"}


def live_variants() -> tuple[str, ...]:
    """The variants the sidebar offers: every teaching kernel, and FlexAttention where it runs and
    compiling is acceptable. Within 128 tokens it runs unfused (milliseconds), but a longer sentence compiles
    its kernel for each new shape (3–7 s on a 2-core CPU, holding the interpreter: every other session
    waits), so on a CPU it is offered only when the server says so (ATTN_EXPLORER_FLEX=1); the Complexity
    page benchmarks it everywhere."""
    import os

    import torch

    from attn_core.kernels import KERNELS, flex_unavailable

    names = [name for name, k in KERNELS.items() if k.teaching]
    compiling_ok = torch.cuda.is_available() or os.environ.get("ATTN_EXPLORER_FLEX") == "1"
    if "flex" in KERNELS and compiling_ok and flex_unavailable() is None:
        names.append("flex")
    return tuple(names)


def _kernel(v: dict):
    from attn_core.kernels import KERNELS

    return KERNELS.get(v.get("kernel", "full"), KERNELS["full"])


def _needs(option: str, *masks: str):
    """Shown when the mask uses ``option`` or the chosen variant takes it."""

    def shown(v: dict) -> bool:
        return v.get("mask") in masks or option in _kernel(v).options

    return shown


def knob_control(k: Knob) -> Control:
    """The sidebar row of a knob: its widget, the trace's range, default and choices, and its label, from the
    knob's row; a kernel option under the variant's heading is shown when the chosen variant takes it (or the mask
    uses it)."""
    span = k.span("trace")
    limits = {"low": span.low, "high": span.high} if k.type in ("int", "float") else {}
    shown = _needs(k.name, *k.masks) if k.kernel_option and k.section == "sec_variant" else None
    fields = dict(step=k.step, options=span.choices, fmt=k.fmt, row=k.row, title=k.label_key, shown=shown)
    return Control(k.name, k.widget or _KINDS[k.type], span.default, k.section, **fields, **limits)


def _dropout(c: Control) -> tuple[Control, ...]:
    """Dropout as a switch and, when on, its rate (up to the Lab's maximum: every value it offers trains)."""
    high = KNOBS["dropout"].span("lab").high
    return (
        Control("dropout_on", "switch", False, c.section, title="dropout"),
        Control("dropout", "slider", 0.1, c.section, low=0.05, high=high, step=0.05, shown=_on, title="dropout_p"),
    )


def _on(v: dict) -> bool:
    return v["dropout_on"]


DRAWN_AS = {  # knob -> its rows in the sidebar, where they differ from its table row
    "kernel": lambda c: (replace(c, options=live_variants()),),
    "mask": lambda c: (replace(c, shown=lambda v: not _kernel(v).pattern),),
    "causal": lambda c: (replace(c, shown=lambda v: v["mask"] != "causal" and not _kernel(v).always_causal),),
    "dropout": _dropout,
}


def _knob_rows(knobs) -> tuple[Control, ...]:
    rows = (knob_control(k) for k in knobs)
    return tuple(r for c in rows for r in DRAWN_AS.get(c.name, lambda c: (c,))(c))


def _sidebar() -> tuple[Control, ...]:
    rows = [
        Control("sentence", "area", TUTORIAL_SENTENCE, "sec_input"),
        Control("source", "text", DEFAULT_SOURCE, "sec_input"),
    ]
    for section in dict.fromkeys(k.section for k in KNOBS.values() if k.section):
        rows += _knob_rows(k for k in KNOBS.values() if k.section == section)
    return tuple(rows)


_BUILT: dict[tuple, tuple[Control, ...]] = {}
_NAMED: dict[str, Any] = {}  # the rows last named, and their names


def sidebar_rows() -> tuple[Control, ...]:
    """The sidebar's rows for the knobs registered now (built once per set of them)."""
    from attn_core.kernels import KERNELS

    key = (tuple((name, id(k)) for name, k in KNOBS.items()), tuple(KERNELS))  # cheap: every access
    if key not in _BUILT:
        _BUILT.clear()
        _BUILT[key] = _sidebar()
    return _BUILT[key]


class _Rows(Sequence):
    """``SIDEBAR``: the table as it is now (a knob registered later has its row)."""

    def __getitem__(self, i):
        return sidebar_rows()[i]

    def __iter__(self):
        return iter(sidebar_rows())

    def __len__(self) -> int:
        return len(sidebar_rows())


class _ByName(Mapping):
    def __getitem__(self, name: str) -> Control:
        rows = sidebar_rows()
        if _NAMED.get("rows") is not rows:
            _NAMED.update(rows=rows, names={c.name: c for c in rows})
        return _NAMED["names"][name]

    def __iter__(self):
        return (c.name for c in sidebar_rows())

    def __len__(self) -> int:
        return len(sidebar_rows())


def extra_options(values: dict) -> tuple:
    """The drawn values of knobs that ``Settings`` has no field for (``Settings.extra``)."""
    return tuple((name, values[name]) for name in KNOBS if name not in FIELDS and name in values)


SIDEBAR: Sequence[Control] = _Rows()
BY_NAME: Mapping[str, Control] = _ByName()
LANG = Control("lang", "radio", "en", options=("en", "zh"), title="language")
PALETTE = Control(  # kept by a reset
    "palette", "radio", "standard", options=("standard", "safe"), fmt="palette.", title="palette_title"
)
