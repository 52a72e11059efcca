"""The trace as one JSON object: a contract that other tools read (and the app offers as a download).

Keys: tokens, token_ids, source_tokens (cross only), config (every resolved setting, keyed like
the CLI flags), x (L x d_model), x_source (S x d_model), heads (one object per head: W_q, W_k,
W_v, b_q/b_k/b_v where present, Q, K, V, scores, scaled_scores, mask, weights, context),
W_o (or null), output; plus scale, empty_rows and the parameter count. For a variant other than full
attention, ``variant``: its name, each of its steps' numbers (``facts``) and, per head, its own
intermediates under their names (phi_q, phi_k, state, normaliser, band_scores, K_proj, ...; a
never-computed score is null).
"""

from __future__ import annotations

import json
import math

import torch

from .trace import Trace, param_count


def _list(t):
    return None if t is None else t if isinstance(t, list) else t.detach().cpu().tolist()


def _nulls(t: torch.Tensor):
    """NaN (a pair a sparse variant never scores) as null: JSON has no NaN."""
    if not bool(t.isnan().any()):
        return t
    return [[None if math.isnan(x) else x for x in row] for row in t.tolist()]


def head_dict(trace, h: int) -> dict:
    """Head ``h`` of a trace (anything with the ``Trace`` fields: weights, Q, K, V, scores,
    scaled_scores, mask, attn, context, empty_rows), as plain lists."""
    w = trace.weights
    head = {
        "W_q": _list(w.W_q[h]),
        "W_k": _list(w.W_k[h]),
        "W_v": _list(w.W_v[h]),
        "Q": _list(trace.Q[h]),
        "K": _list(trace.K[h]),
        "V": _list(trace.V[h]),
        "scores": _list(trace.scores[h]),
        "scaled_scores": _list(trace.scaled_scores[h]),
        "mask": _list(trace.mask),
        "weights": _list(trace.attn[h]),
        "context": _list(trace.context[h]),
        "empty_rows": _list(trace.empty_rows[h]),
    }
    for name in ("b_q", "b_k", "b_v"):
        if getattr(w, name) is not None:
            head[name] = _list(getattr(w, name)[h])
    if w.additive is not None:
        head["additive"] = {
            "W_a": _list(w.additive.W_a[h]),
            "U_a": _list(w.additive.U_a[h]),
            "v": _list(w.additive.v[h]),
        }
    return head


def to_dict(trace: Trace) -> dict:
    s = trace.settings
    w = trace.weights
    heads = [head_dict(trace, h) for h in range(s.heads)]
    out = {
        "tokens": list(trace.tokens.words),
        "token_ids": list(trace.tokens.ids),
        "config": s.to_dict(),
        "scale": trace.scale,
        "x": _list(trace.x),
        "x_source": _list(trace.x_source),
        "heads": heads,
        "W_o": _list(w.W_o),
        "b_o": _list(w.b_o),
        "output": _list(trace.output),
        "params": param_count(s),
    }
    if trace.variant is not None:
        out["variant"] = {
            "kernel": s.kernel,
            "steps": [stage.key for stage in trace.variant.stages],
            "facts": {stage.key: stage.facts for stage in trace.variant.stages},
        }
        for h, head in enumerate(heads):
            head["variant"] = {
                name: _list(_nulls(t[h if t.shape[0] > 1 else 0])) for name, t in trace.variant.tensors().items()
            }
    if trace.source_tokens is not None:
        out["source_tokens"] = list(trace.source_tokens.words)
        out["source_token_ids"] = list(trace.source_tokens.ids)
    return out


def to_json(trace: Trace, *, indent: int | None = None) -> str:
    return json.dumps(to_dict(trace), ensure_ascii=False, indent=indent)


def matrix_csv(matrix: torch.Tensor, rows: list[str], cols: list[str]) -> str:
    """One matrix as CSV with token labels (duplicate labels made unique by their position)."""
    import csv
    import io

    def unique(labels: list[str]) -> list[str]:
        return [f"{i}:{t}" for i, t in enumerate(labels)]

    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow([""] + unique(cols))
    for label, row in zip(unique(rows), matrix.detach().cpu().tolist()):
        writer.writerow([label] + [f"{x:.6g}" if isinstance(x, float) else x for x in row])
    return buf.getvalue()
