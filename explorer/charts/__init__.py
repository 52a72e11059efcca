"""A chart on a page: drawn with its CSV and PNG downloads (``views``, ``png``), from the builders in
``explorer.figures``.

The pages' chart vocabulary is here: each builder of ``explorer.figures`` with this run's style (palette, large
type, focus token: ``figures.run_style``), so a page writes ``charts.heatmap(z, keys, queries, title=...)``, and
``head_grid`` for the one chart every model page draws: a value per layer and head, layers down, heads across.
The builders themselves stay pure (a style in, a figure out) for tests and for the PNG export."""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go

from explorer import figures as fig


def heatmap(*args, **kw) -> go.Figure:
    return fig.heatmap(*args, style=fig.run_style(), **kw)


def small_multiples(*args, **kw) -> go.Figure:
    return fig.small_multiples(*args, style=fig.run_style(), **kw)


def bars(*args, **kw) -> go.Figure:
    return fig.bars(*args, style=fig.run_style(), **kw)


def grouped_bars(*args, **kw) -> go.Figure:
    return fig.grouped_bars(*args, style=fig.run_style(), **kw)


def qk_scatter(*args, **kw) -> go.Figure:
    return fig.qk_scatter(*args, style=fig.run_style(), **kw)


def attention_lines(*args, **kw) -> go.Figure:
    return fig.attention_lines(*args, style=fig.run_style(), **kw)


def line(*args, **kw) -> go.Figure:
    return fig.line(*args, style=fig.run_style(), **kw)


def loglog(*args, **kw) -> go.Figure:
    return fig.loglog(*args, style=fig.run_style(), **kw)


def head_grid(z: Sequence[Sequence[float]], *, title: str, first_layer: int = 0, **kw) -> go.Figure:
    """A value per layer and head (``z[layer][head]``): layers down from ``first_layer``, heads across, the axes
    named "layer" and "head" in the UI's language (``figures.axis_name``)."""
    heads = [str(h) for h in range(len(z[0]))] if len(z) else []
    layers = [str(first_layer + i) for i in range(len(z))]
    return heatmap(z, heads, layers, title=title, x_title="head", y_title="layer", **kw)
