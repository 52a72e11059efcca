"""FlexAttention: PyTorch's compiled ``flex_attention`` running the same patterns (``masks.PATTERNS``)
as a mask_mod."""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable

import torch

from .. import masks
from ..errors import AttentionConfigError
from .base import _check_pattern, _scale
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
    compiled: bool | None = None,
):
    """FlexAttention: PyTorch's ``flex_attention`` with this app's mask patterns (sliding window,
    dilated, global + window, block) written as a ``mask_mod`` and compiled by ``torch.compile``
    into a block-sparse kernel. What a practitioner would use for a sparse pattern today. The compiled
    kernel's first call at a shape compiles (seconds); the benchmark reports that apart from the run time.
    The block mask is built once per pattern, options and length (``_block_mask``) and kept.

    ``compiled``: None runs the compiled kernel from two blocks of queries or keys (more than 128) and, within one
    block, PyTorch's own unfused ``flex_attention`` on the same block mask: one block is one tile of the compiled
    kernel, which then skips nothing, and compiling costs seconds for every new shape (head count, d_k, d_v) where the
    unfused call costs milliseconds. True always compiles (the benchmark times the compiled kernel at every length),
    False never does."""
    opts = {"window": window, "dilation": dilation, "global_tokens": global_tokens, "block": block}
    _flex_mask_mod(pattern, causal, opts)  # checks the pattern's options
    L, S = q.shape[-2], k.shape[-2]
    mask = _block_mask(pattern, causal, tuple(sorted(opts.items())), L, S, str(q.device))
    PL, PS = mask.seq_lengths
    if compiled is None:
        compiled = max(PL, PS) > _BLOCK
    fn = _compiled() if compiled else _unfused
    # The scale multiplies the queries before the kernel, which always takes 1.0: a float argument is a constant of
    # the compiled graph, so each new scale (a learner's temperature, another d_k at the same shape) compiled a graph
    # of its own, seconds each on a CPU.
    q = q * _scale(q, scale)
    if (PL, PS) == (L, S):
        return fn(q, k, v, block_mask=mask, scale=1.0)

    def pad(t, n):
        return torch.nn.functional.pad(t, (0, 0, 0, n - t.shape[-2]))

    out = fn(pad(q, PL), pad(k, PS), pad(v, PS), block_mask=mask, scale=1.0)
    return out[..., :L, :]


def _compiled() -> Callable:
    """``flex_attention`` under ``torch.compile``, made once per process."""
    if "fn" not in _FLEX:
        from torch.nn.attention.flex_attention import flex_attention as flex

        # Every shape and pattern compiles once; past dynamo's default of 8 it would fall back to the
        # eager, unfused flex_attention without a word, and a sweep would time that instead.
        torch._dynamo.config.recompile_limit = max(torch._dynamo.config.recompile_limit, _RECOMPILES)
        _FLEX["fn"] = torch.compile(flex, dynamic=False)
    return _FLEX["fn"]


_QUIET = threading.Lock()
_PERFORMANCE_WARNING = "flex_attention_performance"  # PyTorch's id for "flex_attention called without torch.compile"


def _unfused(q, k, v, **kw):
    """PyTorch's ``flex_attention`` without ``torch.compile``: the scores of the whole block, masked by the same
    mask_mod. PyTorch warns once per process that this is not the fused kernel; here that is chosen, so its warning is
    marked as shown for this call only: a compiled call that falls back to this path (past dynamo's recompile limit)
    still warns, and the tests make that warning a failure (pytest.ini). A filter around the call would change the
    process's warning filters from the server's threads at once, which ``warnings`` is not safe for."""
    from torch.nn.attention import flex_attention as fa

    shown = getattr(fa, "_WARNINGS_SHOWN", None)
    with _QUIET:
        already = shown is None or _PERFORMANCE_WARNING in shown
        if not already:
            shown.add(_PERFORMANCE_WARNING)
        try:
            return fa.flex_attention(q, k, v, **kw)
        finally:
            if not already:
                shown.discard(_PERFORMANCE_WARNING)


@functools.lru_cache(maxsize=16)
def _block_mask(pattern: str, causal: bool, opts: tuple, L: int, S: int, device: str):
    """The pattern's BlockMask at L queries and S keys (padded to whole blocks, the padded keys masked out), built once
    and kept, as a practitioner keeps it across calls: ``create_block_mask`` evaluates the mask_mod at every (i, j),
    at L = 4096 most of a call's time. The options and the true key length reach the compiled kernel as tensors, not
    as constants: a graph is compiled per pattern, causality and shape, and a new window, a length padded to the
    same blocks or a new scale (``flex_attention`` scales the queries) reuses it."""
    from torch.nn.attention.flex_attention import create_block_mask

    at = torch.device(device)
    mask_mod = _flex_mask_mod(pattern, causal, {k: torch.tensor(v, device=at) for k, v in opts})
    PL, PS = -(-L // _BLOCK) * _BLOCK, -(-S // _BLOCK) * _BLOCK
    if (PL, PS) != (L, S):
        keys, allowed = torch.tensor(S, device=at), mask_mod

        def mask_mod(b, h, i, j):
            return allowed(b, h, i, j) & (j < keys)

    return create_block_mask(mask_mod, None, None, PL, PS, device=device)


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
