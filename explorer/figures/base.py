"""What every chart shares: position-numbered token labels, axis names in the UI's language, plain
numbers, the text alternative, and the one constructor call that builds a ``go.Figure``.

Token labels are made unique by their position ("0 the", "3 the"), since a categorical axis
would merge repeated words. Hover shows the exact value.
"""

from __future__ import annotations

import html
import os
from collections.abc import Sequence

import plotly.graph_objects as go

from explorer.base.safe import plot
from explorer.figures.style import LARGE_FONT, LARGE_SCALE, Style

# Plotly checks every property of every trace and layout as a figure is built: ~0.6 ms of a heatmap's
# ~0.9 ms, paid for each chart on each rerun by every session (11 % of a saturated server's time in
# benchmarks/results/class_capacity_cpu.txt's profile). The figures here are built from the same few
# shapes every time, so the check runs in the tests instead: tests/unit/test_figures_unchecked.py builds
# each kind both ways and compares the JSON, tests/app/test_pages.py checks every chart each page sends.
# ATTN_EXPLORER_CHECK_FIGURES=1 turns it back on.
NO_TEMPLATE = {"data": {"scatter": [{"type": "scatter"}]}}  # what Plotly makes of template="none"
CHECKED = {"_validate": os.environ.get("ATTN_EXPLORER_CHECK_FIGURES") == "1"}
MARGIN = dict(l=10, r=10, t=40, b=10)

# Axis names the pages pass as plain words; the chart writes them in the UI's language.
AXES = {
    "query": "ax_query",
    "key": "ax_key",
    "dim": "ax_dim",
    "step": "ax_step",
    "window": "ax_window",
    "feature": "ax_feature",
    "layer": "ax_layer",
    "head": "ax_head",
    "row": "ax_row",
    "column": "ax_column",
    "value": "ax_value",
    "weight": "ax_weight",
    "token": "ax_token",
}


def labels(words: Sequence[str]) -> list[str]:
    """Position-numbered token labels, escaped for plotly (a token is data, never markup)."""
    return [f"{i} {plot(w)}" for i, w in enumerate(words)]


def axis_name(name: str) -> str:
    """An axis word ("query", "dim") in the UI's language; anything else (a symbol, a unit,
    text the page translated already) as it is."""
    from explorer.base.i18n import t

    key = AXES.get(name)
    return t(key) if key else name


def ticks() -> dict:
    """Category ticks that never overlap: plotly turns labels that would collide (upright, else
    vertical) and thins a crowded category axis to every n-th label; hover names every cell."""
    return dict(type="category", automargin=True, autotickangles=[0, 90])


def alt_text(figure: go.Figure) -> str:
    """The sentence a figure builder stored as the chart's text alternative ("" when none)."""
    meta = figure.layout.meta
    return meta.get("alt", "") if isinstance(meta, dict) else ""


def fmt(v: float) -> str:
    return f"{v:.3g}"


def word(label: str) -> str:
    """'4 dessert' -> 'dessert' (labels carry their position; plain text, not plotly's entities)."""
    return html.unescape(label).split(" ", 1)[-1]


def plain(values) -> list:
    """Tensors and arrays to (nested) lists of Python floats, in one call where possible."""
    return (
        values.tolist()
        if hasattr(values, "tolist")
        else [plain(v) if isinstance(v, (list, tuple)) else float(v) for v in values]
    )


def figure(data: list, *, style: Style, title: str = "", height: int, alt: str = "", **layout) -> go.Figure:
    """One validated constructor call: several ``update_*`` calls cost ~3x more per chart,
    and every page rerun builds its charts again. ``alt``: the chart's main fact in one sentence
    (``alt_text`` reads it back; pages show it under the chart)."""
    layout = {k: v for k, v in layout.items() if not (isinstance(v, list) and not v)}  # as Plotly drops them
    if style.colorway:
        layout["colorway"] = style.colorway
    if style.large:
        layout["font"] = dict(size=LARGE_FONT)
        height = int(height * LARGE_SCALE)
    return go.Figure(
        **CHECKED,
        data=data,
        # No plotly template: Streamlit's theme styles the chart in the browser (light or dark), and the
        # default template costs ~2 ms of copying and 6 KB of JSON per chart on every rerun.
        layout=dict(
            title=dict(text=plot(title)),
            height=height,
            margin=MARGIN,
            template=NO_TEMPLATE,
            meta={"alt": alt},
            **layout,
        ),
    )
