"""A learner's picture read as the training digits were made (``attn_core.vision.picture``): cut to its ink, scaled
to fill 32 × 32 keeping its shape, centred, counted in 4 × 4 blocks; checked against the same steps done here in
numpy, and for every way a picture may come (dark on light, light on dark, a transparent background)."""

from __future__ import annotations

import io

import numpy as np
import pytest
import torch
from PIL import Image

from attn_core import AttentionConfigError
from attn_core.vision.picture import FIELD, centre, read_digit


def png(grey: np.ndarray, mode: str = "L") -> bytes:
    buf = io.BytesIO()
    Image.fromarray(grey.astype(np.uint8), mode).save(buf, "PNG")
    return buf.getvalue()


def shape(h: int, w: int, seed: int) -> np.ndarray:
    """An (h, w) pattern of ink 0/1 whose box is the whole of it (its edges inked), made of 2 × 2 cells so that
    halving it is exact."""
    rng = np.random.default_rng(seed)
    cells = (rng.random((h // 2, w // 2)) < 0.4).astype(np.float64)
    cells[0, 0] = cells[-1, -1] = 1.0  # the box's corners: its edges are ink
    return np.kron(cells, np.ones((2, 2)))


def oracle(box: np.ndarray, factor: int, up: bool) -> np.ndarray:
    """The digit the training data's steps make of a box of ink already cut out, scaled by an exact factor
    (down: the mean of factor × factor blocks; up: each pixel repeated), set in the middle of 32 × 32, averaged in
    4 × 4 blocks, its largest block 1."""
    if up:
        scaled = np.kron(box, np.ones((factor, factor)))
    else:
        h, w = box.shape
        scaled = box.reshape(h // factor, factor, w // factor, factor).mean(axis=(1, 3))
    field = np.zeros((FIELD, FIELD))
    nh, nw = scaled.shape
    top, left = (FIELD - nh) // 2, (FIELD - nw) // 2
    field[top : top + nh, left : left + nw] = scaled
    blocks = field.reshape(8, 4, 8, 4).mean(axis=(1, 3))
    return blocks / blocks.max()


@pytest.mark.parametrize(
    "h,w,factor,up",
    [(64, 32, 2, False), (64, 48, 2, False), (32, 64, 2, False), (16, 8, 2, True), (8, 16, 2, True)],
)
def test_a_digit_is_cut_to_its_ink_scaled_and_centred_as_the_training_digits(h, w, factor, up):
    box = shape(h, w, seed=h * 100 + w)
    want = oracle(box, factor, up)
    for top, left, H, W in ((0, 0, h, w), (5, 200, h + 40, w + 300), (150, 3, h + 200, w + 20)):
        page = np.zeros((H, W))
        page[top : top + h, left : left + w] = box
        got = centre(torch.tensor(page, dtype=torch.float32)).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
        if H == h:  # no paper around it: which shade is ink cannot be told from its border
            continue
        # the same picture as a PNG: dark ink on white paper, light ink on black, dark ink on a transparent page
        dark = 255 - 255 * page
        rgba = np.zeros((H, W, 4))
        rgba[..., 3] = 255 * page  # black strokes; the rest transparent (PNG's black, alpha 0)
        for data in (png(dark), png(255 * page), png(rgba, "RGBA")):
            np.testing.assert_allclose(read_digit(data).numpy(), want, rtol=1e-5, atol=1e-6)


def test_the_result_is_centred_whatever_the_margins():
    """A digit's 8 × 8 reading does not move with where it sat on the page (the old reading shrank the page whole:
    a digit in a corner became a blot in a corner)."""
    box = shape(40, 24, seed=7)
    readings = []
    for top, left, H, W in ((0, 0, 40, 24), (300, 10, 360, 480), (12, 400, 90, 440)):
        page = np.full((H, W), 255.0)
        page[top : top + 40, left : left + 24] = 255 - 255 * box
        readings.append(read_digit(png(page)).numpy())
    for r in readings[1:]:
        np.testing.assert_allclose(r, readings[0], rtol=1e-5, atol=1e-6)
    rows, cols = np.nonzero(readings[0] > 0)
    assert rows.min() == 0 and rows.max() == 7  # its height fills the field, as every training digit's does
    assert abs((cols.min() + cols.max()) / 2 - 3.5) <= 0.5  # and it sits in the middle


@pytest.mark.parametrize("colour", [0, 128, 255])
def test_a_picture_of_one_shade_is_refused_with_its_own_code(colour):
    with pytest.raises(AttentionConfigError) as err:
        read_digit(png(np.full((40, 30), colour)))
    assert err.value.code == "vision_upload_blank"
