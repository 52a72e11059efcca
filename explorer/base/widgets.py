"""Every value a widget returns is data from the browser, checked here before anything uses it.

A browser sends back what it last showed. When a rerun changes a widget's options while a
learner clicks (the head count dropped, the language switched, a new sentence), the label it
sends is no longer among the options, and Streamlit then hands the raw label string to the app
(a multiselect of head numbers returns ``["Head 3"]``). A hostile client can send anything at
all (a string for a number, NaN, six items to a four-item multiselect). So every choice and
number widget is drawn through this module, which

1. before the widget is drawn, checks the value the session holds for its key (the browser's
   value) against this run's options or limits, and puts a fallback in its place when it does
   not fit (so Streamlit, which raises for some of them, never sees it), and
2. after it is drawn, checks the value returned again, returning the fallback if it still
   does not fit.

The fallback is the one a link's bad value gets: a value of the right kind outside this run's
range is brought inside it (the last token of a shorter sentence, the highest head), anything
else is replaced by the widget's default. A value that was not even of the options' kind (a
label, junk) is named in a short notice (a toast: it shows where the learner is looking, in the
sidebar or in presenter mode alike). Nothing here raises.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Sequence
from typing import Any

import streamlit as st
from streamlit.errors import StreamlitAPIException

from explorer.base import session, wire  # noqa: F401 - wire: what a browser sends, guarded before Streamlit reads it
from explorer.base.i18n import t

MISSING = object()  # the session has no value for the key yet
BROKEN = object()  # the session's value could not even be read back (it failed to deserialize)


def same(a: Any, b: Any) -> bool:
    """Equal and of the same type (``True == 1`` and ``1.0 == 1`` do not count)."""
    return type(a) is type(b) and a == b


def is_option(value: Any, options: Sequence) -> bool:
    return any(same(value, o) for o in options)


def stored(key: str) -> Any:
    """The session's value for ``key``, ``MISSING`` (also for None) or ``BROKEN``."""
    try:
        value = session.get(key)
    except Exception:  # noqa: BLE001 - a browser value that fails to deserialize is data, not a crash
        return BROKEN
    return MISSING if value is None else value


def _write(key: str, value: Any) -> None:
    with contextlib.suppress(StreamlitAPIException):  # already drawn this run: corrected after drawing
        session.put(key, value)


def notify(title: str) -> None:
    """The notice for a value that was not one of the widget's own kind (its name, never the value)."""
    st.toast(t("widget_fixed", name=title), icon=":material/sync_problem:")


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


# ---- checks: a value for this run's options or limits, and whether it was of the right kind ----


def fit_one(value: Any, options: Sequence, default: Any) -> tuple[Any, bool]:
    """(a value among ``options``, whether ``value`` was of their kind). An int outside a run of
    int options (a token past the end of a shorter sentence) goes to the nearest end."""
    options = list(options)
    if is_option(value, options):
        return value, True
    ints = bool(options) and all(type(o) is int for o in options)
    if ints and type(value) is int:
        return (options[-1] if value > options[-1] else options[0]), True
    kind = ints and _number(value) or (not ints and isinstance(value, str))
    fallback = default if default is None or is_option(default, options) else (options[0] if options else None)
    return fallback, kind


def fit_many(value: Any, options: Sequence, default: Sequence, max_selections: int | None = None) -> tuple[list, bool]:
    """(the items of ``value`` that are options, at most ``max_selections``, without repeats, or
    ``default`` when none is left; whether every item was of the options' kind)."""
    options = list(options)
    kind = isinstance(value, (list, tuple))
    items = list(value) if kind else []
    ints = bool(options) and all(type(o) is int for o in options)
    kept: list = []
    for item in items:
        if is_option(item, options):
            if not any(same(item, k) for k in kept):
                kept.append(item)
        elif not (ints and type(item) is int):  # a head that no longer exists is expected; a label is not
            kind = False
    if max_selections is not None and len(kept) > max_selections:
        kept, kind = kept[:max_selections], False
    if not kept and items:  # everything chosen is gone: the default, as a link's bad value gets
        kept = [d for d in default if is_option(d, options)][:max_selections]
    return kept, kind


def fit_number(value: Any, low: float, high: float, default: float, integer: bool) -> tuple[float, bool]:
    """(a number in [low, high], whether ``value`` was a finite number): a number outside is
    clamped, anything else is the default."""
    if not _number(value) or (integer and value != int(value)):
        return default, False
    value = min(max(value, low), high)
    return (int(value) if integer else float(value)), True


def fit_switch(value: Any, default: bool) -> tuple[bool, bool]:
    return (value, True) if isinstance(value, bool) else (default, False)


def fit_text(value: Any, default: str, max_chars: int) -> tuple[str, bool]:
    return (value[:max_chars], True) if isinstance(value, str) else (default, False)


def text_over(value: Any, max_chars: int) -> int:
    """How many characters a text from the browser has past ``max_chars`` (0 when it fits). The boxes
    take any length (a browser refuses a whole paste over their ``max_chars``, silently), and the
    text is cut here, with ``say_cut``."""
    return max(0, len(value) - max_chars) if isinstance(value, str) else 0


def say_cut(container, max_chars: int, over: int) -> None:
    """The notice, under the box, that only the first ``max_chars`` characters of a text were taken."""
    container.warning(
        t("text_cut", kept=f"{max_chars:,}", total=f"{max_chars + over:,}", cut=f"{over:,}"),
        icon=":material/content_cut:",
    )


