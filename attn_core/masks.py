"""Attention masks: one convention, bool with True = may attend (as in PyTorch SDPA).

Shapes: L query length, S key length. Every builder returns a (L, S) bool tensor; ``padding``
returns (B, L, S). A bool mask becomes an additive bias in exactly one place, ``to_bias``.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from .errors import AttentionConfigError

MASK_MODES = ("none", "causal", "padding", "sliding_window", "dilated", "global_window", "block")


def _grid(L: int, S: int, device=None) -> tuple[torch.Tensor, torch.Tensor]:
    i = torch.arange(L, device=device).unsqueeze(1)  # (L, 1)
    j = torch.arange(S, device=device).unsqueeze(0)  # (1, S)
    return i, j


def full(L: int, S: int, device=None) -> torch.Tensor:
    return torch.ones(L, S, dtype=torch.bool, device=device)


def causal(L: int, S: int, device=None) -> torch.Tensor:
    """j <= i, aligned top-left like ``scaled_dot_product_attention(is_causal=True)``."""
    i, j = _grid(L, S, device)
    return j <= i


# The patterns as predicate factories (as transformers' masking_utils writes them): each binds its
# own options, checks them, and returns ``(i, j) -> bool tensor`` on query and key positions (tensors
# of any broadcastable shape). The (L, S) masks below, the sparse kernels' patterns and
# FlexAttention's mask_mod (kernels.flex) all call these, so each pattern is written once.
Predicate = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]


def sliding_window_rule(window: int) -> Predicate:
    """|i - j| <= window: each token sees ``window`` neighbours on each side."""
    check_positive("window", window)
    return lambda i, j: (i - j).abs() <= window


def dilated_rule(window: int, dilation: int) -> Predicate:
    """Every ``dilation``-th neighbour, ``window`` of them on each side."""
    check_positive("window", window)
    check_positive("dilation", dilation)

    def allows(i, j):
        d = i - j
        return (d.abs() <= window * dilation) & (d % dilation == 0)

    return allows


def global_window_rule(window: int, global_tokens: int) -> Predicate:
    """A sliding window, plus the first ``global_tokens`` tokens that attend to and are attended by all."""
    check_positive("window", window)
    if global_tokens < 0:
        raise AttentionConfigError("global_tokens", "not_negative", value=global_tokens)
    band = sliding_window_rule(window)
    return lambda i, j: band(i, j) | (i < global_tokens) | (j < global_tokens)


def block_rule(block: int) -> Predicate:
    """Tokens attend only inside their own block of ``block`` positions."""
    check_positive("block", block)
    return lambda i, j: (i // block) == (j // block)


PATTERNS: dict[str, tuple[Callable[..., Predicate], tuple[str, ...]]] = {  # name -> (factory, its option names)
    "sliding_window": (sliding_window_rule, ("window",)),
    "dilated": (dilated_rule, ("window", "dilation")),
    "global_window": (global_window_rule, ("window", "global_tokens")),
    "block": (block_rule, ("block",)),
}


def rule(name: str, *, causal: bool = False, **opts) -> Predicate:
    """The predicate of pattern ``name`` bound to its options (the kernels' option names; others
    are ignored), AND-ed with j <= i when ``causal``."""
    factory, names = PATTERNS[name]
    allows = factory(*(opts[n] for n in names))
    if not causal:
        return allows
    return lambda i, j: allows(i, j) & (j <= i)


def pattern_mask(name: str, L: int, S: int, *, causal: bool = False, device=None, **opts) -> torch.Tensor:
    """The (L, S) bool mask of pattern ``name`` with its options."""
    return rule(name, causal=causal, **opts)(*_grid(L, S, device))


def sliding_window(L: int, S: int, *, window: int, device=None) -> torch.Tensor:
    """|i - j| <= window: each token sees ``window`` neighbours on each side."""
    return pattern_mask("sliding_window", L, S, window=window, device=device)


def padding(lengths: list[int], L: int | None = None, S: int | None = None, device=None) -> torch.Tensor:
    """(B, L, S) for a batch padded to S = max(lengths): key j is visible iff j < length.

    Padded query rows still attend to the real keys (as ``key_padding_mask`` does), so no row
    is empty.
    """
    S = max(lengths) if S is None else S
    L = S if L is None else L
    j = torch.arange(S, device=device)
    keys = j.unsqueeze(0) < torch.tensor(lengths, device=device).unsqueeze(1)  # (B, S)
    return keys.unsqueeze(1).expand(len(lengths), L, S).clone()


def to_bias(mask: torch.Tensor, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """The one bool -> additive conversion: 0 where allowed, -inf where masked."""
    bias = torch.zeros(mask.shape, dtype=dtype, device=mask.device)
    return bias.masked_fill(~mask, float("-inf"))


def check_positive(field: str, value: int) -> None:
    if value < 1:
        raise AttentionConfigError(field, "at_least_one", value=value)


def build_mask(
    mode: str,
    L: int,
    S: int,
    *,
    window: int = 2,
    dilation: int = 2,
    global_tokens: int = 1,
    block_size: int = 2,
    n_real: int | None = None,
    also_causal: bool = False,
    device=None,
) -> torch.Tensor:
    """The (L, S) mask for one of ``MASK_MODES``; ``padding`` masks keys at or after ``n_real``."""
    if mode not in MASK_MODES:
        raise AttentionConfigError("mask", "unknown_choice", value=mode, options=", ".join(MASK_MODES))
    if mode in PATTERNS:
        opts = {"window": window, "dilation": dilation, "global_tokens": global_tokens, "block": block_size}
        return pattern_mask(mode, L, S, causal=also_causal and mode != "causal", device=device, **opts)
    builders: dict[str, Callable[[], torch.Tensor]] = {
        "none": lambda: full(L, S, device),
        "causal": lambda: causal(L, S, device),
        "padding": lambda: padding([S if n_real is None else n_real], L, S, device)[0],
    }
    mask = builders[mode]()
    if also_causal and mode != "causal":
        mask = mask & causal(L, S, device)
    return mask
