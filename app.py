"""Attention Explorer: change anything, watch every step of attention recompute.

Entry point: page config, the shared sidebar (defined once, here, so its values survive page
switches), the language switch, and st.navigation over the scripts in pages/.
"""

import streamlit as st

st.set_page_config(page_title="Attention Explorer", page_icon=":material/visibility:", layout="wide")

from attn_core import AttentionConfigError  # noqa: E402
from explorer import server  # noqa: E402
from explorer.home import home  # noqa: E402
from explorer.i18n import begin_run, t  # noqa: E402
from explorer.state import show_error, sidebar_ui, trace_for  # noqa: E402
from explorer.urlcheck import check_url, show_notices  # noqa: E402

server.prepare()  # once per process: heavy imports, a frozen heap, the model loading in the background
begin_run()
pages = [
    st.Page(home, title=t("page_home"), icon=":material/home:", default=True, url_path="home"),
    st.Page("pages/1_steps.py", title=t("page_steps"), icon=":material/calculate:", url_path="steps"),
    st.Page("pages/2_multihead.py", title=t("page_multihead"), icon=":material/hub:", url_path="multihead"),
    st.Page("pages/3_cross.py", title=t("page_cross"), icon=":material/compare_arrows:", url_path="cross"),
    st.Page("pages/4_tutorial.py", title=t("page_tutorial"), icon=":material/menu_book:", url_path="tutorial"),
    st.Page("pages/5_variants.py", title=t("page_variants"), icon=":material/extension:", url_path="variants"),
    st.Page("pages/6_complexity.py", title=t("page_complexity"), icon=":material/timer:", url_path="complexity"),
    st.Page("pages/7_model.py", title=t("page_model"), icon=":material/model_training:", url_path="model"),
]
nav = st.navigation(pages)
st.sidebar.title(t("app_title"))
check_url()  # before any widget reads the URL
notice = st.sidebar.empty()
settings, slots = sidebar_ui()
try:
    trace_for(settings)
except AttentionConfigError as err:
    show_error(err, slots)
try:
    nav.run()
finally:  # also when the page stops early: the notice names what the page's own controls rejected too
    show_notices(notice)
