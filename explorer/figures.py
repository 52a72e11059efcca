"""Plotly figure builders: plain lists in, ``go.Figure`` out. Testable without a server.

Token labels are made unique by their position ("0 the", "3 the"), since a categorical axis
would merge repeated words. Hover shows the exact value.
"""

from __future__ import annotations

import functools
import html
import math
import os
from collections.abc import Sequence

import plotly.graph_objects as go

from . import session
from .safe import plot

# Plotly checks every property of every trace and layout as a figure is built: ~0.6 ms of a heatmap's
# ~0.9 ms, paid for each chart on each rerun by every session (11 % of a saturated server's time in
# benchmarks/results/class_capacity_cpu.txt's profile). The figures here are built from the same few
# shapes every time, so the check runs in the tests instead: tests/unit/test_figures_unchecked.py builds
# each kind both ways and compares the JSON, tests/app/test_pages.py checks every chart each page sends.
# ATTN_EXPLORER_CHECK_FIGURES=1 turns it back on.
_NO_TEMPLATE = {"data": {"scatter": [{"type": "scatter"}]}}  # what Plotly makes of template="none"
_CHECKED = {"_validate": os.environ.get("ATTN_EXPLORER_CHECK_FIGURES") == "1"}


def labels(words: Sequence[str]) -> list[str]:
    """Position-numbered token labels, escaped for plotly (a token is data, never markup)."""
    return [f"{i} {plot(w)}" for i, w in enumerate(words)]


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


def axis_name(name: str) -> str:
    """An axis word ("query", "dim") in the UI's language; anything else (a symbol, a unit,
    text the page translated already) as it is."""
    from .i18n import t

    key = AXES.get(name)
    return t(key) if key else name


def _ticks() -> dict:
    """Category ticks that never overlap: plotly turns labels that would collide (upright, else
    vertical) and thins a crowded category axis to every n-th label; hover names every cell."""
    return dict(type="category", automargin=True, autotickangles=[0, 90])


# Colours. "safe" is for colour-blind readers: Okabe & Ito's qualitative colours (told apart under
# each kind of colour blindness), cividis for magnitudes, purple-orange for signed values; and a
# highlighted bar or row is also outlined, so no fact is told by colour alone.
OKABE_ITO = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000")
PALETTES = {
    "standard": dict(accent="#e4572e", base="#4c78a8", other="#54a24b", scales={}, colorway=None),
    "safe": dict(
        accent="#D55E00",
        base="#0072B2",
        other="#E69F00",
        scales={"Viridis": "Cividis", "RdBu": "PuOr", "Blues": "Greys"},
        colorway=list(OKABE_ITO),
    ),
}


def begin_run(palette: str, large: bool) -> None:
    """How this run draws: its palette, large text (presenter mode), no focus token yet. app.py
    calls it; a fragment's rerun, which does not run app.py, gets the same from the session."""
    ctx = session.run_context()  # one per script run (explorer.session)
    ctx.palette = palette if palette in PALETTES else "standard"
    ctx.large = bool(large)
    ctx.focus = None


def _current() -> tuple[str, bool]:
    ctx = session.run_context()
    if ctx.palette is None:
        from streamlit.runtime.scriptrunner import get_script_run_ctx

        if get_script_run_ctx() is None:  # outside a script run: a test, the CLI
            return "standard", False
        from .present import on

        begin_run(session.palette_choice(), on())
    return ctx.palette, ctx.large


def use_focus(label: str | None) -> None:
    """The focus token's label ("1 is"): every heatmap built next whose rows are tokens outlines it."""
    _current()
    session.run_context().focus = label


def _palette() -> dict:
    return PALETTES[_current()[0]]


def colour(role: str):
    """``accent``, ``base`` or ``other`` in the current palette."""
    return _palette()[role]


def _scale(name: str) -> list:
    """The palette's colour scale for ``name``, as the stops Plotly would make of its name (built
    unchecked, a figure would otherwise send the name, which plotly.js reads as its own scale)."""
    scale = _palette()["scales"].get(name, name)
    return [list(stop) for stop in _stops(scale)] if isinstance(scale, str) else scale


