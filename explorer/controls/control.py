"""Every setting a user can change, as one table, and the one way each is drawn, reset and kept in the URL.

A control's ``name`` is its URL parameter, its ``st.session_state`` key and its widget key (a
contract: links in lesson plans use these names). Its first value comes from the session, else
from the link (parsed and range-checked here: a value that cannot be used is dropped and named in
the sidebar's notice), else from its default; a change is written back to the URL, and a value
equal to the default leaves the URL. Nothing else in the app reads or writes these URL
parameters.

Choices keep their language-neutral value in the session (``"causal"``, not its label). When the
labels change under a drawn widget (a language switch, a new sentence for the focus selector),
the browser still holds the old label: ``pin_choices`` runs as that change's callback and writes
each choice's value back, so the browser is told the new label of the same value.

Every widget also gets its current value as its default (``value=``, ``index=``). A browser that
redraws a widget, as it may under a new label, falls back to the default the widget was sent;
without it, a language switch sometimes turned d_model into 1 and the sentence into "" (the
widget's own defaults), about one switch in eight in Chromium.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import streamlit as st

from attn_core import Settings
from attn_core.config import FIELDS, INITS, LAYOUTS, LIMITS, POSITIONS, SCORES, TUTORIAL_SENTENCE
from attn_core.masks import MASK_MODES
from attn_core.options import OPTIONS, Option

from . import session, widgets
from .i18n import label, t
from .urlcheck import switch, switch_notice

MAX_TEXT = 1000  # characters of a sentence (it travels in the URL; 1000 CJK characters are ~9 KB)
DEFAULT_SOURCE = "Das Leben ist kurz, iss zuerst den Nachtisch"
DEFAULTS = Settings()
NOTICES = session.NOTICES  # session-state key: the parameters fixed since the link was opened
CHOICES = session.TRANSLATED  # names of every choice drawn in this process (see session.translated)


@dataclass(frozen=True)
class Control:
    """One setting. ``kind``: int, float, switch, text, area (a multi-line text), choice, radio, slider."""

    name: str
    kind: str
    default: Any
    section: str = ""  # the catalogue key of the sidebar heading it sits under
    low: float | None = None
    high: float | None = None
    step: float = 1
    options: tuple = ()
    fmt: str = "opt."  # a choice's labels: the catalogue key prefix of each option
    shown: Callable[[dict], bool] | None = None  # given the values drawn before it; None = always
    row: str = ""  # consecutive controls with the same row share one line of columns
    title: str = ""  # the catalogue key of its label, when not its name

    def parse(self, raw: str, options=None, high=None) -> Any:
        """A URL value as this control's value, or None when it cannot be used."""
        if self.kind in ("int", "float", "slider"):
            try:
                value = float(raw)
            except (TypeError, ValueError, OverflowError):
                return None
            if not math.isfinite(value) or not self.low <= value <= (self.high if high is None else high):
                return None
            if self.kind == "int":
                return int(value) if value == int(value) else None
            return value
        if self.kind == "switch":  # 1/true/yes/on, 0/false/no/off: one reading for every switch in a link
            return switch(raw)
        if self.kind in ("text", "area"):
            return raw[:MAX_TEXT]
        return next((o for o in (self.options if options is None else options) if str(o) == raw), None)

    def to_url(self, value: Any) -> str:
        if self.kind == "switch":
            return "true" if value else "false"
        return repr(float(value)) if self.kind in ("float", "slider") else str(value)


def _limit(name: str) -> dict:
    low, high = LIMITS[name]
    return {"low": low, "high": high}


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


_KINDS = {"int": "int", "float": "float", "bool": "switch", "choice": "choice"}


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


def _option_rows(section: str) -> tuple[Control, ...]:
    return tuple(option_control(o) for o in OPTIONS.values() if o.section == section)


def _sidebar() -> tuple[Control, ...]:
    anchored = ("sec_variant", "sec_model")
    return (
        Control("sentence", "area", TUTORIAL_SENTENCE, "sec_input"),
        Control("source", "text", DEFAULT_SOURCE, "sec_input"),
        Control("heads", "int", DEFAULTS.heads, "sec_dims", **_limit("heads")),
        Control("layout", "radio", DEFAULTS.layout, "sec_dims", options=LAYOUTS, fmt="opt.layout."),
        Control("d_model", "int", DEFAULTS.d_model, "sec_dims", **_limit("d_model")),
        Control("d_q", "int", DEFAULTS.d_q, "sec_dims", row="dims", **_limit("d_q")),
        Control("d_k", "int", DEFAULTS.d_k, "sec_dims", row="dims", **_limit("d_k")),
        Control("d_v", "int", DEFAULTS.d_v, "sec_dims", row="dims", **_limit("d_v")),
        Control("score", "choice", DEFAULTS.score, "sec_scores", options=SCORES),
        Control("temperature", "float", DEFAULTS.temperature, "sec_scores", low=0.01, high=100.0, step=0.1),
        Control(
            "kernel",
            "choice",
            DEFAULTS.kernel,
            "sec_variant",
            options=live_variants(),
            fmt="kernel.{}.label",
            title="kernel_title",
        ),
        Control(
            "mask", "choice", DEFAULTS.mask, "sec_variant", options=MASK_MODES, shown=lambda v: not _kernel(v).pattern
        ),
        Control(
            "causal",
            "switch",
            DEFAULTS.causal,
            "sec_variant",
            shown=lambda v: v["mask"] != "causal" and not _kernel(v).always_causal,
        ),
        *_option_rows("sec_variant"),  # window, dilation, global_tokens, block, features, proj_k, and new ones
        Control("pos", "choice", DEFAULTS.pos, "sec_model", options=POSITIONS),
        Control("init", "radio", DEFAULTS.init, "sec_model", options=INITS),
        *_option_rows("sec_model"),  # seed
        Control("dropout_on", "switch", False, "sec_model", title="dropout"),
        Control(
            "dropout",
            "slider",
            0.1,
            "sec_model",
            low=0.05,
            high=0.9,
            step=0.05,
            shown=lambda v: v["dropout_on"],
            title="dropout_p",
        ),
        Control("residual_norm", "switch", DEFAULTS.residual_norm, "sec_model"),
        *(option_control(o) for o in OPTIONS.values() if o.section and o.section not in anchored),
    )


