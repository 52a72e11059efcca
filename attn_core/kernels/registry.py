"""The registry: a variant is one ``Kernel`` spec.

A spec holds its function, what it is called and where it comes from, the options it takes (by
their names in ``attn_core.knobs``), what it can and cannot do (``check``), the L x S matrix it
amounts to (``weights``), its cost models (``flops``, ``peak_bytes``) and its steps in the take-home notebook
(``notebook``: ``notebook_cells.NotebookSteps``). The trace, the Variants page, the sweep, the CLI and the notebook
export ask the spec; nothing outside the kernel modules branches on a variant's name. A new variant is one
function and one ``register(...)`` call (see the README).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import torch

from ..knobs import KNOBS, kernel_knobs
from ..knobs import register as register_knob
from .base import _check_nothing, _scale
from .notebook_cells import NotebookSteps


@dataclass(frozen=True)
class Kernel:
    name: str
    fn: Callable  # fn(q, k, v, *, causal, scale, **options) -> out
    label: str
    family: str  # full | sparse | linear | low_rank
    formula: str  # LaTeX
    time: str
    memory: str
    paper: str
    check: Callable  # (L, S, *, causal, cross, **options) -> None, or raises AttentionConfigError
    weights: Callable  # (q, k, *, causal, scale, **options) -> (..., L, S): out = weights @ v
    flops: Callable  # (L, shape) -> multiply-adds x 2 of its main products
    peak_bytes: Callable  # (L, shape, dtype bytes) -> peak extra bytes of one call
    options: tuple[str, ...] = ()  # every keyword it takes (seed included where it draws)
    sweep: str | None = None  # the option an error curve sweeps on the Variants page
    always_causal: bool = False
    dot_product: bool = True  # works on dot-product scores only (no additive score)
    softmax: bool = True  # its weights are a softmax of the scores (under its pattern); else ``weights`` shows them
    teaching: bool = True  # shown on the Variants page (a second implementation of the same math is not)
    compiled: bool = False  # its first call at a shape compiles: the benchmark times that apart
    pattern: Callable | None = None  # (L, S, causal, **opts) -> (L, S) bool, for sparse kernels
    explain: Callable | None = None  # (q, k, v, *, causal, scale, **opts) -> Explained: its own steps; None = full
    notebook: NotebookSteps | None = None  # its own steps (and pattern) in the take-home notebook's plain PyTorch

    @property
    def doc(self) -> str:
        import inspect

        return inspect.getdoc(self.fn) or ""


KERNELS: dict[str, Kernel] = {}
register_knob(replace(KNOBS["kernel"], choices=lambda: tuple(KERNELS)))  # the variant's choices: the registry's


def register(name: str, fn: Callable, **spec) -> Kernel:
    """Add a variant to the registry (``spec``: the ``Kernel`` fields by keyword). Its ``label``
    comes from the catalogue (``kernel.<name>.label`` in attn_core/locales/en.toml) unless given."""
    spec.setdefault("check", _check_nothing)
    known = kernel_knobs()
    unknown = [o for o in (*spec.get("options", ()), spec.get("sweep")) if o is not None and o not in known]
    if unknown:  # a new option is registered first (attn_core.knobs.register), then the variant
        raise ValueError(
            f"kernel {name}: unknown options {unknown}; register(Knob(..., kernel_option=True)) them first"
        )
    if "label" not in spec:
        spec["label"] = _catalogue_label(name)
    kernel = Kernel(name=name, fn=fn, **spec)
    KERNELS[name] = kernel
    return kernel


def _catalogue_label(name: str) -> str:
    from ..locales import LocaleError, kernel_label

    try:
        return kernel_label(name)
    except (KeyError, LocaleError):
        return name


def unregister(name: str) -> None:
    KERNELS.pop(name, None)


def kernel_options(kernel: Kernel, **available) -> dict:
    """The subset of ``available`` options this kernel takes."""
    return {name: available[name] for name in kernel.options if name in available}


def effective_weights(name: str, q, k, *, causal: bool = False, scale: float | None = None, **opts) -> torch.Tensor:
    """The L x S matrix a kernel amounts to, for display at small L: out = weights @ v exactly.

    Sparse kernels: softmax restricted to the pattern. Linear kernels: φ(q_i)·φ(k_j)
    normalised per row. Linformer: softmax(Q (EK)ᵀ) F, which mixes values with signed weights.
    """
    kern = KERNELS[name]
    return kern.weights(q, k, causal=causal or kern.always_causal, scale=_scale(q, scale), **opts)


def run_kernel(name: str, q, k, v, *, causal: bool = False, scale: float | None = None, **opts) -> torch.Tensor:
    kern = KERNELS[name]
    return kern.fn(q, k, v, causal=causal or kern.always_causal, scale=scale, **opts)
