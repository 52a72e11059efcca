"""Plotly figure builders: plain lists in, ``go.Figure`` out. Testable without a server.

Token labels are made unique by their position ("0 the", "3 the"), since a categorical axis
would merge repeated words. Hover shows the exact value.
"""
from __future__ import annotations

import math
from typing import Sequence

import plotly.graph_objects as go


def labels(words: Sequence[str]) -> list[str]:
    return [f"{i} {w}" for i, w in enumerate(words)]


def heatmap(z, x: Sequence[str], y: Sequence[str], *, title: str = "", x_title: str = "", y_title: str = "",
            colorscale: str = "Viridis", zmid: float | None = None, height: int | None = None) -> go.Figure:
    z = [[float(v) for v in row] for row in z]
    fig = go.Figure(go.Heatmap(
        z=z, x=list(x), y=list(y), colorscale=colorscale, zmid=zmid, colorbar=dict(thickness=12),
        hovertemplate=f"{y_title or 'row'} %{{y}}<br>{x_title or 'column'} %{{x}}<br>value %{{z:.6g}}<extra></extra>",
    ))
    n_rows = max(len(y), 1)
    fig.update_layout(title=title, height=height or min(120 + 28 * n_rows, 640), margin=dict(l=10, r=10, t=40, b=10))
    fig.update_xaxes(title=x_title, type="category", tickangle=-45 if len(x) > 8 else 0)
    fig.update_yaxes(title=y_title, type="category", autorange="reversed")
    return fig


def bars(values, names: Sequence[str], *, title: str = "", y_title: str = "", highlight: int | None = None) -> go.Figure:
    values = [float(v) for v in values]
    colors = ["#e4572e" if i == highlight else "#4c78a8" for i in range(len(values))]
    fig = go.Figure(go.Bar(x=list(names), y=values, marker_color=colors, text=[f"{v:.4f}" for v in values],
                           textposition="outside", hovertemplate="%{x}<br>%{y:.6g}<extra></extra>"))
    fig.update_layout(title=title, height=320, margin=dict(l=10, r=10, t=40, b=10), yaxis_title=y_title)
    fig.update_xaxes(type="category")
    return fig


def grouped_bars(series: dict[str, Sequence[float]], names: Sequence[str], *, title: str = "") -> go.Figure:
    fig = go.Figure([go.Bar(name=k, x=list(names), y=[float(v) for v in vals], hovertemplate="%{x}<br>%{y:.6g}<extra>" + k + "</extra>")
                     for k, vals in series.items()])
    fig.update_layout(title=title, barmode="group", height=320, margin=dict(l=10, r=10, t=40, b=10))
    fig.update_xaxes(type="category")
    return fig


def attention_lines(weights, queries: Sequence[str], keys: Sequence[str], *, min_weight: float = 0.0,
                    title: str = "", left: str = "queries", right: str = "keys") -> go.Figure:
    """Queries on the left, keys on the right, one line per pair, width and opacity ∝ weight."""
    fig = go.Figure()
    L, S = len(queries), len(keys)
    yq = [1 - i / max(L - 1, 1) for i in range(L)]
    yk = [1 - j / max(S - 1, 1) for j in range(S)]
    for i in range(L):
        for j in range(S):
            w = float(weights[i][j])
            if w <= min_weight or w <= 0:
                continue
            fig.add_trace(go.Scatter(
                x=[0, 1], y=[yq[i], yk[j]], mode="lines", line=dict(width=max(0.5, 10 * w), color="#4c78a8"),
                opacity=min(1.0, 0.15 + w), hoverinfo="text", text=f"{queries[i]} → {keys[j]}: {w:.4f}", showlegend=False,
            ))
    fig.add_trace(go.Scatter(x=[0] * L, y=yq, mode="markers+text", text=list(queries), textposition="middle left",
                             marker=dict(size=8, color="#e4572e"), hoverinfo="skip", showlegend=False))
    fig.add_trace(go.Scatter(x=[1] * S, y=yk, mode="markers+text", text=list(keys), textposition="middle right",
                             marker=dict(size=8, color="#54a24b"), hoverinfo="skip", showlegend=False))
    fig.update_layout(title=title, height=max(300, 34 * max(L, S)), margin=dict(l=10, r=10, t=40, b=10),
                      xaxis=dict(visible=False, range=[-0.6, 1.6]), yaxis=dict(visible=False, range=[-0.08, 1.08]),
                      annotations=[dict(x=0, y=1.08, text=left, showarrow=False), dict(x=1, y=1.08, text=right, showarrow=False)])
    return fig


def loglog(series: dict[str, tuple[Sequence[float], Sequence[float]]], *, title: str = "", x_title: str = "L",
           y_title: str = "", theory: dict[str, tuple[Sequence[float], Sequence[float]]] | None = None) -> go.Figure:
    fig = go.Figure()
    for name, (xs, ys) in series.items():
        fig.add_trace(go.Scatter(x=list(xs), y=list(ys), mode="lines+markers", name=name,
                                 hovertemplate=f"{name}<br>L %{{x}}<br>%{{y:.4g}}<extra></extra>"))
    for name, (xs, ys) in (theory or {}).items():
        fig.add_trace(go.Scatter(x=list(xs), y=list(ys), mode="lines", name=f"{name} (theory)",
                                 line=dict(dash="dot", width=1), hoverinfo="skip"))
    fig.update_layout(title=title, height=420, margin=dict(l=10, r=10, t=40, b=10))
    fig.update_xaxes(type="log", title=x_title)
    fig.update_yaxes(type="log", title=y_title)
    return fig


def line(xs, series: dict[str, Sequence[float]], *, title: str = "", x_title: str = "", y_title: str = "",
         log_x: bool = False) -> go.Figure:
    fig = go.Figure([go.Scatter(x=list(xs), y=[float(v) if v is not None and math.isfinite(v) else None for v in ys],
                                mode="lines+markers", name=k) for k, ys in series.items()])
    fig.update_layout(title=title, height=340, margin=dict(l=10, r=10, t=40, b=10))
    fig.update_xaxes(title=x_title, type="log" if log_x else "linear")
    fig.update_yaxes(title=y_title)
    return fig