_BUILT: dict[tuple, tuple[Control, ...]] = {}
_NAMED: dict[str, Any] = {}  # the rows last named, and their names


def sidebar_rows() -> tuple[Control, ...]:
    """The sidebar's rows for the options registered now (built once per set of options)."""
    from attn_core.kernels import KERNELS

    key = (tuple((name, id(o)) for name, o in OPTIONS.items()), tuple(KERNELS))  # cheap: run on every access
    if key not in _BUILT:
        _BUILT.clear()
        _BUILT[key] = _sidebar()
    return _BUILT[key]


class _Rows(Sequence):
    """``SIDEBAR``: the table as it is now (an option registered later has its row)."""

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
    """The drawn values of kernel options that ``Settings`` has no field for (``Settings.extra``)."""
    return tuple((name, values[name]) for name in OPTIONS if name not in FIELDS and name in values)


SIDEBAR: Sequence[Control] = _Rows()
BY_NAME: Mapping[str, Control] = _ByName()
LANG = Control("lang", "radio", "en", options=("en", "zh"), title="language")
PALETTE = Control(  # kept by a reset
    "palette", "radio", "standard", options=("standard", "safe"), fmt="palette.", title="palette_title"
)


def url_value(c: Control, options=None, high=None) -> Any:
    """The link's value for ``c``, or its default (a value that cannot be used is dropped, with a notice)."""
    raw = session.url(c.name)
    if raw is None:
        return c.default
    value = c.parse(raw, options, high)
    if value is None:
        session.drop_url(c.name)
        (switch_notice if c.kind == "switch" else session.notice)(c.name)
        return c.default
    if c.kind in ("text", "area") and value != raw:
        session.set_url(c.name, value)
        session.notice(c.name)
    return value


def sync_url(c: Control, value: Any) -> None:
    """``?name=value`` for a non-default value, nothing for the default; written only on change
    (every write to the URL is a message to the browser)."""
    text = c.to_url(value)
    if text == c.to_url(c.default):
        session.drop_url(c.name)
    elif not _spelled(c, session.url(c.name), value):  # the link's own spelling of it is kept (no new URL)
        session.set_url(c.name, text)


def _spelled(c: Control, raw: str | None, value: Any) -> bool:
    """Whether the link already says ``value`` (``predict=1`` says True as well as ``true`` does)."""
    return raw is not None and c.kind in ("switch", "int", "float", "slider") and widgets.same(c.parse(raw), value)


def forget(c: Control) -> None:
    """A control that is not shown: its value leaves the session and the URL."""
    session.forget(c.name)
    session.drop_url(c.name)


pin_choices = session.pin_translated  # a callback for changes that relabel drawn choices (see the docstring)


def draw(
    c: Control,
    container=st.sidebar,
    *,
    high: float | None = None,
    options=None,
    format_func: Callable[[Any], str] | None = None,
    default: Any = None,
    disabled: bool = False,
    **kwargs,
) -> Any:
    """Draw ``c`` and return its value. ``high``, ``options`` and ``default`` fit it to this run
    (a head index below the number of heads, a token of this sentence): a stored value outside
    them is clamped, a link's value outside them is dropped with a notice."""
    c = c if default is None else replace(c, default=default)
    low = c.low
    high = c.high if high is None else high
    options = list(c.options if options is None else options)
    name = c.name
    title = t(c.title or name)
    kept = widgets.stored(name)  # the browser's value: data, checked like a link's
    over = widgets.text_over(kept, MAX_TEXT) if c.kind in ("text", "area") else 0  # a long paste: cut, and said
    if kept is widgets.MISSING:
        value = _fit(c, url_value(c, options, high), options, low, high)[0]
    else:
        value, kind = _fit(c, None if kept is widgets.BROKEN else kept, options, low, high)
        if not kind:
            widgets.notify(title)
    if not widgets.same(value, kept):
        session.put(name, value)  # tells the browser too (a reset, a clamped value, a link's value)
    common = dict(key=name, disabled=disabled, **kwargs)
    if c.kind == "int":
        value = container.number_input(title, int(low), int(high), int(value), step=1, **common)
    elif c.kind == "float":
        value = container.number_input(title, low, high, float(value), step=c.step, **common)
    elif c.kind == "slider":
        value = container.slider(title, low, high, float(value), step=c.step, **common)
    elif c.kind == "switch":
        value = container.checkbox(title, bool(value), **common)
    elif c.kind == "area":
        value = container.text_area(title, value, **common)  # no max_chars: the browser would refuse a
    elif c.kind == "text":  # whole paste over it, silently; it is cut to MAX_TEXT above, and said
        value = container.text_input(title, value, **common)
    else:
        session.translated(name)
        widget = container.radio if c.kind == "radio" else container.selectbox
        index = options.index(value)
        value = widget(title, options, index, format_func=format_func or label(c.fmt), **common)
    if over:
        widgets.say_cut(container, MAX_TEXT, over)
    value = _fit(c, value, options, low, high)[0]  # what the widget returned is checked again
    sync_url(c, value)
    return value


