"""The figure builders draw with the ``Style`` they are given, and nothing else: its palette, its type
size and its focus token; the run's style (``run_style``) is what ``begin_run`` and ``use_focus`` set."""

import plotly.colors
import pytest
import torch

from explorer import figures as fig

WORDS = fig.labels(["the", "cat", "sat", "on", "the", "mat"])
W = torch.softmax(torch.randn(6, 6, generator=torch.Generator().manual_seed(0)), -1)


def _outlines(figure) -> list[tuple[float, float, str]]:
    return [(s.y0, s.y1, s.line.color) for s in figure.layout.shapes]


def test_the_focus_token_of_the_style_outlines_its_row():
    assert _outlines(fig.heatmap(W, WORDS, WORDS, style=fig.Style())) == []
    focused = fig.heatmap(W, WORDS, WORDS, style=fig.Style(focus=WORDS[3]))
    assert _outlines(focused) == [(2.5, 3.5, fig.PALETTES["standard"]["accent"])]
    assert _outlines(fig.heatmap(W, WORDS, WORDS, style=fig.Style(focus="9 nowhere"))) == []
    chosen = fig.heatmap(W, WORDS, WORDS, focus=1, style=fig.Style(focus=WORDS[3]))  # an explicit row wins
    assert _outlines(chosen) == [(0.5, 1.5, fig.PALETTES["standard"]["accent"])]


def test_the_safe_palette_and_the_large_type_come_from_the_style():
    plain = fig.bars([0.1, 0.5, 0.4], WORDS[:3], highlight=1, style=fig.Style())
    safe = fig.bars([0.1, 0.5, 0.4], WORDS[:3], highlight=1, style=fig.Style("safe", True))
    assert plain.layout.height == 320 and plain.layout.font.size is None and plain.layout.colorway is None
    assert safe.layout.height == int(320 * 1.15) and safe.layout.font.size == 17
    assert list(safe.layout.colorway) == list(fig.OKABE_ITO)
    assert list(safe.data[0].marker.color) == ["#0072B2", "#D55E00", "#0072B2"]  # Okabe & Ito's blue, vermillion
    cividis = [[float(v), c] for v, c in plotly.colors.get_colorscale("Cividis")]
    heat = fig.heatmap(W, WORDS, WORDS, style=fig.Style("safe"))
    assert [[float(v), c] for v, c in heat.data[0].colorscale] == cividis
    assert fig.kernel_colours(["a", "b", "a"], style=fig.Style("safe")) == {"a": "#0072B2", "b": "#E69F00"}


def test_a_builder_without_a_style_is_refused():
    with pytest.raises(TypeError, match="style"):
        fig.heatmap(W, WORDS, WORDS)


def test_the_run_style_is_what_the_run_set():
    try:
        fig.begin_run("safe", True)
        fig.use_focus(WORDS[2])
        assert fig.run_style() == fig.Style("safe", True, WORDS[2])
        fig.begin_run("no such palette", False)  # a value from outside: the standard palette, no focus
        assert fig.run_style() == fig.Style("standard", False, None)
    finally:
        fig.begin_run("standard", False)
