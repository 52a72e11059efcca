"""A tiny ViT and a tiny Swin-style model on 8 × 8 digit images, built from this package's own attention.

Both: patches of P × P pixels projected to tokens, plus a learned 2-D position embedding (a row's and a
column's vector added); pre-norm blocks x = x + attn(LN(x)), x = x + MLP(LN(x)); the tokens' mean read out to
10 classes. Attention is ``steps.attend`` with a mask: all True for ViT (every patch sees every patch); for Swin,
layer i attends within M × M windows, shifted by ⌊M/2⌋ on odd layers (``windows.window_mask``).

The data: the UCI optical digits as scikit-learn ships them (1,797 images, 8 × 8 pixels of 0..16, CC BY 4.0),
split by a seed into 80 % training and 20 % held out.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from .. import steps
from ..errors import AttentionConfigError
from ..knobs import Live
from ..lab.config import LAB_LIMITS
from .windows import check_window, window_mask

SIDE = 8  # the digits' images are 8 × 8
# field: (low, high), inclusive. What a vision run shares with a Lab run (it trains in the Lab's workers) has the
# Lab's limits: steps, batch, seed, heads, and the width as the Lab's d_model; the rest is the image's own.
VISION_LIMITS = Live(
    lambda: {
        "patch": (1, SIDE),
        "window": (1, SIDE),
        "dim": LAB_LIMITS["d_model"],
        "heads": LAB_LIMITS["heads"],
        "layers": (1, 4),
        "steps": LAB_LIMITS["steps"],
        "batch": LAB_LIMITS["batch"],
        "seed": LAB_LIMITS["seed"],
    }
)
LR = (1e-5, 1.0)  # the Lab's learning rates (its lab_lr check)


def check_limits(values: dict, limits) -> None:
    """Each of ``values`` that ``limits`` names, a whole number in its (low, high), else an AttentionConfigError
    naming it (whole_number, out_of_range: what every command and page says)."""
    for name, (low, high) in limits.items():
        if name not in values:
            continue
        value = values[name]
        if isinstance(value, bool) or not isinstance(value, int):
            raise AttentionConfigError(name, "whole_number", low=low, high=high)
        if not low <= value <= high:
            raise AttentionConfigError(name, "out_of_range", value=value, low=low, high=high)


@dataclass(frozen=True)
class VisionConfig:
    model: str = "vit"  # "vit" | "swin"
    patch: int = 2
    window: int = 2
    shift: bool = True
    dim: int = 32
    heads: int = 2
    layers: int = 2
    steps: int = 400
    batch: int = 64
    lr: float = 3e-3
    seed: int = 0

    @property
    def grid(self) -> tuple[int, int]:
        return SIDE // self.patch, SIDE // self.patch

    def check(self) -> None:
        if self.model not in ("vit", "swin"):
            raise AttentionConfigError("model", "unknown_choice", value=self.model, options="vit, swin")
        if not isinstance(self.shift, bool):
            raise AttentionConfigError("shift", "unknown_choice", value=self.shift, options="true, false")
        check_limits({name: getattr(self, name) for name in VISION_LIMITS}, VISION_LIMITS)
        lr = self.lr
        if isinstance(lr, bool) or not (isinstance(lr, float | int) and math.isfinite(lr) and LR[0] <= lr <= LR[1]):
            raise AttentionConfigError("lr", "lab_lr", value=self.lr)
        if self.dim % self.heads:
            raise AttentionConfigError("heads", "heads_divide", heads=self.heads, d_model=self.dim)
        if self.patch < 1 or SIDE % self.patch:
            raise AttentionConfigError("patch", "vision_patch", patch=self.patch, h=SIDE, w=SIDE)
        if self.model == "swin":
            check_window(self.grid, self.window)

    def mask(self, layer: int) -> torch.Tensor:
        """The (L, L) bool mask of ``layer``: all True for ViT, Swin's windows (shifted on odd layers) otherwise."""
        if self.model == "vit":
            L = self.grid[0] * self.grid[1]
            return torch.ones(L, L, dtype=torch.bool)
        shift = self.window // 2 if (self.shift and layer % 2) else 0
        return window_mask(self.grid, self.window, shift)


class Block(nn.Module):
    b_q = b_k = b_v = additive = None  # no biases, a dot-product score (what steps.attend reads)

    def __init__(self, c: VisionConfig):
        super().__init__()
        d, H = c.dim, c.heads

        def linear(*shape, fan_in):
            return nn.Parameter((torch.rand(*shape) * 2 - 1) / math.sqrt(fan_in))

        self.W_q, self.W_k, self.W_v = (linear(H, d // H, d, fan_in=d) for _ in range(3))
        self.W_o = linear(d, d, fan_in=d)
        self.norm1, self.norm2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d))

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = self.norm1(x)
        a = steps.attend(h, h, self, mask, stages=False)
        ctx = (a.weights @ a.V).transpose(1, 2).flatten(2)  # (B, L, d)
        x = x + ctx @ self.W_o.T
        return x + self.mlp(self.norm2(x)), a.weights