def _fit(c: Control, value: Any, options: list, low: float, high: float) -> tuple[Any, bool]:
    """``value`` fitted to this run: (the value to use, whether it was of the control's kind).
    A number outside the range is clamped, a token past the end of a shorter sentence is the last
    one; anything else (a stale label, a string for a number, NaN) is the default."""
    if c.kind in ("int", "float", "slider"):
        return widgets.fit_number(value, low, high, min(max(c.default, low), high), c.kind == "int")
    if c.kind == "switch":
        return widgets.fit_switch(value, bool(c.default))
    if c.kind in ("text", "area"):
        return widgets.fit_text(value, c.default, MAX_TEXT)
    return widgets.fit_one(value, options, c.default)


STEPS = ("st_tokens", "st_qkv", "st_scores", "st_mask", "st_softmax", "st_output")
RM_STEPS = ("rm_st_qkv", "rm_st_scores", "rm_st_mask", "rm_st_softmax", "rm_st_output")
_HEAD = LIMITS["heads"][1] - 1


def _lab_rows() -> tuple[Control, ...]:
    from attn_core.lab import LAB_LIMITS, PRESETS, TASKS

    def lim(name: str) -> dict:
        low, high = LAB_LIMITS[name]
        return {"low": low, "high": high}

    return (
        Control("lab_task", "choice", "reverse", options=tuple(TASKS), fmt="lab.task."),
        Control("lab_length", "int", 8, **lim("length")),  # the default: the task's own, passed when drawn
        Control("lab_layers", "int", 1, **lim("layers")),
        Control("lab_pos", "choice", "sidebar", options=("sidebar", "rope", "alibi"), fmt="lab.pos."),
        Control("lab_mlp", "switch", True),
        Control("lab_lr", "float", 3e-3, low=1e-5, high=1.0, step=1e-4),
        Control("lab_batch", "int", 64, **lim("batch")),
        Control("lab_steps", "int", 800, **lim("steps")),  # the default: the task's budget, passed when drawn
        Control("lab_b", "choice", "off", options=("off", *PRESETS), fmt="lab.b."),
    )


PAGE = {  # the pages' own controls that a link carries; each page narrows them to its run
    c.name: c
    for c in (
        Control("focus", "choice", 1),  # options: this sentence's positions
        Control("head_steps", "int", 0, low=0, high=_HEAD, title="head"),
        Control("step", "radio", "st_output", options=STEPS, fmt=""),
        Control("cross_head", "int", 0, low=0, high=_HEAD, title="head"),
        Control("rm_model", "choice", ""),  # options: the models this server offers
        Control("rm_pad", "int", 0, low=0, high=512),
        Control("rm_layer", "int", 0, low=0, high=63),
        Control("rm_head", "int", 0, low=0, high=63, title="head"),
        Control("rm_step", "radio", "rm_st_output", options=RM_STEPS, fmt="", title="step"),
        Control("predict", "switch", False),
        *_lab_rows(),
    )
}


def assign(values: dict) -> None:
    """Set controls' values from code (a preset, a button's callback): the one way code writes a
    control's key. Each name must be a control's (the sidebar's or a page's); its widget shows the
    value on the next draw, which checks it like any other (see ``draw``)."""
    unknown = [name for name in values if name not in BY_NAME and name not in PAGE]
    if unknown:
        raise KeyError(f"not controls: {unknown}")
    for name, value in values.items():
        session.put(name, value)


def forget_all() -> None:
    """Every control starts from its link's value or its default (a lesson of the tour just opened)."""
    session.forget(*BY_NAME, *PAGE)


def reset() -> None:
    """Back to the tutorial's settings, in the session and in the URL (a button's callback); a
    lesson link's hidden and locked settings keep the link's values."""
    kept = {n for p in ("hide", "lock") for n in (session.url(p) or "").split(",")}
    for c in SIDEBAR:
        if c.name in kept:
            continue
        session.forget(c.name)
        session.drop_url(c.name)
