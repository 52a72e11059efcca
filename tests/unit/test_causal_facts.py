"""What the charts of a causal (decoder) head say and draw, against computations written here: the most focused
head of a grid whose masked cells are blank (NaN), the strongest line among the queries that have a choice, and
the query-key map's lines, one to each key the mask allows and none to a masked one."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from explorer import figures as fig
from explorer.base.i18n import t
from explorer.figures.base import axis_name, word

WORDS = fig.labels(["Life", "is", "short", ",", "eat", "dessert", "first"])


def causal_grid(seed: int, layers: int = 3, heads: int = 4, n: int = 7) -> np.ndarray:
    """(layers, heads, n, n) softmax rows over the keys up to each query, later keys blank (NaN) as the page
    draws them; row 0 is always the forced [1.0]."""
    g = torch.Generator().manual_seed(seed)
    scores = torch.randn(layers, heads, n, n, generator=g) * 3
    future = torch.ones(n, n, dtype=torch.bool).triu(1)
    w = scores.masked_fill(future, -math.inf).softmax(-1)
    return w.masked_fill(future, math.nan).numpy()


def expected_focus(grid: np.ndarray) -> tuple[int, int, float]:
    """The head whose largest weight, over the queries with more than one key to attend to, is the largest:
    plain loops over every cell."""
    best = (-1.0, -1, -1)
    R, C, L, S = grid.shape
    for r in range(R):
        for c in range(C):
            for i in range(L):
                row = [float(grid[r, c, i, j]) for j in range(S) if not math.isnan(grid[r, c, i, j])]
                if len(row) > 1 and max(row) > best[0]:
                    best = (max(row), r, c)
    return best[1], best[2], best[0]


@pytest.mark.parametrize("seed", range(6))
def test_most_focused_head_of_a_causal_grid_skips_forced_rows(seed):
    grid = causal_grid(seed)
    r, c, w = expected_focus(grid)
    alt = fig.small_multiples(grid, labels=WORDS, row_name="layer", col_name="head", style=fig.Style()).layout.meta[
        "alt"
    ]
    assert "nan" not in alt.lower()
    assert alt == t(
        "alt_multiples_choice", row=f"{axis_name('layer')} {r}", col=f"{axis_name('head')} {c}", w=f"{w:.2f}"
    ), alt


def test_most_focused_of_an_encoder_grid_is_unchanged():
    grid = np.random.default_rng(0).dirichlet(np.ones(6), size=(2, 3, 6)).astype(np.float32)
    peaks = grid.max(axis=(2, 3))
    r, c = np.unravel_index(int(peaks.argmax()), peaks.shape)
    alt = fig.small_multiples(grid, labels=WORDS[:6], style=fig.Style()).layout.meta["alt"]
    assert alt == t(
        "alt_multiples", row=f"{axis_name('layer')} {r}", col=f"{axis_name('head')} {c}", w=f"{peaks[r, c]:.2f}"
    )


@pytest.mark.parametrize("seed", range(4))
def test_strongest_line_of_a_causal_head_is_among_queries_with_a_choice(seed):
    w = torch.tensor(causal_grid(seed)[0, 0]).nan_to_num(0.0)  # the model's weights: 0 at a masked key
    allowed = torch.ones(7, 7, dtype=torch.bool).tril()
    best = max((float(w[i, j]), i, j) for i in range(1, 7) for j in range(i + 1))  # row 0 has one key: left out
    figure = fig.attention_lines(w, WORDS, WORDS, allowed=allowed, style=fig.Style())
    alt = figure.layout.meta["alt"]
    want = t("alt_lines_choice", q=word(WORDS[best[1]]), k=word(WORDS[best[2]]), w=f"{best[0]:.2f}")
    assert alt == want, alt
    drawn = sum(len([x for x in tr.x if x is not None]) // 2 for tr in figure.data if tr.mode == "lines")
    assert drawn == int((w > 0).sum())  # one line per weight above 0, none to a masked key


@pytest.mark.parametrize("focus", range(7))
def test_qk_map_draws_one_line_to_each_allowed_key_and_none_to_a_masked_one(focus):
    g = torch.Generator().manual_seed(focus)
    queries, keys = torch.randn(7, 2, generator=g), torch.randn(7, 2, generator=g)
    allowed = torch.ones(7, 7, dtype=torch.bool).tril()  # causal: keys up to the query
    row = torch.tensor(causal_grid(focus, 1, 1)[0, 0, focus]).nan_to_num(0.0)
    figure = fig.qk_scatter(
        queries, keys, WORDS, WORDS, row, focus=focus, allowed=allowed[focus], title="map", style=fig.Style()
    )
    ends = [(round(tr.x[1], 6), round(tr.y[1], 6)) for tr in figure.data if tr.mode == "lines"]
    allowed_keys = {(round(float(keys[j, 0]), 6), round(float(keys[j, 1]), 6)) for j in range(focus + 1)}
    assert len(ends) == focus + 1 and set(ends) == allowed_keys  # independent: j <= focus
    starts = {(round(tr.x[0], 6), round(tr.y[0], 6)) for tr in figure.data if tr.mode == "lines"}
    assert starts == {(round(float(queries[focus, 0]), 6), round(float(queries[focus, 1]), 6))}


def test_qk_map_without_a_mask_draws_every_line():
    w = torch.softmax(torch.randn(5, 5, generator=torch.Generator().manual_seed(1)), -1)
    figure = fig.qk_scatter(w[:, :2], w[:, 2:4], WORDS[:5], WORDS[:5], w[2], focus=2, style=fig.Style())
    assert sum(tr.mode == "lines" for tr in figure.data) == 5
