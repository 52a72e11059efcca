"""Line charts: attention as lines from queries to keys, measured curves on log-log axes beside
their theory, and plain curves over a linear or log x."""

from __future__ import annotations

import math
from collections.abc import Sequence

import plotly.graph_objects as go

from explorer.base.safe import plot
from explorer.figures.base import CHECKED, axis_name, figure, fmt, plain, word
from explorer.figures.style import Style, kernel_colours


def attention_lines(
    weights,
    queries: Sequence[str],
    keys: Sequence[str],
    *,
    style: Style,
    min_weight: float = 0.0,
    title: str = "",
    left: str = "queries",
    right: str = "keys",
    buckets: int = 8,
    allowed=None,
) -> go.Figure:
    """Queries on the left, keys on the right, one line per pair above ``min_weight``; width and
    opacity grow with the weight. ``allowed`` (L, S) bool, True where the mask lets a query attend (None: all):
    no line to a masked key, and the strongest line named is that of a query with a choice (a decoder's first
    query has one key, and its weight 1 says nothing).

    Lines are grouped into ``buckets`` weight bands, one trace each (plotly draws one width per
    trace), so a 64-token sentence costs 8 traces, not 4096. Hover a line's end for its weight.
    """
    from explorer.base.i18n import t

    L, S = len(queries), len(keys)
    yq = [1 - i / max(L - 1, 1) for i in range(L)]
    yk = [1 - j / max(S - 1, 1) for j in range(S)]
    weights = plain(weights)
    may = [[True] * S for _ in range(L)] if allowed is None else [[bool(v) for v in r[:S]] for r in plain(allowed)[:L]]
    data = _weight_bands(weights, queries, keys, yq, yk, min_weight, buckets, style, may)
    data.append(_ends(0, yq, queries, "middle left", dict(size=8, color=style.colour("accent"))))
    data.append(_ends(1, yk, keys, "middle right", dict(size=8, color=style.colour("other"), symbol="square")))
    choice = [i for i in range(L) if sum(may[i]) > 1]
    rows = choice if choice and len(choice) < sum(any(r) for r in may) else [i for i in range(L) if any(may[i])]
    strongest = max(((weights[i][j], i, j) for i in rows for j in range(S) if may[i][j]), default=None)
    key = "alt_lines_choice" if rows is choice else "alt_lines"
    alt = (
        t(key, q=word(queries[strongest[1]]), k=word(keys[strongest[2]]), w=f"{strongest[0]:.2f}") if strongest else ""
    )
    return figure(
        data,
        style=style,
        title=title,
        alt=alt,
        height=min(max(300, 24 * max(L, S)), 1600),
        xaxis=dict(visible=False, range=[-0.6, 1.6]),
        yaxis=dict(visible=False, range=[-0.08, 1.08]),
        annotations=[dict(x=0, y=1.08, text=left, showarrow=False), dict(x=1, y=1.08, text=right, showarrow=False)],
    )


def _weight_bands(weights, queries, keys, yq, yk, min_weight: float, buckets: int, style: Style, may) -> list:
    """One trace of lines per weight band (the pairs above ``min_weight`` that ``may`` allows), wider and more
    opaque as weights grow."""
    bands: list[tuple[list, list, list]] = [([], [], []) for _ in range(buckets)]
    for i, row in enumerate(weights[: len(queries)]):
        for j in range(len(keys)):
            w = row[j]
            if not may[i][j] or not w > min_weight or w <= 0:
                continue
            xs, ys, text = bands[min(int(w * buckets), buckets - 1)]
            label = f"{queries[i]} → {keys[j]}: {w:.4f}"
            xs += [0, 1, None]
            ys += [yq[i], yk[j], None]
            text += [label, label, None]
    data = []
    for b, (xs, ys, text) in enumerate(bands):
        if xs:
            mid = (b + 0.5) / buckets
            line = dict(width=max(0.5, 10 * mid), color=style.colour("base"))
            data.append(
                go.Scatter(
                    **CHECKED,
                    x=xs,
                    y=ys,
                    mode="lines",
                    line=line,
                    opacity=min(1.0, 0.15 + mid),
                    hoverinfo="text",
                    text=text,
                    showlegend=False,
                )
            )
    return data


def _ends(x: int, ys: list[float], names: Sequence[str], position: str, marker: dict) -> go.Scatter:
    """One side's tokens as named markers at ``x`` (0: the queries, 1: the keys)."""
    return go.Scatter(
        **CHECKED,
        x=[x] * len(ys),
        y=ys,
        mode="markers+text",
        text=list(names),
        textposition=position,
        marker=marker,
        hoverinfo="skip",
        showlegend=False,
    )


