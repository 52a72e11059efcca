"""Drawing a control: its widget, its value from the session, else the link, else its default, fitted to
this run and checked again after the widget returns it (see the package's docstring)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import streamlit as st

from explorer.base import session, widgets
from explorer.base.i18n import label, t
from explorer.controls.control import MAX_TEXT, Control
from explorer.controls.url import sync_url, url_value


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
    title = t(c.title or c.name)
    kept = widgets.stored(c.name)  # the browser's value: data, checked like a link's
    over = widgets.text_over(kept, MAX_TEXT) if c.kind in ("text", "area") else 0  # a long paste: cut, and said
    if kept is widgets.MISSING:
        value = _fit(c, url_value(c, options, high), options, low, high)[0]
    else:
        value, kind = _fit(c, None if kept is widgets.BROKEN else kept, options, low, high)
        if not kind:
            widgets.notify(title)
    if not widgets.same(value, kept):
        session.put(c.name, value)  # tells the browser too (a reset, a clamped value, a link's value)
    common = dict(key=c.name, disabled=disabled, **kwargs)
    value = _widget(c, container, title, value, (low, high), options, format_func, common)
    if over:
        widgets.say_cut(container, MAX_TEXT, over)
    value = _fit(c, value, options, low, high)[0]  # what the widget returned is checked again
    sync_url(c, value)
    return value


def keep(c: Control) -> Any:
    """The value of ``c`` on a page that does not draw it: the session's (kept for the pages that draw it), else
    the link's, else its default; written to the URL as drawing it would, so a link from any page carries it."""
    kept = widgets.stored(c.name)
    if kept is widgets.MISSING or kept is widgets.BROKEN:
        value = _fit(c, url_value(c), list(c.options), c.low, c.high)[0]
    else:
        value = _fit(c, kept, list(c.options), c.low, c.high)[0]
    session.put(c.name, value)  # a widget's key that no run draws leaves the session; set each run, it stays
    sync_url(c, value)
    return value


def _widget(c: Control, container, title: str, value, bounds: tuple, options: list, format_func, common: dict):
    """The widget of ``c``'s kind, showing ``value``; what it returns."""
    low, high = bounds
    if c.kind == "int":
        return container.number_input(title, int(low), int(high), int(value), step=1, **common)
    if c.kind == "float":
        return container.number_input(title, float(low), float(high), float(value), step=float(c.step), **common)
    if c.kind == "slider":
        return container.slider(title, low, high, float(value), step=c.step, **common)
    if c.kind == "switch":
        return container.checkbox(title, bool(value), **common)
    if c.kind == "area":
        return container.text_area(title, value, **common)  # no max_chars: the browser would refuse a
    if c.kind == "text":  # whole paste over it, silently; it is cut to MAX_TEXT above, and said
        return container.text_input(title, value, **common)
    session.translated(c.name)
    widget = container.radio if c.kind == "radio" else container.selectbox
    return widget(title, options, options.index(value), format_func=format_func or label(c.fmt), **common)


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
