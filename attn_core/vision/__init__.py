"""Attention over images: patches as tokens, ViT's global attention and Swin's (shifted) windows.

windows   patchify, cell (a token's row and column), window_partition / window_reverse, window_mask (the
          L × L mask a layer uses, shifted windows included), windowed_attention (Swin's
          roll-partition-attend-merge), receptive_field, flops (global against windowed, Swin's accounting)
rollout   attention rollout over the layers (Abnar & Zuidema, 2020)
picture   a learner's picture made into a digit as the training digits were (cut to its ink, centred)
"""

from .rollout import rollout
from .windows import (
    cell,
    check_window,
    flops,
    patchify,
    receptive_field,
    window_ids,
    window_mask,
    window_partition,
    window_reverse,
    windowed_attention,
)

__all__ = [
    "cell",
    "check_window",
    "flops",
    "patchify",
    "receptive_field",
    "rollout",
    "window_ids",
    "window_mask",
    "window_partition",
    "window_reverse",
    "windowed_attention",
]
