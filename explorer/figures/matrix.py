"""Matrix charts: a heatmap (pooled above ``MAX_SIDE`` rows or columns, its main fact as its text
alternative) and small multiples (many weight matrices tiled in one heatmap)."""

from __future__ import annotations

import html
import math
from collections.abc import Sequence

import plotly.graph_objects as go

from explorer.base.safe import plot
from explorer.figures.base import CHECKED, axis_name, figure, fmt, plain, ticks, word
from explorer.figures.style import Style

MAX_SIDE = 128  # a heatmap draws at most this many rows and columns; larger ones are pooled
PRESENT_MAX_HEIGHT = 330  # a heatmap's height in presenter mode at most (times 1.15 for the large type)


def _matrix(z):
    """A heatmap's z: nested lists up to 64 x 64 cells; beyond, a float32 array, which plotly sends
    as a typed array (4 bytes a cell instead of ~20 characters of JSON)."""
    if hasattr(z, "shape") and len(z.shape) == 2 and z.shape[0] * z.shape[1] > 4096:
        import numpy as np

        return np.asarray(z.detach().cpu() if hasattr(z, "detach") else z, dtype=np.float32)
    if hasattr(z, "isnan") and bool(z.isnan().any()):  # cells never computed: gaps, not "NaN"
        return [[None if math.isnan(v) else v for v in row] for row in plain(z)]
    return plain(z)


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
    style: Style,
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
    outlined (by default the row named like ``style.focus``); ``weights``: the rows are
    attention weights, and the text alternative says where the focus row (else the row with the
    sharpest peak) attends most. ``zrange``: the colour bar's fixed range (a mask's 0..1); a constant
    matrix without one gets a range that holds its value and 0..1, not Plotly's ±0.4 around it."""
    from explorer.base.i18n import t

    x, y = list(x), list(y)
    x_title, y_title = axis_name(x_title), axis_name(y_title)
    if focus is None and style.focus in y:
        focus = y.index(style.focus)
    alt = _matrix_fact(z, x, y, x_title, y_title, focus, weights)
    z, y, rows = _pool(z, y, 0)
    z, x, cols = _pool(z, x, 1)
    if rows > 1 or cols > 1:
        title = f"{title} · {t('pooled', r=rows, c=cols)}"
    if zrange is None and zmid is None:
        zrange = _constant_range(z)
    trace = _trace(z, x, y, x_title, y_title, colorscale=style.scale(colorscale), zmid=zmid, zrange=zrange)
    height = height or min(120 + 28 * max(len(y), 1), 640)
    if style.large:  # presenter mode: the chart fits under the walk's row on a 1280×720 screen
        height = min(height, PRESENT_MAX_HEIGHT)
    return figure(
        [trace],
        style=style,
        title=title,
        height=height,
        alt=alt,
        shapes=_row_outline(None if focus is None else focus // rows, len(y), style),
        xaxis=dict(title=dict(text=x_title), **ticks()),
        yaxis=dict(title=dict(text=y_title), autorange="reversed", **ticks()),
    )


def _trace(z, x: list[str], y: list[str], x_title: str, y_title: str, *, colorscale: list, zmid, zrange) -> go.Heatmap:
    """The heatmap's one trace; hover names the row, the column and the exact value."""
    return go.Heatmap(
        **CHECKED,
        z=_matrix(z),
        x=list(x),
        y=list(y),
        colorscale=colorscale,
        zmid=zmid,
        **({} if zrange is None else dict(zmin=float(zrange[0]), zmax=float(zrange[1]))),
        colorbar=dict(thickness=12),
        hovertemplate=(
            f"{y_title or axis_name('row')} %{{y}}<br>{x_title or axis_name('column')} %{{x}}<br>"
            f"{axis_name('value')} %{{z:.6g}}<extra></extra>"
        ),
    )


def _row_outline(at: int | None, n: int, style: Style) -> list[dict]:
    """Row ``at`` of ``n`` outlined across the chart (none when ``at`` is None or out of range)."""
    if at is None or not 0 <= at < n:
        return []
    line = dict(color=style.colour("accent"), width=3)
    return [dict(type="rect", xref="paper", x0=0, x1=1, yref="y", y0=at - 0.5, y1=at + 0.5, line=line)]


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

    from explorer.base.i18n import t

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
        return t("alt_alone" if alone else "alt_attends", q=word(y[i]), k=word(x[j]), w=f"{a[i, j]:.2f}")
    hi = np.unravel_index(int(np.nanargmax(a)), a.shape)
    lo = np.unravel_index(int(np.nanargmin(a)), a.shape)

    def named(title: str, label: str, fallback: str) -> str:  # "query 5 first"; "Head 0", not "Head Head 0"
        label = html.unescape(label)
        title = title or axis_name(fallback)
        return label if label.lower().startswith(title.lower()) else f"{title} {label}"

    where = lambda ij: f"{named(y_title, y[ij[0]], 'row')}, {named(x_title, x[ij[1]], 'column')}"
    return t("alt_range", hi=fmt(a[hi]), hi_at=where(hi), lo=fmt(a[lo]), lo_at=where(lo))


def small_multiples(
    grid,
    *,
    style: Style,
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
    y, y_ticks = _panel_axis(R, L, row_name, labels, gap)
    x, x_ticks = _panel_axis(C, S, col_name, labels, gap)
    trace = go.Heatmap(
        **CHECKED,
        z=_tiles(a, gap),
        x=x,
        y=y,
        colorscale=style.scale("Viridis"),
        zmin=0.0,
        zmax=float(np.nanmax(a)) if a.size else 1.0,
        colorbar=dict(thickness=12),
        hoverongaps=False,
        hovertemplate=f"%{{y}}<br>%{{x}}<br>{axis_name('weight')} %{{z:.4f}}<extra></extra>",
    )
    return figure(
        [trace],
        style=style,
        title=title,
        alt=_multiples_fact(a, row_name, col_name),
        shapes=_panel_outline(mark, a.shape, gap, style),
        height=max(260, min(110 * R, 360 if style.large else 760)),  # presenting: under the walk's row at 720 px
        xaxis=_panel_ticks(x_ticks, C, col_name),
        yaxis=dict(_panel_ticks(y_ticks, R, row_name), autorange="reversed"),
    )


def _tiles(a, gap: int):
    """The (R, C, L, S) panels laid out in one matrix, ``gap`` empty (NaN) rows and columns between them."""
    import numpy as np

    R, C, L, S = a.shape
    z = np.full((R * (L + gap) - gap, C * (S + gap) - gap), np.nan, dtype=np.float32)
    for r in range(R):
        for c in range(C):
            z[r * (L + gap) : r * (L + gap) + L, c * (S + gap) : c * (S + gap) + S] = a[r, c]
    return z


def _panel_axis(n_blocks: int, n: int, name: str, labels: Sequence[str], gap: int) -> tuple[list[str], list[str]]:
    """One axis of the tiles: each category's name ("head 5 · 7 dessert", gaps apart) and each block's centre."""
    names, centres = [], []
    for b in range(n_blocks):
        block = [f"{name} {b} · {plot(labels[i])}" for i in range(n)]
        centres.append(block[(n - 1) // 2])
        names += block + ([f"{name} {b} ·{' ' * (g + 1)}" for g in range(gap)] if b < n_blocks - 1 else [])
    return names, centres


def _panel_ticks(centres: list[str], n: int, name: str) -> dict:
    """A tiled axis labelled once per panel, by its number, at the panel's centre."""
    return dict(
        type="category", tickvals=centres, ticktext=[str(i) for i in range(n)], title=dict(text=name), showgrid=False
    )


def _multiples_fact(a, row_name: str, col_name: str) -> str:
    """The panel whose weight peaks highest, in a sentence ("" when there are no panels). A blank (NaN) cell is a
    masked key; a query left one key (a decoder's first) gives it all its weight, which says nothing of the head:
    such rows are left out, and the sentence says so."""
    import numpy as np

    from explorer.base.i18n import t

    computed = np.isfinite(a)
    choice = computed.sum(axis=-1) > 1  # (R, C, L): the queries with more than one key to attend to
    forced = bool((computed.any(axis=-1) & ~choice).any()) and bool(choice.any())
    rows = choice if forced else computed.any(axis=-1)
    cells = np.where(rows[..., None] & computed, a, -np.inf)
    if not a.size or not np.isfinite(cells).any():
        return ""
    peaks = cells.max(axis=(2, 3))
    r, c = np.unravel_index(int(peaks.argmax()), peaks.shape)
    key = "alt_multiples_choice" if forced else "alt_multiples"
    return t(key, row=f"{row_name} {r}", col=f"{col_name} {c}", w=f"{peaks[r, c]:.2f}")


def _panel_outline(mark: tuple[int, int] | None, shape: tuple, gap: int, style: Style) -> list[dict]:
    """The (row, column) panel ``mark`` outlined (category axes: positions are indices)."""
    R, C, L, S = shape
    if mark is None or not (0 <= mark[0] < R and 0 <= mark[1] < C):
        return []
    r, c = mark
    x0, y0 = c * (S + gap) - 0.5, r * (L + gap) - 0.5
    line = dict(color=style.colour("accent"), width=3)
    return [dict(type="rect", xref="x", yref="y", x0=x0, x1=x0 + S, y0=y0, y1=y0 + L, line=line)]
