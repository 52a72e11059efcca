"""Bar charts: one series with a highlighted bar, and several series side by side."""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go

from explorer.figures.base import CHECKED, axis_name, figure, fmt, plain, plot, ticks, word
from explorer.figures.style import D3, Style


def bars(
    values, names: Sequence[str], *, style: Style, title: str = "", y_title: str = "", highlight: int | None = None
) -> go.Figure:
    """One bar per name, its value written above it; ``highlight``: a bar in the accent colour, also outlined."""
    from explorer.base.i18n import t

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
    from explorer.base.i18n import t

    names = list(names)
    data = [
        go.Bar(**CHECKED, name=k, x=names, y=plain(vals), hovertemplate="%{x}<br>%{y:.6g}<extra>" + k + "</extra>")
        for k, vals in series.items()
    ]
    best = max(
        ((float(v), k, names[i]) for k, vals in series.items() for i, v in enumerate(plain(vals))), default=None
    )
    alt = t("alt_grouped", series=best[1], name=word(best[2]), v=fmt(best[0])) if best else ""
    height = 290 if style.large else 320  # presenting: under the walk's row and narration at 720 px
    return figure(data, style=style, title=title, height=height, alt=alt, barmode="group", xaxis=dict(type="category"))


def qk_scatter(
    queries,
    keys,
    q_names: Sequence[str],
    k_names: Sequence[str],
    row,
    *,
    focus: int,
    style: Style,
    title: str = "",
    colour: dict | None = None,
    more: tuple | None = None,
    allowed=None,
) -> go.Figure:
    """One head's queries (circles) and keys (diamonds) on one map, each named; from the ``focus`` query (outlined
    thick) a line to every key its mask row ``allowed`` (S,) lets it attend to (None: every key), as thick as its
    weight in ``row``: none to a masked key (a decoder's later ones), whose weight is 0 by the mask.
    ``colour`` (``qk_colours``): each point's colour
    from one shared colour bar; None: queries in the base colour, the focus in the accent, keys in another.
    ``more``: other sentences' queries (M, 2) and keys (N, 2), drawn small and faint under the rest (their colours
    follow the first points' in ``colour``'s lists). The figure's meta names the queries' trace (``queries_curve``):
    a click on it selects that query."""
    from explorer.base.i18n import t

    queries, keys, row = plain(queries), plain(keys), plain(row)
    may = [True] * len(keys) if allowed is None else [bool(v) for v in plain(allowed)]
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
        for k, w, ok in zip(keys, row, may, strict=True)
        if ok
    ]
    marks = _qk_marks(len(queries), len(keys), focus, style, colour)
    under = [] if more is None else _qk_more(*(plain(m) for m in more), len(queries), len(keys), colour)
    points = [
        go.Scatter(
            **CHECKED,
            x=[p[0] for p in pts],
            y=[p[1] for p in pts],
            mode="markers+text",
            text=list(names),
            textposition="top center",
            name=t(name),
            marker=marker,
            hovertemplate="%{text}<br>(%{x:.3g}, %{y:.3g})<extra></extra>",
        )
        for pts, names, name, marker in (
            (queries, q_names, "qk_queries", marks[0]),
            (keys, k_names, "qk_keys", marks[1]),
        )
    ]
    seen = [j for j in range(len(row)) if may[j]]
    top = max(seen, key=row.__getitem__) if seen else 0
    alt = t("alt_qk", q=word(q_names[focus]), k=word(k_names[top]), v=fmt(row[top])) if seen else ""
    axis = dict(zeroline=False, showgrid=False, showticklabels=False)
    extra = {} if colour is None else {"coloraxis": _qk_colour_axis(colour, style)}
    out = figure(
        under + lines + points,
        style=style,
        title=title,
        height=420,
        alt=alt,
        xaxis=axis,
        yaxis=dict(axis, scaleanchor="x"),
        legend=dict(orientation="h", y=-0.05),
        **extra,
    )
    out.layout.meta = {"alt": alt, "queries_curve": len(under) + len(lines)}
    return out


def _qk_marks(n_q: int, n_k: int, focus: int, style: Style, colour: dict | None) -> tuple[dict, dict]:
    """The queries' and the keys' marker: the focus query outlined thick (so it is told apart by more than colour)."""
    width = [3 if i == focus else 1 for i in range(n_q)]
    q = dict(
        symbol="circle", size=[14 if i == focus else 11 for i in range(n_q)], line=dict(width=width, color="#000")
    )
    k = dict(symbol="diamond", size=11, line=dict(width=1, color="#000000"))
    if colour is None:
        q["color"] = [style.colour("accent" if i == focus else "base") for i in range(n_q)]
        k["color"] = style.colour("other")
    else:
        q.update(color=list(colour["q"][:n_q]), coloraxis="coloraxis")
        k.update(color=list(colour["k"][:n_k]), coloraxis="coloraxis")
    return q, k


def _qk_more(queries: list, keys: list, n_q: int, n_k: int, colour: dict | None) -> list:
    """Other sentences' queries and keys: small, faint, without text (grey when not coloured)."""
    from explorer.base.i18n import t

    out = []
    for pts, name, symbol, values in (
        (queries, "qk_probe_queries", "circle", None if colour is None else colour["q"][n_q:]),
        (keys, "qk_probe_keys", "diamond", None if colour is None else colour["k"][n_k:]),
    ):
        marker = dict(symbol=symbol, size=5, opacity=0.35, color="#9a9a9a" if values is None else list(values))
        if values is not None:
            marker["coloraxis"] = "coloraxis"
        out.append(
            go.Scattergl(
                **CHECKED,
                x=[p[0] for p in pts],
                y=[p[1] for p in pts],
                mode="markers",
                name=t(name),
                marker=marker,
                hoverinfo="skip",
            )
        )
    return out


def _qk_colour_axis(colour: dict, style: Style) -> dict:
    """The colour bar every point shares: a scale over numbers, or one band per token (its text under it)."""
    bar = dict(title=dict(text=plot(colour["title"]), side="right"), thickness=14)
    names = colour.get("names")
    if names is None:
        return dict(colorscale=style.scale("Viridis"), colorbar=bar)
    palette, n = style.colorway or D3, max(len(names), 1)
    scale = []
    for i in range(n):
        c = palette[i % len(palette)]
        scale += [[i / n, c], [(i + 1) / n, c]]
    shown = colour.get("labelled", n)  # the bands named under the bar: the first ones (this sentence's tokens)
    bar.update(tickvals=list(range(shown)), ticktext=[plot(x) for x in names[:shown]])
    return dict(colorscale=scale, cmin=-0.5, cmax=n - 0.5, colorbar=bar)