class VisionModel(nn.Module):
    def __init__(self, c: VisionConfig):
        super().__init__()
        c.check()
        self.c = c
        rows, cols = c.grid
        self.embed = nn.Linear(c.patch * c.patch, c.dim)
        self.row = nn.Parameter(torch.randn(rows, c.dim) * 0.02)
        self.col = nn.Parameter(torch.randn(cols, c.dim) * 0.02)
        self.blocks = nn.ModuleList(Block(c) for _ in range(c.layers))
        self.masks = [c.mask(i) for i in range(c.layers)]
        self.head = nn.Linear(c.dim, 10)

    def tokens(self, images: torch.Tensor) -> torch.Tensor:
        """(B, 8, 8) → (B, L, P·P) patches in row-major order."""
        B, P = images.shape[0], self.c.patch
        rows, cols = self.c.grid
        x = images.reshape(B, rows, P, cols, P).permute(0, 1, 3, 2, 4)
        return x.reshape(B, rows * cols, P * P)

    def forward(self, images: torch.Tensor) -> tuple[torch.Tensor, list[torch.Tensor]]:
        pos = (self.row[:, None, :] + self.col[None, :, :]).flatten(0, 1)  # (L, d)
        x = self.embed(self.tokens(images)) + pos
        weights = []
        for block, mask in zip(self.blocks, self.masks):
            x, w = block(x, mask)
            weights.append(w)
        return self.head(x.mean(1)), weights


@functools.lru_cache(maxsize=4)
def digits(seed: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """(train images, train labels, held-out images, held-out labels): images (N, 8, 8) scaled to 0..1 (kept:
    reading scikit-learn's file costs ~30 ms; callers never write to them)."""
    from sklearn.datasets import load_digits

    d = load_digits()
    x = torch.tensor(d.images, dtype=torch.float32) / 16.0
    y = torch.tensor(d.target, dtype=torch.long)
    order = torch.randperm(len(y), generator=torch.Generator().manual_seed(seed))
    cut = int(0.8 * len(y))
    return x[order[:cut]], y[order[:cut]], x[order[cut:]], y[order[cut:]]


def training(c: VisionConfig, every: int = 50, between=None):
    """Train with Adam on the digits, yielding (step, loss, held-out accuracy, the model) every ``every`` steps
    and at the last; ``between()`` is called before each training step (a worker's Pause holds there: the run
    goes on exactly as it would have)."""
    c.check()
    torch.manual_seed(c.seed)
    model = VisionModel(c)
    xt, yt, xv, yv = digits(c.seed)
    opt = torch.optim.Adam(model.parameters(), lr=c.lr)
    g = torch.Generator().manual_seed(c.seed + 1)
    for step in range(1, c.steps + 1):
        if between is not None:
            between()
        idx = torch.randint(len(yt), (c.batch,), generator=g)
        loss = F.cross_entropy(model(xt[idx])[0], yt[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % every == 0 or step == c.steps:
            yield step, float(loss.detach()), accuracy(model, xv, yv), model


def snapshots(c: VisionConfig, every: int = 50, between=None):
    """The run as plain snapshots (what a worker sends): step, loss, val_acc, val_n, status ("running", "done"
    at the last step) and the model's weights ``state`` as nested lists (the model rebuilds from them)."""
    n = len(digits(c.seed)[3])
    for step, loss, acc, model in training(c, every, between):
        state = {k: v.tolist() for k, v in model.state_dict().items()}
        status = "done" if step == c.steps else "running"
        yield {"step": step, "loss": loss, "val_acc": acc, "val_n": n, "status": status, "state": state}


def train(c: VisionConfig, every: int = 50) -> dict:
    """Train with Adam on the digits; the curve (step, loss, held-out accuracy) every ``every`` steps."""
    curve, model = [], None
    for step, loss, acc, model in training(c, every):
        curve.append({"step": step, "loss": loss, "val_acc": acc})
    return {
        "model": model,
        "curve": curve,
        "final": {"val_acc": curve[-1]["val_acc"], "val_n": len(digits(c.seed)[3])},
    }


@torch.no_grad()
def accuracy(model: VisionModel, x: torch.Tensor, y: torch.Tensor) -> float:
    model.eval()
    acc = float((model(x)[0].argmax(-1) == y).float().mean())
    model.train()
    return acc
