"""The landing page at the app's root: what the app is, and a door to each page.

The root URL ("/") is this page, so every other page keeps its own path (``/steps``, ...):
Streamlit gives the default page the root and no path of its own.
"""

from __future__ import annotations

import streamlit as st

from explorer.base.i18n import t
from explorer.pages import PAGES


def home() -> None:
    from explorer.classroom.ahead import status
    from explorer.classroom.tour import overview

    st.title(t("app_title"))
    st.write(t("home_intro"))
    with st.expander(t("tour_title"), expanded=True, icon=":material/school:"):
        prepared = status()  # what a class server computed for the lessons at its start
        if prepared:
            st.caption(prepared)
        overview()
    for page in PAGES:
        with st.container(border=True):
            st.page_link(page.file, label=t(f"page.{page.key}"), icon=":material/arrow_forward:")
            st.caption(t(f"home.{page.key}"))
