"""How a chart is drawn: the palette, the type size and the focus token, as one plain value
(``Style``) that every figure builder takes as an argument.

A page run's style is read once from its run context (``explorer.base.session``): ``begin_run`` sets its
palette and type size (app.py), ``use_focus`` the focus token (the focus control), and ``run_style``
gives the value the call sites pass on. The builders themselves read nothing but their arguments.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from explorer.base import session

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
D3 = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf")
LARGE_FONT = 17  # presenter mode's type size in a chart
LARGE_SCALE = 1.15  # and how much taller a chart grows for it


@dataclass(frozen=True)
class Style:
    """A chart's palette (a name in ``PALETTES``), large type (presenter mode) or not, and the focus
    token's label ("1 is"): a heatmap whose rows are tokens outlines the row named like it."""

    palette: str = "standard"
    large: bool = False
    focus: str | None = None

    def colour(self, role: str) -> str:
        """``accent``, ``base`` or ``other`` in this palette."""
        return PALETTES[self.palette][role]

    @property
    def colorway(self) -> list[str] | None:
        return PALETTES[self.palette]["colorway"]

    def scale(self, name: str) -> list:
        """This palette's colour scale for ``name``, as the stops Plotly would make of its name (built
        unchecked, a figure would otherwise send the name, which plotly.js reads as its own scale)."""
        scale = PALETTES[self.palette]["scales"].get(name, name)
        return [list(stop) for stop in _stops(scale)] if isinstance(scale, str) else scale


@functools.cache
def _stops(name: str) -> tuple:
    import plotly.colors

    return tuple(tuple(stop) for stop in plotly.colors.get_colorscale(name))


def kernel_colours(names, *, style: Style) -> dict[str, str]:
    """One colour per name, by its place in ``names``: charts that pass the same mapping (the Complexity page's
    time and memory) draw each kernel in the same colour, whichever kernels each one has."""
    palette = style.colorway or D3
    order = list(dict.fromkeys(names))
    return {name: palette[i % len(palette)] for i, name in enumerate(order)}


# ---- the run's style (the call sites' side) ----


def begin_run(palette: str, large: bool) -> None:
    """How this run draws: its palette, large text (presenter mode), no focus token yet. app.py
    calls it; a fragment's rerun, which does not run app.py, gets the same from the session."""
    ctx = session.run_context()  # one per script run (explorer.base.session)
    ctx.palette = palette if palette in PALETTES else "standard"
    ctx.large = bool(large)
    ctx.focus = None


def _started() -> session.RunContext:
    ctx = session.run_context()
    if ctx.palette is None:
        from streamlit.runtime.scriptrunner import get_script_run_ctx

        if get_script_run_ctx() is not None:  # outside a script run (a test, the CLI): the standard style
            from explorer.controls.present import on

            begin_run(session.palette_choice(), on())
    return ctx


def use_focus(label: str | None) -> None:
    """The focus token's label ("1 is"): the run's style names it from now on (``run_style``)."""
    _started().focus = label


def run_style() -> Style:
    """This run's style, for the figure builders it calls."""
    ctx = _started()
    return Style(ctx.palette or "standard", ctx.large, ctx.focus)
