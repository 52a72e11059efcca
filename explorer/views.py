"""Small drawing helpers shared by pages: a chart with its CSV download."""
from __future__ import annotations

import streamlit as st

from attn_core.export import matrix_csv

from .i18n import t


def matrix_chart(figure, name: str, matrix=None, rows=None, cols=None, *, key_prefix: str = "") -> None:
    """Draw ``figure``; with ``matrix``, offer it as CSV with token labels."""
    st.plotly_chart(figure, width="stretch", key=f"{key_prefix}chart_{name}")
    if matrix is not None:
        st.download_button(t("download_csv", name=name), lambda: matrix_csv(matrix, rows, cols), f"{name}.csv", "text/csv",
                           key=f"{key_prefix}dl_{name}", on_click="ignore")  # the CSV is built only when clicked
