"""Lesson links: a teacher's link that hides some settings and locks others.

``?hide=score,mask&lock=heads`` (the sidebar settings' own URL names, comma-separated; the
names are a contract that lesson plans rely on): a hidden setting keeps the link's value (or its
default) and is not drawn; a locked one is drawn and cannot be changed. Unknown names are dropped
from the link and named in the sidebar's notice. The builder in the sidebar composes such a link
from the current view.
"""

from __future__ import annotations

from urllib.parse import urlencode

import streamlit as st

from . import session, widgets
from .controls import BY_NAME, SIDEBAR
from .i18n import t

PARAMS = ("hide", "lock")


def _names(param: str) -> frozenset[str]:
    raw = session.url(param)
    if raw is None:
        return frozenset()
    parts = [p.strip() for p in raw.split(",") if p.strip()]
    good = [p for p in parts if p in BY_NAME]
    if not good or len(good) != len(parts):  # a name no setting has (or none): dropped, the parameter named
        session.notice(param)
        if good:
            session.set_url(param, ",".join(dict.fromkeys(good)))
        else:
            session.drop_url(param)
    return frozenset(good)


def read() -> tuple[frozenset[str], frozenset[str]]:
    """(hidden, locked) from the link; a setting both hidden and locked is hidden."""
    hidden, locked = _names("hide"), _names("lock")
    return hidden, locked - hidden


def link(hide: list[str], lock: list[str]) -> str:
    """This view's link with these settings hidden and locked."""
    params = {k: v for k, v in session.url_params().items() if k not in PARAMS}
    if hide:
        params["hide"] = ",".join(hide)
    if lock:
        params["lock"] = ",".join(lock)
    base = (getattr(st.context, "url", None) or "").split("?")[0]
    return f"{base}?{urlencode(params, safe=',')}" if params else base or "?"


def builder(hidden: frozenset[str], locked: frozenset[str]) -> None:
    """The sidebar's "Lesson link" box: choose what to hide and lock, copy the link."""
    names = [c.name for c in SIDEBAR]

    def title(name: str) -> str:
        return f"{t(BY_NAME[name].title or name)} ({name})"

    with st.sidebar.expander(t("lesson_link"), icon=":material/school:"):
        st.caption(t("lesson_help"))
        session.translated("lesson_hide", "lesson_lock")  # labels in the UI's language: re-pinned on a switch
        hide = widgets.multiselect(
            st, t("lesson_hide"), names, default=sorted(hidden), format_func=title, key="lesson_hide"
        )
        rest = [n for n in names if n not in hide]
        lock = widgets.multiselect(
            st, t("lesson_lock"), rest, default=sorted(locked & set(rest)), format_func=title, key="lesson_lock"
        )
        st.code(link(hide, lock), language=None, wrap_lines=True)
