"""Sidebar controls (drawn once, in app.py) and the cached trace every page reads.

Widgets -> a frozen ``Settings`` (kept in the session as it is) -> ``attn_core.run_trace`` (cached on
those settings) -> figures. Only plain values live in the session (``explorer.base.session``); tensors stay
in the resource cache.
"""

from __future__ import annotations

import functools
from dataclasses import replace

import streamlit as st

from attn_core import AttentionConfigError, Settings, Trace, run_trace
from attn_core.config import FIELDS, LIMITS
from attn_core.tokenize import dropped_symbols, split_words
from attn_core.trace import check_settings
from explorer.base import session
from explorer.base.cache import bounded
from explorer.base.i18n import LANGS, error_text, t
from explorer.base.safe import md
from explorer.controls import (
    DEFAULT_SOURCE,
    DEFAULTS,
    LANG,
    PALETTE,
    SIDEBAR,
    draw,
    extra_options,
    forget,
    keep,
    pin_choices,
    reset,
    url_value,
)


def sidebar_ui(
    hidden: frozenset = frozenset(), locked: frozenset = frozenset(), reads: frozenset | None = None
) -> tuple[Settings, dict]:
    """Draw the shared controls from the table in ``controls``; return the settings and a slot per
    control for its message (one place at the end of its section). ``hidden`` controls keep the
    link's value (or their default) without being drawn; ``locked`` ones are drawn and cannot be
    changed. ``reads``: the settings this page reads (None: all); the others keep their values undrawn."""
    sb = st.sidebar
    slots: dict[str, object] = {}
    draw(LANG, sb, format_func=LANGS.get, horizontal=True, on_change=pin_choices)
    draw(PALETTE, sb, horizontal=True)  # read by app.py for the figures (figures.begin_run)
    slots[TOP] = sb.empty()  # a message whose control is not drawn (hidden by a lesson link) shows here
    values: dict = {}
    section, row, cols, pending = "", "", [], []
    for c in SIDEBAR:
        if c.shown is not None and not c.shown(values):
            values[c.name] = c.default
            forget(c)
            continue
        if c.name in hidden:
            values[c.name] = url_value(c)
            slots[c.name] = None  # no box to show its message beside (see show_error)
            continue
        if reads is not None and c.name not in reads:
            values[c.name] = keep(c)
            continue
        if c.section != section:
            _message_slot(sb, pending, slots)
            section = c.section
            sb.subheader(t(section))
        if c.row and c.row != row:
            cols = iter(sb.columns(sum(1 for o in SIDEBAR if o.row == c.row)))
        row = c.row
        extra = dict(EXTRA.get(c.name, {}))
        if c.name == "sentence":
            extra["help"] = t("sentence_help")
        if c.kind == "radio":
            extra["horizontal"] = c.name != "layout"
        values[c.name] = draw(c, next(cols) if c.row else sb, disabled=c.name in locked, **extra)
        pending.append(c.name)
        if c is ROW_END.get(c.row):
            _after_row(values)
    _message_slot(sb, pending, slots)
    if reads is not None and len(reads) < len(SIDEBAR):
        sb.caption(t("sidebar_kept"))
    sb.button(t("reset"), on_click=reset, key="reset")

    settings = settings_of(values)
    session.save_settings(settings, values["source"])
    return settings, slots


def settings_of(v: dict) -> Settings:
    """The frozen settings the drawn values ``v`` describe (what the session keeps and caches key on)."""
    pad_to = 0
    if v["mask"] == "padding":
        longest = max(len(split_words(v["sentence"])), len(split_words(v["source"])))
        pad_to = min(longest, LIMITS["pad_to"][1])
    return Settings(
        **{k: v[k] for k in v if k in FIELDS and k not in ("source", "dropout", "causal")},
        causal=bool(v["causal"]) and v["mask"] != "causal",
        pad_to=pad_to,
        dropout=float(v["dropout"]) if v["dropout_on"] else 0.0,
        extra=extra_options(v),
    )


TOP = "_top"  # the slot at the top of the sidebar's settings
EXTRA = {  # widget arguments beyond the table's
    "sentence": {"height": 80, "on_change": pin_choices},
    "source": {"on_change": pin_choices},
}
ROW_END = {c.row: c for c in SIDEBAR if c.row}  # the last control of each row


def _message_slot(sb, names: list, slots: dict) -> None:
    """One place at the end of a section for a message about any of its controls ``names`` (emptied): one
    element instead of one per control, as each element is a message the server sends on every rerun."""
    if names:
        slot = sb.empty()
        slots.update(dict.fromkeys(names, slot))
        names.clear()


def _after_row(values: dict) -> None:
    heads, d_model = values["heads"], values["d_model"]
    if values["layout"] == "standard" and heads and d_model % heads == 0:
        st.sidebar.caption(t("standard_dims", d=d_model // heads))


def show_error(err: AttentionConfigError, slots: dict) -> None:
    """The message next to the control at fault, else next to the sentence; at the top of the
    sidebar when that control is hidden by a lesson link (saying so: the learner cannot fix it)."""
    hidden = err.field in slots and slots[err.field] is None
    slot = None if hidden else slots.get(err.field) or slots.get("sentence")
    message, fix = (md(text) for text in error_text(err))
    text = f"{message}\n\n**{t('fix_prefix')}** {fix}" if fix else message
    if hidden:
        text += "\n\n" + t("hidden_error", name=md(err.field))
    (slot or slots.get(TOP) or st.sidebar).error(text, icon=":material/warning:")


@bounded(max_mib=256)  # shared by every session, within a memory budget
def _trace(settings: Settings) -> Trace:
    return run_trace(settings)


def trace_for(settings: Settings) -> Trace:
    """The cached trace for these settings (frozen and hashable: the cache keys on them); raises
    AttentionConfigError for bad ones."""
    return _trace(settings)


@functools.lru_cache(maxsize=1024)  # plain, hashable settings; an error is raised again, not kept
def check_for(settings: Settings) -> Settings:
    """The sidebar's settings checked as ``trace_for`` would check them, without computing the trace:
    what app.py runs on every page (most pages never draw this trace; those that do compute it
    through ``current_trace``, once for the whole class, in the shared cache)."""
    return check_settings(settings)


def current_settings() -> Settings:
    """The settings the sidebar drew in this run (the tutorial's before it has)."""
    return session.saved_settings() or DEFAULTS


def cross_settings(settings: Settings) -> Settings:
    """Queries from the second sentence, keys and values from the first."""
    return replace(
        settings,
        sentence=session.source_text(DEFAULT_SOURCE),
        source=settings.sentence,
        pad_to=0,
        mask="none" if settings.mask == "padding" else settings.mask,
    )


def current_trace(settings: Settings | None = None) -> Trace | None:
    """The trace, or None after showing the reason on the page (the rest of the page goes on)."""
    settings = settings or current_settings()
    dropped = dropped_symbols(f"{settings.sentence} {settings.source or ''}")
    if dropped:  # emoji and symbols are not words here: say what was left out
        st.caption(t("tokens_dropped", chars=" ".join(dropped)))
    try:
        return trace_for(settings)
    except AttentionConfigError as err:
        st.warning(t("invalid", msg=md(" ".join(error_text(err)))), icon=":material/warning:")
        return None