@functools.cache
def _stops(name: str) -> tuple:
    import plotly.colors

    return tuple(tuple(stop) for stop in plotly.colors.get_colorscale(name))


def alt_text(figure: go.Figure) -> str:
    """The sentence a figure builder stored as the chart's text alternative ("" when none)."""
    meta = figure.layout.meta
    return meta.get("alt", "") if isinstance(meta, dict) else ""


def _fmt(v: float) -> str:
    return f"{v:.3g}"


def _plain(values) -> list:
    """Tensors and arrays to (nested) lists of Python floats, in one call where possible."""
    return (
        values.tolist()
        if hasattr(values, "tolist")
        else [_plain(v) if isinstance(v, (list, tuple)) else float(v) for v in values]
    )


def _matrix(z):
    """A heatmap's z: nested lists up to 64 x 64 cells; beyond, a float32 array, which plotly sends
    as a typed array (4 bytes a cell instead of ~20 characters of JSON)."""
    if hasattr(z, "shape") and len(z.shape) == 2 and z.shape[0] * z.shape[1] > 4096:
        import numpy as np

        return np.asarray(z.detach().cpu() if hasattr(z, "detach") else z, dtype=np.float32)
    if hasattr(z, "isnan") and bool(z.isnan().any()):  # cells never computed: gaps, not "NaN"
        return [[None if math.isnan(v) else v for v in row] for row in _plain(z)]
    return _plain(z)


def _figure(data: list, *, title: str = "", height: int, alt: str = "", **layout) -> go.Figure:
    """One validated constructor call: several ``update_*`` calls cost ~3x more per chart,
    and every page rerun builds its charts again. ``alt``: the chart's main fact in one sentence
    (``alt_text`` reads it back; pages show it under the chart)."""
    layout = {k: v for k, v in layout.items() if not (isinstance(v, list) and not v)}  # as Plotly drops them
    colorway = _palette()["colorway"]
    if colorway:
        layout["colorway"] = colorway
    if _current()[1]:
        layout["font"] = dict(size=17)
        height = int(height * 1.15)
    return go.Figure(
        **_CHECKED,
        data=data,
        # No plotly template: Streamlit's theme styles the chart in the browser (light or dark), and the
        # default template costs ~2 ms of copying and 6 KB of JSON per chart on every rerun.
        layout=dict(
            title=dict(text=plot(title)),
            height=height,
            margin=MARGIN,
            template=_NO_TEMPLATE,
            meta={"alt": alt},
            **layout,
        ),
    )


MAX_SIDE = 128  # a heatmap draws at most this many rows and columns; larger ones are pooled
PRESENT_MAX_HEIGHT = 330  # a heatmap's height in presenter mode at most (times 1.15 for the large type)


