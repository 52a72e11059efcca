"""Minimal pairs on a trained model: two sentences that differ in a word or two, run through the same model, and
what moved between them (the Real model, Inside, Explain and Next token pages' comparison).

    align(a, b) -> Alignment                       two token sequences aligned (any hashable items: ids, strings)
    minimal_pair(m, a, b, top_k=10) -> dict        both runs, every head's maps, what moved (see "The result")
    head_map(result, side, layer, head)            one head's map of side "a" or "b" (packed or not)
    ablation_gap(m, a, b) -> dict                  decoders: the next-token gap with each head ablated in both runs
    head_view(result, layer, head) -> dict         one head's maps side by side, on the shared tokens, and B − A
    rank_heads(moved) -> list[dict]                every head, most moved first
    curated() -> list[dict]                        the pairs shipped with the app (``pairs.toml``, validated)

Everything returned is plain (lists, dicts, floats, ints, strings): what a background job sends and a page reads.
With ``packed=True`` (the background job's form) every head's maps travel as float32 bytes in base64 (``pack``):
a 48-token pair on MiniLM's 72 heads is 1.8 MB so, against 11 MB as nested lists of floats; ``head_map`` reads
one head of either form.

**The alignment.** The two sentences' token ids are aligned by ``difflib.SequenceMatcher`` (no junk heuristic):
its matching blocks are the *shared* tokens (A's position i -> B's position j, the same token in the same order),
everything else is *changed* (``blocks``: each run of changed tokens, ``replace`` when both sides have some,
``insert`` when only B has, ``delete`` when only A has). A word split into different pieces in the two sentences
keeps the pieces the two share (``cat`` in ``catamaran`` is the token ``cat`` in both) and changes the rest.

**What moved.** A *query* is a set of query rows on each side: a changed block with tokens on both sides
(``changed``: the changed word(s)), one shared token (``shared``), or the last token of each sentence (``last``: a
decoder's next-token position). The query's attention on each side is the mean of its rows (a word's pieces
averaged, as Clark et al. (2019) take attention *from* a word); it is read on the shared keys, the weight on every
changed key lumped into one more entry, so that both sides are distributions over the same outcomes. A head's
``moved`` is the total variation distance between the two:

    moved = ½ (Σ_shared k |b_k − a_k| + |b_changed − a_changed|)        in [0, 1]

the share of the query's attention that went elsewhere. The default query is the first changed block with tokens
on both sides; without one (a word only inserted or deleted), a decoder's last token (where it predicts the next
one) and an encoder's first shared token after the change (the word an inserted "not" stands before).

**The next token** (decoders). Both next-token distributions (softmax of the last token's logits); their *gap* is
the Jensen–Shannon divergence in bits, JS(P, Q) = ½ KL(P ‖ M) + ½ KL(Q ‖ M), M = (P + Q) / 2, in [0, 1]
(symmetric, finite where one gives a token 0). ``ablation_gap`` ablates each head (its output zeroed, as
``ablate``'s maps do) in both runs at once and measures the gap again; ``closed`` = (gap − gap ablated) / gap: 1
when removing that head makes the two predictions equal, 0 when it changes nothing, negative when it widens the gap.
"""

from __future__ import annotations

import base64
import difflib
import math
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import torch

from attn_core import models as pt
from attn_core.errors import AttentionConfigError

from . import hooks
from .ablate import _check_decoder, all_heads, single_effects

MAX_PIECES = 48  # tokens a side may have: every head's two maps travel in the result (72 × 2 × 48² floats at most)
MAX_CHARS = 1000  # characters a side may have (checked before tokenizing)
TOP_K = 10  # next tokens listed for each side
IDENTICAL = 1e-12  # a gap (bits) below this: the two predictions are the same
MEASURE = "total_variation"  # how a query's attention moved (see the module)
GAP = "jensen_shannon_bits"  # how far apart the two next-token predictions are
PAIRS_FILE = Path(__file__).with_name("pairs.toml")
KINDS = ("coreference", "agreement", "negation", "repeated_name")
LANGUAGES = ("en", "zh")
SUITS = ("encoder", "decoder", "both")
PAIR_FIELDS = ("id", "kind", "language", "a", "b", "suits")


