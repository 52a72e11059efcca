"""A chart on a page: drawn with its CSV and PNG downloads (``views``, ``png``), from the builders in
``explorer.figures``.

The pages' chart vocabulary is here: each builder of ``explorer.figures`` with this run's style (palette, large
type, focus token: ``figures.run_style``), so a page writes ``charts.heatmap(z, keys, queries, title=...)``, and
``head_grid`` for the one chart every model page draws: a value per layer and head, layers down, heads across.
The builders themselves stay pure (a style in, a figure out) for tests and for the PNG export."""

from __future__ import annotations

import functools
from collections.abc import Sequence

import plotly.graph_objects as go

from explorer import figures as fig


def _with_run_style(builder):
    """``builder`` with this run's style (``figures.run_style``) added to its arguments."""

    @functools.wraps(builder)
    def drawn(*args, **kw) -> go.Figure:
        return builder(*args, style=fig.run_style(), **kw)

    return drawn


heatmap = _with_run_style(fig.heatmap)
small_multiples = _with_run_style(fig.small_multiples)
bars = _with_run_style(fig.bars)
grouped_bars = _with_run_style(fig.grouped_bars)
qk_scatter = _with_run_style(fig.qk_scatter)
attention_lines = _with_run_style(fig.attention_lines)
line = _with_run_style(fig.line)
loglog = _with_run_style(fig.loglog)


def head_grid(z: Sequence[Sequence[float]], *, title: str, first_layer: int = 0, **kw) -> go.Figure:
    """A value per layer and head (``z[layer][head]``): layers down from ``first_layer``, heads across, the axes
    named "layer" and "head" in the UI's language (``figures.axis_name``)."""
    heads = [str(h) for h in range(len(z[0]))] if len(z) else []
    layers = [str(first_layer + i) for i in range(len(z))]
    return heatmap(z, heads, layers, title=title, x_title="head", y_title="layer", **kw)
