"""The Variants page's results, shared by every session (a page script is executed anew on every
run, so its caches live here, in a module imported once per process), and what the table of knobs gives the page:
its own inputs and each error curve's values."""

from __future__ import annotations

from attn_core import Settings
from attn_core.compare import compare, error_curve
from attn_core.knobs import KNOBS, Span, in_context
from explorer.base.cache import bounded


@bounded(max_mib=64)  # tensors are drawn as they are
def comparison(items: tuple, kernels: tuple) -> dict:
    """Each kernel's effective weights, pattern and distance from full attention; ``items`` are
    the settings as sorted (name, value) pairs. A kernel that cannot run under them (Linformer when
    causal) is under ``refused`` with its error; the others are compared all the same."""
    res = compare(Settings(**dict(items)), list(kernels))
    return {
        "tokens": res["tokens"],
        "uniform": res["uniform"],
        "refused": res["refused"],
        "causal": res["causal"],
        "mask_not_applied": res["mask_not_applied"],
        "kernels": {
            k: {**v, "pattern": None if v["pattern"] is None else v["pattern"].int()}
            for k, v in res["kernels"].items()
        },
    }


@bounded(max_mib=8)
def curve(items: tuple, kernel: str, values: tuple) -> list[dict]:
    return error_curve(Settings(**dict(items)), kernel, list(values))


def curve_points(n: int, *, most: int = 24) -> tuple[int, ...]:
    """1..n, or at most ``most`` values spread evenly on a log scale from 1 to n (both included)."""
    if n <= most:
        return tuple(range(1, n + 1))
    return tuple(sorted({round(n ** (i / (most - 1))) for i in range(most)}))


def inputs() -> dict[str, Span]:
    """The page's own inputs (``var_<name>``): every knob with a page span (attn_core.knobs), its range and
    default, in the table's order."""
    return {name: k.span("page") for name, k in in_context("page").items()}


def curve_values(param: str, n: int) -> tuple:
    """The values an error curve over the knob ``param`` takes: its own (``Knob.curve``), else ``curve_points(n)``
    (at most 24 points, spread evenly on a log scale: each point is a full comparison)."""
    return tuple(KNOBS[param].curve) or curve_points(n)
