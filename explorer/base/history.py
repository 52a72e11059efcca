"""The browser's Back: one history entry per page visited.

Every write to ``st.query_params`` (each setting's URL sync) reaches the browser as a new URL, and
Streamlit 1.67 makes each one a new history entry (``window.history.pushState``), unless the run
came from Back or Forward. So Back stepped through reruns, one URL write at a time: four presses
to leave the app, none of them undoing anything (the session's settings win over an older URL).

What Back means here: the page before. A setting changed on a page rewrites that page's entry in
place (``replaceState``, what Streamlit itself does for widgets bound to the URL); opening another
page (the sidebar, a start-page card) adds an entry. A setting is undone by the control itself
(or Reset), never by Back. The small script below turns the browser's pushes that keep the
pathname (a query-string update) into replacements; pushes to another path are left as they are.
It is installed once per browser tab (the app is a single page: it stays until a reload).
"""

from __future__ import annotations

import streamlit as st

SCRIPT = """<style>.st-key-history { display: none; }</style>
<script>
(() => {
  const h = window.history;
  if (h.__attnOnePerPage) return;
  const push = h.pushState.bind(h);
  h.pushState = function (state, title, url) {
    try {
      const next = new URL(url, document.location.href);
      if (next.origin === document.location.origin && next.pathname === document.location.pathname) {
        return h.replaceState(state, title, url);
      }
    } catch (e) {}
    return push(state, title, url);
  };
  h.__attnOnePerPage = true;
})();
</script>"""


def one_entry_per_page() -> None:
    """Install the script (hidden, in the sidebar; a no-op once installed)."""
    with st.sidebar.container(key="history"):
        st.html(SCRIPT, unsafe_allow_javascript=True)
