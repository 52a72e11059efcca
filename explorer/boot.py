"""Every page goes through app.py, even on the legacy multipage path.

With a folder named ``pages/`` beside ``app.py``, a fresh server's first script run takes
Streamlit's legacy (v1) multipage path. On a deep link such as ``/multihead`` that path runs
``pages/2_multihead.py`` by itself: no sidebar, no ``st.navigation``, the URL's settings unread.
(Page files are named after their ``url_path`` so that the legacy path finds them at all,
instead of showing "Page not found".) Each page calls ``run_through_app()`` first: in that one
run it executes ``app.py`` (whose ``st.navigation`` ends the legacy mode for the life of the
server and renders this very page, with the same page hash) and stops. In every other run it
does nothing.
"""

from __future__ import annotations

import os
import runpy

import streamlit as st

APP = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "app.py")


def _legacy_run() -> bool:
    try:
        from streamlit.runtime.pages_manager import PagesManager
    except ImportError:  # pragma: no cover - a Streamlit without the legacy path
        return False
    return bool(PagesManager.uses_pages_directory)


def run_through_app() -> None:
    if _legacy_run():
        runpy.run_path(APP, run_name="__main__")
        st.stop()
