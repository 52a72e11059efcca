"""Why one query attends to one key: its scaled score split two exact ways, and a causal check.

terms    the score as d_head per-dimension products q_d · k_d · scale (the query and key after any rotary
         rotation; scale = 1/√d_head, and GPT-2's inverse layer scaling), in dimension order: their sum is
         the score (BertViz's neuron view, for every model);
sources  the query's and the key's stream split by source (``why.stream``): the score as a table of
         query-source × key-source cells, ``bias`` a row and a column of its own; its cells add up to the score;
removed  the source with the largest share of the score taken out: the weight the table predicts (the whole
         row's scores without that source's cells, softmaxed again) beside the weight recomputed through the
         model with the source removed where it is made (``why.remove``), later layers and norms included.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from .. import models as M
from ..errors import AttentionConfigError
from .remove import recomputed_weight
from .stream import BIAS, read_by_attention


@dataclass(frozen=True)
class Why:
    tokens: tuple[str, ...]
    layer: int
    head: int
    query: int
    key: int
    allowed: bool  # False: the key is masked for this query (later in a decoder, or padding): its weight is 0
    score: float  # the scaled score q·k·scale, before the mask and the softmax
    weight: float  # the model's own attention weight
    terms: list[float]  # d_head
    names: list[str]  # the sources, ``bias`` last
    table: list[list[float]]  # query source × key source
    removed: dict | None  # {"source", "share", "predicted", "recomputed", "weight"}; None when the key is masked


def scale_of(w: M.HeadWeights, d: int) -> float:
    return (1 / math.sqrt(d) if w.score == "scaled_dot" else 1.0) / w.temperature


def _projected(parts: dict[str, torch.Tensor], W: torch.Tensor, b, rotate) -> torch.Tensor:
    """(sources, L, d): each source through one head's projection (the bias into ``bias``), then rotated."""
    out = torch.stack([v @ W[0].T for v in parts.values()])
    if b is not None:
        out[-1] = out[-1] + b[0]
    return rotate(out) if rotate is not None else out


def _check_position(field: str, index: int, n: int) -> None:
    if not 0 <= index < n:
        raise AttentionConfigError(field, "no_position", index=index, n=n, last=n - 1)


def allowed_keys(m: M.Model, run: M.Run, query: int) -> torch.Tensor:
    """(L,) the keys the query may attend to: not padding, and not later than it in a decoder."""
    L, n = len(run.encoding.ids), run.encoding.n_real
    keys = torch.arange(L) < n
    return keys & (torch.arange(L) <= query) if m.causal else keys


def split(m: M.Model, run: M.Run, layer: int, head: int, query: int):
    """The score table of one query against every key: (sources, sources, L), the sources' names, the query's
    and keys' vectors (d,), (L, d) after rotation, and the scale."""
    w = M.head_weights(m, layer, head)
    parts = read_by_attention(m, run, layer)
    rotary = w.rotary()
    rotate = None if rotary is None else rotary.rotate
    with torch.inference_mode():
        Q = _projected(parts, w.W_q, w.b_q, rotate)  # (S, L, d)
        K = _projected(parts, w.W_k, w.b_k, rotate)
    scale = scale_of(w, m.d_head)
    table = scale * torch.einsum("ad,bjd->abj", Q[:, query], K)
    return table, list(parts), Q.sum(0)[query], K.sum(0), scale


def _predicted(table: torch.Tensor, keys: torch.Tensor, s: int, key: int) -> float:
    """The weight of ``key`` after removing source ``s``'s cells from the whole row, softmaxed again."""
    without = table.sum((0, 1)) - table[s].sum(0) - table[:, s].sum(0) + table[s, s]
    return float(torch.softmax(without.masked_fill(~keys, float("-inf")), -1)[key])


def explain_weight(m: M.Model, run: M.Run, layer: int, head: int, query: int, key: int) -> Why:
    M.check_layer_head(m, layer, head)
    n = run.encoding.n_real
    _check_position("query", query, n)
    _check_position("key", key, len(run.encoding.ids))
    table, names, q, k_all, scale = split(m, run, layer, head, query)
    cell = table[:, :, key]
    keys = allowed_keys(m, run, query)
    allowed = bool(keys[key])
    removed = None
    if allowed:
        shares = cell.sum(1) + cell.sum(0) - cell.diagonal()  # each source's cells, on either side
        removable = [i for i, name in enumerate(names) if name != BIAS]
        s = max(removable, key=lambda i: abs(float(shares[i])))
        removed = {
            "source": names[s],
            "share": float(shares[s]),
            "predicted": _predicted(table, keys, s, key),
            "recomputed": recomputed_weight(m, run.encoding, names[s], layer, head, query, key),
        }
    return Why(
        tuple(run.encoding.pieces),
        layer,
        head,
        query,
        key,
        allowed,
        float(cell.sum()),
        float(run.attentions[layer, head, query, key]),
        (scale * q * k_all[key]).tolist(),
        names,
        cell.tolist(),
        removed,
    )


def to_dict(why: Why) -> dict:
    """The CLI's JSON (a contract): tokens, score, weight, terms, sources {query, key, values}, removed."""
    return {
        "tokens": list(why.tokens),
        "layer": why.layer,
        "head": why.head,
        "query": why.query,
        "key": why.key,
        "masked": not why.allowed,
        "score": why.score,
        "weight": why.weight,
        "terms": why.terms,
        "sources": {"query": why.names, "key": why.names, "values": why.table},
        "removed": why.removed,
    }
