"""Bar charts: one series with a highlighted bar, and several series side by side."""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go

from .base import CHECKED, axis_name, figure, fmt, plain, ticks, word
from .style import Style


def bars(
    values, names: Sequence[str], *, style: Style, title: str = "", y_title: str = "", highlight: int | None = None
) -> go.Figure:
    """One bar per name, its value written above it; ``highlight``: a bar in the accent colour, also outlined."""
    from ..i18n import t

    values, names = plain(values), list(names)
    colors = [style.colour("accent") if i == highlight else style.colour("base") for i in range(len(values))]
    outline = [3 if i == highlight else 0 for i in range(len(values))]
    top = max(range(len(values)), key=values.__getitem__) if values else None
    alt = t("alt_bars", name=word(names[top]), v=fmt(values[top])) if top is not None else ""
    trace = go.Bar(
        **CHECKED,
        x=names,
        y=values,
        marker=dict(color=colors, line=dict(width=outline, color="#000000")),
        text=[f"{v:.4f}" for v in values],
        textposition="outside",
        hovertemplate="%{x}<br>%{y:.6g}<extra></extra>",
    )
    yaxis = dict(title=dict(text=axis_name(y_title)))
    return figure([trace], style=style, title=title, height=320, alt=alt, yaxis=yaxis, xaxis=ticks())


def grouped_bars(
    series: dict[str, Sequence[float]], names: Sequence[str], *, style: Style, title: str = ""
) -> go.Figure:
    """Several series' bars side by side per name; the text alternative names the largest bar."""
    from ..i18n import t

    names = list(names)
    data = [
        go.Bar(**CHECKED, name=k, x=names, y=plain(vals), hovertemplate="%{x}<br>%{y:.6g}<extra>" + k + "</extra>")
        for k, vals in series.items()
    ]
    best = max(
        ((float(v), k, names[i]) for k, vals in series.items() for i, v in enumerate(plain(vals))), default=None
    )
    alt = t("alt_grouped", series=best[1], name=word(best[2]), v=fmt(best[0])) if best else ""
    return figure(data, style=style, title=title, height=320, alt=alt, barmode="group", xaxis=dict(type="category"))


def qk_scatter(
    queries, keys, q_names: Sequence[str], k_names: Sequence[str], row, *, focus: int, style: Style, title: str = ""
) -> go.Figure:
    """One head's queries (circles) and keys (diamonds) on one map, each named; from the ``focus`` query a line to
    every key, as thick as its weight in ``row``."""
    from ..i18n import t

    queries, keys, row = plain(queries), plain(keys), plain(row)
    lines = [
        go.Scatter(
            **CHECKED,
            x=[queries[focus][0], k[0]],
            y=[queries[focus][1], k[1]],
            mode="lines",
            line=dict(width=0.5 + 8 * w, color=style.colour("accent")),
            opacity=0.35 + 0.6 * w,
            hoverinfo="skip",
            showlegend=False,
        )
        for k, w in zip(keys, row, strict=True)
    ]
    points = [
        go.Scatter(
            **CHECKED,
            x=[p[0] for p in pts],
            y=[p[1] for p in pts],
            mode="markers+text",
            text=list(names),
            textposition="top center",
            name=t(name),
            marker=dict(symbol=symbol, size=11, color=colours, line=dict(width=1, color="#000000")),
            hovertemplate="%{text}<br>(%{x:.3g}, %{y:.3g})<extra></extra>",
        )
        for pts, names, name, symbol, colours in (
            (
                queries,
                q_names,
                "qk_queries",
                "circle",
                [style.colour("accent" if i == focus else "base") for i in range(len(queries))],
            ),
            (keys, k_names, "qk_keys", "diamond", style.colour("other")),
        )
    ]
    top = max(range(len(row)), key=row.__getitem__) if row else 0
    alt = t("alt_qk", q=word(q_names[focus]), k=word(k_names[top]), v=fmt(row[top])) if row else ""
    axis = dict(zeroline=False, showgrid=False, showticklabels=False)
    return figure(
        lines + points, style=style, title=title, height=420, alt=alt, xaxis=axis, yaxis=dict(axis, scaleanchor="x")
    )
