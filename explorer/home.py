"""The landing page at the app's root: what the app is, and a door to each page.

The root URL ("/") is this page, so every other page keeps its own path (``/steps``, ...):
Streamlit gives the default page the root and no path of its own.
"""

from __future__ import annotations

import streamlit as st

from .i18n import t

# Page file, its catalogue key for the one-line description.
DOORS = [
    ("pages/1_steps.py", "home_steps"),
    ("pages/2_multihead.py", "home_multihead"),
    ("pages/3_cross.py", "home_cross"),
    ("pages/4_tutorial.py", "home_tutorial"),
    ("pages/5_variants.py", "home_variants"),
    ("pages/6_complexity.py", "home_complexity"),
    ("pages/7_model.py", "home_model"),
]


def home() -> None:
    st.title(t("app_title"))
    st.write(t("home_intro"))
    for page, key in DOORS:
        with st.container(border=True):
            st.page_link(page, label=t("page_" + key.removeprefix("home_")), icon=":material/arrow_forward:")
            st.caption(t(key))
