"""The server builds charts without Plotly's per-property check (explorer/figures/base.py, ``CHECKED``):
each chart kind, with NaN gaps, a focus, a highlight and the large-type and safe palettes, must give
the same JSON as the checked build, and the checked build must accept it."""

import json

import numpy as np
import plotly.io as pio
import pytest
import torch

from explorer import figures as fig

WORDS = fig.labels(["the", "cat", "sat", "on", "the", "mat"])


def _cases(style):
    w = torch.softmax(torch.randn(6, 6, generator=torch.Generator().manual_seed(0)), -1)
    gappy = w.clone()
    gappy[0, 3] = float("nan")
    grid = np.random.default_rng(0).random((2, 3, 6, 6)).astype(np.float32)
    curves = {"full": ([64, 128, 256], [0.1, 0.4, 1.6]), "linear_elu": ([64, 128, 256], [0.2, 0.3, 0.5])}
    return {
        "heatmap": lambda: fig.heatmap(
            w, WORDS, WORDS, title="w", x_title="key", y_title="query", weights=True, style=style
        ),
        "heatmap_focus_gaps": lambda: fig.heatmap(
            gappy, WORDS, WORDS, focus=2, zmid=0.0, colorscale="RdBu", style=style
        ),
        "bars": lambda: fig.bars([0.1, 0.5, 0.4], WORDS[:3], title="b", highlight=1, style=style),
        "grouped_bars": lambda: fig.grouped_bars({"a": [1, 2, 3], "b": [3, 2, 1]}, WORDS[:3], style=style),
        "attention_lines": lambda: fig.attention_lines(w, WORDS, WORDS, min_weight=0.05, style=style),
        "small_multiples": lambda: fig.small_multiples(grid, labels=WORDS, mark=(1, 2), style=style),
        "loglog": lambda: fig.loglog(curves, title="t", y_title="ms", theory=curves, style=style),
        "line": lambda: fig.line([1, 2, 4, 8], {"err": [0.4, 0.3, 0.2, 0.1]}, log_x=True, style=style),
        "qk_scatter": lambda: fig.qk_scatter(
            w[:, :2], w[:, 2:4], WORDS, WORDS, w[2], focus=2, title="map", style=style
        ),
    }


def _json(build, checked: bool, monkeypatch) -> dict:
    monkeypatch.setitem(fig.CHECKED, "_validate", checked)
    return json.loads(pio.to_json(build(), validate=False))


@pytest.mark.parametrize("palette,large,focus", [("standard", False, None), ("safe", True, WORDS[3])])
@pytest.mark.parametrize("kind", sorted(_cases(fig.Style())))
def test_unchecked_chart_equals_the_checked_one(kind, palette, large, focus, monkeypatch):
    build = _cases(fig.Style(palette, large, focus))[kind]
    unchecked, checked = _json(build, False, monkeypatch), _json(build, True, monkeypatch)
    assert unchecked == checked
    assert unchecked["data"], kind
