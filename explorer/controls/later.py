"""A page's sections below its first screen, drawn once the browser has drawn that screen.

A new tab's browser draws the charts of one run in one batch: on Next token, the bars at the top waited for the
six sections under them (2.1-2.8 s to the first chart; 1.4-1.5 s with those sections left out:
benchmarks/results/first_load_cpu.txt). So on a session's first run of a page, the sections below its first screen
are drawn by the run that a small script in the page (``BEACON``) asks for once the first chart is on screen: a run of
the whole page, not of a fragment, so that a widget in those sections (a click on the query-key map that picks the
focus query above it) reruns the page as anywhere else. It asks once (again, a few times at most, where its answer
was lost: ``AGAIN_MS``; after a learner's click, only once the run the click asked for has been seen: ``SETTLE_MS``),
and every later run of the page in that session draws them at once, in the same run as the rest.

Drawn at once as before: in presenter mode (one section a step, on the first screen), and where no browser is
attached to the session (AppTest, whose runs carry no HTTP headers): nothing would ever answer the beacon there.
A tab whose first chart never comes (the page stopped above it) is answered after ``WAIT_MS`` all the same.
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from explorer.base import session
from explorer.base.i18n import t
from explorer.controls import present

WAIT_MS = 3000  # the beacon answers by then even without a drawn chart
AGAIN_MS = 2000  # an answer lost on its way is asked again after this (the page at rest, the placeholder there)
AGAIN_AT_MOST = 5  # a server that never acts on it is not asked forever (each answer is a run of the page)
SETTLE_MS = 5000  # after a click or key press with no run seen since, the beacon answers by then all the same
EVENT = "drawn"  # the beacon's one trigger
KEY = "first-screen-later"  # the placeholder's container (a page's other parts: KEY-part): what browser tests wait on

# Run by Streamlit's component frame in the app's own page (no request leaves it): once per mounted beacon, it
# waits for a Plotly chart drawn (its SVG in place), then tells the server, which reruns the page. The answer can be
# lost (a click of the learner's that reruns the page at that moment, a dropped connection): a beacon still on the page
# ``AGAIN_MS`` after its answer, the page at rest (no run of the script under way), asks again. Once the server has
# drawn the sections, the placeholder and its beacon are gone from the page and the beacon stops looking.
# An answer carries the page's address as the browser holds it, and the server folds a run asked for while another is
# waiting into one with the newer address: an answer sent after a learner's click that changes the address (the tour's
# Next, to the same page with another lesson), before the server has run it, took the page back to the old address.
# So after a click or a key press the beacon answers only once a run has been seen since (the click's, whose address
# the browser then holds), or after ``SETTLE_MS`` with none (a click that runs nothing, opening a fold).
JS = f"""export default function ({{ parentElement, setTriggerValue }}) {{
  if (parentElement.__asked) return;
  parentElement.__asked = true;
  const started = Date.now();
  const app = () => document.querySelector("[data-testid='stApp']");
  let asked = 0, again = 0, touched = 0, ranSince = false;
  const touch = () => {{ touched = Date.now(); ranSince = false; }};
  document.addEventListener('pointerdown', touch, true);
  document.addEventListener('keydown', touch, true);
  const atRest = () => {{
    if (app()?.dataset.testScriptState !== 'notRunning') {{ ranSince = true; return false; }}
    return !touched || ranSince || Date.now() - touched > {SETTLE_MS};
  }};
  const ask = () => {{ asked = Date.now(); setTriggerValue('{EVENT}', true); }};
  const stop = () => {{
    document.removeEventListener('pointerdown', touch, true);
    document.removeEventListener('keydown', touch, true);
  }};
  const look = () => {{
    if (!parentElement.isConnected) return stop();
    const rest = atRest();
    if (!asked) {{
      const drawn = document.querySelector("[data-testid='stPlotlyChart'] svg.main-svg");
      if ((drawn || Date.now() - started > {WAIT_MS}) && rest) ask();
    }} else if (Date.now() - asked > {AGAIN_MS} && rest) {{
      if (again >= {AGAIN_AT_MOST}) return stop();
      again += 1;
      ask();
    }}
    setTimeout(look, asked ? 250 : 50);
  }};
  look();
}}"""
BEACON = st.components.v2.component("attn_explorer_first_screen", js=JS)


def _flag(page: str) -> str:
    return f"_first_screen_drawn_{page}"


def browser_attached() -> bool:
    """Whether a browser tab runs this session (its websocket's HTTP headers are there; AppTest's runs have none)."""
    try:
        return bool(st.context.headers)
    except Exception:  # noqa: BLE001 - no script run context: no browser
        return False


def below_first_screen(page: str, draw: Callable[[], None], part: str = "") -> None:
    """Call ``draw`` (the page's sections under its first chart): at once, or, on this session's first run of
    ``page`` in a browser, in the page's next run, which the beacon asks for once the browser has drawn the first
    screen. ``part``: another part of the same page left for that run (a tab not shown first), with its own
    placeholder and beacon (the first to answer brings both)."""
    flag = _flag(page)
    if session.get(flag) or present.on() or not browser_attached():
        draw()
        return

    name = f"_{part}" if part else ""
    with st.container(key=f"{KEY}-{part}" if part else KEY):  # its answer reruns the page, which draws in its place
        BEACON(key=f"first_screen_{page}{name}", on_drawn_change=lambda: session.put(flag, True))
        st.caption(t("later_drawing"))