def fix_state(key: str, check: Callable[[Any], tuple[Any, bool]], title: str) -> Any:
    """Check the session's value for ``key`` before its widget is drawn; put the fallback in its
    place when it does not fit. Returns the value to draw with, or ``MISSING`` when the session
    has none yet (the widget starts from its default)."""
    value = stored(key)
    if value is MISSING:
        return MISSING
    fitted, kind = check(None if value is BROKEN else value)
    if value is BROKEN or not same(fitted, value):
        _write(key, fitted)
    if not kind:
        notify(title)
    return fitted


# ---- the widgets, each checked before and after it is drawn ----


def _index(value: Any, options: list) -> int:
    return next((i for i, o in enumerate(options) if same(o, value)), 0)


def selectbox(container, title: str, options: Sequence, *, key: str, default: Any = MISSING, **kwargs) -> Any:
    return _one(container.selectbox, title, options, key=key, default=default, **kwargs)


def radio(container, title: str, options: Sequence, *, key: str, default: Any = MISSING, **kwargs) -> Any:
    return _one(container.radio, title, options, key=key, default=default, **kwargs)


def _one(widget, title: str, options: Sequence, *, key: str, default: Any, **kwargs) -> Any:
    """A single choice, drawn at its current value. ``default``: the fallback and the first
    value (the first option unless told; None: nothing chosen until the learner picks)."""
    options = list(options)
    if default is MISSING:
        default = options[0] if options else None
    value = fix_state(key, lambda v: fit_one(v, options, default), title)
    current = default if value is MISSING else value
    index = None if current is None or not options else _index(current, options)
    out = widget(title, options, index, key=key, **kwargs)
    if out is None or is_option(out, options):
        return out
    return fit_one(out, options, default)[0]


def multiselect(
    container, title: str, options: Sequence, *, key: str, default: Sequence = (), max_selections=None, **kwargs
) -> list:
    options = list(options)
    default = [d for d in default if is_option(d, options)][:max_selections]
    fix_state(key, lambda v: fit_many(v, options, default, max_selections), title)
    kwargs.setdefault("placeholder", t("choose_options"))  # Streamlit's own is English
    out = container.multiselect(title, options, default=default, key=key, max_selections=max_selections, **kwargs)
    return fit_many(out, options, default, max_selections)[0]


def number(container, title: str, low, high, default, *, key: str, integer: bool = True, **kwargs):
    """A number_input in [low, high]; ``integer``: whole numbers."""
    fix_state(key, lambda v: fit_number(v, low, high, default, integer), title)
    out = container.number_input(title, low, high, default, key=key, **kwargs)
    return fit_number(out, low, high, default, integer)[0]


def slider(container, title: str, low: float, high: float, default: float, step: float, *, key: str, **kwargs):
    """A slider in [low, high]; whole numbers when ``low``, ``high``, ``default`` and ``step`` are ints."""
    integer = all(type(x) is int for x in (low, high, default, step))
    fix_state(key, lambda v: fit_number(v, low, high, default, integer), title)
    out = container.slider(title, low, high, default, step, key=key, **kwargs)
    return fit_number(out, low, high, default, integer)[0]


def select_slider(container, title: str, options: Sequence, default: Any, *, key: str, **kwargs) -> Any:
    """A slider over ``options`` (a stale mark, another run's, goes to the nearest end)."""
    options = list(options)
    fix_state(key, lambda v: fit_one(v, options, default), title)
    out = container.select_slider(title, options=options, value=default, key=key, **kwargs)
    return fit_one(out, options, default)[0]


def checkbox(container, title: str, default: bool = False, *, key: str, **kwargs) -> bool:
    fix_state(key, lambda v: fit_switch(v, default), title)
    return fit_switch(container.checkbox(title, default, key=key, **kwargs), default)[0]


def toggle(container, title: str, default: bool = False, *, key: str, **kwargs) -> bool:
    fix_state(key, lambda v: fit_switch(v, default), title)
    return fit_switch(container.toggle(title, default, key=key, **kwargs), default)[0]


def expander(container, title: str, *, key: str, opened_by: Sequence[str] = (), **kwargs):
    """An expander whose content runs only while it is open (``.open``); its state, a bool the browser
    sends back like any widget's, is checked first (closed when it is not one). ``opened_by``: URL parameters
    of controls inside it; a link that sets one opens it the first time (so its value is read and checked)."""
    if fix_state(key, lambda v: fit_switch(v, False), title) is MISSING:
        # also where the session holds None, which the expander cannot take
        _write(key, any(session.url(n) is not None for n in opened_by))
    return container.expander(title, key=key, on_change="rerun", **kwargs)


def text(container, title: str, default: str = "", *, key: str, max_chars: int, **kwargs) -> str:
    """A one-line text input, at most ``max_chars`` characters: a longer value from the browser (a
    paste) is cut to them before the box is drawn, and the page says so."""
    over = text_over(stored(key), max_chars)
    fix_state(key, lambda v: fit_text(v, default, max_chars), title)
    out = container.text_input(title, default, key=key, **kwargs)
    if over:
        say_cut(container, max_chars, over)
    return fit_text(out, default, max_chars)[0]


def code(container, text: str, language: str = "python") -> None:
    """A block of code. On the page (``container`` is ``st``) it is folded under "The code" and sent to the browser
    only once opened (a lazy expander): Streamlit's syntax highlighter, about 0.6 s of a new tab's CPU before its
    first chart (``first_load_cpu.txt``), is then loaded by those who read the code, and a fold once opened stays
    open through later reruns and steps (its key). Inside a fold already (presenter mode's), drawn there."""
    if container is not st:
        container.code(text, language=language)
        return
    ctx = session.run_context()
    key = "show_code" if ctx.codes == 0 else f"show_code_{ctx.codes}"  # a second block in one run: a key of its own
    ctx.codes += 1
    fold = expander(st, t("show_code"), key=key, icon=":material/code:")
    if fold.open:
        fold.code(text, language=language)
