"""Make the first run of a fresh server behave like every later one.

With a pages/ folder beside the entry script, the first script run of a fresh server goes
through Streamlit's legacy multipage path, although app.py calls st.navigation. Widgets drawn
in that run get ids under another page context, so the browser's first change to any of them
is dropped (the sidebar text reverts to its default). Rerunning once, before any widget is
drawn, means the browser only ever sees widgets from the st.navigation path.
"""
import streamlit as st


def settle_first_run() -> None:
    if not st.session_state.get("_settled", False):
        st.session_state["_settled"] = True
        st.rerun()
