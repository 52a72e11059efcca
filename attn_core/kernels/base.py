"""What every kernel module shares: the default scale and the small argument helpers."""

from __future__ import annotations

import math

import torch

from ..errors import AttentionConfigError


def _scale(q: torch.Tensor, scale: float | None) -> float:
    return 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale


def _flat(t: torch.Tensor) -> torch.Tensor:
    return t.reshape(-1, *t.shape[-2:])


def _self_only(name: str, q, k) -> None:
    if q.shape[-2] != k.shape[-2]:
        raise AttentionConfigError("kernel", "pattern_cross", kernel=name)


def _check_nothing(L: int, S: int, *, causal: bool, cross: bool, **opts) -> None:
    return None


def _check_pattern(name: str):
    def check(L: int, S: int, *, causal: bool, cross: bool, **opts) -> None:
        if cross:
            raise AttentionConfigError("kernel", "pattern_cross", kernel=name)

    return check
