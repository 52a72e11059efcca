"""A control's value in the link: read (parsed and range-checked; a value that cannot be used is dropped
and named in the sidebar's notice), written back on change (a value equal to the default leaves the URL),
and the ways code sets, forgets and resets controls. Nothing else in the app reads or writes these URL
parameters."""

from __future__ import annotations

from typing import Any

from explorer.base import session, widgets
from explorer.base.urlcheck import switch_notice
from explorer.controls.control import Control
from explorer.controls.page import PAGE
from explorer.controls.sidebar import BY_NAME, SIDEBAR


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
