"""The model picker of the Real model and Inside the model pages: the models this server offers, by name.

The link carries the choice as ``?rm_model=NAME`` (the Real model page's control, which Inside shares, so the
model a learner picked follows them from one page to the other); ``?model=NAME`` is read as the same. A link
naming a model this server does not offer gets one message on the page (its value is never echoed) and the
page goes on with the default, the bundled encoder.
"""

from __future__ import annotations

import streamlit as st

from explorer.base import session
from explorer.base.i18n import t
from explorer.base.safe import md
from explorer.controls import PAGE, draw
from explorer.model import real

CONTROL = PAGE["rm_model"]
SHORT = "model"  # ?model=NAME, the short spelling of ?rm_model=NAME


def _short_link() -> None:
    """``?model=NAME`` becomes ``?rm_model=NAME`` (unless the link says that too, which wins)."""
    short = session.url(SHORT)
    if short is None:
        return
    session.drop_url(SHORT)
    if session.url(CONTROL.name) is None:
        session.set_url(CONTROL.name, short)


def not_offered(names: list[str]) -> bool:
    """Whether the link names a model outside ``names``; if so it leaves the link and the page says so once."""
    raw = session.url(CONTROL.name)
    if raw is None or raw in names:
        return False
    session.drop_url(CONTROL.name)
    st.warning(
        t("dec.not_offered", model=md(names[0]), options=", ".join(md(n) for n in names)),
        icon=":material/link_off:",
    )
    return True


def choose(container) -> str:
    """The model's name (one of ``real.offered()``), drawn in ``container`` and bound to the link."""
    names = list(real.offered())
    _short_link()
    not_offered(names)
    return draw(CONTROL, container, options=names, default=names[0], format_func=str)
