"""Attention Explorer: change anything, watch every step of attention recompute.

Entry point: page config, the shared sidebar (defined once, here, so its values survive page
switches), the language switch, and st.navigation over the scripts in pages/.
"""
import streamlit as st

st.set_page_config(page_title="Attention Explorer", page_icon="🔍", layout="wide")

from explorer.i18n import t  # noqa: E402
from explorer.state import show_error, sidebar_ui, trace_for  # noqa: E402
from attn_core import AttentionConfigError  # noqa: E402


pages = [
    st.Page("pages/1_step_by_step.py", title=t("page_steps"), icon="🧮", default=True, url_path="steps"),
    st.Page("pages/2_multi_head.py", title=t("page_multihead"), icon="🧠", url_path="multihead"),
    st.Page("pages/3_cross_attention.py", title=t("page_cross"), icon="🔀", url_path="cross"),
    st.Page("pages/4_tutorial.py", title=t("page_tutorial"), icon="📘", url_path="tutorial"),
    st.Page("pages/5_variants.py", title=t("page_variants"), icon="🧩", url_path="variants"),
    st.Page("pages/6_complexity.py", title=t("page_complexity"), icon="⏱️", url_path="complexity"),
]
nav = st.navigation(pages)
st.sidebar.title(t("app_title"))
settings, slots = sidebar_ui()
try:
    trace_for(settings)
except AttentionConfigError as err:
    show_error(err, slots)
nav.run()
