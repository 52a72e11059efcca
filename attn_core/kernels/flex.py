"""FlexAttention: PyTorch's compiled ``flex_attention`` running the same patterns (``masks.PATTERNS``)
as a mask_mod."""

from __future__ import annotations

from collections.abc import Callable

import torch

from .. import masks
from ..errors import AttentionConfigError
from .base import _check_pattern
from .explain import _explain_sparse
from .full import _softmax_weights
from .notebook_cells import MASK_CODE, NotebookSteps, sparse_cells
from .registry import register
from .sparse import _banded_bytes, _pattern_flops

_FLEX: dict[str, Callable] = {}

# FlexAttention's default block. torch 2.13's compiled CPU kernel returns wrong rows when a length is not a
# multiple of it (40 tokens: off by 1.1 against the same mask in eager mode, on some CPUs only), so the
# sequences are padded to a multiple and the padded keys masked out; a multiple of it runs as it is.
_BLOCK = 128
_RECOMPILES = 256


def flex_unavailable() -> str | None:
    """Why FlexAttention cannot run here (None when it can): it needs torch.compile, and on the CPU a C++ compiler."""
    import shutil

    try:
        from torch.nn.attention.flex_attention import create_block_mask, flex_attention  # noqa: F401
    except ImportError:
        return f"torch {torch.__version__} has no FlexAttention"
    if not torch.cuda.is_available() and not (shutil.which("g++") or shutil.which("c++") or shutil.which("clang++")):
        return "no C++ compiler for torch.compile on the CPU"
    return None


def _flex_mask_mod(pattern: str, causal: bool, opts: dict):
    """FlexAttention's ``mask_mod``: the pattern's predicate (``masks.rule``, its options checked)."""
    allows = masks.rule(pattern, causal=causal, **opts)

    def mask_mod(b, h, i, j):
        return allows(i, j)

    return mask_mod


def flex_attention(
    q,
    k,
    v,
    *,
    causal: bool = False,
    scale: float | None = None,
    pattern: str = "sliding_window",
    window: int = 2,
    dilation: int = 2,
    global_tokens: int = 1,
    block: int = 2,
):
    """FlexAttention: PyTorch's ``flex_attention`` with this app's mask patterns (sliding window,
    dilated, global + window, block) written as a ``mask_mod`` and compiled by ``torch.compile``
    into a block-sparse kernel. What a practitioner would use for a sparse pattern today. The
    first call at a shape compiles (seconds); the benchmark reports that apart from the run time."""
    from torch.nn.attention.flex_attention import create_block_mask
    from torch.nn.attention.flex_attention import flex_attention as flex

    opts = {"window": window, "dilation": dilation, "global_tokens": global_tokens, "block": block}
    _flex_mask_mod(pattern, causal, opts)  # checks the pattern's options
    # The options, causality and the true key length reach the compiled kernel as tensors, not as constants: a graph
    # is compiled per pattern and shape, and a new window, causal or not, or a sweep over the window reuses it.
    allows = masks.rule(pattern, **{k: torch.tensor(v, device=q.device) for k, v in opts.items()})
    any_key = torch.tensor(not causal, device=q.device)  # True: keys after the query allowed too

    def mask_mod(b, h, i, j):
        return allows(i, j) & ((j <= i) | any_key)

    if "fn" not in _FLEX:
        # Every shape and pattern compiles once; past dynamo's default of 8 it would fall back to the
        # eager, unfused flex_attention without a word, and a sweep would time that instead.
        torch._dynamo.config.recompile_limit = max(torch._dynamo.config.recompile_limit, _RECOMPILES)
        _FLEX["fn"] = torch.compile(flex, dynamic=False)
    L, S = q.shape[-2], k.shape[-2]
    PL, PS = -(-L // _BLOCK) * _BLOCK, -(-S // _BLOCK) * _BLOCK
    if (PL, PS) == (L, S):
        mask = create_block_mask(mask_mod, None, None, L, S, device=q.device.type)
        return _FLEX["fn"](q, k, v, block_mask=mask, scale=scale)

    keys = torch.tensor(S, device=q.device)

    def padded_mod(b, h, i, j):
        return mask_mod(b, h, i, j) & (j < keys)

    def pad(t, n):
        return torch.nn.functional.pad(t, (0, 0, 0, n - t.shape[-2]))

    mask = create_block_mask(padded_mod, None, None, PL, PS, device=q.device.type)
    out = _FLEX["fn"](pad(q, PL), pad(k, PS), pad(v, PS), block_mask=mask, scale=scale)
    return out[..., :L, :]


def _check_flex(L: int, S: int, *, causal: bool, cross: bool, **opts) -> None:
    why = flex_unavailable()
    if why:
        raise AttentionConfigError("kernel", "flex_unavailable", reason=why)
    _check_pattern("flex")(L, S, causal=causal, cross=cross)


def _flex_pattern(L: int, S: int, causal: bool, *, pattern: str = "sliding_window", **opts) -> torch.Tensor:
    i, j = torch.arange(L).view(-1, 1), torch.arange(S).view(1, -1)
    return _flex_mask_mod(pattern, causal, opts)(None, None, i, j)


register(
    "flex",
    flex_attention,
    family="sparse",
    formula=r"\mathrm{softmax}_{\mathrm{mask\_mod}(i,j)}\!\left(\frac{q_i k_j^\top}{\sqrt{d_k}}\right)v_j",
    time="O(L·w·d)",
    memory="O(L·w)",
    paper="PyTorch FlexAttention (He et al. 2024); the patterns as above",
    pattern=_flex_pattern,
    weights=_softmax_weights(_flex_pattern),
    explain=_explain_sparse(_flex_pattern, flex_attention),
    notebook=NotebookSteps(sparse_cells, mask=lambda pattern="sliding_window", **_: MASK_CODE[pattern]),
    check=_check_flex,
    flops=_pattern_flops(None),
    peak_bytes=_banded_bytes,
    options=("pattern", "window", "dilation", "global_tokens", "block"),
    sweep="window",
    compiled=True,
    teaching=False,
)
