"""Every setting a user can change, as one table, and the one way each is drawn, reset and kept in the URL.

The package by job: the ``Control`` type (``control``), the sidebar's table, generated from the table of
knobs (``attn_core.knobs``: the model's settings and the kernel options; ``sidebar``), the pages' own table
(``page``), drawing (``drawing``) and the link (``url``: reading, writing, assigning, forgetting and resetting).

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

from explorer.base import session
from explorer.controls.control import MAX_TEXT, Control
from explorer.controls.drawing import draw, keep
from explorer.controls.page import PAGE, RM_STEPS, STEPS
from explorer.controls.sidebar import (
    BY_NAME,
    DEFAULT_SOURCE,
    DEFAULTS,
    LANG,
    PALETTE,
    SIDEBAR,
    extra_options,
    knob_control,
    live_variants,
    sidebar_rows,
)
from explorer.controls.url import assign, forget, forget_all, reset, sync_url, url_value

NOTICES = session.NOTICES  # session-state key: the parameters fixed since the link was opened
CHOICES = session.TRANSLATED  # names of every choice drawn in this process (see session.translated)
pin_choices = session.pin_translated  # a callback for changes that relabel drawn choices (see the docstring)

__all__ = [
    "BY_NAME",
    "CHOICES",
    "DEFAULTS",
    "DEFAULT_SOURCE",
    "LANG",
    "MAX_TEXT",
    "NOTICES",
    "PAGE",
    "PALETTE",
    "RM_STEPS",
    "SIDEBAR",
    "STEPS",
    "Control",
    "assign",
    "draw",
    "extra_options",
    "forget",
    "forget_all",
    "keep",
    "knob_control",
    "live_variants",
    "pin_choices",
    "reset",
    "sidebar_rows",
    "sync_url",
    "url_value",
]
