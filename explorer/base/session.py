"""The one module that reads and writes ``st.session_state`` and ``st.query_params``.

Everything a session keeps, and everything the URL carries, goes through the small named
functions here (``tests/unit/test_structure.py`` fails if another module touches either):

- values by key (``get``, ``put``, ``pop``, ``forget``): a widget's value lives under its key,
  as Streamlit keeps it; only plain values, never tensors (those stay in the shared caches);
- the URL (``url``, ``set_url``, ``drop_url``, ``url_params``): a control's name is its URL
  parameter (see ``explorer.controls``);
- the settings the sidebar drew, read by every page (``save_settings``, ``saved_settings``);
- notices: the URL parameters that could not be used, named in the sidebar (``notice``);
- translated widgets: choices whose labels follow the UI's language, re-pinned on a switch
  (``translated``, ``pin_translated``);
- the run context: what one script run reads once (its language, palette, large type, the focus
  token charts outline) and the charts it drew (offered as PNG at the page's end), per thread: each script
  run, and a fragment's rerun, has its own.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

import streamlit as st

# ---- values by key ----


def get(key: str, default: Any = None) -> Any:
    """The session's value for ``key`` (a widget's value too), else ``default``. A browser value that
    fails to deserialize raises here, as Streamlit does (``widgets.stored`` catches it)."""
    return st.session_state.get(key, default)


def put(key: str, value: Any) -> None:
    """Set ``key`` (for a widget: tells the browser too). Raises StreamlitAPIException when the
    widget was already drawn in this run."""
    st.session_state[key] = value


def pop(key: str, default: Any = None) -> Any:
    return st.session_state.pop(key, default)


def forget(*keys: str) -> None:
    """These keys leave the session (their widgets start from their defaults)."""
    for key in keys:
        st.session_state.pop(key, None)


# ---- the URL ----


def url(name: str) -> str | None:
    """The link's value for ``name`` (under AppTest too a single value is a str)."""
    return st.query_params.get(name)


def set_url(name: str, text: str) -> None:
    """``?name=text``, written only on change (every write is a message to the browser)."""
    if st.query_params.get(name) != text:
        st.query_params[name] = text


def drop_url(name: str) -> None:
    if st.query_params.get(name) is not None:
        del st.query_params[name]


def url_params() -> dict[str, str]:
    return st.query_params.to_dict()


def show_url() -> None:
    """Tell the browser the link's parameters as this run reads them: a link inside the app to the page already
    open (a lesson of the tour) runs with its parameters but leaves the address bar as it was."""
    st.query_params.from_dict(st.query_params.to_dict())


# ---- the settings every page reads ----

SETTINGS, SOURCE = "settings", "source_text"


def save_settings(settings, source: str) -> None:
    """The sidebar's settings (a frozen ``attn_core.Settings``: plain values, hashable) and the second
    sentence, for the pages."""
    st.session_state[SETTINGS] = settings
    st.session_state[SOURCE] = source


def saved_settings():
    """The ``Settings`` the sidebar last drew, or None."""
    return st.session_state.get(SETTINGS)


def source_text(default: str) -> str:
    return st.session_state.get(SOURCE, default)


# ---- notices: URL parameters that could not be used ----

NOTICES = "_url_notices"  # the parameters fixed since the link was opened
SHOWN_WITH = "_url_notices_settings"  # the settings when the notice was first shown


def notice(name: str) -> None:
    """Name ``name`` (a URL parameter, never its value) in the sidebar's notice."""
    st.session_state.setdefault(NOTICES, []).append(name)


def notices() -> list[str]:
    """The parameters named since the link was opened (names only: a value is never echoed)."""
    return list(st.session_state.get(NOTICES) or [])


def notices_to_show() -> list[str]:
    """The notices to show now: none once the user has changed a setting since they were first
    shown (the notice has done its job; they are cleared)."""
    names = notices()
    if not names:
        return []
    now, first = st.session_state.get(SETTINGS), st.session_state.get(SHOWN_WITH)
    if first is None:
        st.session_state[SHOWN_WITH] = now
    elif first != now:
        st.session_state[NOTICES], st.session_state[SHOWN_WITH] = [], None
        return []
    return names


# ---- translated widgets ----

TRANSLATED: set[str] = set()  # keys of every choice whose labels follow the language (plain strings)


def translated(*keys: str) -> None:
    """Register choice widgets whose labels follow the UI's language: when the labels change
    under them (a language switch, a new sentence), ``pin_translated`` writes each one's value
    back, so the browser is told the new label of the same value (see ``explorer.controls``)."""
    TRANSLATED.update(keys)


def pin_translated() -> None:
    """A callback for changes that relabel drawn choices."""
    for key in TRANSLATED:
        value = st.session_state.get(key)
        if value is not None:
            st.session_state[key] = value


# ---- the run context ----


@dataclass
class RunContext:
    """What one script run reads once: ``t()`` is called a hundred times a run, and each read of
    session state takes a lock. ``palette`` None: not set yet in this thread."""

    lang: str | None = None
    palette: str | None = None
    large: bool = False
    focus: str | None = None  # the focus token's label, outlined by the heatmaps built next
    charts: list = field(default_factory=list)  # (file name, figure) of each chart drawn (``explorer.charts.png``)
    codes: int = 0  # blocks of code folded so far in this run (``explorer.base.widgets.code``)


_local = threading.local()  # each script run has a thread of its own, a fragment's rerun too


def run_context() -> RunContext:
    ctx = getattr(_local, "ctx", None)
    if ctx is None:
        ctx = _local.ctx = RunContext()
    return ctx


def begin_run() -> RunContext:
    """A fresh context for this script run (app.py, first)."""
    _local.ctx = RunContext()
    return _local.ctx


def lang_choice() -> Any:
    """The language the session holds (the switch's value, the browser's: data), else the URL's."""
    return st.session_state.get("lang") or st.query_params.get("lang", "en")


def palette_choice() -> Any:
    return st.session_state.get("palette", "standard")
