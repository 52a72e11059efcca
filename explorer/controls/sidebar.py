"""The sidebar's table: a row per model dimension (``attn_core.dimensions``) and per kernel option
(``attn_core.options``), in the table's order, and the few rows that are the sidebar's own.

Each section lists its dimensions, then the kernel options under that heading, then its ``late``
dimensions; a dimension or option registered later gets its row with no edit here. The few rows
drawn otherwise than their dimension's type says are in ``DRAWN_AS``: the variant's choices (the
ones this server runs), when the mask and the causal switch show, and dropout (a switch and a rate).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from attn_core import Settings
from attn_core.config import FIELDS, TUTORIAL_SENTENCE
from attn_core.dimensions import DIMENSIONS, Dimension
from attn_core.options import OPTIONS, Option
from explorer.controls.control import Control

DEFAULT_SOURCE = "Das Leben ist kurz, iss zuerst den Nachtisch"
DEFAULTS = Settings()
_KINDS = {"int": "int", "float": "float", "bool": "switch", "choice": "choice"}


def live_variants() -> tuple[str, ...]:
    """The variants the sidebar offers: every teaching kernel, and FlexAttention where it runs and
    compiling is acceptable. Each new sentence length compiles it anew (3–7 s on a 2-core CPU,
    holding the interpreter: every other session waits), so on a CPU it is offered only when the
    server says so (ATTN_EXPLORER_FLEX=1); the Complexity page benchmarks it everywhere."""
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


def option_control(o: Option) -> Control:
    """The sidebar row of a kernel option (``attn_core.options``): its widget, limits, default and
    label from the option's row; a variant-section option is shown when the chosen variant takes it
    (or the mask uses it), the model section's always."""
    limits = {"low": o.low, "high": o.high} if o.type in ("int", "float") else {}
    return Control(
        o.name,
        _KINDS[o.type],
        o.default,
        o.section,
        options=tuple(o.choices),
        shown=_needs(o.name, *o.masks) if o.section == "sec_variant" else None,
        title="" if o.label_key == o.name else o.label_key,
        **limits,
    )


def dimension_control(d: Dimension) -> Control:
    """The sidebar row of a model dimension: its widget, the trace's range, default and choices, and
    its label, from the dimension's row."""
    span = d.span("trace")
    limits = {"low": span.low, "high": span.high} if d.type in ("int", "float") else {}
    fields = dict(step=d.step, options=span.choices, fmt=d.fmt, row=d.row, title=d.label_key)
    return Control(d.name, d.widget or _KINDS[d.type], span.default, d.section, **fields, **limits)


def _dropout(c: Control) -> tuple[Control, ...]:
    """Dropout as a switch and, when on, its rate (up to the Lab's maximum: every value it offers trains)."""
    high = DIMENSIONS["dropout"].span("lab").high
    return (
        Control("dropout_on", "switch", False, c.section, title="dropout"),
        Control("dropout", "slider", 0.1, c.section, low=0.05, high=high, step=0.05, shown=_on, title="dropout_p"),
    )


def _on(v: dict) -> bool:
    return v["dropout_on"]


DRAWN_AS = {  # dimension -> its rows in the sidebar, where they differ from its table row
    "kernel": lambda c: (replace(c, options=live_variants()),),
    "mask": lambda c: (replace(c, shown=lambda v: not _kernel(v).pattern),),
    "causal": lambda c: (replace(c, shown=lambda v: v["mask"] != "causal" and not _kernel(v).always_causal),),
    "dropout": _dropout,
}


def _dimension_rows(dims) -> tuple[Control, ...]:
    rows = (dimension_control(d) for d in dims)
    return tuple(r for c in rows for r in DRAWN_AS.get(c.name, lambda c: (c,))(c))


def _sidebar() -> tuple[Control, ...]:
    rows = [
        Control("sentence", "area", TUTORIAL_SENTENCE, "sec_input"),
        Control("source", "text", DEFAULT_SOURCE, "sec_input"),
    ]
    sections = tuple(dict.fromkeys(d.section for d in DIMENSIONS.values() if d.section))
    for section in sections:
        dims = [d for d in DIMENSIONS.values() if d.section == section]
        rows += _dimension_rows(d for d in dims if not d.late)
        rows += (option_control(o) for o in OPTIONS.values() if o.section == section)
        rows += _dimension_rows(d for d in dims if d.late)
    rows += (option_control(o) for o in OPTIONS.values() if o.section and o.section not in sections)
    return tuple(rows)


_BUILT: dict[tuple, tuple[Control, ...]] = {}
_NAMED: dict[str, Any] = {}  # the rows last named, and their names


def sidebar_rows() -> tuple[Control, ...]:
    """The sidebar's rows for the dimensions and options registered now (built once per set of them)."""
    from attn_core.kernels import KERNELS

    tables = (OPTIONS, DIMENSIONS)
    key = (*(tuple((name, id(o)) for name, o in t.items()) for t in tables), tuple(KERNELS))  # cheap: every access
    if key not in _BUILT:
        _BUILT.clear()
        _BUILT[key] = _sidebar()
    return _BUILT[key]


class _Rows(Sequence):
    """``SIDEBAR``: the table as it is now (a dimension or option registered later has its row)."""

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
    """The drawn values of kernel options and dimensions that ``Settings`` has no field for (``Settings.extra``)."""
    names = (*OPTIONS, *DIMENSIONS)
    return tuple((name, values[name]) for name in names if name not in FIELDS and name in values)


SIDEBAR: Sequence[Control] = _Rows()
BY_NAME: Mapping[str, Control] = _ByName()
LANG = Control("lang", "radio", "en", options=("en", "zh"), title="language")
PALETTE = Control(  # kept by a reset
    "palette", "radio", "standard", options=("standard", "safe"), fmt="palette.", title="palette_title"
)