def _log_ticks(values: Sequence[float]) -> list[float]:
    """1-2-5 (or 1-3, or 1) steps per decade across the values' range: plain numbers, never minor digits."""
    finite = [v for v in values if v and v > 0 and math.isfinite(v)]
    if not finite:
        return []
    low, high = min(finite), max(finite)
    decades = math.log10(high / low)  # a chart ~300 px tall fits about a dozen labels
    steps = (1, 2, 5) if decades <= 2 else (1, 3) if decades <= 4 else (1,)
    ticks = [
        m * 10.0**e
        for e in range(math.floor(math.log10(low)) - 1, math.ceil(math.log10(high)) + 1)
        for m in steps
        if low / 1.5 <= m * 10.0**e <= high * 1.5
    ]
    return ticks if len(ticks) >= 2 else [low, high]


def loglog(
    series: dict[str, tuple[Sequence[float], Sequence[float]]],
    *,
    style: Style,
    title: str = "",
    x_title: str = "L",
    y_title: str = "",
    theory: dict[str, tuple[Sequence[float], Sequence[float]]] | None = None,
    label=str,
    colours: dict[str, str] | None = None,
) -> go.Figure:
    """Measured curves (markers) and each one's theory curve (dotted) in the same colour, named by
    ``label`` (a kernel's name in the UI's language); the x ticks are the measured lengths."""
    colour_of = {**kernel_colours([*series, *(theory or {})], style=style), **(colours or {})}
    lengths = sorted({float(x) for xs, _ in series.values() for x in xs})
    return figure(
        _curves(series, theory or {}, label, colour_of),
        style=style,
        title=title,
        alt=_loglog_fact(series, x_title, label),
        height=460,
        legend=dict(orientation="h", yanchor="top", y=-0.22, x=0),
        xaxis=_log_axis(x_title, lengths),
        yaxis=_log_axis(y_title, _log_ticks([float(y) for _, ys in series.values() for y in ys])),
    )


def _curves(series: dict, theory: dict, label, colour_of: dict[str, str]) -> list:
    """Each measured curve (lines and markers) and each theory curve (dotted), a kernel's in its one colour."""
    from explorer.base.i18n import t

    data = [
        go.Scatter(
            **CHECKED,
            x=list(xs),
            y=list(ys),
            mode="lines+markers",
            name=label(name),
            legendgroup=name,
            line=dict(color=colour_of[name]),
            hovertemplate=f"{plot(label(name))}<br>L %{{x}}<br>%{{y:.4g}}<extra></extra>",
        )
        for name, (xs, ys) in series.items()
    ]
    data += [
        go.Scatter(
            **CHECKED,
            x=list(xs),
            y=list(ys),
            mode="lines",
            name=t("ax_theory", name=label(name)),
            legendgroup=name,
            line=dict(dash="dot", width=1.5, color=colour_of[name]),
            hoverinfo="skip",
        )
        for name, (xs, ys) in theory.items()
    ]
    return data


def _loglog_fact(series: dict, x_title: str, label) -> str:
    """Which curve ends lowest and which highest, at the last x ("" when no curve has a point)."""
    from explorer.base.i18n import t

    ends = [(float(ys[-1]), label(name), xs[-1]) for name, (xs, ys) in series.items() if len(ys)]
    if not ends:
        return ""
    low, high = min(ends), max(ends)
    return t("alt_loglog", x=f"{x_title} = {high[2]}", low=low[1], lv=fmt(low[0]), high=high[1], hv=fmt(high[0]))


def _log_axis(title: str, ticks: Sequence[float]) -> dict:
    """A log axis labelled at these values, as plain numbers."""
    return dict(
        type="log",
        title=dict(text=title),
        tickmode="array",
        tickvals=list(ticks),
        ticktext=[f"{v:g}" for v in ticks],
        automargin=True,
        autotickangles=[0, 90],
    )


def line(
    xs,
    series: dict[str, Sequence[float]],
    *,
    style: Style,
    title: str = "",
    x_title: str = "",
    y_title: str = "",
    log_x: bool = False,
) -> go.Figure:
    from explorer.base.i18n import t

    data = [
        go.Scatter(
            **CHECKED,
            x=list(xs),
            y=[float(v) if v is not None and math.isfinite(v) else None for v in ys],
            mode="lines+markers",
            name=k,
        )
        for k, ys in series.items()
    ]
    x_title = axis_name(x_title)
    last = []
    for k, ys in series.items():
        finite = [float(v) for v in ys if v is not None and math.isfinite(v)]
        if finite:
            last.append(f"{k} {fmt(finite[-1])}")
    alt = t("alt_line", x=f"{x_title} = {list(xs)[-1]}", values="; ".join(last[:4])) if last and len(xs) else ""
    return figure(
        data,
        style=style,
        title=title,
        alt=alt,
        height=340,
        xaxis=dict(title=dict(text=x_title), type="log" if log_x else "linear"),
        yaxis=dict(title=dict(text=axis_name(y_title))),
    )
