"""The browser's Back: one history entry per page visited.

Every write to ``st.query_params`` (each setting's URL sync) reaches the browser as a new URL, and
Streamlit 1.67 makes each one a new history entry (``window.history.pushState``), unless the run
came from Back or Forward. So Back stepped through reruns, one URL write at a time: four presses
to leave the app, none of them undoing anything (the session's settings win over an older URL).

What Back means here: the page before. A setting changed on a page rewrites that page's entry in
place (``replaceState``, what Streamlit itself does for widgets bound to the URL); opening another
page (the sidebar, a start-page card) adds an entry. A setting is undone by the control itself
(or Reset), never by Back. The small script below turns the browser's pushes that keep the
pathname and the tour's lesson (a query-string update) into replacements; pushes to another path, or to
another lesson of the guided tour on the same page, are left as they are (Back goes to the lesson before).
A link followed inside the app to another page (the tour's, the sidebar's) leaves the address on the old page
while the new page's first run writes its parameters: those writes would land on the old page's entry, and Back
would reopen that page with the new page's parameters. From such a click to the new page's own entry, a
write that keeps the old pathname is dropped (the new entry carries the latest parameters).
It is installed once per browser tab (the app is a single page: it stays until a reload).
"""

from __future__ import annotations

import streamlit as st

SCRIPT = """<style>.st-key-history { display: none; }</style>
<script>
(() => {
  const h = window.history;
  if (h.__attnOnePerPage) return;
  const push = h.pushState.bind(h), replace = h.replaceState.bind(h);
  let leaving = null;  // the pathname a click inside the app is leaving, until the new page's entry is pushed
  document.addEventListener('click', (e) => {
    const a = e.target.closest && e.target.closest('a[href]');
    if (!a || e.button || e.ctrlKey || e.metaKey || e.shiftKey || e.altKey) return;
    try {
      const to = new URL(a.href, document.location.href), from = document.location.pathname;
      if (to.origin === document.location.origin && to.pathname !== from && (a.target || '_self') === '_self') {
        leaving = from;
        setTimeout(() => { if (leaving === from) leaving = null; }, 30000);  // a click that opened nothing
      }
    } catch (err) {}
  }, true);
  const lesson = (u) => u.searchParams.get('tour');
  const stale = (next) => leaving !== null && next.pathname === leaving;
  h.pushState = function (state, title, url) {
    try {
      const next = new URL(url, document.location.href), here = new URL(document.location.href);
      if (next.origin === here.origin && stale(next)) return;
      if (next.origin === here.origin && next.pathname === here.pathname) {
        if (lesson(next) === lesson(here)) return replace(state, title, url);
      } else {
        leaving = null;
      }
    } catch (e) {}
    return push(state, title, url);
  };
  h.replaceState = function (state, title, url) {
    try {
      if (stale(new URL(url, document.location.href))) return;
    } catch (e) {}
    return replace(state, title, url);
  };
  window.addEventListener('popstate', () => { leaving = null; });
  h.__attnOnePerPage = true;
})();
</script>"""


def one_entry_per_page() -> None:
    """Install the script (hidden, in the sidebar; a no-op once installed)."""
    with st.sidebar.container(key="history"):
        st.html(SCRIPT, unsafe_allow_javascript=True)