@dataclass(frozen=True)
class Alignment:
    """Two token sequences aligned: ``shared`` (i in A, j in B) in order, the ``changed`` positions of each side,
    and the changed ``blocks`` ((op, i1, i2, j1, j2), op one of replace, insert, delete)."""

    shared: tuple[tuple[int, int], ...]
    changed_a: tuple[int, ...]
    changed_b: tuple[int, ...]
    blocks: tuple[tuple[str, int, int, int, int], ...]

    def merged(self) -> list[dict]:
        """One row per position of the two sequences laid side by side: ``{"a": i | None, "b": j | None, "shared":
        bool}``; a shared token is one row, a replaced block's tokens are paired up in order, the rest stand alone."""
        out: list[dict] = []
        shared = iter(self.shared)
        for op, i1, i2, j1, j2 in self._all_blocks():
            if op == "equal":
                for _ in range(i2 - i1):
                    i, j = next(shared)
                    out.append({"a": i, "b": j, "shared": True})
                continue
            n = max(i2 - i1, j2 - j1)
            for k in range(n):
                i = i1 + k if i1 + k < i2 else None
                j = j1 + k if j1 + k < j2 else None
                out.append({"a": i, "b": j, "shared": False})
        return out

    def _all_blocks(self):
        """The blocks with the equal runs between them, in order."""
        i = j = 0
        out = []
        for op, i1, i2, j1, j2 in self.blocks:
            if i1 > i:
                out.append(("equal", i, i1, j, j1))
            out.append((op, i1, i2, j1, j2))
            i, j = i2, j2
        n_a = len(self.changed_a) + len(self.shared)
        n_b = len(self.changed_b) + len(self.shared)
        if i < n_a:
            out.append(("equal", i, n_a, j, n_b))
        return out


def align(a: Sequence, b: Sequence) -> Alignment:
    """Align two token sequences (see the module): SequenceMatcher's matching blocks are shared."""
    sm = difflib.SequenceMatcher(None, list(a), list(b), autojunk=False)
    shared: list[tuple[int, int]] = []
    blocks: list[tuple[str, int, int, int, int]] = []
    changed_a: list[int] = []
    changed_b: list[int] = []
    for op, i1, i2, j1, j2 in sm.get_opcodes():
        if op == "equal":
            shared += [(i1 + k, j1 + k) for k in range(i2 - i1)]
            continue
        blocks.append((op, i1, i2, j1, j2))
        changed_a += range(i1, i2)
        changed_b += range(j1, j2)
    return Alignment(tuple(shared), tuple(changed_a), tuple(changed_b), tuple(blocks))


# --- the two runs ---------------------------------------------------------------------------------------------


def check_sentence(text: str, side: str) -> None:
    if not isinstance(text, str):
        raise AttentionConfigError(side, "empty_sentence")
    if len(text) > MAX_CHARS:
        raise AttentionConfigError(side, "pair_chars", side=side.upper(), n=len(text), limit=MAX_CHARS)


def encoded(m, text: str, side: str) -> pt.Encoding:
    """``text`` as the Real model page encodes it, refused (naming the side) when too long for a pair."""
    check_sentence(text, side)
    try:
        enc = pt.encode(m, text)
    except AttentionConfigError as err:
        raise AttentionConfigError(side, err.code, **{k: v for k, v in err.params.items() if k != "field"}) from None
    limit = min(MAX_PIECES, m.max_positions)  # never a sentence the model's context cut
    if enc.n_total > limit:
        raise AttentionConfigError(side, "pair_too_long", side=side.upper(), n=enc.n_total, limit=limit)
    return enc


def _labels(m, ids) -> list[str]:
    return list(pt.token_labels(m.tokenizer, ids))


def _row_means(rows: list[list[int]], L: int) -> torch.Tensor:
    """(Q, L) each query's weights over the rows: 1 / |rows| on its rows (the mean of its rows)."""
    w = torch.zeros(len(rows), L, dtype=torch.float64)
    for q, rs in enumerate(rows):
        w[q, list(rs)] = 1.0 / len(rs)
    return w


