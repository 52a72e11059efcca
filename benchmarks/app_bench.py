"""Warm reruns of each page under AppTest at the defaults, beside a minimal one-chart page."""
import os
import statistics
import sys
import tempfile
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, ROOT)

from streamlit.testing.v1 import AppTest  # noqa: E402

MINIMAL = "import plotly.graph_objects as go\nimport streamlit as st\nst.plotly_chart(go.Figure(go.Heatmap(z=[[1, 2], [3, 4]])))\n"


def warm_median(at: AppTest, n: int = 15) -> float:
    at.run()
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        at.run()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as fh:
    fh.write(MINIMAL)
base = warm_median(AppTest.from_file(fh.name, default_timeout=60))
print(f"minimal one-chart page: {base * 1e3:7.1f} ms")
for page in ["pages/1_steps.py", "pages/2_multihead.py", "pages/3_cross.py", "pages/4_tutorial.py",
             "pages/5_variants.py", "pages/6_complexity.py"]:
    at = AppTest.from_file(os.path.join(ROOT, "app.py"), default_timeout=120)
    at.run()
    at.switch_page(page)
    med = warm_median(at)
    print(f"{page:<28} {med * 1e3:7.1f} ms   ratio {med / base:5.2f}x")
