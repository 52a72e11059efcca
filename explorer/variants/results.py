"""The Variants page's results, shared by every session (a page script is executed anew on every
run, so its caches live here, in a module imported once per process)."""

from __future__ import annotations

from attn_core import Settings
from attn_core.compare import compare, error_curve
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
