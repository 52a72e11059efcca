"""Plotly figure builders: plain lists in, ``go.Figure`` out. Testable without a server.

Each builder takes the chart's ``Style`` (palette, large type, focus token) as an argument and reads
nothing else; a page passes its run's (``run_style()``). By chart kind: ``style`` (the palette and
the run's style), ``base`` (labels, axis names, the one ``go.Figure`` call), ``matrix`` (heatmaps,
small multiples), ``lines`` (attention lines, log-log and plain curves), ``charts`` (bars). Call
sites on a page write ``from explorer import charts`` and ``charts.heatmap(...)`` (the run's style added there).
"""

from explorer.figures.base import AXES, CHECKED, MARGIN, alt_text, axis_name, labels
from explorer.figures.charts import bars, grouped_bars, qk_scatter
from explorer.figures.lines import attention_lines, line, loglog
from explorer.figures.matrix import MAX_SIDE, PRESENT_MAX_HEIGHT, heatmap, small_multiples
from explorer.figures.style import OKABE_ITO, PALETTES, Style, begin_run, kernel_colours, run_style, use_focus

__all__ = [
    "AXES",
    "CHECKED",
    "MARGIN",
    "MAX_SIDE",
    "OKABE_ITO",
    "PALETTES",
    "PRESENT_MAX_HEIGHT",
    "Style",
    "alt_text",
    "attention_lines",
    "axis_name",
    "bars",
    "begin_run",
    "grouped_bars",
    "heatmap",
    "kernel_colours",
    "labels",
    "line",
    "loglog",
    "qk_scatter",
    "run_style",
    "small_multiples",
    "use_focus",
]
