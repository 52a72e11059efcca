"""The one model picker of the four model pages (Real model, Inside the model, Explain, Next token): the models
this server offers, by name.

The link carries the choice as ``?model=NAME``; ``?rm_model=NAME`` (the Real model page's key before) is read as
the same, so old links keep opening. What the learner picked (in the picker, or through the link) follows them from
page to page; where nothing was picked, a page shows its own default: the bundled encoder, or on Next token, which
needs a decoder, the first decoder. A link naming a model this server does not offer gets one message on the page
(its value is never echoed; the parameter is named in the sidebar's notice) and the page goes on with its default.
"""

from __future__ import annotations

import streamlit as st

from explorer.base import session
from explorer.base.i18n import t
from explorer.base.safe import md
from explorer.controls import PAGE, draw
from explorer.model import real

CONTROL = PAGE["model"]
OLD = "rm_model"  # ?rm_model=NAME, the Real model page's key before: read as ?model=NAME
PICKED = "_model_picked"  # session: the model the learner picked (None: nothing picked, each page its default)


def _old_link() -> None:
    """``?rm_model=NAME`` becomes ``?model=NAME`` (unless the link says that too, which wins)."""
    old = session.url(OLD)
    if old is None:
        return
    session.drop_url(OLD)
    if session.url(CONTROL.name) is None:
        session.set_url(CONTROL.name, old)


def not_offered(names: list[str], default: str) -> bool:
    """Whether the link named a model outside ``names``: it leaves the link, is named in the sidebar's notice as
    every refused value of a link is, and the page says so in one message for as long as that notice shows and
    nothing else is picked (the page goes on with ``default``)."""
    raw = session.url(CONTROL.name)
    if raw is not None and raw not in names:
        session.drop_url(CONTROL.name)
        session.notice(CONTROL.name)
    if CONTROL.name not in session.notices_to_show() or session.get(PICKED) is not None:
        return False
    st.warning(
        t("dec.not_offered", model=md(default), options=", ".join(md(n) for n in names)),
        icon=":material/link_off:",
    )
    return True


def _picked() -> None:
    """The picker's callback: the learner's choice is a pick (a value the browser sent that is not offered is not)."""
    value = session.get(CONTROL.name)
    session.put(PICKED, value if isinstance(value, str) and value in real.offered() else None)


def use(name: str) -> None:
    """A button's callback: pick ``name`` (shown by the picker on the next run, on every model page)."""
    session.put(CONTROL.name, name)
    session.put(PICKED, name)


def choose(container, default: str | None = None) -> str:
    """The model's name (one of ``real.offered()``), drawn in ``container`` and bound to the link; ``default``: this
    page's model when nothing is picked (the first offered, the bundled encoder, unless told)."""
    names = real.offered()
    default = default if default in names else names[0]
    _old_link()
    not_offered(names, default)
    picked = session.get(PICKED) if session.get(CONTROL.name) is not None else None  # forgotten: a lesson's start
    if picked in names:
        session.put(CONTROL.name, picked)
    else:  # nothing picked: the link's model, else this page's default (not another page's)
        session.put(PICKED, None)
        session.forget(CONTROL.name)
    value = draw(CONTROL, container, options=names, default=default, format_func=str, on_change=_picked)
    if value != default:  # a link's model is a pick too
        session.put(PICKED, value)
    return value
