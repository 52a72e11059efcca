"""Warm reruns of each page at the defaults, beside a minimal page with one plotly chart.

Two columns, both medians of 15 warm reruns under AppTest in one process:

- ``apptest``: AppTest as it is. Every ``AppTest.run`` builds a fresh ``ScriptCache`` (each
  script is parsed, magic-rewritten and compiled again) and resets Streamlit's legacy pages/
  flag, so every run of this app takes the legacy multipage path through app.py.
- ``server-like``: the same reruns with one shared ScriptCache and the legacy flag cleared after
  construction, which is what a running ``streamlit run`` server does after its first script run
  (bytecode cached per path; ``st.navigation`` turns the legacy path off for good).

The minimal page gets the same treatment in each column. The ratio is page / minimal page.
"""

import os
import statistics
import sys
import tempfile
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, ROOT)

import streamlit.testing.v1.app_test as app_test_module
from streamlit.runtime.pages_manager import PagesManager
from streamlit.runtime.scriptrunner.script_cache import ScriptCache
from streamlit.testing.v1 import AppTest

from explorer.pages import FILES as PAGES

MINIMAL = (
    "import plotly.graph_objects as go\nimport streamlit as st\n"
    "st.plotly_chart(go.Figure(go.Heatmap(z=[[1, 2], [3, 4]])))\n"
)
# The same kinds and number of controls as the shared sidebar, with no chart and no computation:
# what the controls alone cost, for reading the ratios.
CONTROLS = """import streamlit as st
sb = st.sidebar
sb.radio("Language", ["en", "zh"], key="lang", horizontal=True)
sb.text_area("Sentence", "Life is short, eat dessert first", key="sentence")
sb.text_input("Second sentence", "Das Leben ist kurz", key="source")
for name in ("heads", "d_model", "d_q", "d_k", "d_v", "seed"):
    sb.number_input(name, 0, 2**31 - 1, 4, key=name)
sb.radio("Layout", ["tutorial", "standard"], key="layout")
for name in ("score", "mask", "pos"):
    sb.selectbox(name, ["a", "b", "c"], key=name)
sb.number_input("temperature", 0.01, 100.0, 1.0, key="temperature")
for name in ("causal", "dropout_on", "residual_norm"):
    sb.checkbox(name, key=name)
sb.radio("Init", ["tutorial", "standard"], key="init", horizontal=True)
sb.button("Reset", key="reset")
for i in range(10):
    sb.empty()
"""


def server_like(on: bool) -> None:
    if on:
        shared = ScriptCache()
        app_test_module.ScriptCache = lambda: shared
        original = PagesManager.__init__

        def init(self, *args, **kwargs):
            original(self, *args, **kwargs)
            PagesManager.uses_pages_directory = False

        init.original = original
        PagesManager.__init__ = init
    else:
        app_test_module.ScriptCache = ScriptCache
        PagesManager.__init__ = getattr(PagesManager.__init__, "original", PagesManager.__init__)


def warm_median(at: AppTest, n: int = 15) -> float:
    at.run()
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        at.run()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def measure() -> dict[str, float]:
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as fh:
        fh.write(MINIMAL)
    out = {"minimal one-chart page": warm_median(AppTest.from_file(fh.name, default_timeout=60))}
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as fh:
        fh.write(CONTROLS)
    out["sidebar controls alone"] = warm_median(AppTest.from_file(fh.name, default_timeout=60))
    for page in PAGES:
        at = AppTest.from_file(os.path.join(ROOT, "app.py"), default_timeout=120)
        at.run()
        at.switch_page(page)
        out[page] = warm_median(at)
        assert not at.exception, (page, [e.value for e in at.exception])
    return out


raw = measure()
server_like(True)
warm = measure()
server_like(False)
base_raw, base_warm = raw["minimal one-chart page"], warm["minimal one-chart page"]
print(f"{'':<24} {'apptest':>9} {'ratio':>7}   {'server-like':>11} {'ratio':>7}")
for name in raw:
    print(
        f"{name:<24} {raw[name] * 1e3:7.1f}ms {raw[name] / base_raw:6.2f}x   "
        f"{warm[name] * 1e3:9.1f}ms {warm[name] / base_warm:6.2f}x"
    )
