"""Patches and Swin's windows (attn_core.vision) against brute-force constructions written here."""

from __future__ import annotations

import itertools

import pytest
import torch
from tolerance import assert_close

from attn_core import AttentionConfigError
from attn_core import vision as V


def brute_mask(rows: int, cols: int, M: int, s: int) -> torch.Tensor:
    """Pair by pair: the same window of the grid rolled up and left by s, and the same side of the wrap on each
    axis (a row the roll moved from the top to the bottom never sees one that stayed)."""
    L = rows * cols
    out = torch.zeros(L, L, dtype=torch.bool)
    for p, q in itertools.product(range(L), repeat=2):
        (r1, c1), (r2, c2) = divmod(p, cols), divmod(q, cols)
        w1 = (((r1 - s) % rows) // M, ((c1 - s) % cols) // M)
        w2 = (((r2 - s) % rows) // M, ((c2 - s) % cols) // M)
        same_side = (r1 < s) == (r2 < s) and (c1 < s) == (c2 < s)
        out[p, q] = w1 == w2 and same_side
    return out


@pytest.mark.parametrize("rows,cols,M,s", [(4, 4, 2, 0), (4, 4, 2, 1), (6, 9, 3, 1), (8, 8, 4, 2), (7, 7, 7, 3)])
def test_the_window_mask_is_the_brute_force_one(rows, cols, M, s):
    assert torch.equal(V.window_mask((rows, cols), M, s), brute_mask(rows, cols, M, s))


def test_the_brute_force_check_fails_on_a_mask_without_the_wrap():
    """Without the regions, a shifted window would let wrapped strips see each other: the check catches it."""
    rows = cols = 8
    M, s = 4, 2
    win, _ = V.windows._labels((rows, cols), M, s)
    no_regions = win[:, None] == win[None, :]
    assert not torch.equal(no_regions, brute_mask(rows, cols, M, s))


@pytest.mark.parametrize("shape,M", [((2, 4, 6, 3), 2), ((1, 9, 9, 5), 3), ((3, 8, 4, 1), 4)])
def test_partition_and_reverse_round_trip(shape, M):
    x = torch.randn(shape)
    w = V.window_partition(x, M)
    assert w.shape == (shape[0] * (shape[1] // M) * (shape[2] // M), M * M, shape[3])
    assert torch.equal(V.window_reverse(w, M, shape[1], shape[2]), x)
    assert torch.equal(w[0, :M], x[0, 0, :M])  # the first window's first row: the grid's first row, first M


@pytest.mark.parametrize("rows,cols,M,s", [(4, 4, 2, 0), (4, 4, 2, 1), (6, 6, 3, 1), (8, 8, 4, 2)])
def test_windowed_attention_is_full_attention_under_the_mask(rows, cols, M, s):
    g = torch.Generator().manual_seed(rows * 10 + s)
    L, d = rows * cols, 8
    q, k, v = (torch.randn(L, d, generator=g) for _ in range(3))
    mask = V.window_mask((rows, cols), M, s)
    full = torch.softmax((q @ k.T / d**0.5).masked_fill(~mask, float("-inf")), -1) @ v
    assert_close(V.windowed_attention(q, k, v, (rows, cols), M, s), full, msg=f"M={M} s={s}")


def test_the_receptive_field_is_the_masks_boolean_power():
    grid, M = (8, 8), 4
    plain, shifted = V.window_mask(grid, M, 0), V.window_mask(grid, M, 2)
    L = 64
    reach = [{i} for i in range(L)]  # sets grown layer by layer, independently of matrices
    for k, m in enumerate([plain, shifted, plain], start=1):
        reach = [set().union(*(reach[j] for j in range(L) if m[i, j] or i == j)) for i in range(L)]
        got = V.receptive_field([plain, shifted, plain][:k])
        want = torch.zeros(L, L, dtype=torch.bool)
        for i, s in enumerate(reach):
            want[i, list(s)] = True
        assert torch.equal(got, want), k
    assert int(V.receptive_field([plain]).sum(1).max()) == M * M  # one layer: one window
    assert int(V.receptive_field([plain, shifted]).sum(1).max()) == 4 * M * M  # the shift crosses the borders


def test_patches_are_the_images_tiles_in_row_major_order():
    image = torch.arange(3 * 224 * 224, dtype=torch.float32).reshape(3, 224, 224)
    tokens, grid = V.patchify(image, 16)
    assert grid == (14, 14) and tokens.shape == (196, 3 * 16 * 16)
    assert torch.equal(tokens[15].reshape(3, 16, 16), image[:, 16:32, 16:32])  # row 1, column 1
    assert V.patchify(image, 4)[0].shape[0] == 3136


def test_swin_t_cost_against_global_attention():
    """Swin-T's first stage: 56 × 56 tokens, C = 96, windows of 7 × 7 (Liu et al., 2021)."""
    f = V.flops((56, 56), 7, 96)
    hw = 56 * 56
    assert f["global"] - f["windowed"] == 2 * hw * hw * 96 - 2 * 49 * hw * 96
    assert f["global"] / f["windowed"] > 13


@pytest.mark.parametrize(
    "call,code",
    [
        (lambda: V.patchify(torch.zeros(3, 30, 30), 16), "vision_patch"),
        (lambda: V.window_mask((6, 6), 4), "vision_window"),
        (lambda: V.window_mask((8, 8), 4, 4), "vision_shift"),
    ],
)
def test_sizes_that_do_not_tile_are_refused(call, code):
    with pytest.raises(AttentionConfigError) as err:
        call()
    assert err.value.code == code
