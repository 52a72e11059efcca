"""Attention kernels behind one registry: full, sparse (banded/blocked), linear, low-rank, compiled.

Every kernel has one signature, ``fn(q, k, v, *, causal, scale, **options) -> out``, with
q (B, H, L, D), k (B, H, S, D), v (B, H, S, Dv) -> out (B, H, L, Dv). The efficient paths never
build an L x S tensor; ``effective_weights`` gives the L x S matrix each kernel amounts to, for
display at small L (sparse: softmax under the pattern; linear: normalised feature products).

One module per family, each ending in its own ``register(...)`` calls (the registry's order is
the order they are imported here): ``full`` (materialised, SDPA), ``sparse`` (sliding window,
dilated, global + window, block, on the shared banded engine ``banded``), ``flex``, ``linear``
(elu + 1, causal), ``performer``, ``linformer``,
``sigmoid`` (no softmax: each weight its own sigmoid). ``registry`` holds the ``Kernel`` spec,
``explain`` the ``Stage``s a variant's own steps are made of, ``notebook_cells`` (and ``notebook_features``)
the same steps as the take-home notebook's plain PyTorch, which a spec carries as ``notebook=``. Everything
importable from ``attn_core.kernels`` before the split still is.
"""

from .registry import KERNELS, Kernel, effective_weights, kernel_options, register, run_kernel, unregister  # noqa: I001
from .base import _check_nothing, _check_pattern, _flat, _scale, _self_only
from .explain import AXES, Explained, Stage, prefix_state
from .notebook_cells import NotebookSteps, runnable_weights
from .full import _SOFTMAX, _softmax_weights, full_attention, sdpa_attention
from .banded import _band, _block_for, _local, _local_fused, _merge, _softmax_blocks
from .sparse import (
    block_attention,
    dilated_attention,
    global_window_attention,
    pattern_pairs,
    sliding_window_attention,
)
from .flex import flex_attention, flex_unavailable
from .linear import causal_linear_attention, elu_features, linear_elu_attention
from .performer import (
    SHRINK_ROWS,
    oprf_parameter,
    orthogonal_features,
    performer_attention,
    performer_features,
    performer_halves,
    performer_shrinkage,
    performer_split,
)
from .linformer import linformer_attention, linformer_projection
from .sigmoid import sigmoid_attention, sigmoid_weights

__all__ = [
    "AXES",
    "KERNELS",
    "SHRINK_ROWS",
    "Explained",
    "Kernel",
    "NotebookSteps",
    "Stage",
    "block_attention",
    "causal_linear_attention",
    "dilated_attention",
    "effective_weights",
    "elu_features",
    "flex_attention",
    "flex_unavailable",
    "full_attention",
    "global_window_attention",
    "kernel_options",
    "linear_elu_attention",
    "linformer_attention",
    "linformer_projection",
    "oprf_parameter",
    "orthogonal_features",
    "pattern_pairs",
    "performer_attention",
    "performer_features",
    "performer_halves",
    "performer_shrinkage",
    "performer_split",
    "prefix_state",
    "register",
    "run_kernel",
    "runnable_weights",
    "sdpa_attention",
    "sigmoid_attention",
    "sigmoid_weights",
    "sliding_window_attention",
    "unregister",
]
_PRIVATE = (  # kept importable for code written against the single module
    _SOFTMAX,
    _band,
    _block_for,
    _check_nothing,
    _check_pattern,
    _flat,
    _local,
    _local_fused,
    _merge,
    _scale,
    _self_only,
    _softmax_blocks,
    _softmax_weights,
)
