"""Heads matched across two models or two checkpoints, by the similarity of their attention on the same inputs.

    js_distances(att_a, att_b, rows_from=0) -> Tensor (Na, Nb)   every head of A against every head of B
    assignment(distance) -> list[(i, j)]                          the optimal one-to-one matching
    match_attentions(att_a, att_b, ...) -> dict                   the table, from attentions a caller already has
    match_models(ma, mb, items=None) -> dict                      two loaded models on the shipped probe set
    match_lab(snap_a, snap_b) -> dict                             two Lab snapshots (their probe example's weights)
    head_roles(m, ...) -> list[dict]                              each head's role, as the Inside pages name it

**The distance.** Head i of A and head j of B are compared query row by query row on the same input: the
Jensen–Shannon *distance* (the square root of the JS divergence in bits, so in [0, 1] and a metric) between the
two rows, averaged over the rows of one input, then over the inputs (each probe sentence counts once, whatever its
length). A decoder's first query has one key it may see in any head; for two decoders it is left out
(``rows_from`` = 1), as ``decoder.text_scores`` leaves it out.

**The matching.** The one-to-one matching of A's heads to B's with the least total distance
(``scipy.optimize.linear_sum_assignment``: the Hungarian algorithm's answer, exact); with more heads on one side,
the heads left over are listed unmatched. A model matched with itself pairs every head with itself at distance 0.

**The same tokens.** Rows are compared position by position, so both models must cut every probe sentence into the
same token ids (two checkpoints of one model always do); otherwise ``match_tokenizer`` is raised. Models with
different tokenizers would need their rows mapped word by word first: not done here.

**Roles** (each head's, beside its match): an encoder's from the probe set as ``roles.head_stats`` finds them
(``previous_token`` / ``next_token`` / ``positional`` when >= 90 % of its maxima sit at one offset; a relation such
as ``det`` or ``coref`` when it beats that relation's offset baseline by 10 points; ``cls_sink``, ``sep_sink``,
``punct_sink`` when its mean weight there is >= 0.5); a decoder's from ``decoder.head_roles`` (``previous_token``,
``duplicate_token``, ``induction``, ``first_token`` when the score is >= 0.5, the highest first); a Lab snapshot's
from its own scores (prev, induction, first) by the same rule.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch

from attn_core import models as pt
from attn_core.errors import AttentionConfigError

from . import hooks

MEASURE = "jensen_shannon_distance"  # sqrt of the JS divergence in bits
ROLE_SCORE = 0.5  # a decoder's (or a Lab head's) role score from which the head has that role
SINK_SHARE = 0.5  # an encoder head's mean weight on [CLS], [SEP] or punctuation from which it is a sink
CHUNK = 4_000_000  # elements of the (heads of A, heads of B, L, L) mixture computed at once
LAB_ROLES = {"prev": "previous_token", "induction": "induction", "first": "first_token"}


def _per_probe(att) -> torch.Tensor:
    """One input's attention as (heads, L, L), layer-major: from (layers, H, L, L), a list of per-layer (H, L, L)
    (tensors or nested lists, as a Lab snapshot holds them) or (heads, L, L)."""
    if isinstance(att, torch.Tensor):
        t = att
    elif isinstance(att, (list, tuple)) and att and isinstance(att[0], torch.Tensor):
        t = torch.stack([torch.as_tensor(x) for x in att])
    else:
        t = torch.as_tensor(att, dtype=torch.float64)
    t = t.double()
    if t.dim() == 4:
        t = t.reshape(-1, *t.shape[-2:])
    if t.dim() != 3 or t.shape[-1] != t.shape[-2]:
        raise ValueError(f"attention must be (layers, H, L, L) or (heads, L, L), not {tuple(t.shape)}")
    return t


def _entropy_terms(p: torch.Tensor) -> torch.Tensor:
    return torch.xlogy(p, p).sum(-1)  # Σ p log p (nats), 0 log 0 = 0


def probe_js(pa: torch.Tensor, pb: torch.Tensor, rows_from: int = 0) -> torch.Tensor:
    """(Na, Nb) mean over the query rows ``rows_from``.. of the JS distance (bits) between head i's row in ``pa``
    (Na, L, L) and head j's in ``pb`` (Nb, L, L). JS = H(M) − (H(P) + H(Q)) / 2 with M = (P + Q) / 2."""
    pa, pb = pa[:, rows_from:], pb[:, rows_from:]
    na, nb = pa.shape[0], pb.shape[0]
    ha, hb = _entropy_terms(pa), _entropy_terms(pb)  # (Na, R), (Nb, R): Σ p log p
    out = torch.empty(na, nb, dtype=torch.float64)
    step = max(1, CHUNK // max(1, nb * pa.shape[1] * pa.shape[2]))
    for i0 in range(0, na, step):
        m = (pa[i0 : i0 + step, None] + pb[None]) / 2  # (s, Nb, R, L)
        hm = _entropy_terms(m)  # (s, Nb, R)
        js = (0.5 * (ha[i0 : i0 + step, None] + hb[None]) - hm) / math.log(2)
        out[i0 : i0 + step] = js.clamp_min(0.0).sqrt().mean(-1)
    return out


def js_distances(att_a: Sequence, att_b: Sequence, rows_from: int = 0) -> torch.Tensor:
    """(Na, Nb) the JS distance of every head of A to every head of B, averaged over the rows of each input and
    then over the inputs. ``att_a[p]`` and ``att_b[p]``: the attention on input p (see ``_per_probe``), the same
    length L_p on both sides (else ``match_shapes``)."""
    if len(att_a) != len(att_b) or not att_a:
        raise ValueError(f"both sides need the attention on the same inputs: {len(att_a)} and {len(att_b)} given")
    total = None
    for p, (a, b) in enumerate(zip(att_a, att_b, strict=True)):
        pa, pb = _per_probe(a), _per_probe(b)
        if pa.shape[-1] != pb.shape[-1]:
            raise AttentionConfigError("b", "match_shapes", probe=p, n=pa.shape[-1], m=pb.shape[-1])
        d = probe_js(pa, pb, min(rows_from, pa.shape[-1] - 1))
        total = d if total is None else total + d
    return total / len(att_a)


def assignment(distance: torch.Tensor) -> list[tuple[int, int]]:
    """The one-to-one matching (i of A, j of B) of least total distance, in A's order."""
    from scipy.optimize import linear_sum_assignment

    rows, cols = linear_sum_assignment(distance.double().numpy())
    return sorted(zip(rows.tolist(), cols.tolist(), strict=True))


def _head_names(n: int, heads: int | None) -> list[list[int]]:
    heads = heads or n
    return [list(divmod(i, heads)) for i in range(n)]


def _role_of(roles: list[dict] | None, i: int) -> tuple[str | None, list[str]]:
    if not roles:
        return None, []
    r = roles[i]
    return r.get("role"), list(r.get("roles", []))


def match_attentions(
    att_a: Sequence,
    att_b: Sequence,
    *,
    heads_a: int | None = None,
    heads_b: int | None = None,
    roles_a: list[dict] | None = None,
    roles_b: list[dict] | None = None,
    name_a: str = "A",
    name_b: str = "B",
    rows_from: int = 0,
) -> dict:
    """The matched heads from attentions a caller already has (Lab checkpoints, anything else): ``att_a[p]`` and
    ``att_b[p]`` are each side's attention on input p, (layers, H, L, L) or per layer (H, L, L) (see
    ``_per_probe``); ``heads_a`` / ``heads_b`` the heads per layer (to name head i as [layer, head]; read from a 4-d
    or per-layer input when not given); ``roles_a`` / ``roles_b`` one ``{"role", "roles"}`` per head (optional).

    The result (plain values; Na, Nb the heads of each side, layer-major):

    a, b            {"name", "layers", "heads"}
    measure         "jensen_shannon_distance" (bits, in [0, 1]), rows_from, probes (how many inputs)
    distance        (Na, Nb) nested lists: head i of A (row) against head j of B (column)
    pairs           [{"a": [layer, head], "b": [layer, head], "distance", "role_a", "role_b", "roles_a",
                    "roles_b"}], the closest pair first (role: the head's main role or None; roles: all of them)
    unmatched_a, unmatched_b   [[layer, head], ...] heads left over when the two sides have different counts
    mean            the matched pairs' mean distance
    same_place_mean the mean distance of head i of A to head i of B (None when the counts differ): how much the
                    matching gains over reading the heads in place
    """
    heads_a = heads_a or _heads_per_layer(att_a)
    heads_b = heads_b or _heads_per_layer(att_b)
    d = js_distances(att_a, att_b, rows_from)
    na, nb = d.shape
    pairs = []
    for i, j in assignment(d):
        ra, rsa = _role_of(roles_a, i)
        rb, rsb = _role_of(roles_b, j)
        pairs.append(
            {
                "a": list(divmod(i, heads_a)),
                "b": list(divmod(j, heads_b)),
                "distance": float(d[i, j]),
                "role_a": ra,
                "role_b": rb,
                "roles_a": rsa,
                "roles_b": rsb,
            }
        )
    matched_a = {tuple(p["a"]) for p in pairs}
    matched_b = {tuple(p["b"]) for p in pairs}
    pairs.sort(key=lambda p: (p["distance"], p["a"]))
    return {
        "a": {"name": name_a, "layers": na // heads_a, "heads": heads_a},
        "b": {"name": name_b, "layers": nb // heads_b, "heads": heads_b},
        "measure": MEASURE,
        "rows_from": rows_from,
        "probes": len(att_a),
        "distance": d.tolist(),
        "pairs": pairs,
        "unmatched_a": [h for h in _head_names(na, heads_a) if tuple(h) not in matched_a],
        "unmatched_b": [h for h in _head_names(nb, heads_b) if tuple(h) not in matched_b],
        "mean": sum(p["distance"] for p in pairs) / max(len(pairs), 1),
        "same_place_mean": float(d.diagonal().mean()) if na == nb else None,
    }


def _heads_per_layer(att: Sequence) -> int:
    first = att[0]
    if isinstance(first, torch.Tensor):
        return int(first.shape[1]) if first.dim() == 4 else int(first.shape[0])
    if isinstance(first, (list, tuple)) and first:
        inner = first[0]
        return int(inner.shape[0]) if isinstance(inner, torch.Tensor) else len(inner)
    raise ValueError("an input's attention is empty")


# --- models: the probe set, the same tokens, the roles ---------------------------------------------------------


def probe_items(items: list[dict] | None = None) -> list[dict]:
    from . import corpus

    return list(corpus.load()["sentences"]) if items is None else list(items)


def probe_attentions(m, texts: list[str]) -> list[torch.Tensor]:
    """Each text's attention (layers, H, L, L) as ``models.forward`` gives it (texts of one length run as one batch:
    no padding, so each row is its own run's to float rounding)."""
    encs = [pt.encode(m, t) for t in texts]
    out: list[torch.Tensor | None] = [None] * len(texts)
    by_len: dict[int, list[int]] = {}
    for i, e in enumerate(encs):
        by_len.setdefault(e.n_real, []).append(i)
    for n, idx in by_len.items():
        ids = torch.tensor([list(encs[i].ids[:n]) for i in idx])
        real = torch.ones_like(ids, dtype=torch.bool)
        att = hooks.run(m, hooks.Batch(ids, real, real.clone()), attentions=True).attentions  # (layers, B, H, L, L)
        for k, i in enumerate(idx):
            out[i] = att[:, k].clone()
    return out


def check_same_tokens(ma, mb, texts: list[str]) -> None:
    """Both models cut every text into the same token ids, else ``match_tokenizer`` (naming the first that differs)."""
    for t in texts:
        ia = pt.encode(ma, t).ids
        ib = pt.encode(mb, t).ids
        if tuple(ia) != tuple(ib):
            raise AttentionConfigError("b", "match_tokenizer", a=ma.name, b=mb.name, text=t[:60])


def _entry(layer: int, head: int, roles: list[str], scores: dict) -> dict:
    return {"layer": layer, "head": head, "role": roles[0] if roles else None, "roles": roles, "scores": scores}


def _by_score(scores: dict[str, float], names: dict[str, str] | None = None) -> list[str]:
    """Role names whose score is >= ROLE_SCORE, the highest first."""
    names = names or {k: k for k in scores}
    kept = [(v, k) for k, v in scores.items() if k in names and v >= ROLE_SCORE]
    return [names[k] for v, k in sorted(kept, key=lambda x: (-x[0], x[1]))]


def decoder_roles(m, texts: list[str] | None = None) -> list[dict]:
    """A decoder's heads: ``decoder.head_roles``'s four scores, the roles scoring >= ``ROLE_SCORE``."""
    from . import decoder

    r = decoder.head_roles(m, texts=texts)
    out = []
    for layer in range(m.layers):
        for head in range(m.heads):
            scores = {role: float(r["scores"][role][layer][head]) for role in decoder.ROLES}
            out.append(_entry(layer, head, _by_score(scores), scores))
    return out


def encoder_roles(m, ps, items: list[dict]) -> list[dict]:
    """An encoder's heads from its probes (``roles.Probe``s): positional, syntactic, sinks (see the module)."""
    from . import roles

    preds = [roles.argmax_words(p) for p in ps]
    best = roles.best_heads(preds, items)
    offset, share = roles.positional(preds)
    sinks = roles.sink_shares(ps)
    out = []
    for layer in range(m.layers):
        for head in range(m.heads):
            found: list[str] = []
            off = int(offset[layer, head])
            if float(share[layer, head]) >= roles.POSITIONAL_SHARE:
                found.append({-1: "previous_token", 1: "next_token"}.get(off, "positional"))
            for rel, b in best.items():
                if rel in roles.POSITION_RELATIONS:
                    continue
                if float(b["scores"][layer, head]) >= b["baseline"] + roles.SYNTACTIC_POINTS:
                    found.append(rel)
            sink = {"cls_sink": float(sinks[0, layer, head]), "sep_sink": float(sinks[1, layer, head])}
            sink["punct_sink"] = float(sinks[2, layer, head])
            found += [k for v, k in sorted(((v, k) for k, v in sink.items()), reverse=True) if v >= SINK_SHARE]
            scores = {"offset": off, "positional_share": float(share[layer, head]), **sink}
            out.append(_entry(layer, head, found, scores))
    return out


def _model_side(m, items: list[dict]) -> tuple[list[torch.Tensor], list[dict]]:
    """A model's attention on the probe sentences and its heads' roles (an encoder's from the same runs)."""
    texts = [" ".join(it["words"]) for it in items]
    if m.causal:
        return probe_attentions(m, texts), decoder_roles(m, texts)
    from . import roles

    ps = roles.probes(m, items)
    return [p.attentions for p in ps], encoder_roles(m, ps, items)


def match_models(ma, mb, *, items: list[dict] | None = None) -> dict:
    """The heads of two loaded models (or checkpoints) matched on the shipped probe set (``probe_set.json``; ``items``
    another list of its entries): ``match_attentions``'s result with each head's role, and ``a`` / ``b`` naming the
    models. Both must cut the sentences into the same tokens (``match_tokenizer``)."""
    items = probe_items(items)
    texts = [" ".join(it["words"]) for it in items]
    check_same_tokens(ma, mb, texts)
    att_a, roles_a = _model_side(ma, items)
    att_b, roles_b = (att_a, roles_a) if mb.hf is ma.hf else _model_side(mb, items)  # one model: run once
    out = match_attentions(
        att_a,
        att_b,
        heads_a=ma.heads,
        heads_b=mb.heads,
        roles_a=roles_a,
        roles_b=roles_b,
        name_a=ma.name,
        name_b=mb.name,
        rows_from=1 if (ma.causal and mb.causal) else 0,
    )
    return out | {"heads_a": roles_a, "heads_b": roles_b}


def lab_roles(scores: list[list[dict]]) -> list[dict]:
    """A Lab snapshot's heads (its ``scores``: per layer, per head {"prev", "induction", "first", ...}) as roles."""
    out = []
    for layer, row in enumerate(scores or []):
        for head, s in enumerate(row):
            kept = {k: float(v) for k, v in s.items() if k in LAB_ROLES}
            out.append(_entry(layer, head, _by_score(kept, LAB_ROLES), kept))
    return out


def match_lab(snap_a: dict, snap_b: dict, *, name_a: str = "A", name_b: str = "B") -> dict:
    """Two Lab snapshots (``lab.snapshot_dict``'s dicts, or anything with ``weights``: per layer (H, L, L) on the
    probe example, and optionally ``scores``) matched on their one probe example: both must come from runs with the
    same task, seed and length (the same probe example), else the lengths may differ (``match_shapes``)."""
    wa, wb = _snapshot_weights(snap_a, "a"), _snapshot_weights(snap_b, "b")
    out = match_attentions(
        [wa],
        [wb],
        roles_a=lab_roles(_get(snap_a, "scores")) or None,
        roles_b=lab_roles(_get(snap_b, "scores")) or None,
        name_a=name_a,
        name_b=name_b,
    )
    return out | {"heads_a": lab_roles(_get(snap_a, "scores")), "heads_b": lab_roles(_get(snap_b, "scores"))}


def _get(snap, key: str):
    return snap.get(key) if isinstance(snap, dict) else getattr(snap, key, None)


def _snapshot_weights(snap, side: str) -> list:
    w = _get(snap, "weights")
    if not w:
        raise AttentionConfigError(side, "match_empty", side=side.upper())
    return list(w)


def head_roles(m, items: list[dict] | None = None) -> list[dict]:
    """Each head of ``m``: {"layer", "head", "role" (main role or None), "roles", "scores"} (see the module)."""
    return _model_side(m, probe_items(items))[1]
