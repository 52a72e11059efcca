"""Images as tokens, and Swin's windows: patches, window partition and its reverse, the shifted-window mask as
the real L × L mask, windowed attention, the receptive field over layers, and the cost of each.

Token order is row-major over the patch grid: token t sits at row t // cols, column t % cols.

Swin (Liu et al., 2021): a layer attends within M × M windows; the next shifts the grid by ⌊M/2⌋ with a cyclic
shift (``torch.roll``), so windows straddle the old borders, and masks the pairs that the roll brought together
from opposite edges (``shifted_window_mask``: a pair may attend exactly when both tokens fall in the same window
of the rolled grid and in the same region of it, the wrapped strips being regions of their own).
"""

from __future__ import annotations

import torch

from ..errors import AttentionConfigError


def patchify(image: torch.Tensor, patch: int) -> tuple[torch.Tensor, tuple[int, int]]:
    """(C, H, W) → (rows·cols, C·P·P) flattened patches in row-major order, and the grid (rows, cols)."""
    C, H, W = image.shape
    if patch < 1 or H % patch or W % patch:
        raise AttentionConfigError("patch", "vision_patch", patch=patch, h=H, w=W)
    rows, cols = H // patch, W // patch
    x = image.reshape(C, rows, patch, cols, patch).permute(1, 3, 0, 2, 4)  # rows, cols, C, P, P
    return x.reshape(rows * cols, C * patch * patch), (rows, cols)


def cell(token: int, grid: tuple[int, int]) -> tuple[int, int]:
    """The (row, column) of ``token`` in the row-major grid (rows, cols)."""
    rows, cols = grid
    if not 0 <= token < rows * cols:
        raise ValueError(f"token {token} is not in a grid of {rows} × {cols}")
    return token // cols, token % cols


def check_window(grid: tuple[int, int], window: int) -> None:
    rows, cols = grid
    if window < 1 or rows % window or cols % window:
        raise AttentionConfigError("window", "vision_window", window=window, rows=rows, cols=cols)


def window_partition(x: torch.Tensor, window: int) -> torch.Tensor:
    """(B, rows, cols, C) → (B · windows, M·M, C): each window's tokens, windows row-major, tokens row-major."""
    B, rows, cols, C = x.shape
    check_window((rows, cols), window)
    x = x.reshape(B, rows // window, window, cols // window, window, C).permute(0, 1, 3, 2, 4, 5)
    return x.reshape(-1, window * window, C)


def window_reverse(windows: torch.Tensor, window: int, rows: int, cols: int) -> torch.Tensor:
    """The inverse of ``window_partition``: (B · windows, M·M, C) → (B, rows, cols, C)."""
    C = windows.shape[-1]
    x = windows.reshape(-1, rows // window, cols // window, window, window, C).permute(0, 1, 3, 2, 4, 5)
    return x.reshape(-1, rows, cols, C)


def _labels(grid: tuple[int, int], window: int, shift: int) -> tuple[torch.Tensor, torch.Tensor]:
    """For each token (original order): its window in the rolled grid, and its region (Swin's ``img_mask``)."""
    rows, cols = grid
    r = (torch.arange(rows) - shift) % rows  # where the roll by -shift puts each original row
    c = (torch.arange(cols) - shift) % cols
    rr, cc = torch.meshgrid(r, c, indexing="ij")
    win = (rr // window) * (cols // window) + cc // window

    def band(pos: torch.Tensor, n: int) -> torch.Tensor:  # Swin's slices: [0, n-M), [n-M, n-s), [n-s, n)
        return (pos >= n - window).long() + (pos >= n - shift).long() if shift else torch.zeros_like(pos)

    region = band(rr, rows) * 3 + band(cc, cols)
    return win.flatten(), region.flatten()


def window_ids(grid: tuple[int, int], window: int, shift: int = 0) -> torch.Tensor:
    """(L,) the window each token (original order) falls in once the grid is rolled by ``shift``."""
    check_window(grid, window)
    return _labels(grid, window, shift)[0]


def window_mask(grid: tuple[int, int], window: int, shift: int = 0) -> torch.Tensor:
    """(L, L) bool, True = may attend: the same window of the grid rolled by ``shift`` (0: plain windows), and
    the same region of the rolled grid (the strips the roll wrapped around cannot see each other)."""
    check_window(grid, window)
    if not 0 <= shift < window:
        raise AttentionConfigError("shift", "vision_shift", shift=shift, window=window)
    win, region = _labels(grid, window, shift)
    return (win[:, None] == win[None, :]) & (region[:, None] == region[None, :])


def windowed_attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, grid: tuple[int, int], window: int, shift: int = 0
) -> torch.Tensor:
    """Swin's way: roll, partition into windows, attend within each (with the shifted windows' mask), merge and
    roll back. q, k, v: (L, d) in row-major token order; the result (L, d) in the same order."""
    rows, cols = grid
    d = q.shape[-1]

    def windows(x: torch.Tensor) -> torch.Tensor:
        x = torch.roll(x.reshape(1, rows, cols, -1), shifts=(-shift, -shift), dims=(1, 2))
        return window_partition(x, window)  # (nW, M·M, d)

    qw, kw, vw = windows(q), windows(k), windows(v)
    scores = qw @ kw.transpose(-1, -2) / d**0.5
    if shift:
        _, region = _labels(grid, window, shift)
        rolled = torch.roll(region.reshape(1, rows, cols, 1), shifts=(-shift, -shift), dims=(1, 2))
        reg = window_partition(rolled, window)[..., 0]  # (nW, M·M)
        scores = scores.masked_fill(reg[:, :, None] != reg[:, None, :], float("-inf"))
    out = torch.softmax(scores, -1) @ vw
    merged = window_reverse(out, window, rows, cols)
    return torch.roll(merged, shifts=(shift, shift), dims=(1, 2)).reshape(rows * cols, -1)


def receptive_field(masks: list[torch.Tensor]) -> torch.Tensor:
    """(L, L) bool: which tokens' inputs can reach each token after the layers' masks in order (a token always
    keeps its own path through the residual stream): the boolean product of (mask | I) over the layers."""
    L = masks[0].shape[0]
    reach = torch.eye(L, dtype=torch.bool)
    for m in masks:
        step = (m | torch.eye(L, dtype=torch.bool)).float()
        reach = (step @ reach.float()) > 0
    return reach


def flops(grid: tuple[int, int], window: int, dim: int) -> dict[str, int]:
    """One layer's multiply-adds, Swin's accounting (Liu et al., 2021, eq. 1-2): projections 4·hw·C² plus the
    scores and the weighted sum, 2·(hw)²·C for global attention and 2·M²·hw·C within windows."""
    hw = grid[0] * grid[1]
    proj = 4 * hw * dim * dim
    return {"global": proj + 2 * hw * hw * dim, "windowed": proj + 2 * window * window * hw * dim}
