"""The app's own values in the notebook: the tensors of a trace or a trained head by the names the notebook gives
their recomputations (the table's: ``attn_core.tensors``), the size limit, and the last cell that carries them
(float32, base64) and compares."""

from __future__ import annotations

import base64

import torch

from ..errors import AttentionConfigError
from ..tensors import notebook_name, trace_tensors
from ..trace import Trace

MAX_NUMBERS = 2**20  # the app's values one notebook may carry (4 MiB as float32, ~5.6 MiB in base64)


def _numbers(tensors: dict) -> int:
    return sum(t.numel() for t in tensors.values())


def check_size(tensors: dict) -> None:
    n = _numbers(tensors)
    if n > MAX_NUMBERS:
        raise AttentionConfigError(
            "heads",
            "notebook_too_big",
            n=f"{n:,}",
            mib=f"{n * 4 / 2**20:,.0f}",
            limit=f"{MAX_NUMBERS * 4 / 2**20:,.0f}",
        )


def _blob(t: torch.Tensor) -> str:
    data = t.detach().to(torch.float32).contiguous().cpu().numpy().astype("<f4").tobytes()
    return f"({list(t.shape)!r}, {base64.b64encode(data).decode('ascii')!r})"


def _compare_cell(tensors: dict, lists: dict) -> str:
    rows = "\n".join(f"    {name!r}: {_blob(t)}," for name, t in tensors.items())
    plain = "\n".join(f"    {name!r}: {value!r}," for name, value in lists.items())
    return f"""APP = {{  # name: (shape, float32 little-endian, base64): the app's own values for this view
{rows}
}}
APP_LISTS = {{
{plain}
}}


def app_tensor(shape, data):
    return torch.frombuffer(bytearray(base64.b64decode(data)), dtype=torch.float32).reshape(shape)


differences = {{}}
for name, (shape, data) in APP.items():
    mine, theirs = recomputed[name].to(torch.float32), app_tensor(shape, data)
    if tuple(mine.shape) != tuple(theirs.shape):
        differences[name] = float("inf")
        continue
    gap = (mine - theirs).abs().masked_fill(mine.isnan() & theirs.isnan(), 0.0)  # NaN: a pair never scored
    finite = theirs[theirs.isfinite()].abs()  # float32 rounding grows with the values: relative to their size
    size = max(float(finite.max()), 1.0) if finite.numel() else 1.0
    differences[name] = float(gap.nan_to_num(float("inf")).max()) / size if gap.numel() else 0.0
for name, value in APP_LISTS.items():
    differences[name] = 0.0 if recomputed[name] == value else float("inf")
for name, d in differences.items():
    print(f"{{name:>16}}  {{d:.2e}}  {{'ok' if d <= 1e-5 else 'DIFFERS'}}")
largest = max(differences.values())
matched = "(every tensor matches the app to 1e-5 of its largest value, or of 1)"
print(f"largest difference: {{largest:.3g}}", matched if largest <= 1e-5 else "")
"""


def variant_name(name: str) -> str:
    """A variant's intermediate (by its Stage key) under the notebook's name: the table's ('output' is the
    layer's, so the variant's is variant_output)."""
    return notebook_name(name)


def app_tensors(t: Trace) -> dict:
    """The trace's tensors by the names the notebook gives its recomputations (the table's), then the variant's."""
    out = trace_tensors(t)
    if t.variant is not None:
        out.update({notebook_name(name): v for name, v in t.variant.tensors().items()})
    return out


def app_lists(t: Trace) -> dict:
    out = {"tokens": list(t.tokens.words), "token_ids": list(t.tokens.ids)}
    if t.is_cross:
        out["source_tokens"] = list(t.source_tokens.words)
    return out


def head_tensors(ht) -> dict:
    w, sm = ht.weights, ht.softmax
    out = {"x": ht.x, "W_q": w.W_q, "W_k": w.W_k, "W_v": w.W_v, "b_q": w.b_q, "b_k": w.b_k, "b_v": w.b_v}
    out.update(Q=ht.Q, K=ht.K, V=ht.V, scores=ht.scores, scaled_scores=ht.scaled_scores, mask=ht.mask)
    out.update(row_max=sm.row_max, exp=sm.exp, row_sum=sm.row_sum, weights=ht.attn, context=ht.context)
    if ht.model_attn is not None:
        out["model_attn"] = ht.model_attn  # the model's own weights, beside the recomputed (a real model only)
    return {k: v for k, v in out.items() if v is not None}