def moved_all(att_a: torch.Tensor, att_b: torch.Tensor, qs: list[dict], shared) -> torch.Tensor:
    """(Q, layers, H) ``moved`` for every query of ``qs`` (their ``a`` and ``b`` rows) in one pass."""
    att_a, att_b = att_a.double(), att_b.double()
    qa = torch.einsum("qr,lhrk->qlhk", _row_means([q["a"] for q in qs], att_a.shape[-2]), att_a)
    qb = torch.einsum("qr,lhrk->qlhk", _row_means([q["b"] for q in qs], att_b.shape[-2]), att_b)
    ka = torch.tensor([i for i, _ in shared], dtype=torch.long)
    kb = torch.tensor([j for _, j in shared], dtype=torch.long)
    sa, sb = qa[..., ka], qb[..., kb]
    rest_a = (qa.sum(-1) - sa.sum(-1)).clamp_min(0.0)  # the weight on A's changed keys
    rest_b = (qb.sum(-1) - sb.sum(-1)).clamp_min(0.0)
    return 0.5 * ((sb - sa).abs().sum(-1) + (rest_b - rest_a).abs())


def moved(att_a: torch.Tensor, att_b: torch.Tensor, rows_a, rows_b, shared) -> torch.Tensor:
    """(layers, H) total variation between the query's attention in A and in B, on the shared keys with the weight on
    the changed keys lumped into one entry (see the module). att_a (layers, H, La, La), att_b (layers, H, Lb, Lb)."""
    return moved_all(att_a, att_b, [{"a": list(rows_a), "b": list(rows_b)}], shared)[0]


def queries(al: Alignment, n_a: int, n_b: int, causal: bool) -> tuple[list[dict], int]:
    """Every query a page may pick (see the module) and the default's index: each replaced block (``changed``), each
    shared token (``shared``), the last token of each (``last``); ``a`` and ``b`` are its query rows. The default: the
    first replaced block; without one, a decoder's last token, an encoder's first shared token after the first
    change (the word an inserted or deleted word stands before), else the last token."""
    changed = [
        {"kind": "changed", "a": list(range(i1, i2)), "b": list(range(j1, j2))}
        for op, i1, i2, j1, j2 in al.blocks
        if op == "replace"
    ]
    shared = [{"kind": "shared", "a": [i], "b": [j]} for i, j in al.shared]
    out = changed + shared + [{"kind": "last", "a": [n_a - 1], "b": [n_b - 1]}]
    if changed or causal or not al.blocks:
        return out, 0 if changed else len(out) - 1
    after = al.blocks[0][2]  # the first change's end in A
    k = next((k for k, (i, _) in enumerate(al.shared) if i >= after), None)
    return out, len(out) - 1 if k is None else len(changed) + k


def rank_heads(moved_map: list[list[float]], key: str = "moved") -> list[dict]:
    """Every head as ``{"layer", "head", key}``, the largest value first (ties: the earlier head first)."""
    cells = [
        {"layer": layer, "head": head, key: float(v)}
        for layer, row in enumerate(moved_map)
        for head, v in enumerate(row)
    ]
    return sorted(cells, key=lambda c: (-c[key], c["layer"], c["head"]))