def _pool(z, names: list[str], axis: int) -> tuple:
    """Mean over consecutive blocks along ``axis`` so that at most MAX_SIDE remain; block names
    say which positions they cover ("0–3 the … cat"). Returns (z, names, block size)."""
    import numpy as np

    n = len(names)
    if n <= MAX_SIDE:
        return z, names, 1
    size = -(-n // MAX_SIDE)
    a = np.asarray(z.detach().cpu() if hasattr(z, "detach") else z, dtype=np.float32)
    a = np.moveaxis(a, axis, 0)
    pad = (-n) % size
    if pad:  # the last block is shorter: average only what is there
        a = np.concatenate([a, np.full((pad,) + a.shape[1:], np.nan, dtype=np.float32)])
    pooled = np.nanmean(a.reshape(-1, size, *a.shape[1:]), axis=1)
    blocks = [f"{i}–{min(i + size, n) - 1} {names[i].split(' ', 1)[-1]} …" for i in range(0, n, size)]
    return np.moveaxis(pooled, 0, axis), blocks, size


def heatmap(
    z,
    x: Sequence[str],
    y: Sequence[str],
    *,
    title: str = "",
    x_title: str = "",
    y_title: str = "",
    colorscale: str = "Viridis",
    zmid: float | None = None,
    height: int | None = None,
    focus: int | None = None,
    weights: bool = False,
    zrange: tuple[float, float] | None = None,
) -> go.Figure:
    """A matrix with its row and column names; above MAX_SIDE rows or columns, the mean of blocks
    (the title says so), so one chart never sends more than MAX_SIDE² cells. ``focus``: a row
    outlined (by default the row named like the ``use_focus`` token); ``weights``: the rows are
    attention weights, and the text alternative says where the focus row (else the row with the
    sharpest peak) attends most. ``zrange``: the colour bar's fixed range (a mask's 0..1); a constant
    matrix without one gets a range that holds its value and 0..1, not Plotly's ±0.4 around it."""
    from .i18n import t

    x, y = list(x), list(y)
    x_title, y_title = axis_name(x_title), axis_name(y_title)
    marked = session.run_context().focus
    if focus is None and marked in y:
        focus = y.index(marked)
    alt = _matrix_fact(z, x, y, x_title, y_title, focus, weights)
    z, y, rows = _pool(z, y, 0)
    z, x, cols = _pool(z, x, 1)
    if rows > 1 or cols > 1:
        title = f"{title} · {t('pooled', r=rows, c=cols)}"
    if zrange is None and zmid is None:
        zrange = _constant_range(z)
    shapes = []
    if focus is not None and 0 <= focus // rows < len(y):
        at = focus // rows
        shapes.append(
            dict(
                type="rect",
                xref="paper",
                x0=0,
                x1=1,
                yref="y",
                y0=at - 0.5,
                y1=at + 0.5,
                line=dict(color=colour("accent"), width=3),
            )
        )
    trace = go.Heatmap(
        **_CHECKED,
        z=_matrix(z),
        x=list(x),
        y=list(y),
        colorscale=_scale(colorscale),
        zmid=zmid,
        **({} if zrange is None else dict(zmin=float(zrange[0]), zmax=float(zrange[1]))),
        colorbar=dict(thickness=12),
        hovertemplate=(
            f"{y_title or axis_name('row')} %{{y}}<br>{x_title or axis_name('column')} %{{x}}<br>"
            f"{axis_name('value')} %{{z:.6g}}<extra></extra>"
        ),
    )
    height = height or min(120 + 28 * max(len(y), 1), 640)
    if _current()[1]:  # presenter mode: the chart fits under the walk's row on a 1280×720 screen
        height = min(height, PRESENT_MAX_HEIGHT)
    return _figure(
        [trace],
        title=title,
        height=height,
        alt=alt,
        shapes=shapes,
        xaxis=dict(title=dict(text=x_title), **_ticks()),
        yaxis=dict(title=dict(text=y_title), autorange="reversed", **_ticks()),
    )


def _constant_range(z) -> tuple[float, float] | None:
    """For a matrix whose computed cells all hold one value c: (min(0, c), max(1, c)); else None."""
    import numpy as np

    a = np.asarray(z.detach().cpu().float() if hasattr(z, "detach") else z, dtype=np.float64)
    a = a[np.isfinite(a)]
    if a.size == 0 or a.min() != a.max():
        return None
    c = float(a[0])
    return min(0.0, c), max(1.0, c)


def _matrix_fact(z, x: list[str], y: list[str], x_title: str, y_title: str, focus, weights: bool) -> str:
    """A heatmap's main fact: where a row of weights peaks, else where the largest and smallest
    values are (cells never computed are skipped)."""
    import numpy as np

    from .i18n import t

    a = np.asarray(z.detach().cpu().float() if hasattr(z, "detach") else z, dtype=np.float64)
    if a.ndim != 2 or a.size == 0 or np.isnan(a).all():
        return ""
    if weights:  # the focus row, else the sharpest peak among the rows that have a choice (a causal first row has not)
        peaks = np.nan_to_num(a, nan=-np.inf).max(axis=1)
        choice = (np.nan_to_num(a, nan=0.0) > 0).sum(axis=1) > 1
        if choice.any():
            peaks = np.where(choice, peaks, -np.inf)
        i = focus if focus is not None and 0 <= focus < a.shape[0] else int(peaks.argmax())
        row = np.nan_to_num(a[i], nan=-np.inf)
        j = int(row.argmax())
        alone = int((np.nan_to_num(a[i], nan=0.0) > 0).sum()) == 1  # one key allowed: its weight says nothing
        return t("alt_alone" if alone else "alt_attends", q=_word(y[i]), k=_word(x[j]), w=f"{a[i, j]:.2f}")
    hi = np.unravel_index(int(np.nanargmax(a)), a.shape)
    lo = np.unravel_index(int(np.nanargmin(a)), a.shape)

    def named(title: str, label: str, fallback: str) -> str:  # "query 5 first"; "Head 0", not "Head Head 0"
        label = html.unescape(label)
        title = title or axis_name(fallback)
        return label if label.lower().startswith(title.lower()) else f"{title} {label}"

    where = lambda ij: f"{named(y_title, y[ij[0]], 'row')}, {named(x_title, x[ij[1]], 'column')}"
    return t("alt_range", hi=_fmt(a[hi]), hi_at=where(hi), lo=_fmt(a[lo]), lo_at=where(lo))


def _word(label: str) -> str:
    """'4 dessert' -> 'dessert' (labels carry their position; plain text, not plotly's entities)."""
    return html.unescape(label).split(" ", 1)[-1]


def bars(
    values, names: Sequence[str], *, title: str = "", y_title: str = "", highlight: int | None = None
) -> go.Figure:
    from .i18n import t

    values, names = _plain(values), list(names)
    colors = [colour("accent") if i == highlight else colour("base") for i in range(len(values))]
    outline = [3 if i == highlight else 0 for i in range(len(values))]
    top = max(range(len(values)), key=values.__getitem__) if values else None
    alt = t("alt_bars", name=_word(names[top]), v=_fmt(values[top])) if top is not None else ""
    trace = go.Bar(
        **_CHECKED,
        x=names,
        y=values,
        marker=dict(color=colors, line=dict(width=outline, color="#000000")),
        text=[f"{v:.4f}" for v in values],
        textposition="outside",
        hovertemplate="%{x}<br>%{y:.6g}<extra></extra>",
    )
    return _figure(
        [trace], title=title, height=320, alt=alt, yaxis=dict(title=dict(text=axis_name(y_title))), xaxis=_ticks()
    )


def grouped_bars(series: dict[str, Sequence[float]], names: Sequence[str], *, title: str = "") -> go.Figure:
    data = [
        go.Bar(
            **_CHECKED, name=k, x=list(names), y=_plain(vals), hovertemplate="%{x}<br>%{y:.6g}<extra>" + k + "</extra>"
        )
        for k, vals in series.items()
    ]
    from .i18n import t

    names = list(names)
    best = max(
        ((float(v), k, names[i]) for k, vals in series.items() for i, v in enumerate(_plain(vals))), default=None
    )
    alt = t("alt_grouped", series=best[1], name=_word(best[2]), v=_fmt(best[0])) if best else ""
    return _figure(data, title=title, height=320, alt=alt, barmode="group", xaxis=dict(type="category"))


def attention_lines(
    weights,
    queries: Sequence[str],
    keys: Sequence[str],
    *,
    min_weight: float = 0.0,
    title: str = "",
    left: str = "queries",
    right: str = "keys",
    buckets: int = 8,
) -> go.Figure:
    """Queries on the left, keys on the right, one line per pair above ``min_weight``; width and
    opacity grow with the weight.

    Lines are grouped into ``buckets`` weight bands, one trace each (plotly draws one width per
    trace), so a 64-token sentence costs 8 traces, not 4096. Hover a line's end for its weight.
    """
    data = []
    L, S = len(queries), len(keys)
    yq = [1 - i / max(L - 1, 1) for i in range(L)]
    yk = [1 - j / max(S - 1, 1) for j in range(S)]
    bands: list[tuple[list, list, list]] = [([], [], []) for _ in range(buckets)]
    weights = _plain(weights)
    for i in range(L):
        row = weights[i]
        for j in range(S):
            w = row[j]
            if w <= min_weight or w <= 0:
                continue
            xs, ys, text = bands[min(int(w * buckets), buckets - 1)]
            label = f"{queries[i]} → {keys[j]}: {w:.4f}"
            xs += [0, 1, None]
            ys += [yq[i], yk[j], None]
            text += [label, label, None]
    for b, (xs, ys, text) in enumerate(bands):
        if xs:
            mid = (b + 0.5) / buckets
            data.append(
                go.Scatter(
                    **_CHECKED,
                    x=xs,
                    y=ys,
                    mode="lines",
                    line=dict(width=max(0.5, 10 * mid), color=colour("base")),
                    opacity=min(1.0, 0.15 + mid),
                    hoverinfo="text",
                    text=text,
                    showlegend=False,
                )
            )
    data.append(
        go.Scatter(
            **_CHECKED,
            x=[0] * L,
            y=yq,
            mode="markers+text",
            text=list(queries),
            textposition="middle left",
            marker=dict(size=8, color=colour("accent")),
            hoverinfo="skip",
            showlegend=False,
        )
    )
    data.append(
        go.Scatter(
            **_CHECKED,
            x=[1] * S,
            y=yk,
            mode="markers+text",
            text=list(keys),
            textposition="middle right",
            marker=dict(size=8, color=colour("other"), symbol="square"),
            hoverinfo="skip",
            showlegend=False,
        )
    )
    from .i18n import t

    strongest = max(((weights[i][j], i, j) for i in range(L) for j in range(S)), default=None)
    alt = (
        t("alt_lines", q=_word(queries[strongest[1]]), k=_word(keys[strongest[2]]), w=f"{strongest[0]:.2f}")
        if strongest
        else ""
    )
    return _figure(
        data,
        title=title,
        alt=alt,
        height=min(max(300, 24 * max(L, S)), 1600),
        xaxis=dict(visible=False, range=[-0.6, 1.6]),
        yaxis=dict(visible=False, range=[-0.08, 1.08]),
        annotations=[dict(x=0, y=1.08, text=left, showarrow=False), dict(x=1, y=1.08, text=right, showarrow=False)],
    )


def small_multiples(
    grid,
    *,
    labels: Sequence[str],
    row_name: str = "layer",
    col_name: str = "head",
    title: str = "",
    gap: int = 1,
    mark: tuple[int, int] | None = None,
) -> go.Figure:
    """An (R, C, L, L) array of weight matrices as one tiled heatmap: R rows of C panels.

    One trace, z sent as a typed array, whatever the number of panels. The axes are categories
    named "layer 2 · 3 short" / "head 5 · 7 dessert", so hover tells panel, query and key for
    the cost of R·L + C·L labels, not one per cell. ``mark``: a (row, column) panel outlined.
    """
    import numpy as np

    row_name, col_name = axis_name(row_name), axis_name(col_name)
    a = np.asarray(grid, dtype=np.float32)
    R, C, L, S = a.shape
    z = np.full((R * (L + gap) - gap, C * (S + gap) - gap), np.nan, dtype=np.float32)
    for r in range(R):
        for c in range(C):
            z[r * (L + gap) : r * (L + gap) + L, c * (S + gap) : c * (S + gap) + S] = a[r, c]

    def axis(n_blocks: int, n: int, name: str) -> tuple[list[str], list[str]]:
        names, centres = [], []
        for b in range(n_blocks):
            block = [f"{name} {b} · {plot(labels[i])}" for i in range(n)]
            centres.append(block[(n - 1) // 2])
            names += block + ([f"{name} {b} ·{' ' * (g + 1)}" for g in range(gap)] if b < n_blocks - 1 else [])
        return names, centres

    y, y_ticks = axis(R, L, row_name)
    x, x_ticks = axis(C, S, col_name)
    trace = go.Heatmap(
        **_CHECKED,
        z=z,
        x=x,
        y=y,
        colorscale=_scale("Viridis"),
        zmin=0.0,
        zmax=float(np.nanmax(a)) if a.size else 1.0,
        colorbar=dict(thickness=12),
        hoverongaps=False,
        hovertemplate=f"%{{y}}<br>%{{x}}<br>{axis_name('weight')} %{{z:.4f}}<extra></extra>",
    )
    from .i18n import t

    peaks = a.max(axis=(2, 3)) if a.size else None
    alt = ""
    if peaks is not None:
        r, c = np.unravel_index(int(peaks.argmax()), peaks.shape)
        alt = t("alt_multiples", row=f"{row_name} {r}", col=f"{col_name} {c}", w=f"{peaks[r, c]:.2f}")
    shapes = []
    if mark is not None and 0 <= mark[0] < R and 0 <= mark[1] < C:  # category axes: positions are indices
        r, c = mark
        x0, y0 = c * (S + gap) - 0.5, r * (L + gap) - 0.5
        line = dict(color=colour("accent"), width=3)
        shapes.append(dict(type="rect", xref="x", yref="y", x0=x0, x1=x0 + S, y0=y0, y1=y0 + L, line=line))
    return _figure(
        [trace],
        title=title,
        alt=alt,
        shapes=shapes,
        height=max(260, min(110 * R, 760)),
        xaxis=dict(
            type="category",
            tickvals=x_ticks,
            ticktext=[str(c) for c in range(C)],
            title=dict(text=col_name),
            showgrid=False,
        ),
        yaxis=dict(
            type="category",
            tickvals=y_ticks,
            ticktext=[str(r) for r in range(R)],
            title=dict(text=row_name),
            autorange="reversed",
            showgrid=False,
        ),
    )


D3 = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf")


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


def kernel_colours(names: Sequence[str]) -> dict[str, str]:
    """One colour per name, by its place in ``names``: charts that pass the same mapping (the Complexity page's
    time and memory) draw each kernel in the same colour, whichever kernels each one has."""
    palette = _palette()["colorway"] or D3
    order = list(dict.fromkeys(names))
    return {name: palette[i % len(palette)] for i, name in enumerate(order)}


def loglog(
    series: dict[str, tuple[Sequence[float], Sequence[float]]],
    *,
    title: str = "",
    x_title: str = "L",
    y_title: str = "",
    theory: dict[str, tuple[Sequence[float], Sequence[float]]] | None = None,
    label=str,
    colours: dict[str, str] | None = None,
) -> go.Figure:
    """Measured curves (markers) and each one's theory curve (dotted) in the same colour, named by
    ``label`` (a kernel's name in the UI's language); the x ticks are the measured lengths."""
    from .i18n import t

    colour_of = {**kernel_colours([*series, *(theory or {})]), **(colours or {})}
    data = [
        go.Scatter(
            **_CHECKED,
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
            **_CHECKED,
            x=list(xs),
            y=list(ys),
            mode="lines",
            name=t("ax_theory", name=label(name)),
            legendgroup=name,
            line=dict(dash="dot", width=1.5, color=colour_of[name]),
            hoverinfo="skip",
        )
        for name, (xs, ys) in (theory or {}).items()
    ]
    ends = [(float(ys[-1]), label(name), xs[-1]) for name, (xs, ys) in series.items() if len(ys)]
    alt = ""
    if ends:
        low, high = min(ends), max(ends)
        alt = t("alt_loglog", x=f"{x_title} = {high[2]}", low=low[1], lv=_fmt(low[0]), high=high[1], hv=_fmt(high[0]))
    lengths = sorted({float(x) for xs, _ in series.values() for x in xs})
    y_ticks = _log_ticks([float(y) for _, ys in series.values() for y in ys])
    return _figure(
        data,
        title=title,
        alt=alt,
        height=460,
        legend=dict(orientation="h", yanchor="top", y=-0.22, x=0),
        xaxis=_log_axis(x_title, lengths),
        yaxis=_log_axis(y_title, y_ticks),
    )


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
    title: str = "",
    x_title: str = "",
    y_title: str = "",
    log_x: bool = False,
) -> go.Figure:
    data = [
        go.Scatter(
            **_CHECKED,
            x=list(xs),
            y=[float(v) if v is not None and math.isfinite(v) else None for v in ys],
            mode="lines+markers",
            name=k,
        )
        for k, ys in series.items()
    ]
    from .i18n import t

    x_title = axis_name(x_title)
    last = []
    for k, ys in series.items():
        finite = [float(v) for v in ys if v is not None and math.isfinite(v)]
        if finite:
            last.append(f"{k} {_fmt(finite[-1])}")
    alt = t("alt_line", x=f"{x_title} = {list(xs)[-1]}", values="; ".join(last[:4])) if last and len(xs) else ""
    return _figure(
        data,
        title=title,
        alt=alt,
        height=340,
        xaxis=dict(title=dict(text=x_title), type="log" if log_x else "linear"),
        yaxis=dict(title=dict(text=axis_name(y_title))),
    )