def js_bits(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    """Jensen–Shannon divergence in bits between distributions over the last dimension (0 log 0 = 0)."""
    p, q = p.double(), q.double()
    m = (p + q) / 2
    kl = torch.xlogy(p, p).sum(-1) - torch.xlogy(p, m).sum(-1) + torch.xlogy(q, q).sum(-1) - torch.xlogy(q, m).sum(-1)
    return (0.5 * kl / math.log(2)).clamp_min(0.0)


def _next_token(m, logits_a: torch.Tensor, logits_b: torch.Tensor, top_k: int) -> dict:
    """Both next-token distributions: the union of each one's top ``top_k`` with both probabilities, and the gap."""
    pa, pb = torch.softmax(logits_a.double(), -1), torch.softmax(logits_b.double(), -1)
    k = max(1, min(int(top_k), pa.shape[-1]))
    ids = list(dict.fromkeys(pa.topk(k).indices.tolist() + pb.topk(k).indices.tolist()))
    ids.sort(key=lambda i: -max(float(pa[i]), float(pb[i])))
    tokens = [{"id": i, "label": pt.token_label(m.tokenizer, i), "a": float(pa[i]), "b": float(pb[i])} for i in ids]

    def top(p: torch.Tensor) -> dict:
        i = int(p.argmax())
        return {"id": i, "label": pt.token_label(m.tokenizer, i), "prob": float(p[i])}

    return {"tokens": tokens, "top_a": top(pa), "top_b": top(pb), "gap": float(js_bits(pa, pb)), "measure": GAP}


def pack(x: torch.Tensor) -> dict:
    """A tensor as plain values a JSON line carries compactly: ``{"shape": [...], "float32": base64}`` (C order)."""
    data = x.detach().to(torch.float32).contiguous().numpy().tobytes()
    return {"shape": list(x.shape), "float32": base64.b64encode(data).decode("ascii")}


def _unpacked_head(packed: dict, layer: int, head: int) -> torch.Tensor:
    """One (L, L) map of ``pack``'s (layers, H, L, L) bytes, decoding only its own span of the base64 text (every 4
    characters are 3 bytes from the start): a page's rerun reads one head, not the whole result."""
    layers, heads, rows, cols = packed["shape"]
    if not (0 <= layer < layers and 0 <= head < heads):
        raise IndexError((layer, head))
    size = rows * cols * 4
    start = (layer * heads + head) * size
    text = packed["float32"]
    chunk = base64.b64decode(text[start // 3 * 4 : -(-(start + size) // 3) * 4], validate=True)
    raw = bytearray(chunk[start % 3 : start % 3 + size])
    return torch.frombuffer(raw, dtype=torch.float32).view(rows, cols)


def head_map(result: dict, side: str, layer: int, head: int) -> list[list[float]]:
    """Head layer:head's (L, L) weights on side ``side`` ("a" or "b") of a ``minimal_pair`` result, packed or not."""
    maps = result[f"attention_{side}"]
    if isinstance(maps, dict):
        return _unpacked_head(maps, layer, head).double().tolist()
    return maps[layer][head]


def minimal_pair(m, a: str, b: str, *, top_k: int = TOP_K, packed: bool = False) -> dict:
    """Both sentences through ``m`` (``models.forward``: what the Real model page's head view shows), aligned, and
    what moved (see the module). The result (plain values; La, Lb the two lengths, S the shared tokens):

    model, family, causal, layers, heads       the model
    a, b                                       {"text", "ids", "labels"} (labels: the display rule of
                                               ``models.labels``, one per token)
    shared                                     [[i, j], ...] A's position i is B's j (S pairs, in order)
    changed_a, changed_b                       the changed positions of each side
    blocks                                     [{"op": "replace" | "insert" | "delete", "a": [i1, i2], "b": [j1, j2]}]
    merged                                     [{"a": i | None, "b": j | None, "shared": bool}]: the two laid side by
                                               side (``Alignment.merged``)
    attention_a, attention_b                   (layers, H, La, La) and (layers, H, Lb, Lb): every head's weights
                                               (nested lists; ``packed``: ``pack``'s float32 bytes)
    queries                                    [{"kind": "changed" | "shared" | "last", "a": rows, "b": rows,
                                               "moved": (layers, H)}]: each replaced block, each shared token, the
                                               last token (``queries``)
    query                                      the index of the default query in ``queries``
    ranking                                    every head for the default query, most moved first:
                                               [{"layer", "head", "moved"}]
    measure                                    "total_variation"
    next_token                                 decoders: {"tokens": [{"id", "label", "a", "b"}] (the union of both
                                               top-k, by the larger probability), "top_a", "top_b" ({"id", "label",
                                               "prob"}), "gap" (JS divergence, bits), "measure"}; encoders: None

    Refused (``AttentionConfigError`` naming the side "a" or "b"): an empty sentence, more than ``MAX_CHARS``
    characters or ``MAX_PIECES`` tokens, and two sentences whose tokens are the same (``pair_identical``)."""
    ea, eb = encoded(m, a, "a"), encoded(m, b, "b")
    ids_a, ids_b = list(ea.ids[: ea.n_real]), list(eb.ids[: eb.n_real])
    if ids_a == ids_b:
        raise AttentionConfigError("b", "pair_identical", model=m.name)
    al = align(ids_a, ids_b)
    ra, rb = pt.forward(m, ea), pt.forward(m, eb)
    qs, default = queries(al, len(ids_a), len(ids_b), m.causal)
    for q, m_q in zip(qs, moved_all(ra.attentions, rb.attentions, qs, al.shared).tolist(), strict=True):
        q["moved"] = m_q
    nxt = _next_token(m, ra.logits[ea.n_real - 1], rb.logits[eb.n_real - 1], top_k) if m.causal else None
    return {
        "model": m.name,
        "family": m.family,
        "causal": bool(m.causal),
        "layers": m.layers,
        "heads": m.heads,
        "a": {"text": a, "ids": ids_a, "labels": _labels(m, ids_a)},
        "b": {"text": b, "ids": ids_b, "labels": _labels(m, ids_b)},
        "shared": [list(p) for p in al.shared],
        "changed_a": list(al.changed_a),
        "changed_b": list(al.changed_b),
        "blocks": [{"op": op, "a": [i1, i2], "b": [j1, j2]} for op, i1, i2, j1, j2 in al.blocks],
        "merged": al.merged(),
        "attention_a": pack(ra.attentions) if packed else ra.attentions.tolist(),
        "attention_b": pack(rb.attentions) if packed else rb.attentions.tolist(),
        "queries": qs,
        "query": default,
        "ranking": rank_heads(qs[default]["moved"]),
        "measure": MEASURE,
        "next_token": nxt,
    }


def ablation_gap(m, a: str, b: str) -> dict:
    """Decoders: each head ablated (its output zeroed) in both runs at once, the two next-token predictions' gap
    again (one batch of the two sentences, every head's run started from its layer's input: ``ablate``'s
    ``single_effects``). The result:

    gap                      JS divergence (bits) of the two predictions, nothing ablated
    gap_ablated              (layers, H) the same with that head ablated in both
    closed                   (layers, H) (gap − gap_ablated) / gap; all 0 when the gap is 0 (``identical``)
    identical                the two predictions are the same (gap < ``IDENTICAL``)
    ranking                  [{"layer", "head", "closed", "gap"}], the head closing most of the gap first
    measure, mode            "jensen_shannon_bits", "zero"
    """
    _check_decoder(m)
    encoded(m, a, "a")
    encoded(m, b, "b")
    batch, _ = hooks.batch_of(m, [a, b])
    base = torch.zeros(m.layers, m.heads, dtype=torch.int8)
    heads = all_heads(m)
    emb, start = single_effects(m, batch, base, heads, hooks.ZERO)  # emb (heads, 2, d_model)
    p0 = torch.softmax(hooks.next_logits(m, start.embedding).double(), -1)
    gap = float(js_bits(p0[0], p0[1]))
    logits = hooks.next_logits(m, emb.reshape(-1, emb.shape[-1])).double().view(len(heads), 2, -1)
    p = torch.softmax(logits, -1)
    each = js_bits(p[:, 0], p[:, 1]).view(m.layers, m.heads)
    identical = gap < IDENTICAL
    closed = torch.zeros_like(each) if identical else (gap - each) / gap
    ranking = rank_heads(closed.tolist(), "closed")
    for cell in ranking:
        cell["gap"] = float(each[cell["layer"], cell["head"]])
    return {
        "gap": gap,
        "gap_ablated": each.tolist(),
        "closed": closed.tolist(),
        "identical": identical,
        "ranking": ranking,
        "measure": GAP,
        "mode": "zero",
    }


# --- reading a result (plain values in, plain values out: cheap enough for a page's rerun) --------------------


def head_view(result: dict, layer: int, head: int) -> dict:
    """One head of a ``minimal_pair`` result: ``a`` (La, La) and ``b`` (Lb, Lb) whole, ``a_shared`` and
    ``b_shared`` (S, S) on the shared tokens (rows and keys), ``diff`` = b_shared − a_shared, ``labels`` (the shared
    tokens' labels), ``moved`` (this head's value for each query, in the order of ``result["queries"]``)."""
    pt.check_layer_head(_Shape(result["layers"], result["heads"]), layer, head)
    wa, wb = head_map(result, "a", layer, head), head_map(result, "b", layer, head)
    ia = [i for i, _ in result["shared"]]
    jb = [j for _, j in result["shared"]]
    sa = [[wa[r][c] for c in ia] for r in ia]
    sb = [[wb[r][c] for c in jb] for r in jb]
    return {
        "layer": layer,
        "head": head,
        "a": wa,
        "b": wb,
        "a_shared": sa,
        "b_shared": sb,
        "diff": [[y - x for x, y in zip(ra, rb, strict=True)] for ra, rb in zip(sa, sb, strict=True)],
        "labels": [result["a"]["labels"][i] for i in ia],
        "moved": [q["moved"][layer][head] for q in result["queries"]],
    }


@dataclass(frozen=True)
class _Shape:
    layers: int
    heads: int


# --- the curated pairs ---------------------------------------------------------------------------------------


def validate_pairs(doc) -> list[str]:
    """Every problem of a pairs document (``{"pair": [{id, kind, language, a, b, suits}, ...]}``), as sentences;
    [] when it is valid."""
    items = doc.get("pair") if isinstance(doc, dict) else None
    if not isinstance(items, list) or not items:
        return ["the document must hold a list of [[pair]] tables"]
    problems: list[str] = []
    seen: set[str] = set()
    for k, p in enumerate(items):
        where = f"pair {k} ({p.get('id') if isinstance(p, dict) else '?'})"
        if not isinstance(p, dict):
            problems.append(f"{where}: not a table")
            continue
        if sorted(p) != sorted(PAIR_FIELDS):
            problems.append(f"{where}: fields must be exactly {', '.join(PAIR_FIELDS)}")
            continue
        if not (isinstance(p["id"], str) and p["id"].replace("_", "").isalnum() and p["id"].isascii()):
            problems.append(f"{where}: id must be letters, digits and _")
        if p["id"] in seen:
            problems.append(f"{where}: id used twice")
        seen.add(p["id"])
        for field, allowed in (("kind", KINDS), ("language", LANGUAGES), ("suits", SUITS)):
            if p[field] not in allowed:
                problems.append(f"{where}: {field} must be one of {', '.join(allowed)}")
        for side in ("a", "b"):
            text = p[side]
            if not (isinstance(text, str) and text.strip() and len(text) <= MAX_CHARS):
                problems.append(f"{where}: {side} must be a sentence of at most {MAX_CHARS} characters")
        if p["a"] == p["b"]:
            problems.append(f"{where}: a and b are the same sentence")
    return problems


def load_pairs(path: Path = PAIRS_FILE) -> list[dict]:
    """The pairs of a pairs file, validated (ValueError naming the first problem)."""
    with open(path, "rb") as f:
        doc = tomllib.load(f)
    problems = validate_pairs(doc)
    if problems:
        raise ValueError(f"{Path(path).name}: {problems[0]} ({len(problems)} problems)")
    return [dict(p) for p in doc["pair"]]


_CURATED: list[dict] | None = None


def curated(kind: str | None = None) -> list[dict]:
    """The pairs shipped with the app, in file order (a copy); ``kind``: "encoder" or "decoder" keeps those that suit
    that kind of model (``suits`` that kind or "both")."""
    global _CURATED
    if _CURATED is None:
        _CURATED = load_pairs()
    return [dict(p) for p in _CURATED if kind is None or p["suits"] in (kind, "both")]
